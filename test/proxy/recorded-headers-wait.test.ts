// Replay with `timing: 'recorded'` sends a recorded stream's headers as late as the upstream sent
// them (the record's time from sending to the end, less its last chunk's time after the headers),
// then its chunks at their recorded offsets. So an SDK timeout shorter than the upstream's time to
// its first byte times out in replay as it did live, and a caller's abort before that point gets
// no answer. `timing: 'none'` still answers at once. Through createFetch and the proxy, with the
// real OpenAI SDK and a local provider that takes a while before its headers.
import OpenAI from 'openai';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-recorded-headers-'));
const HEADERS_AFTER_MS = 1500;
const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

let up: Awaited<ReturnType<typeof listenLoopback>>;
const tape = join(dir, 'slow-first-byte.tape');
const ask = { model: 'gpt-4o-mini', stream: true as const, messages: [{ role: 'user' as const, content: 'Think, then answer' }] };

beforeAll(async () => {
  up = await listenLoopback(
    createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(chunk({ role: 'assistant', content: 'thought ' }, null));
          setTimeout(() => res.end(chunk({ content: 'through' }, 'stop') + 'data: [DONE]\n\n'), 20);
        }, HEADERS_AFTER_MS),
      );
    }),
  );
  const f = createFetch({ tape, mode: 'record', summary: false });
  expect(await text(new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: f, maxRetries: 0 }), 10_000)).toBe('thought through');
  await f.close();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

async function text(client: OpenAI, timeout: number): Promise<string> {
  let out = '';
  for await (const ch of await client.chat.completions.create(ask, { timeout })) out += ch.choices[0]?.delta?.content ?? '';
  return out;
}

describe("timing 'recorded': the recorded wait before a stream's headers", () => {
  it('createFetch: an SDK timeout shorter than the recorded time to the headers times out in replay; a longer one gets the answer', async () => {
    const f = createFetch({ tape, mode: 'replay', summary: false, timing: 'recorded' });
    const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: f, maxRetries: 0 });
    const err = await text(client, 300).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(await text(client, 10_000)).toBe('thought through');
    await f.close();
    // Without pacing, the answer comes at once: the same short timeout is met.
    const now = createFetch({ tape, mode: 'replay', summary: false, timing: 'none' });
    expect(await text(new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: now, maxRetries: 0 }), 300)).toBe('thought through');
    await now.close();
  });

  it('the proxy: the same', async () => {
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'replay', port: 0, timing: 'recorded' });
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-x', maxRetries: 0 });
      const err = await text(client, 300).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      expect(await text(client, 10_000)).toBe('thought through');
    } finally {
      await proxy.close();
    }
  });
});
