// A user trial: replayCacheMiddleware(ReplayCache.open(path)) (a forgotten await: a Promise) or
// replayCacheMiddleware('tapes/x.tape') made a middleware that failed at the first model call
// with a bare `TypeError: c.get is not a function`. Now an E_ARG when the middleware is made,
// saying what was given and how to pass the cache; a function that gives no cache, at the call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayCache, replayCacheMiddleware } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ai-sdk-args-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as Error & { code?: string; hint?: string };
  }
  return undefined;
};

describe('replayCacheMiddleware: what is given instead of a cache', () => {
  it('a Promise (a forgotten await) is E_ARG at once, asking about the await', async () => {
    const opening = ReplayCache.open(join(dir, 'p.tape'), { mode: 'replay' });
    const e = thrown(() => replayCacheMiddleware(opening as unknown as ReplayCache));
    await (await opening).close();
    expect(e?.code).toBe('E_ARG');
    expect(e?.message).toContain('did you forget await?');
    expect(e?.message).toContain('await ReplayCache.open(path)');
  });

  it('a path string, undefined or another object is E_ARG at once, saying to pass the opened cache', () => {
    const path = thrown(() => replayCacheMiddleware('tapes/x.tape' as unknown as ReplayCache));
    expect(path?.code).toBe('E_ARG');
    expect(path?.message).toContain('is a string ("tapes/x.tape"), not a ReplayCache');
    expect(path?.message).toContain('replayCacheMiddleware(await ReplayCache.open(path))');
    for (const v of [undefined, null, {}, 42]) expect(thrown(() => replayCacheMiddleware(v as unknown as ReplayCache))?.code).toBe('E_ARG');
  });

  it('a function that gives a Promise or a path: E_ARG at the call, not a TypeError', async () => {
    const base = createOpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test-not-real' }).chat('gpt-4o-mini');
    const opening = ReplayCache.open(join(dir, 'f.tape'), { mode: 'replay' });
    for (const [give, words] of [
      [() => opening, 'what the function given returned is a Promise, not a ReplayCache: did you forget await?'],
      [() => 'tapes/x.tape', 'what the function given returned is a string'],
    ] as const) {
      const model = wrapLanguageModel({ model: base, middleware: replayCacheMiddleware(give as unknown as () => ReplayCache) as unknown as LanguageModelMiddleware });
      const e = await generateText({ model, prompt: 'hi', maxRetries: 0 }).then(
        () => undefined,
        (x: unknown) => x as Error & { code?: string },
      );
      expect(e?.code).toBe('E_ARG');
      expect(e?.message).toContain(words);
    }
    await (await opening).close();
  });
});
