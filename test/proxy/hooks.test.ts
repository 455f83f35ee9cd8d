// beforeRecord / beforeReplay hooks and the custom match function, in createFetch, the proxy
// (`tapedeck serve --hooks FILE`), the test tapes and ReplayCache, with the real OpenAI SDK.
import OpenAI from 'openai';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { loadHooksModule } from '../../src/proxy/hooks-module.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import type { HookRecording } from '../../src/store/hooks.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { rejectionOf } from '../helpers.ts';
import { serve } from './serve-cli.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('hooks');
const { dir } = suite;

const KEY = 'sk-proj-' + 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cD0eF';
const records = async (tape: string) => (await readTape(tape)).records.map((r) => r.value as HttpRecord);
const client = (fetch: typeof globalThis.fetch, baseURL = `${suite.upstream.url}/v1`) => new OpenAI({ apiKey: KEY, baseURL, fetch, maxRetries: 0 });
const say = (c: OpenAI, text: string) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

describe('beforeRecord', () => {
  it('sees the parsed request and answer, changes what is stored, skips on null; redaction runs after it', async () => {
    const tape = join(dir, 'record.tape');
    const seen: HookRecording[] = [];
    const f = createFetch({
      tape,
      mode: 'record',
      fetch: globalThis.fetch,
      beforeRecord: (r) => {
        seen.push(structuredClone(r));
        if ((r.request.body as { messages: { content: string }[] }).messages[0]!.content === 'do not record') return null;
        (r.response.body as { usage?: unknown }).usage = undefined;
        delete r.response.headers['x-request-id'];
        // A hook that puts a secret back is redacted all the same.
        r.request.headers['x-leak'] = `Bearer ${KEY}`;
        (r.response.body as Record<string, unknown>).note = `key ${KEY}`;
      },
    });
    const c = client(f);
    const live = await say(c, 'hello');
    expect(live.usage).toBeDefined(); // the caller gets the live answer as it came
    await say(c, 'do not record');
    await f.close();
    expect(seen[0]!.request).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] } });
    expect(seen[0]!.response).toMatchObject({ status: 200, body: { object: 'chat.completion', choices: [{ message: { content: expect.stringContaining('hello') } }] } });
    const stored = await records(tape);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.response.headers['x-request-id']).toBeUndefined();
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain(KEY);
    const body = JSON.parse(new TextDecoder().decode(stored[0]!.response.body)) as Record<string, unknown>;
    expect(body.usage).toBeUndefined();
    expect(body.note).toMatch(/^key /);
    expect(String(body.note)).not.toContain(KEY);

    const replay = createFetch({ tape, mode: 'replay' });
    const again = await say(client(replay), 'hello');
    expect(again.choices[0]!.message.content).toBe(live.choices[0]!.message.content);
    expect(again.usage).toBeUndefined();
    await replay.close();
  });

  it('sees a stream as its events (data parsed) and may change them; the SDK replays the change', async () => {
    const tape = join(dir, 'stream.tape');
    let events: HookRecording['response']['events'];
    const f = createFetch({
      tape,
      mode: 'record',
      fetch: globalThis.fetch,
      beforeRecord: (r) => {
        events = structuredClone(r.response.events);
        for (const e of r.response.events ?? []) {
          const d = e.data as { choices?: { delta?: { content?: string } }[] };
          if (d.choices?.[0]?.delta?.content) d.choices[0].delta.content = d.choices[0].delta.content.toUpperCase();
        }
        return r;
      },
    });
    const stream = await client(f).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell me' }] });
    let live = '';
    for await (const ch of stream) live += ch.choices[0]?.delta.content ?? '';
    await f.close();
    expect(events!.at(-1)).toEqual({ data: '[DONE]' });
    expect((events![1]!.data as { object: string }).object).toBe('chat.completion.chunk');

    const replay = createFetch({ tape, mode: 'replay' });
    const again = await client(replay).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell me' }] });
    let text = '';
    for await (const ch of again) text += ch.choices[0]?.delta.content ?? '';
    expect(text).toBe(live.toUpperCase());
    await replay.close();
  });
});

describe('beforeReplay', () => {
  it('changes the answer served (not the tape), and null makes a miss', async () => {
    const tape = join(dir, 'replay.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    await say(client(rec), 'hello');
    await say(client(rec), 'skip me');
    await rec.close();
    const before = readFileSync(tape);
    const replay = createFetch({
      tape,
      mode: 'replay',
      beforeReplay: (r) => {
        if ((r.request.body as { messages: { content: string }[] }).messages[0]!.content === 'skip me') return null;
        (r.response.body as { choices: { message: { content: string } }[] }).choices[0]!.message.content = 'changed at replay';
        return r;
      },
    });
    const c = client(replay);
    expect((await say(c, 'hello')).choices[0]!.message.content).toBe('changed at replay');
    const miss = await say(c, 'skip me').catch((e: unknown) => e);
    expect(miss).toBeInstanceOf(OpenAI.BadRequestError);
    expect(String((miss as Error).message)).toContain('the beforeReplay hook skipped the recording');
    await replay.close();
    expect(readFileSync(tape).equals(before)).toBe(true);
  });
});

describe('a custom match function', () => {
  it('is asked about the recordings of the route; what it accepts answers', async () => {
    const tape = join(dir, 'match.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    const first = await say(client(rec), 'Hello World');
    await rec.close();
    const lastText = (b: unknown) => String((b as { messages: { content: string }[] }).messages.at(-1)!.content).toLowerCase();
    const asked: string[] = [];
    const replay = createFetch({
      tape,
      mode: 'replay',
      match: (req, recording) => {
        asked.push(recording.request.url);
        return lastText(req.body) === lastText(recording.request.body);
      },
    });
    const c = client(replay);
    expect((await say(c, 'HELLO world')).choices[0]!.message.content).toBe(first.choices[0]!.message.content);
    const miss = await say(c, 'goodbye').catch((e: unknown) => e);
    expect(String((miss as Error).message)).toContain('the match function accepted none of the 1 recording(s) for POST /v1/chat/completions with this request');
    expect(asked.length).toBeGreaterThanOrEqual(2);
    // Failed before: a streamed call, whose shape no recording has, was said to be refused by
    // the function, which was never asked.
    const before = asked.length;
    const streamed = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Hello World' }] }).catch((e: unknown) => e);
    expect(String((streamed as Error).message)).toContain("none of the 1 recording(s) for POST /v1/chat/completions has this request's answer shape");
    expect(asked.length).toBe(before);
    await replay.close();
  });
});

describe('a hook that returns a promise', () => {
  it('match: E_ARG naming the hook, not a miss blaming the recordings', async () => {
    const tape = join(dir, 'async-match.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    await say(client(rec), 'async match');
    await rec.close();
    // Not declared async (that one is refused where createFetch is made): a plain function
    // that returns a promise is found only when it returns one.
    const replay = createFetch({ tape, mode: 'replay', match: (() => Promise.resolve(true)) as unknown as () => boolean });
    const e = (await say(client(replay), 'async match').catch((x: unknown) => x)) as { code?: string; message: string };
    await replay.close();
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('The match hook returned a promise; it must return a boolean synchronously.');
    expect(e.message).not.toContain('accepted none');
  });

  it('is a 400, as a hook that throws: every call gets it, and a 5xx is retried by SDKs (the AI SDK for seconds)', async () => {
    const tape = join(dir, 'async-replay.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    await say(client(rec), 'async beforeReplay');
    await rec.close();
    const hook = ((r: unknown) => Promise.resolve(r)) as unknown as (r: never) => never;
    const replay = createFetch({ tape, mode: 'replay', beforeReplay: hook });
    const e = (await say(client(replay), 'async beforeReplay').catch((x: unknown) => x)) as { status?: number; code?: string; message: string };
    await replay.close();
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('The beforeReplay hook returned a promise');
    expect(e.status).toBe(400);
  });
});

describe('tapedeck serve --hooks FILE', () => {
  it('loads beforeRecord, beforeReplay and match from a module; the proxy applies them', async () => {
    const mod = join(dir, 'hooks.mjs');
    writeFileSync(
      mod,
      `export function beforeRecord(r) { r.response.body.recordedBy = 'hook'; return r }
export default { beforeReplay(r) { r.response.body.replayedBy = 'hook'; return r } }
`,
    );
    const hooks = await loadHooksModule(mod);
    expect(Object.keys(hooks).sort()).toEqual(['beforeRecord', 'beforeReplay']);
    const tape = join(dir, 'proxy.tape');
    const recording = await startProxy({ upstream: suite.upstream.url, tape, mode: 'record', port: 0, ...hooks });
    await say(client(globalThis.fetch, `${recording.url}/v1`), 'through the proxy');
    await recording.close();
    const replaying = await startProxy({ tape, mode: 'replay', port: 0, ...hooks });
    const r = (await say(client(globalThis.fetch, `${replaying.url}/v1`), 'through the proxy')) as unknown as Record<string, unknown>;
    await replaying.close();
    expect(r.recordedBy).toBe('hook');
    expect(r.replayedBy).toBe('hook');

    // The same through the command line, as a user runs it.
    const cli = serve(['--tape', tape, '--mode', 'replay', '--port', '0', '--hooks', mod]);
    const viaCli = (await say(client(globalThis.fetch, `${await cli.url}/v1`), 'through the proxy')) as unknown as Record<string, unknown>;
    expect(viaCli.replayedBy).toBe('hook');
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    const bad = serve(['--tape', tape, '--mode', 'replay', '--port', '0', '--hooks', join(dir, 'missing.mjs')]);
    expect(await bad.exited).toBe(2); // a bad option value
    expect(bad.stderr()).toContain('E_ARG');

    writeFileSync(join(dir, 'none.mjs'), 'export const x = 1\n');
    expect((await rejectionOf(loadHooksModule(join(dir, 'none.mjs')))).message).toContain('exports none of beforeRecord, beforeReplay, match');
    writeFileSync(join(dir, 'bad.mjs'), 'export const match = 1\n');
    expect((await rejectionOf(loadHooksModule(join(dir, 'bad.mjs')))).code).toBe('E_ARG');
  });

  it('refuses an export spelt like a hook, which would never run; other helpers pass', async () => {
    writeFileSync(join(dir, 'misspelt.mjs'), 'export function beforeRecord(r) { return r }\nexport function beforeReplya(r) { return r }\n');
    const e = await rejectionOf(loadHooksModule(join(dir, 'misspelt.mjs')));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('exports beforeReplya, which is no hook: did you mean beforeReplay?');
    writeFileSync(join(dir, 'helpers.mjs'), 'export function beforeRecord(r) { return r }\nexport const MODEL = "gpt-4o"\nexport function redactDates(s) { return s }\n');
    expect(Object.keys(await loadHooksModule(join(dir, 'helpers.mjs')))).toEqual(['beforeRecord']);
  });
});

describe('hooks in the test tapes and ReplayCache', () => {
  it('a test tape passes them to its fetch', async () => {
    const tape = openTestTape({ tape: join(dir, 'test-tape.tape'), mode: 'update', beforeRecord: () => null });
    await say(client(tape.fetch), 'never stored');
    const report = await tape.close();
    expect(report.added).toBe(0);
  });

  it('ReplayCache: beforeRecord changes or skips a put (redaction after it), beforeReplay changes or refuses a get', async () => {
    const backend = new MemoryBackend();
    const q = (t: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: t }] });
    const c = await ReplayCache.open(backend, {
      mode: 'record',
      beforeRecord: (r) => (String(JSON.stringify(r.request)).includes('skip') ? null : { request: r.request, response: { answer: r.response, api_key: KEY } }),
    });
    await c.put(q('keep'), 'kept');
    await c.put(q('skip'), 'skipped');
    await c.close();
    const p = await ReplayCache.open(backend, { mode: 'replay', beforeReplay: (r) => ((r.response as { answer: string }).answer === 'kept' ? { ...r, response: 'served' } : null) });
    expect(p.size).toBe(1);
    const raw = await p.getRecord(q('keep'));
    expect(raw?.value).toBe('served');
    await p.close();
    const refusing = await ReplayCache.open(backend, { mode: 'replay', beforeReplay: () => null });
    expect((await rejectionOf(refusing.get(q('keep')))).message).toContain('the beforeReplay hook skipped the recording');
    await refusing.close();
    const plain = await ReplayCache.open(backend, { mode: 'replay' });
    const stored = (await plain.get(q('keep'))) as { answer: string; api_key: string };
    expect(stored.answer).toBe('kept');
    expect(stored.api_key).not.toBe(KEY);
    await plain.close();
  });
});

describe('a hook that throws', () => {
  const caught = async (p: Promise<unknown>): Promise<{ status?: number; code?: string; message: string; cause?: unknown }> => {
    try {
      await p;
    } catch (e) {
      return e as { message: string };
    }
    throw new Error('expected a rejection');
  };
  const THROWS = `function explode(name) { throw new Error('boom in ' + name) }
export function beforeRecord() { explode('beforeRecord') }
`;
  it('tapedeck serve: the client gets E_HOOK naming the hook; the stack is on stderr; nothing is recorded', async () => {
    const mod = join(dir, 'throwing-record.mjs');
    writeFileSync(mod, THROWS);
    const tape = join(dir, 'throwing-record.tape');
    const cli = serve(['--upstream', suite.upstream.url, '--tape', tape, '--mode', 'record', '--port', '0', '--hooks', mod]);
    const e = await caught(say(client(globalThis.fetch, `${await cli.url}/v1`), 'hook throws'));
    cli.child.kill('SIGTERM');
    await cli.exited;
    // A 400: the AI SDK retries any 5xx for about 6 s, and a hook that threw throws again.
    expect(e.status).toBe(400);
    expect(e.code).toBe('E_HOOK');
    expect(e.message).toMatch(/beforeRecord hook threw: Error: boom in beforeRecord/);
    expect(e.message).toMatch(/in the hook, not in tapedeck/);
    expect(e.message).not.toMatch(/bug in tapedeck/);
    // The stack, naming the hook's own file and function, for whoever runs the proxy.
    expect(cli.stderr()).toMatch(/E_HOOK.*beforeRecord/);
    expect(cli.stderr()).toContain('at explode (');
    expect(cli.stderr()).toContain('throwing-record.mjs:1');
    expect(existsSync(tape) ? await records(tape) : []).toEqual([]);
  });

  it('beforeReplay and match: E_HOOK on every entry point, the error as its cause', async () => {
    const tape = join(dir, 'throwing-replay.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    await say(client(rec), 'recorded');
    await rec.close();
    const boom = (name: string) => () => {
      throw new TypeError(`boom in ${name}`);
    };
    for (const opts of [{ beforeReplay: boom('beforeReplay') }, { match: boom('match') }]) {
      const name = Object.keys(opts)[0]!;
      const f = createFetch({ tape, mode: 'replay', ...opts });
      // createFetch answers as the proxy does: an API error in the provider's shape.
      const viaFetch = await caught(say(client(f), 'recorded'));
      await f.close();
      expect(viaFetch.status, name).toBe(400);
      expect(viaFetch.code, name).toBe('E_HOOK');
      expect(viaFetch.message).toContain(`${name} hook threw: TypeError: boom in ${name}`);
      const proxy = await startProxy({ tape, mode: 'replay', port: 0, ...opts });
      const viaProxy = await caught(say(client(globalThis.fetch, `${proxy.url}/v1`), 'recorded'));
      await proxy.close();
      expect(viaProxy.status).toBe(400);
      expect(viaProxy.code).toBe('E_HOOK');
      expect(viaProxy.message).toContain(`${name} hook threw`);
    }
    const cache = await ReplayCache.open(new MemoryBackend(), { mode: 'record', beforeRecord: boom('beforeRecord') });
    const e = await rejectionOf(cache.put({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'v'));
    await cache.close();
    expect(e.code).toBe('E_HOOK');
    expect(e.message).toContain('beforeRecord hook threw: TypeError: boom in beforeRecord');
    expect((e as Error).cause).toBeInstanceOf(TypeError);
  });
});
