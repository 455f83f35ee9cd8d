// replayCacheMiddleware and a call made with an already aborted `abortSignal`: live (record mode)
// the model's fetch rejects it with the abort and nothing is stored; in replay the middleware took
// the next recording and answered it, so every later identical call got the answer recorded
// after its own, and the last one missed ("recorded 2 times and this is call 3"). Such a call now
// rejects with the abort's reason in every mode and takes no recording. With the real `ai` and
// @ai-sdk/openai against a fake OpenAI server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayCache, replayCacheMiddleware } from '../../src/store/index.ts';
import { startFake, type FakeServer } from '../proxy/loopback.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ai-sdk-aborted-'));
let n = 0;
let fake: FakeServer;
beforeAll(async () => {
  // Each answer numbered, so a shifted replay shows.
  fake = await startFake((_req, res, body) => {
    n++;
    if (body.includes('"stream":true')) {
      const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: `c${n}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end(chunk({ role: 'assistant', content: `answer ${n}` }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: `c${n}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const modelOn = (cache: ReplayCache) =>
  wrapLanguageModel({ model: createOpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'sk-test-not-real' }).chat('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });

/** A pre-aborted call, then the same prompt twice: what each gave. */
async function run(cache: ReplayCache): Promise<string[]> {
  const model = modelOn(cache);
  const out: string[] = [];
  const aborted = AbortSignal.abort();
  out.push(await generateText({ model, prompt: 'Pick', abortSignal: aborted, maxRetries: 0 }).then((r) => r.text, (e: Error) => `ERR ${e.name}`));
  for (let i = 0; i < 2; i++) out.push(await generateText({ model, prompt: 'Pick', maxRetries: 0 }).then((r) => r.text, (e: Error) => `ERR ${e.message.split('\n')[0]}`));
  return out;
}

describe('replayCacheMiddleware and an aborted call', () => {
  it('an already aborted call rejects with its abort in record and replay, and takes no recording', async () => {
    const tape = join(dir, 'aborted.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    let live: string[];
    try {
      live = await run(rec);
    } finally {
      await rec.close();
    }
    expect(live).toEqual(['ERR AbortError', 'answer 1', 'answer 2']);
    const replay = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await run(replay)).toEqual(live);
    } finally {
      await replay.close();
    }
  });

  it('streamText: an already aborted call gives nothing and takes no recording', async () => {
    const tape = join(dir, 'aborted-stream.tape');
    const texts = async (cache: ReplayCache) => {
      const model = modelOn(cache);
      const out: string[] = [];
      const a = streamText({ model, prompt: 'Stream', abortSignal: AbortSignal.abort(), onError: () => undefined });
      out.push(await a.text.then((t) => t, () => 'ERR'));
      const b = streamText({ model, prompt: 'Stream', onError: () => undefined });
      out.push(await b.text.then((t) => t, () => 'ERR'));
      return out;
    };
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    let live: string[];
    try {
      live = await texts(rec);
    } finally {
      await rec.close();
    }
    const replay = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(live).toEqual(['ERR', 'answer 3']);
      expect(await texts(replay)).toEqual(live);
    } finally {
      await replay.close();
    }
  });
});
