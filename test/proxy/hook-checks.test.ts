// What a beforeRecord or beforeReplay hook leaves (returned, or changed in place and nothing
// returned) is checked before it is stored or served: a bad status, header, URL, body or event
// list is an E_HOOK naming the hook, the route, the member and the fix, reported as a hook that
// throws is (a 400 with x-should-retry: false, onWarning / the stderr of tapedeck serve), never
// a tape that fails later as "a bug in tapedeck". A custom `match` is only offered recordings of
// the request's answer shape, and an async `match` or hook is refused where each entry point is
// made. With the real OpenAI SDK against the loopback fake provider.
import OpenAI from 'openai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { HookRecording, RecordingHook } from '../../src/store/hooks.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { errorOf, rejectionOf } from '../helpers.ts';
import { serve } from './serve-cli.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('hook-checks');
const { dir } = suite;

const client = (fetch: typeof globalThis.fetch, baseURL = `${suite.upstream.url}/v1`) => new OpenAI({ apiKey: 'sk-test', baseURL, fetch, maxRetries: 0 });
const ask = (c: OpenAI, text: string) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
const askStream = (c: OpenAI, text: string) => c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: text }] });
const recordsIn = async (tape: string) => (existsSync(tape) ? (await readTape(tape)).records.map((r) => r.value as HttpRecord) : []);

/** What a call ended with: the completion, or the error the SDK raised. */
async function outcome(p: Promise<unknown>): Promise<{ ok?: unknown; error?: { status?: number; code?: string; message: string; headers?: Headers } }> {
  try {
    return { ok: await p };
  } catch (e) {
    return { error: e as { message: string } };
  }
}

/** Reads a stream to its end: the text, and what ended it if it did not end cleanly. */
async function drain(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<{ text: string; error?: { code?: string; message: string } }> {
  let text = '';
  try {
    for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
  } catch (error) {
    return { text, error: error as { message: string } };
  }
  return { text };
}

type Body = Record<string, unknown>;
/**
 * Hooks that change the recording in place (and return nothing, or 42) into something tapedeck
 * cannot store or serve, with the member the error must name. `streams`: what the case is for.
 */
const BAD: { name: string; hook: RecordingHook; member: string; streams: 'plain' | 'stream' | 'both' }[] = [
  { name: 'status 999', hook: (r) => void (r.response.status = 999), member: 'response.status 999', streams: 'both' },
  { name: 'status 0', hook: (r) => void (r.response.status = 0), member: 'response.status 0', streams: 'plain' },
  { name: 'status as a string', hook: (r) => void ((r.response as { status: unknown }).status = '200'), member: 'response.status "200"', streams: 'plain' },
  { name: 'a header with CR LF', hook: (r) => void (r.response.headers['x-a'] = 'a\r\nset-cookie: evil=1'), member: 'response.headers["x-a"]', streams: 'both' },
  { name: 'a header set to an object', hook: (r) => void ((r.response.headers as Body)['x-a'] = { a: 1 }), member: 'response.headers["x-a"] an object', streams: 'plain' },
  { name: 'response headers null', hook: (r) => void ((r.response as Body).headers = null), member: 'response.headers null', streams: 'both' },
  { name: 'request headers null', hook: (r) => void ((r.request as Body).headers = null), member: 'request.headers null', streams: 'plain' },
  { name: 'request url a number', hook: (r) => void ((r.request as Body).url = 123), member: 'request.url 123', streams: 'plain' },
  { name: 'events a string', hook: (r) => void ((r.response as Body).events = 'x'), member: 'response.events "x"', streams: 'stream' },
  { name: 'an event without data', hook: (r) => void r.response.events!.push({ data: undefined }), member: 'response.events[', streams: 'stream' },
  {
    name: 'a BigInt in the body',
    hook: (r) => {
      if (r.response.events) (r.response.events[1]!.data as Body).n = 1n;
      else (r.response.body as Body).n = 1n;
    },
    member: '.n 1n',
    streams: 'both',
  },
  { name: 'a BigInt in the request body', hook: (r) => void ((r.request.body as Body).n = 1n), member: 'request.body.n 1n', streams: 'plain' },
  { name: 'returns 42', hook: (() => 42) as unknown as RecordingHook, member: 'returned 42', streams: 'plain' },
];
const casesFor = (kind: 'plain' | 'stream') => BAD.filter((c) => c.streams === kind || c.streams === 'both');

describe('a beforeRecord hook that leaves a bad recording (createFetch)', () => {
  it('a plain answer: the caller gets a 400 E_HOOK naming the member, the route and the fix; onWarning says it; nothing is recorded', async () => {
    for (const c of casesFor('plain')) {
      const tape = join(dir, `record-plain-${c.name.replace(/\W+/g, '-')}.tape`);
      const warnings: string[] = [];
      const f = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, beforeRecord: c.hook, onWarning: (m) => warnings.push(m) });
      const { ok, error } = await outcome(ask(client(f), `record ${c.name}`));
      await f.close();
      expect(ok, c.name).toBeUndefined();
      expect(error?.status, c.name).toBe(400);
      expect(error?.code, c.name).toBe('E_HOOK');
      expect(error?.headers?.get('x-should-retry'), c.name).toBe('false');
      expect(error?.message, c.name).toContain(c.member);
      expect(error?.message, c.name).toContain('for POST /v1/chat/completions');
      expect(error?.message, c.name).toContain('The error is in the hook, not in tapedeck.');
      expect(error?.message, c.name).toContain('In the beforeRecord hook, ');
      expect(error?.message, c.name).not.toContain('bug in tapedeck');
      expect(warnings.join('\n'), c.name).toMatch(/POST \/v1\/chat\/completions: E_HOOK The beforeRecord hook .*Not recorded: the caller got the error\./);
      expect(await recordsIn(tape), c.name).toEqual([]);
    }
  });

  it('a stream: it ends with the E_HOOK (not a TypeError blamed on the upstream), and onWarning names the route and the member', async () => {
    for (const c of casesFor('stream')) {
      const tape = join(dir, `record-stream-${c.name.replace(/\W+/g, '-')}.tape`);
      const warnings: string[] = [];
      const f = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, beforeRecord: c.hook, onWarning: (m) => warnings.push(m) });
      const got = await drain(await askStream(client(f), `record stream ${c.name}`));
      await f.close();
      expect(got.error?.code, c.name).toBe('E_HOOK');
      expect(got.error?.message, c.name).toContain(c.member);
      expect(warnings.join('\n'), c.name).toMatch(/POST \/v1\/chat\/completions: E_HOOK The beforeRecord hook .*Not recorded: the stream ended with the error\./);
      expect(warnings.join('\n'), c.name).not.toContain("the upstream's answer failed");
      expect(await recordsIn(tape), c.name).toEqual([]);
    }
  });

  it('what a replay can serve passes: another status, array and removed headers, a Date, a rewritten event list', async () => {
    const tape = join(dir, 'record-good.tape');
    const f = createFetch({
      tape,
      mode: 'record',
      fetch: globalThis.fetch,
      beforeRecord: (r) => {
        r.response.status = 203;
        r.response.headers['x-many'] = ['a', 'b'];
        (r.response.headers as Record<string, unknown>)['x-request-id'] = undefined; // removed
        if (r.response.events) r.response.events = [...r.response.events.slice(0, 2), { data: '[DONE]' }];
        else (r.response.body as Body).seenAt = new Date(0);
      },
    });
    const c = client(f);
    await ask(c, 'good changes');
    await drain(await askStream(c, 'good changes'));
    await f.close();
    const replay = createFetch({ tape, mode: 'replay' });
    const r = client(replay);
    const { data, response } = await ask(r, 'good changes').withResponse();
    expect(response.status).toBe(203);
    expect(response.headers.get('x-many')).toBe('a, b');
    expect(response.headers.get('x-request-id')).toBeNull();
    expect((data as unknown as Body).seenAt).toBe('1970-01-01T00:00:00.000Z');
    expect((await drain(await askStream(r, 'good changes'))).error).toBeUndefined();
    await replay.close();
  });
});

describe('a beforeReplay hook that leaves a bad recording (createFetch)', () => {
  it('the request is a 400 E_HOOK naming the member, plain or streamed; the tape is not blamed', async () => {
    const tape = join(dir, 'replay-bad.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    await ask(client(rec), 'stored plain');
    await drain(await askStream(client(rec), 'stored stream'));
    await rec.close();
    for (const kind of ['plain', 'stream'] as const) {
      for (const c of casesFor(kind)) {
        const f = createFetch({ tape, mode: 'replay', beforeReplay: c.hook });
        const { error } = await outcome(kind === 'plain' ? ask(client(f), 'stored plain') : askStream(client(f), 'stored stream'));
        await f.close();
        const what = `${kind}: ${c.name}`;
        expect(error?.status, what).toBe(400);
        expect(error?.code, what).toBe('E_HOOK');
        expect(error?.headers?.get('x-should-retry'), what).toBe('false');
        expect(error?.message, what).toContain(c.member);
        expect(error?.message, what).toContain('In the beforeReplay hook, ');
        expect(error?.message, what).not.toContain('bug in tapedeck');
      }
    }
  });
});

describe('tapedeck serve --hooks with a hook that leaves a bad recording', () => {
  it('beforeRecord and beforeReplay: the client gets 400 E_HOOK (x-should-retry: false), the stderr of serve names the route, the hook and the member', async () => {
    const mod = join(dir, 'bad-hooks.mjs');
    writeFileSync(
      mod,
      `export function beforeRecord(r) {
  const m = r.request.body.messages.at(-1).content;
  if (m === 'status') r.response.status = 999;
  if (m === 'null headers') r.response.headers = null;
}
export function beforeReplay(r) { r.response.headers['x-note'] = 'a\\r\\nx-injected: 1' }
`,
    );
    const tape = join(dir, 'serve-bad.tape');
    const recording = serve(['--upstream', suite.upstream.url, '--tape', tape, '--mode', 'record', '--port', '0', '--hooks', mod]);
    const viaRecord = client(globalThis.fetch, `${await recording.url}/v1`);
    const status = await outcome(ask(viaRecord, 'status'));
    const nullHeaders = await outcome(ask(viaRecord, 'null headers'));
    await ask(viaRecord, 'fine'); // recorded: the replay below has it to serve
    recording.child.kill('SIGTERM');
    await recording.exited;
    for (const [got, member] of [
      [status, 'response.status 999'],
      [nullHeaders, 'response.headers null'],
    ] as const) {
      expect(got.error?.status, member).toBe(400);
      expect(got.error?.code, member).toBe('E_HOOK');
      expect(got.error?.headers?.get('x-should-retry'), member).toBe('false');
      expect(got.error?.message, member).toContain(member);
      expect(recording.stderr(), member).toContain(`tapedeck serve: POST /v1/chat/completions: E_HOOK The beforeRecord hook left ${member} for POST /v1/chat/completions`);
    }
    expect((await recordsIn(tape)).length).toBe(1);

    const replaying = serve(['--tape', tape, '--mode', 'replay', '--port', '0', '--hooks', mod]);
    const replayed = await outcome(ask(client(globalThis.fetch, `${await replaying.url}/v1`), 'fine'));
    replaying.child.kill('SIGTERM');
    await replaying.exited;
    expect(replayed.error?.status).toBe(400);
    expect(replayed.error?.code).toBe('E_HOOK');
    expect(replaying.stderr()).toContain('E_HOOK The beforeReplay hook left response.headers["x-note"] "a\\r\\nx-injected: 1" for POST /v1/chat/completions');
  });
});

describe('a custom match function and the answer shape', () => {
  // docs/hooks.md's example, verbatim.
  const match = (request: { body?: unknown }, recording: HookRecording) =>
    (request.body as { messages: { content: string }[] }).messages.at(-1)!.content.toLowerCase() === (recording.request.body as { messages: { content: string }[] }).messages.at(-1)!.content.toLowerCase();

  it('a plain request is never answered by a streamed recording (the docs example), and each shape gets its own', async () => {
    const onlyStream = join(dir, 'match-only-stream.tape');
    const rec = createFetch({ tape: onlyStream, mode: 'record', fetch: globalThis.fetch });
    await drain(await askStream(client(rec), 'Hello'));
    await rec.close();
    const f = createFetch({ tape: onlyStream, mode: 'replay', match });
    const plain = await outcome(ask(client(f), 'hello'));
    await f.close();
    // A miss, not the event stream's text returned as the completion.
    expect(typeof plain.ok).not.toBe('string');
    expect(plain.error?.status).toBe(400);
    expect(plain.error?.code).toBe('E_MISS');

    // Recorded streamed first, then plain: each request gets the recording of its own shape.
    const both = join(dir, 'match-both.tape');
    const rec2 = createFetch({ tape: both, mode: 'record', fetch: globalThis.fetch });
    const streamed = await drain(await askStream(client(rec2), 'Hello'));
    const answered = await ask(client(rec2), 'Hello');
    await rec2.close();
    for (const via of ['createFetch', 'proxy'] as const) {
      const proxy = via === 'proxy' ? await startProxy({ tape: both, mode: 'replay', port: 0, match }) : undefined;
      const g = via === 'proxy' ? undefined : createFetch({ tape: both, mode: 'replay', match });
      const c = proxy ? client(globalThis.fetch, `${proxy.url}/v1`) : client(g!);
      const { data, response } = await ask(c, 'HELLO').withResponse();
      expect(response.headers.get('content-type'), via).toContain('application/json');
      expect(data.choices[0]!.message.content, via).toBe(answered.choices[0]!.message.content);
      expect((await drain(await askStream(c, 'hello'))).text, via).toBe(streamed.text);
      await (proxy ?? g!).close();
    }
  });
});

describe('an async match or hook is refused where each entry point is made', () => {
  const asyncMatch = (async () => true) as unknown as () => boolean;
  const asyncHook = (async (r: unknown) => r) as unknown as RecordingHook;
  const tape = () => join(dir, 'never.tape');

  it('createFetch, createHandler and openTestTape throw E_ARG at once; startProxy rejects before it listens', async () => {
    for (const [what, make] of [
      ['createFetch match', () => createFetch({ tape: tape(), mode: 'replay', match: asyncMatch })],
      ['createHandler match', () => createHandler({ tape: tape(), mode: 'replay', match: asyncMatch })],
      ['createHandler beforeReplay', () => createHandler({ tape: tape(), mode: 'replay', beforeReplay: asyncHook })],
      ['openTestTape beforeReplay', () => openTestTape({ tape: tape(), mode: 'replay', beforeReplay: asyncHook })],
      ['openTestTape match', () => openTestTape({ tape: tape(), mode: 'replay', match: asyncMatch })],
    ] as const) {
      const e = errorOf(make);
      expect(e, what).toBeInstanceOf(TapedeckError);
      expect(e.code, what).toBe('E_ARG');
      expect(e.message, what).toMatch(/The (match|beforeReplay) hook in the .*options is an async function; hooks must be synchronous/);
    }
    const e = await rejectionOf(startProxy({ tape: tape(), mode: 'replay', port: 0, match: asyncMatch }));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('The match hook in the options is an async function');
  });
});
