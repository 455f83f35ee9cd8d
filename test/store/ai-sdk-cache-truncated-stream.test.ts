// replayCacheMiddleware and a stream the provider cut short: the upstream's event stream ended
// cleanly after a few deltas, with no finish_reason and no `data: [DONE]`. The AI SDK's provider
// still ends the model's stream with a finish part, whose finish reason the provider never gave
// (`{ unified: 'other', raw: undefined }`). That stream was stored as a whole answer and replayed
// as the short one on every run; now it is not stored (a warning says so) and replay misses,
// while streams that finished with a reason the provider gave are stored as before. With the
// real `ai` and @ai-sdk/openai against a fake OpenAI server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayCache, replayCacheMiddleware } from '../../src/store/index.ts';
import { startFake, type FakeServer } from '../proxy/loopback.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ai-sdk-cut-'));
const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const words = (n: number) => Array.from({ length: n }, (_, i) => chunk({ content: `w${i} ` })).join('');

let fake: FakeServer;
beforeAll(async () => {
  // `cut`: 3 of 10 words, then the connection ends cleanly; `length`: all ten, finished by the
  // token limit; else all ten, finished by `stop`.
  fake = await startFake((_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const head = chunk({ role: 'assistant', content: '' });
    if (body.includes('cut')) return res.end(head + words(3));
    res.end(head + words(10) + chunk({}, body.includes('length') ? 'length' : 'stop') + 'data: [DONE]\n\n');
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const modelOn = (cache: ReplayCache) =>
  wrapLanguageModel({ model: createOpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'sk-test-not-real' }).chat('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });

/** The text and finish reason a streamText call gave, or its error. */
async function streamed(cache: ReplayCache, prompt: string): Promise<string> {
  const r = streamText({ model: modelOn(cache), prompt, onError: () => undefined });
  let error = '';
  for await (const p of r.fullStream) if (p.type === 'error') error = String((p.error as Error)?.message ?? p.error);
  if (error) return `ERR ${error}`;
  return `${(await r.text).trim()} finish=${await r.finishReason}`;
}

describe('replayCacheMiddleware and a stream the provider cut short', () => {
  it('does not store a stream whose finish part has no provider finish reason, and says so; stores the finished ones', async () => {
    const tape = join(dir, 'cut.tape');
    const warnings: Error[] = [];
    const on = (w: Error) => warnings.push(w);
    process.on('warning', on);
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    let live: Record<string, string>;
    try {
      live = { cut: await streamed(rec, 'cut'), stop: await streamed(rec, 'whole'), length: await streamed(rec, 'length') };
    } finally {
      await rec.close();
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      process.off('warning', on);
    }
    expect(live.cut).toBe('w0 w1 w2 finish=other');
    expect(live.stop).toMatch(/w9 finish=stop$/);
    expect(live.length).toMatch(/w9 finish=length$/);
    const said = warnings.map((w) => w.message).join('\n');
    expect(said).toMatch(/replayCacheMiddleware: .*gpt-4o-mini.*ended without a finish reason.*not recorded/);
    expect(warnings.filter((w) => /replayCacheMiddleware/.test(w.message)).map((w) => (w as Error & { code?: string }).code)).toEqual(['TAPEDECK_STREAM_CUT']);

    const calls = fake.calls.length;
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await streamed(cache, 'whole')).toBe(live.stop);
      expect(await streamed(cache, 'length')).toBe(live.length);
      expect(await streamed(cache, 'cut')).toMatch(/^ERR .*tapedeck miss/);
    } finally {
      await cache.close().catch(() => undefined);
    }
    expect(fake.calls.length).toBe(calls);
  });

  it('in update mode the cut stream is not stored either: the next run asks the API again', async () => {
    const tape = join(dir, 'update.tape');
    const first = await ReplayCache.open(tape, { mode: 'update' });
    await streamed(first, 'cut again');
    await first.close();
    const before = fake.calls.length;
    const second = await ReplayCache.open(tape, { mode: 'update' });
    try {
      expect(await streamed(second, 'cut again')).toBe('w0 w1 w2 finish=other');
    } finally {
      await second.close();
    }
    expect(fake.calls.length).toBe(before + 1);
  });
});
