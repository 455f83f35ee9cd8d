// A beforeRecord hook that fails on a streamed answer being recorded: the failure is always
// reported (onWarning, so the stderr of tapedeck serve, naming the route, the hook and the fix),
// the client's stream ends so its SDK raises (cut, as for a failed record: docs/modes.md rule
// 17), and an answer of which nothing was sent yet is a 400 E_HOOK. An async hook is refused
// where it is given, before any request.
import OpenAI from 'openai';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { loadHooksModule } from '../../src/proxy/hooks-module.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { RecordingHook } from '../../src/store/hooks.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { errorOf, rejectionOf } from '../helpers.ts';
import { serve } from './serve-cli.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('hook-streams');
const { dir } = suite;

const client = (fetch: typeof globalThis.fetch, baseURL: string) => new OpenAI({ apiKey: 'sk-test', baseURL, fetch, maxRetries: 0 });
const streamOf = (c: OpenAI, text: string) => c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: text }] });
const throwing: RecordingHook = () => {
  throw new Error('boom in the hook');
};
// Not declared async (that one is refused up front): it returns a promise when called.
const promising = ((r: unknown) => Promise.resolve(r)) as unknown as RecordingHook;
const recordsIn = async (tape: string) => (existsSync(tape) ? (await readTape(tape)).records : []);

/** Reads a stream to its end: the text, and what ended it if it did not end cleanly. */
async function drain(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<{ text: string; error?: unknown }> {
  let text = '';
  try {
    for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
  } catch (error) {
    return { text, error };
  }
  return { text };
}

/** A provider that sends a whole event stream in one write: the proxy reads it in one go. */
async function oneWriteUpstream(): Promise<{ url: string; server: Server }> {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini' };
  const body = ev({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'fast' }, finish_reason: null }] }) + ev({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('a beforeRecord hook that fails on a streamed answer, through the proxy', () => {
  it('a stream that has started is cut (the SDK raises), and onWarning names the route, the hook and the fix; nothing is recorded', async () => {
    for (const [name, hook, says] of [
      ['throws', throwing, /POST \/v1\/chat\/completions: E_HOOK The beforeRecord hook threw: Error: boom in the hook\. .*Fix the beforeRecord hook.*Not recorded: the stream was cut before its end\./],
      ['returns a promise', promising, /POST \/v1\/chat\/completions: E_ARG The beforeRecord hook returned a promise.*Not recorded: the stream was cut before its end\./],
    ] as const) {
      const tape = join(dir, `started-${name.replace(/ /g, '-')}.tape`);
      const warnings: string[] = [];
      const proxy = await startProxy({ upstream: suite.upstream.url, tape, mode: 'record', port: 0, beforeRecord: hook, onWarning: (m) => warnings.push(m) });
      // `slow`: 20 ms between events, so the first ones reach the client before the end.
      const got = await drain(await streamOf(client(globalThis.fetch, `${proxy.url}/v1`), 'slow stream please'));
      await proxy.close();
      expect(got.text, name).toContain('Echo'); // the events before the cut arrived
      expect(got.error, name).toBeInstanceOf(Error); // no clean end: the SDK raises
      expect(warnings.join('\n'), name).toMatch(says);
      expect(await recordsIn(tape), name).toEqual([]);
    }
  });

  it('an answer of which nothing was sent yet (it came in one read) is a 400 E_HOOK, not an empty reply', async () => {
    const up = await oneWriteUpstream();
    const tape = join(dir, 'one-read.tape');
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, beforeRecord: throwing, onWarning: (m) => warnings.push(m) });
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'fast' }] }),
    }).catch((e: unknown) => e);
    await proxy.close();
    up.server.close();
    expect(res).toBeInstanceOf(Response);
    const r = res as Response;
    expect(r.status).toBe(400);
    expect(r.headers.get('x-should-retry')).toBe('false');
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('E_HOOK');
    expect(body.error.message).toContain('The beforeRecord hook threw: Error: boom in the hook');
    expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: E_HOOK .*Not recorded: the client got the error\./);
    expect(await recordsIn(tape)).toEqual([]);
  });
});

describe('a beforeRecord hook that fails on a streamed answer, in createFetch', () => {
  it('the stream ends with the E_HOOK error and onWarning names the route and the fix, also when the caller stopped reading', async () => {
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, beforeRecord: throwing, onWarning: (m) => warnings.push(m) });
    const got = await drain(await streamOf(client(f, `${suite.upstream.url}/v1`), 'read to the end'));
    expect((got.error as { code?: string }).code).toBe('E_HOOK');
    expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: E_HOOK The beforeRecord hook threw: Error: boom in the hook\. .*Fix the beforeRecord hook.*Not recorded: the stream ended with the error\./);

    // A caller that stops after the first event: the rest is read and the hook runs without it.
    warnings.length = 0;
    const second = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, beforeRecord: promising, onWarning: (m) => warnings.push(m) });
    for await (const _ of await streamOf(client(second, `${suite.upstream.url}/v1`), 'stop early')) break;
    await second.close();
    await f.close();
    expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: E_ARG The beforeRecord hook returned a promise/);
    expect(await recordsIn(tape)).toEqual([]);
  });
});

describe('an async hook', () => {
  it('is refused where it is given: a hooks module as it loads, createFetch and proxy options', async () => {
    const mod = join(dir, 'async-hooks.mjs');
    writeFileSync(mod, 'export async function beforeRecord(r) { return r }\n');
    const e = await rejectionOf(loadHooksModule(mod));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain(`The beforeRecord hook in the hooks module ${mod} is an async function; hooks must be synchronous`);
    expect(e.message).toContain('Make beforeRecord a plain function (drop "async")');
    writeFileSync(join(dir, 'async-match.mjs'), 'export default { async match() { return true } }\n');
    expect((await rejectionOf(loadHooksModule(join(dir, 'async-match.mjs')))).message).toContain('The match hook in the hooks module');

    const asyncHook = (async (r: unknown) => r) as unknown as RecordingHook;
    expect(errorOf(() => createFetch({ tape: join(dir, 'never.tape'), mode: 'record', beforeReplay: asyncHook })).message).toContain('The beforeReplay hook in the options is an async function');
    expect((await rejectionOf(startProxy({ upstream: suite.upstream.url, tape: join(dir, 'never.tape'), mode: 'record', port: 0, beforeRecord: asyncHook }))).code).toBe('E_ARG');
  });

  it('tapedeck serve --hooks: refuses to start on an async hook; a hook failing on a stream is on its stderr with the route', async () => {
    const asyncMod = join(dir, 'serve-async.mjs');
    writeFileSync(asyncMod, 'export async function beforeRecord(r) { return r }\n');
    const refused = serve(['--upstream', suite.upstream.url, '--tape', join(dir, 'serve-async.tape'), '--mode', 'record', '--port', '0', '--hooks', asyncMod]);
    const listened = await Promise.race([refused.exited.then(() => false), refused.url.then(() => true, () => false)]);
    if (listened) refused.child.kill('SIGTERM');
    expect(listened).toBe(false);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toMatch(/E_ARG The beforeRecord hook in the hooks module .* is an async function; hooks must be synchronous/);

    const throwingMod = join(dir, 'serve-throws.mjs');
    writeFileSync(throwingMod, "export function beforeRecord() { throw new Error('rec boom') }\n");
    const tape = join(dir, 'serve-throws.tape');
    const cli = serve(['--upstream', suite.upstream.url, '--tape', tape, '--mode', 'record', '--port', '0', '--hooks', throwingMod]);
    const got = await drain(await streamOf(client(globalThis.fetch, `${await cli.url}/v1`), 'slow through serve'));
    cli.child.kill('SIGTERM');
    await cli.exited;
    expect(got.error).toBeInstanceOf(Error);
    expect(cli.stderr()).toMatch(/tapedeck serve: POST \/v1\/chat\/completions: E_HOOK The beforeRecord hook threw: Error: rec boom\. .*Not recorded: the stream was cut before its end\./);
    expect(await recordsIn(tape)).toEqual([]);
  });
});
