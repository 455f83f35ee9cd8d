// A user trial: replayCacheMiddleware keyed a call by the model id and its call options, not the
// model's provider, so an Anthropic model (or openai.responses, or Azure) with the same model id
// was served an OpenAI chat recording, providerMetadata.openai and all, with no miss. Recordings
// now store the provider beside the model id (keyed as the model id alone, so tapes recorded
// before still replay, as they did) and one made for another provider is never served.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, wrapLanguageModel, type LanguageModel, type LanguageModelMiddleware } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayCache, readTape, replayCacheMiddleware } from '../../src/store/index.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ai-sdk-provider-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

const openai = () => createOpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test-not-real' });
const chat = () => openai().chat('gpt-4o-mini');
const responses = () => openai().responses('gpt-4o-mini');
const anthropic = () => createAnthropic({ baseURL: `${up.url}/v1`, apiKey: 'not-real' })('gpt-4o-mini');

const on = (base: Exclude<LanguageModel, string>, cache: ReplayCache, middleware: unknown = replayCacheMiddleware(cache)) =>
  wrapLanguageModel({ model: base as Parameters<typeof wrapLanguageModel>[0]['model'], middleware: middleware as LanguageModelMiddleware });

/** The middleware as released before providers were stored: the request keyed `{ model: modelId, ...params }`. */
const legacyMiddleware = (c: ReplayCache) => ({
  specificationVersion: 'v3',
  async wrapGenerate({ doGenerate, params, model }: { doGenerate: () => Promise<unknown>; params: Record<string, unknown>; model: { modelId: string } }) {
    const request = { model: model.modelId, ...params };
    const hit = await c.get(request);
    if (hit !== undefined) return hit;
    const result = await doGenerate();
    await c.put(request, result);
    return result;
  },
});

const failure = (p: PromiseLike<unknown>) =>
  Promise.resolve(p).then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string; details?: Record<string, unknown> },
  );

describe('replayCacheMiddleware: the provider of a recording', () => {
  it('stores the provider beside the model id, and serves an OpenAI chat recording to that model only', async () => {
    const tape = join(dir, 'chat.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const live = await generateText({ model: on(chat(), rec), prompt: 'Weather in Paris?', temperature: 0 });
    await rec.close();
    const { records } = await readTape(tape);
    expect((records[0]!.value as { request: { model: unknown } }).request.model).toEqual({ modelId: 'gpt-4o-mini', provider: 'openai.chat' });

    const calls = up.calls.length;
    for (const other of [anthropic(), responses()]) {
      const cache = await ReplayCache.open(tape, { mode: 'replay' });
      const e = await failure(generateText({ model: on(other, cache), prompt: 'Weather in Paris?', temperature: 0, maxRetries: 0 }));
      await cache.close();
      expect(e?.code).toBe('E_MISS');
      expect(e?.message).toContain(`tapedeck miss: recorded for provider openai.chat, and this model is ${other.provider} (model id gpt-4o-mini`);
      expect(e?.details).toMatchObject({ kind: 'provider', recordedProvider: 'openai.chat', provider: other.provider, file: tape });
    }
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    expect((await generateText({ model: on(chat(), cache), prompt: 'Weather in Paris?', temperature: 0 })).text).toBe(live.text);
    await cache.close();
    expect(up.calls.length).toBe(calls);
  });

  it('a streamed recording is not served to another provider either', async () => {
    const tape = join(dir, 'stream.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const r = streamText({ model: on(chat(), rec), prompt: 'Stream it' });
    await r.text;
    await rec.close();
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    const parts: { type: string; error?: { code?: string } }[] = [];
    for await (const p of streamText({ model: on(anthropic(), cache), prompt: 'Stream it', maxRetries: 0 }).fullStream) parts.push(p as (typeof parts)[number]);
    await cache.close();
    expect(parts.find((p) => p.type === 'error')?.error?.code).toBe('E_MISS');
    expect(parts.some((p) => p.type === 'text-delta')).toBe(false);
  });

  it('update mode: a recording of another provider is a miss too, and nothing is appended that could never be served', async () => {
    const tape = join(dir, 'update.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    await generateText({ model: on(chat(), rec), prompt: 'Updated?' });
    await rec.close();
    const calls = up.calls.length;
    const cache = await ReplayCache.open(tape, { mode: 'update' });
    const e = await failure(generateText({ model: on(anthropic(), cache), prompt: 'Updated?', maxRetries: 0 }));
    // A call this tape has no recording of is still recorded.
    await generateText({ model: on(anthropic(), cache), prompt: 'New in update' });
    await cache.close();
    expect(e?.code).toBe('E_MISS');
    expect(e?.message).toContain('update mode adds recordings but never replaces one');
    expect(up.calls.length).toBe(calls + 1);
    expect((await readTape(tape)).records).toHaveLength(2);
  });

  it('one prompt asked of two providers: each is served its own recording', async () => {
    const tape = join(dir, 'both.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const a = await generateText({ model: on(chat(), rec), prompt: 'Same prompt' });
    const b = await generateText({ model: on(anthropic(), rec), prompt: 'Same prompt' });
    await rec.close();
    expect(Object.keys(a.providerMetadata ?? {})).not.toContain('anthropic');
    const calls = up.calls.length;
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    const a2 = await generateText({ model: on(chat(), cache), prompt: 'Same prompt' });
    const b2 = await generateText({ model: on(anthropic(), cache), prompt: 'Same prompt' });
    await cache.close();
    expect([a2.text, b2.text]).toEqual([a.text, b.text]);
    expect(b2.providerMetadata).toEqual(b.providerMetadata);
    expect(up.calls.length).toBe(calls);
  });

  it("another provider's model asked first (a fallback order) does not use up the recording: the model it was made for is still served it", async () => {
    const tape = join(dir, 'fallback.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const live = await generateText({ model: on(chat(), rec), prompt: 'Fallback first', temperature: 0 });
    await rec.close();
    const calls = up.calls.length;
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    const e = await failure(generateText({ model: on(anthropic(), cache), prompt: 'Fallback first', temperature: 0, maxRetries: 0 }));
    expect(e?.details).toMatchObject({ kind: 'provider', recordedProvider: 'openai.chat' });
    expect((await generateText({ model: on(chat(), cache), prompt: 'Fallback first', temperature: 0 })).text).toBe(live.text);
    await cache.close();
    expect(up.calls.length).toBe(calls);
  });

  it('a tape recorded before providers were stored still replays, for any provider (as it did)', async () => {
    const tape = join(dir, 'legacy.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const live = await generateText({ model: on(chat(), rec, legacyMiddleware(rec)), prompt: 'Old tape', temperature: 0 });
    await rec.close();
    expect((await readTape(tape)).records[0]!.value).toMatchObject({ request: { model: 'gpt-4o-mini' } });
    const calls = up.calls.length;
    for (const model of [chat(), anthropic()]) {
      const cache = await ReplayCache.open(tape, { mode: 'replay' });
      expect((await generateText({ model: on(model, cache), prompt: 'Old tape', temperature: 0 })).text).toBe(live.text);
      await cache.close();
    }
    expect(up.calls.length).toBe(calls);
  });
});
