// A streamed chat answer recorded for a caller that asked for usage (`stream_options:
// { include_usage: true }`): OpenAI then sends one more chunk after the one with the finish
// reason, the usage chunk with empty `choices`, and only then `data: [DONE]`. A stream that ended
// after the finish reason without it (the connection closed early) was recorded as a whole
// answer, so replay served an answer without usage where the API gives one. Now such a stream is
// judged cut, as any stream that ends before its end: not recorded, a warning, an error in the
// stats; a stream that brought its usage chunk is recorded as before.
import OpenAI from 'openai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFake, type FakeServer } from './loopback.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-usage-cut-'));
let fake: FakeServer;

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini-2024-07-18', choices, ...extra })}\n\n`;
const USAGE = { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 };

beforeAll(async () => {
  // The user's text says how the stream ends: `whole` (usage chunk, then [DONE]), `no-usage`
  // (the finish reason, then the connection closes), `no-done` (the usage chunk, then it closes).
  fake = await startFake((_req, res, body) => {
    const how = (JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    res.write(chunk([{ index: 0, delta: { content: 'Hello' }, finish_reason: null }]));
    res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
    if (how !== 'no-usage') res.write(chunk([], { usage: USAGE }));
    res.end(how === 'whole' ? 'data: [DONE]\n\n' : '');
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Reads a streamed answer to its end: the text and the usage it brought. */
async function streamed(client: OpenAI, how: string): Promise<{ text: string; usage: unknown }> {
  const s = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: how }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage: unknown = null;
  for await (const c of s) {
    text += c.choices[0]?.delta.content ?? '';
    if (c.usage) usage = c.usage;
  }
  return { text, usage };
}

/** Recordings on a tape; 0 when nothing was ever written to it. */
const recordings = async (tape: string) => (existsSync(tape) ? (await readTape(tape)).records.length : 0);

describe('a streamed chat answer that asked for usage, recorded', () => {
  it('createFetch: ending after the finish reason without the usage chunk is not recorded', async () => {
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m), summary: false });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${fake.url}/v1`, fetch: f, maxRetries: 0 });
      // The client got what came: the text, no usage.
      expect(await streamed(client, 'no-usage')).toEqual({ text: 'Hello', usage: null });
      await f.close();
      expect(await f.stats()).toMatchObject({ errors: 1, recorded: 0 });
    } finally {
      await f.close();
    }
    expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: the upstream's event stream ended before the answer was complete \(the usage chunk asked for with stream_options\.include_usage never came\); not recorded/);
    expect(await recordings(tape)).toBe(0);
  });

  it('tapedeck serve: the same stream is not recorded either', async () => {
    const tape = join(dir, 'proxy.tape');
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      expect(await streamed(new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 }), 'no-usage')).toEqual({ text: 'Hello', usage: null });
      expect(proxy.handler.stats()).toMatchObject({ errors: 1, recorded: 0 });
    } finally {
      await proxy.close();
    }
    expect(warnings.join('\n')).toMatch(/the usage chunk asked for with stream_options\.include_usage never came\); not recorded/);
    expect(await recordings(tape)).toBe(0);
  });

  it('a stream that brought its usage chunk is recorded, with or without [DONE], and replays its usage', async () => {
    for (const how of ['whole', 'no-done']) {
      const tape = join(dir, `${how}.tape`);
      const f = createFetch({ tape, mode: 'record', summary: false });
      try {
        expect(await streamed(new OpenAI({ apiKey: 'sk-test', baseURL: `${fake.url}/v1`, fetch: f, maxRetries: 0 }), how)).toEqual({ text: 'Hello', usage: USAGE });
      } finally {
        await f.close();
      }
      expect(await recordings(tape)).toBe(1);
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await streamed(new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch: play, maxRetries: 0 }), how)).toEqual({ text: 'Hello', usage: USAGE });
      } finally {
        await play.close();
      }
    }
  });
});
