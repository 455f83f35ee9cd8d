// The AI SDK cache: a middleware of docs/api.md with only wrapGenerate left streamText's doStream
// unwrapped, so a streamed call in replay mode went to the live API with no miss and no warning
// (a test suite passed while calling the real API). replayCacheMiddleware wraps both, with the
// real `ai` and @ai-sdk/openai against the loopback fake provider (SSE as OpenAI sends it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayCache, replayCacheMiddleware, withReplayCache, activeReplayCache } from '../../src/store/index.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ai-sdk-cache-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

const modelOn = (cache: ReplayCache | (() => ReplayCache | undefined)) =>
  wrapLanguageModel({ model: createOpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test-not-real' }).chat('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });

const weather = tool({ description: 'weather', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => `sunny in ${city}` });

/** Everything a streamText call gave its caller, dates as ISO text. */
async function streamed(cache: ReplayCache, prompt: string, tools = false) {
  const r = streamText({ model: modelOn(cache), prompt, ...(tools ? { tools: { weather }, stopWhen: stepCountIs(2) } : {}) });
  const parts: unknown[] = [];
  for await (const p of r.fullStream) parts.push(p);
  // The AI SDK names text parts itself (`aitxt-` and a random id), outside the model's stream.
  const json = JSON.stringify(parts).replace(/"aitxt-[A-Za-z0-9]+"/g, '"aitxt-*"');
  return { parts: JSON.parse(json) as { type: string }[], text: await r.text.catch((e: unknown) => `ERR ${String(e)}`) };
}

describe('replayCacheMiddleware', () => {
  it('records a streamText call (with a tool loop) and replays exactly what the caller got, with no call to the API', async () => {
    const tape = join(dir, 'stream.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const live = await streamed(rec, 'Weather in Paris?', true);
    const plain = await streamed(rec, 'Hello there');
    await rec.close();
    expect(plain.text).toMatch(/^Echo \d+: Hello there ?$/);
    expect(live.parts.filter((p) => p.type === 'tool-call')).toHaveLength(2);
    expect(live.parts.some((p) => p.type === 'error')).toBe(false);

    const calls = up.calls.length;
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    const again = await streamed(cache, 'Weather in Paris?', true);
    const plainAgain = await streamed(cache, 'Hello there');
    await cache.close();
    expect(again).toEqual(live);
    expect(plainAgain).toEqual(plain);
    expect(up.calls.length).toBe(calls);
  });

  it('replay mode with no recording: the streamed call fails with the miss and never reaches the API', async () => {
    const calls = up.calls.length;
    const cache = await ReplayCache.open(join(dir, 'empty.tape'), { mode: 'replay' });
    const r = await streamed(cache, 'never recorded');
    await cache.close().catch(() => undefined);
    expect(up.calls.length).toBe(calls);
    const error = r.parts.find((p) => p.type === 'error') as { error?: { code?: string } } | undefined;
    expect(error?.error?.code ?? r.text).toMatch(/E_MISS/);
  });

  it('a generateText recording never answers streamText, nor the other way round', async () => {
    const tape = join(dir, 'kinds.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const generated = await generateText({ model: modelOn(rec), prompt: 'Only generated' });
    await rec.close();
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    expect((await generateText({ model: modelOn(cache), prompt: 'Only generated' })).text).toBe(generated.text);
    const r = await streamed(cache, 'Only generated');
    await cache.close().catch(() => undefined);
    expect(JSON.stringify(r.parts.find((p) => p.type === 'error'))).toContain('E_MISS');
  });

  it('takes the active cache of withReplayCache, and says so when there is none', async () => {
    const tape = join(dir, 'active.tape');
    const model = modelOn(activeReplayCache);
    const live = await withReplayCache(tape, async () => (await generateText({ model, prompt: 'scoped' })).text, { mode: 'record' });
    const calls = up.calls.length;
    expect(await withReplayCache(tape, async () => (await generateText({ model, prompt: 'scoped' })).text, { mode: 'replay' })).toBe(live);
    expect(up.calls.length).toBe(calls);
    await expect(generateText({ model, prompt: 'scoped', maxRetries: 0 })).rejects.toMatchObject({ code: 'E_ARG' });
  });
});

// An image given by URL reaches the middleware as a URL object in a file part's `data`; the tape
// keeps it as the URL's text, which keyed as a text file's digest: a miss for another image
// was worded as a `mediaType` difference, and a tape opened with other ignoreArgs (which keys
// its records again from their stored requests) missed the very request it had recorded.
describe('replayCacheMiddleware and an image by URL', () => {
  const ask = (cache: ReplayCache, image: string) =>
    generateText({ model: modelOn(cache), temperature: 0, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', image: new URL(image) }] }] });

  it('replays it, also keyed again from the tape; another URL misses as an image difference', async () => {
    const tape = join(dir, 'image-url.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const live = await ask(rec, 'https://example.com/cat.png');
    await rec.close();

    const calls = up.calls.length;
    const rekeyed = await ReplayCache.open(tape, { mode: 'replay', ignoredArgs: ['temperature'] });
    try {
      expect((await ask(rekeyed, 'https://example.com/cat.png')).text).toBe(live.text);
    } finally {
      await rekeyed.close();
    }
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      const miss = await ask(cache, 'https://example.com/dog.png').then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(miss?.message).toContain('message 0 (user) file differs from the closest recording');
      expect(miss?.message).not.toContain('mediaType');
    } finally {
      await cache.close();
    }
    expect(up.calls.length).toBe(calls);
  });
});
