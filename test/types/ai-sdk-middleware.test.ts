// replayCacheMiddleware(cache) is assignable to the AI SDK's `wrapLanguageModel` middleware: its
// wrapGenerate / wrapStream returned Promise<unknown>, which a strict project refused
// ("Type 'unknown' is not assignable to type 'LanguageModelV3GenerateResult'"), so the README's
// example did not compile without a cast. tsc runs over test/types/ai-sdk/*.ts, which compiles
// the example against the real `ai` and @ai-sdk/openai in node_modules.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('replayCacheMiddleware types', () => {
  it("the README's wrapLanguageModel({ model, middleware: replayCacheMiddleware(cache) }) compiles under strict TypeScript", () => {
    const root = join(import.meta.dirname, '..', '..');
    let out = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'test', 'types', 'ai-sdk', 'tsconfig.json')], { encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(out).toBe('');
  });
});
