// Hand-written recordings (addRecordings, `tapedeck add`): a 429 with retry-after that the
// OpenAI SDK retries, a stream with gaps, a cut stream; keyed like recordings, replayed through
// the real SDK.
import OpenAI from 'openai';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { rejectionOf } from '../helpers.ts';
import { canMountReadOnly, onReadOnly } from '../read-only-mount.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello' }] };
const completion = (text: string) => ({
  id: 'chatcmpl-hand',
  object: 'chat.completion',
  created: 1767225600,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
});
const chunk = (delta: object, finish: string | null = null) => ({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] });
const rateLimited: WrittenRecording = {
  request: { url: URL_, body: ask },
  response: { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached for gpt-4o-mini', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } },
};

function counting(f: typeof fetch): { fetch: typeof fetch; statuses: number[] } {
  const statuses: number[] = [];
  return {
    statuses,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const r = await f(input, init);
      statuses.push(r.status);
      return r;
    }) as typeof fetch,
  };
}

describe('hand-written recordings', () => {
  it('a 429 with retry-after, then the answer: the OpenAI SDK waits, retries and gets the answer', async () => {
    const tape = join(dir, 'retry.tape');
    expect(await addRecordings({ tape }, [rateLimited, { request: { url: URL_, body: ask }, response: { body: completion('Hi after a retry') } }])).toBe(2);
    const f = createFetch({ tape, mode: 'replay' });
    const c = counting(f);
    const client = new OpenAI({ apiKey: 'replay', fetch: c.fetch, maxRetries: 2 });
    const t0 = performance.now();
    const r = await client.chat.completions.create(ask);
    expect(r.choices[0]!.message.content).toBe('Hi after a retry');
    expect(c.statuses).toEqual([429, 200]);
    // It honoured retry-after: 1 (second), not its own shorter backoff.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
    await f.close();

    // Without retries the SDK raises its own rate-limit error with the written message.
    const g = createFetch({ tape, mode: 'replay' });
    const e = await new OpenAI({ apiKey: 'replay', fetch: g, maxRetries: 0 }).chat.completions.create(ask).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect((e as Error).message).toContain('Rate limit reached for gpt-4o-mini');
    await g.close();
  });

  it('a stream with its events and gaps, replayed through the SDK (and paced as written)', async () => {
    const tape = join(dir, 'stream.tape');
    const body = { ...ask, stream: true };
    await addRecordings({ tape }, [
      {
        request: { url: URL_, body },
        response: { gapMs: 30, events: [{ data: chunk({ role: 'assistant', content: '' }) }, { data: chunk({ content: 'Once ' }) }, { data: chunk({ content: 'upon' }) }, { data: chunk({}, 'stop') }, { data: '[DONE]' }] },
      },
    ]);
    const rec = (await readTape(tape)).records[0]!.value as HttpRecord;
    expect(rec.match).toBe('llm');
    expect(rec.response.chunks!.map(([ms]) => ms)).toEqual([0, 30, 60, 90, 120]);
    const f = createFetch({ tape, mode: 'replay', timing: 'recorded' });
    const t0 = performance.now();
    const s = await new OpenAI({ apiKey: 'replay', fetch: f }).chat.completions.create(body);
    let text = '';
    for await (const ch of s) text += ch.choices[0]?.delta.content ?? '';
    expect(text).toBe('Once upon');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
    await f.close();
  });

  it('a cut stream: the SDK gets the first events, then the error a dropped connection gives (createFetch and the proxy)', async () => {
    const tape = join(dir, 'cut.tape');
    const body = { ...ask, stream: true, messages: [{ role: 'user' as const, content: 'cut me' }] };
    await addRecordings({ tape }, [{ request: { url: URL_, body }, response: { cut: true, events: [{ data: chunk({ role: 'assistant', content: '' }) }, { data: chunk({ content: 'Half' }) }] } }]);
    const f = createFetch({ tape, mode: 'replay' });
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    for (const client of [new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 }), new OpenAI({ apiKey: 'replay', baseURL: `${proxy.url}/v1`, maxRetries: 0 })]) {
      const s = await client.chat.completions.create(body);
      let text = '';
      const err = await (async () => {
        for await (const ch of s) text += ch.choices[0]?.delta.content ?? '';
      })().catch((e: unknown) => e);
      expect(text).toBe('Half');
      expect(err).toBeInstanceOf(Error);
    }
    await f.close();
    await proxy.close();
  });

  it('a cut stream: the AI SDK gets the text sent before the cut, as from a dropped connection (createFetch, a hand-written cut and an injected one)', async () => {
    const { streamText } = await import('ai');
    const { createOpenAI } = await import('@ai-sdk/openai');
    const tape = join(dir, 'cut-ai.tape');
    const body = { ...ask, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user' as const, content: 'Cut me' }] };
    const events = [{ data: chunk({ role: 'assistant', content: '' }) }, { data: chunk({ content: 'Partial' }) }];
    await addRecordings({ tape }, [{ request: { url: URL_, body }, response: { cut: true, events } }]);
    // The same answer whole, which the chaos cuts after its second event.
    const whole = join(dir, 'whole-ai.tape');
    await addRecordings({ tape: whole }, [{ request: { url: URL_, body }, response: { events: [...events, { data: chunk({ content: ' and more' }) }, { data: chunk({}, 'stop') }, { data: { ...chunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } } }, { data: '[DONE]' }] } }]);
    const cases = [
      createFetch({ tape, mode: 'replay', summary: false }),
      createFetch({ tape: whole, mode: 'replay', summary: false, onWarning: () => {}, chaos: { faults: { cut: 1 }, cutAfter: 2, seed: 1 } }),
    ];
    for (const [n, f] of cases.entries()) {
      const provider = createOpenAI({ apiKey: 'replay', fetch: f as typeof fetch });
      const parts: string[] = [];
      const result = streamText({ model: provider.chat('gpt-4o-mini'), prompt: 'Cut me', maxRetries: 0, onError: () => {} });
      // The AI SDK raises the dropped connection's error from the stream, as it does live.
      const thrown = await (async () => {
        for await (const p of result.fullStream) parts.push(p.type === 'text-delta' ? `text:${p.text}` : p.type);
      })().catch((e: unknown) => e);
      expect(parts, `case ${n}`).toContain('text:Partial');
      expect(String((thrown as Error | undefined)?.cause ?? thrown), `case ${n}`).toMatch(/terminated/);
      await f.close();
    }
  });

  it('tapedeck import refuses a file of hand-written streams (it would drop their events), naming tapedeck add', async () => {
    const { importRecordings } = await import('../../src/proxy/import.ts');
    const body = { ...ask, stream: true, messages: [{ role: 'user' as const, content: 'Stream hi' }] };
    for (const [name, response] of [
      ['events', { gapMs: 20, events: [{ data: chunk({ content: 'Hi' }) }, { data: '[DONE]' }] }],
      ['cut', { cut: true, events: [{ data: chunk({ content: 'Hi' }) }] }],
    ] as const) {
      const file = join(dir, `import-${name}.json`);
      writeFileSync(file, JSON.stringify([{ request: { url: URL_, body: ask }, response: { body: completion('plain') } }, { request: { url: URL_, body }, response }]));
      const out = join(dir, `import-${name}.tape`);
      const e = await rejectionOf(importRecordings(file, out));
      expect(e.code).toBe('E_IMPORT_FORMAT');
      expect(e.message).toContain(`${file} holds hand-written recordings ([1].response.events`);
      expect(e.message).toContain(`tapedeck add <tape> ${file}`);
      expect(existsSync(out)).toBe(false);
    }
    // Plain answers written by hand still import as request/response pairs.
    const plainFile = join(dir, 'import-plain.json');
    writeFileSync(plainFile, JSON.stringify([{ request: { url: URL_, body: ask }, response: { body: completion('plain') } }]));
    expect((await importRecordings(plainFile, join(dir, 'import-plain.tape'))).records).toBe(1);
  });

  it('tapedeck add reads recordings from JSON files; bad ones are refused before anything is written', async () => {
    const tape = join(dir, 'cli.tape');
    const file = join(dir, 'answers.json');
    writeFileSync(file, JSON.stringify([{ request: { url: URL_, body: ask }, response: { body: completion('written by hand') } }]));
    expect(execFileSync(process.execPath, [CLI, 'add', tape, file], { encoding: 'utf8' })).toBe(`added 1 recording to ${tape}\n`);
    const f = createFetch({ tape, mode: 'replay' });
    expect((await new OpenAI({ apiKey: 'replay', fetch: f }).chat.completions.create(ask)).choices[0]!.message.content).toBe('written by hand');
    await f.close();

    const e = await rejectionOf(addRecordings({ tape }, [{ request: { url: URL_, body: ask }, response: { body: {} } }, { request: { url: URL_ }, response: { status: 999 } } as WrittenRecording]));
    expect(e.code).toBe('E_RECORDING');
    expect(e.message).toContain('#1');
    const misspelt = await rejectionOf(addRecordings({ tape }, [{ request: { url: URL_, body: ask }, response: { bdy: { a: 1 }, stauts: 500 } } as unknown as WrittenRecording]));
    expect(misspelt.code).toBe('E_RECORDING');
    expect(misspelt.message).toContain('Hand-written recording #0: `response.bdy` is not a field of `response`; did you mean `body`?');
    expect((await readTape(tape)).records).toHaveLength(1);
  });
});

describe('tapedeck add checks what it is given, as node:http and the event stream will read it', () => {
  const ok = { request: { url: URL_, body: ask }, response: { body: completion('fine') } };
  const stream = (over: object) => ({ request: { url: URL_, body: ask }, response: { events: [{ data: chunk({ content: 'a' }) }, { data: '[DONE]' }], ...over } });
  // Each: the bad recording, then what the error must name (the field) and say (the fix).
  const cases: [string, object, RegExp, RegExp][] = [
    ['a CR/LF in a response header value', { ...ok, response: { ...ok.response, headers: { 'x-a': 'b\r\nset-cookie: s=1' } } }, /response\.headers\["x-a"\]/, /line break/],
    ['a LF in a request header value', { ...ok, request: { ...ok.request, headers: { 'x-a': 'b\nc' } } }, /request\.headers\["x-a"\]/, /line break/],
    ['a header name with a colon', { ...ok, response: { ...ok.response, headers: { 'x-a: b': 'c' } } }, /response\.headers\["x-a: b"\]/, /header name/],
    ['an object as a header value', { ...ok, response: { ...ok.response, headers: { 'retry-after': { s: 1 } } } }, /response\.headers\["retry-after"\]/, /as text/],
    ['an array as headers', { ...ok, response: { ...ok.response, headers: [['a', 'b']] } }, /response\.headers/, /object/],
    ['a content-length written by hand', { ...ok, response: { ...ok.response, headers: { 'Content-Length': '3' } } }, /content-length/i, /Leave "Content-Length" out/],
    ['a negative gapMs', stream({ gapMs: -5 }), /response\.gapMs/, /milliseconds, from 0/],
    ['an absurd gapMs', stream({ gapMs: 1e12 }), /response\.gapMs/, /milliseconds, from 0/],
    ['a gapMs as text', stream({ gapMs: '20' }), /response\.gapMs/, /milliseconds/],
    ['a NaN-like afterMs', { ...stream({}), response: { events: [{ data: 'x', afterMs: null }] } }, /events\[0\]\.afterMs/, /milliseconds/],
    ['an event name with a line break', { ...stream({}), response: { events: [{ event: 'a\ndata: injected', data: 'x' }] } }, /events\[0\]\.event/, /one line/],
    ['a method with a space', { ...ok, request: { ...ok.request, method: 'GET /x HTTP/1.1\r\n' } }, /request\.method/, /"POST" or "GET"/],
    ['a method that is not text', { ...ok, request: { ...ok.request, method: 7 } }, /request\.method/, /"POST" or "GET"/],
    ['cut as text', stream({ cut: 'yes' }), /response\.cut/, /"cut": true/],
    // Misspelt fields: left alone, they would be dropped and the answer replayed as 200 and empty.
    ['a misspelt body and status', { ...ok, response: { bdy: { a: 1 }, stauts: 500 } }, /`response\.bdy` is not a field of `response`; did you mean `body`\?$/, /Rename it to "body"; the fields of `response` are "status", "headers", "body"/],
    ['a misspelt status', { ...ok, response: { stauts: 500 } }, /`response\.stauts`.*did you mean `status`\?/, /Rename it to "status"/],
    ['a misspelt event field', { ...stream({}), response: { events: [{ dta: 'x' }] } }, /`response\.events\[0\]\.dta`.*did you mean `data`\?/, /Rename it to "data"/],
    ['a misspelt request field', { ...ok, request: { ...ok.request, uri: URL_ } }, /`request\.uri`.*did you mean `url`\?/, /Rename it to "url"/],
    ['a field no recording has', { ...ok, comment: 'x' }, /`comment` is not a field of a recording\.$/, /Remove it; the fields of a recording are "request", "response"/],
    // Each field that is missing or of the wrong kind is named by its path, with the fix.
    ['no request url', { ...ok, request: { body: ask } }, /`request\.url` is missing/, /"url": "https:\/\/api\.openai\.com/],
    ['a status as text', { ...ok, response: { status: 'abc' } }, /`response\.status` "abc" is not an HTTP status/, /a number from 100 to 599/],
    ['events that are not an array', stream({ events: {} }), /`response\.events` is \{\}, not an array/, /events as an array/],
    ['events beside a body', stream({ body: {} }), /`response\.events` and `response\.body` are both given/, /instead of "body"/],
    ['an event without data', { ...stream({}), response: { events: [{ event: 'x' }] } }, /`response\.events\[0\]\.data` is missing/, /"data": "\[DONE\]"/],
  ];
  for (const [name, rec, field, fix] of cases) {
    it(`refuses ${name}, naming the field and the fix, before anything is written`, () => {
      const tape = join(dir, `bad-${name.replace(/\W+/g, '-')}.tape`);
      const good = join(dir, 'good.json');
      const file = join(dir, 'bad.json');
      writeFileSync(good, JSON.stringify(ok));
      writeFileSync(file, JSON.stringify([ok, rec]));
      const r = spawnSync(process.execPath, [CLI, 'add', tape, good, file], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(1);
      // #2 counts over all the files given; the file and the place in its array say where it is.
      expect(r.stderr).toMatch(/^tapedeck: E_RECORDING Hand-written recording #2 \(\S*bad\.json \[1\]\): [^\n]+\nhint: [^\n]+\n$/);
      expect(r.stderr.split('\n')[0]).toMatch(field);
      expect(r.stderr.split('\n')[1]).toMatch(fix);
      expect(existsSync(tape)).toBe(false);
    });
  }

  it('what it accepts replays: a numeric header value, a gap of 0, an event name with a colon', async () => {
    const tape = join(dir, 'fine.tape');
    await addRecordings({ tape }, [{ request: { url: URL_, method: 'post', body: ask }, response: { status: 429, headers: { 'Retry-After': 0 as unknown as string }, events: [{ event: 'x:y', data: 'z' }], gapMs: 0 } }]);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask) });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('0');
      expect(await r.text()).toBe('event: x:y\ndata: z\n\n');
    } finally {
      await proxy.close();
    }
  });
});

describe('tapedeck add: input that adds nothing, and a tape it cannot write, is one error and exit 1', () => {
  const ok = { request: { url: URL_, body: ask }, response: { body: completion('fine') } };
  const add = (...args: string[]) => spawnSync(process.execPath, [CLI, 'add', ...args], { encoding: 'utf8' });

  it('a file holding an empty array adds nothing: E_RECORDING naming it, exit 1, no tape made', () => {
    const tape = join(dir, 'empty-array.tape');
    const file = join(dir, 'empty-array.json');
    writeFileSync(file, '[]');
    const r = add(tape, file);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`tapedeck: E_RECORDING ${file} holds an empty array: no recording to add; nothing was added to ${tape}.\nhint: Write at least one recording in it: [{ "request": { "url": ..., "body": ... }, "response": { "body": ... } }] (docs/hand-written.md), or leave the file out.\n`);
    expect(r.status).toBe(1);
    expect(existsSync(tape)).toBe(false);
  });

  it('a missing file is bad input (E_FILE, exit 1) as the help says and as tapedeck import has it, not usage', () => {
    const tape = join(dir, 'missing-input.tape');
    const missing = join(dir, 'nothere.json');
    const r = add(tape, missing);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_FILE Cannot read ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no such file; nothing was added\\.\\nhint: Check the path`));
    expect(r.status).toBe(1);
    expect(spawnSync(process.execPath, [CLI, 'import', missing, tape], { encoding: 'utf8' }).status).toBe(1);
    expect(add('--help').stdout).toMatch(/Exit 0: added; 1: a file that is missing, unreadable, not JSON or holds no recording, .*; 2: usage\./s);
    expect(existsSync(tape)).toBe(false);
  });

  it('a directory given as the tape: "<dir> is a directory, not a tape file" with a file path that would do (add and serve), exit 1', () => {
    const tapes = join(dir, 'a-folder');
    mkdirSync(tapes);
    const file = join(dir, 'one.json');
    writeFileSync(file, JSON.stringify(ok));
    const said = `tapedeck: E_TAPE_IO ${tapes} is a directory, not a tape file.\nhint: Give a file path such as ${join(tapes, 'chat.tape')}.\n`;
    const r = add(tapes, file);
    expect(r.stderr).toBe(said);
    expect(r.status).toBe(1);
    const serve = spawnSync(process.execPath, [CLI, 'serve', '--tape', tapes, '--upstream', 'http://127.0.0.1:9', '--port', '0'], { encoding: 'utf8', timeout: 20_000 });
    expect(serve.stderr).toBe(said);
    expect(serve.status).toBe(1);
    expect(readdirSync(dir).filter((n) => n.startsWith('a-folder'))).toEqual(['a-folder']);
  });

  it.runIf(canMountReadOnly())('a tape on a read-only file system: one error naming EROFS and the directory, with the fix; nothing added', async () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    const tape = join(ro, 'old.tape');
    let before = Buffer.alloc(0);
    await onReadOnly(
      ro,
      async () => {
        await addRecordings({ tape }, [ok]);
        before = readFileSync(tape);
      },
      () => {
        const file = join(dir, 'four.json');
        writeFileSync(file, JSON.stringify([ok, ok, rateLimited, ok]));
        const r = add(tape, file);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(
          `tapedeck: E_TAPE_IO Tape ${tape}: registering this writer in ${tape}.writers failed: the directory ${ro} is on a read-only file system (EROFS), so nothing can be recorded to the tape there; no recording was added.\n` +
            `hint: Copy the tape to a writable directory and give that path (cp ${tape} <writable dir>/), or make the file system writable; replaying the tape only reads it (--mode replay).\n`,
        );
        expect(r.status).toBe(1);
        expect(readFileSync(tape).equals(before)).toBe(true);
      },
    );
  });
});

describe('addRecordings options', () => {
  it('refuses a misspelt option and an empty list, as createFetch and tapedeck add do', async () => {
    const tape = join(dir, 'options.tape');
    const one: WrittenRecording = { request: { url: URL_, body: ask }, response: { body: completion('x') } };
    const misspelt = await rejectionOf(addRecordings({ tape, volatileTxt: ['\\d+'] } as never, [one]));
    expect(misspelt.code).toBe('E_ARG');
    expect(misspelt.message).toMatch(/^Unknown addRecordings option "volatileTxt"\./);
    expect(misspelt.hint).toContain('Did you mean volatileText?');
    const empty = await rejectionOf(addRecordings({ tape }, []));
    expect(empty.code).toBe('E_RECORDING');
    expect(empty.message).toContain('the list is empty: no recording to add');
    expect(existsSync(tape)).toBe(false);
    expect(await addRecordings({ tape }, [one])).toBe(1);
  });
});
