// Update mode with a changed prompt and no way to record it (no network, or the placeholder key
// a replay-only checkout uses): the answer is the miss, saying what differs from the closest
// recording and that recording needs the network and a key, in a status the SDK raises at once
// (no retries), counted as a miss. And misses nobody saw (the AI SDK's streamText turns one into
// an empty text) are told when createFetch closes.
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import OpenAI from 'openai';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch, startProxy } from '../../src/proxy/index.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { listenLoopback } from './fake-upstream.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('update-offline');
const DEAD = 'http://127.0.0.1:9';

/** A fetch that counts the requests the SDK makes through it (its retries included). */
function counting(f: typeof fetch): { fetch: typeof fetch; calls: () => number } {
  let n = 0;
  return { fetch: (async (input: string | URL | Request, init?: RequestInit) => (n++, f(input, init))) as typeof fetch, calls: () => n };
}

async function recorded(name: string): Promise<string> {
  const tape = join(suite.dir, name);
  const rec = createFetch({ tape, mode: 'record' });
  await new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-real', fetch: rec }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
  await rec.close();
  return tape;
}

const changed = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of Spain?' }] };

describe('update mode, a changed prompt, nothing to record it with', () => {
  it('no network: a miss with the difference and what recording needs, not retried, counted', async () => {
    const tape = await recorded('offline.tape');
    const lines: string[] = [];
    const f = createFetch({ tape, mode: 'update', summary: (t) => lines.push(t) });
    const c = counting(f);
    const err = (await new OpenAI({ baseURL: `${DEAD}/v1`, apiKey: 'sk-real', fetch: c.fetch }).chat.completions.create(changed).catch((e: unknown) => e)) as Error & { status: number; headers: Headers };
    expect(err.status).toBe(400);
    expect(c.calls()).toBe(1);
    expect(err.message).toContain('tapedeck miss: message 0 (user) text differs from the closest recording');
    expect(err.message).toMatch(/recording it needs the network and a real API key: upstream http:\/\/127\.0\.0\.1:9 is unreachable/i);
    // The replay miss's excerpts of the two texts stay under it.
    expect(err.message).toMatch(/\n +request: .*Spain/);
    expect(err.message).toMatch(/\n +recording: .*France/);
    expect(err.message).not.toMatch(/^502|Upstream .* unreachable\.$/);
    expect((await f.stats()).byMatch.miss).toBe(1);
    await f.close();
    expect(lines.join('\n')).toContain('1 miss');
  });

  it('the placeholder key: the provider refuses it, and the answer is still the miss', async () => {
    const tape = await recorded('placeholder.tape');
    const refusing = await listenLoopback(
      createServer((_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Incorrect API key provided: replay.', type: 'invalid_request_error', code: 'invalid_api_key' } }));
      }),
    );
    try {
      const f = createFetch({ tape, mode: 'update', summary: false });
      const c = counting(f);
      const err = (await new OpenAI({ baseURL: `${refusing.url}/v1`, apiKey: 'replay', fetch: c.fetch }).chat.completions.create(changed).catch((e: unknown) => e)) as Error & { status: number };
      expect(err.status).toBe(400);
      expect(c.calls()).toBe(1);
      expect(err.message).toContain('message 0 (user) text differs from the closest recording');
      expect(err.message).toContain('the upstream refused the API key (401: Incorrect API key provided: replay.)');
      expect((await f.stats()).byMatch.miss).toBe(1);
      await f.close();
    } finally {
      await refusing.close();
    }
  });

  it('a test tape in update mode: the test fails with that miss, and the summary counts it', async () => {
    const tape = await recorded('test-tape.tape');
    const t = openTestTape({ tape, env: {}, failOnMiss: false });
    expect(t.mode).toBe('update');
    const err = (await new OpenAI({ baseURL: `${DEAD}/v1`, apiKey: 'sk-real', fetch: t.fetch, maxRetries: 0 }).chat.completions.create(changed).catch((e: unknown) => e)) as Error & { status: number };
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/recording it needs the network and a real API key: upstream http:\/\/127\.0\.0\.1:9 is unreachable \(bad port\)\n/i);
    const report = await t.close();
    expect(report.misses).toHaveLength(1);
    expect(report.misses[0]!.diagnosis).toContain('message 0 (user) text differs');
  });

  it('the proxy in update mode: the same miss, 400 with x-should-retry: false', async () => {
    const tape = await recorded('proxy.tape');
    const proxy = await startProxy({ upstream: DEAD, tape, mode: 'update', port: 0 });
    try {
      const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(changed) });
      expect(r.status).toBe(400);
      expect(r.headers.get('x-should-retry')).toBe('false');
      expect(r.headers.get('x-tapedeck-match')).toBe('miss');
      const body = (await r.json()) as { error: { message: string } };
      expect(body.error.message).toContain('message 0 (user) text differs');
      expect(body.error.message).toMatch(/recording it needs the network and a real API key: upstream http:\/\/127\.0\.0\.1:9 is unreachable/i);
    } finally {
      await proxy.close();
    }
  });
});

describe('misses nobody saw are told at close', () => {
  it("the AI SDK's streamText swallows a miss (empty text); createFetch's close() prints it", async () => {
    const tape = await recorded('ai-sdk.tape');
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const f = createFetch({ tape, mode: 'replay' });
    const openai = createOpenAI({ baseURL: `${DEAD}/v1`, apiKey: 'replay', fetch: f });
    const errors: unknown[] = [];
    const result = streamText({ model: openai.chat('gpt-4o-mini'), prompt: 'What is the capital of Spain?', onError: ({ error }) => void errors.push(error) });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe('');
    expect(String((errors[0] as Error | undefined)?.message)).toContain('tapedeck miss');
    process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      await f.close();
    } finally {
      process.stderr.write = write;
    }
    const out = lines.join('');
    expect(out).toMatch(/tapedeck: .*ai-sdk\.tape \(replay\): 0 replayed, 0 recordings added, 1 miss/);
    expect(out).toContain('POST /v1/chat/completions: message 0 (user) text differs');
  });

  it('summary: false keeps close() quiet', async () => {
    const tape = await recorded('quiet.tape');
    const f = createFetch({ tape, mode: 'replay', summary: false });
    await suite.chat(f, 'something else');
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      await f.close();
    } finally {
      process.stderr.write = write;
    }
    expect(lines.join('')).not.toContain('tapedeck:');
  });
});
