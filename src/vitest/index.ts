/**
 * llm-tapedeck/vitest: a tape per test in vitest. `test` is vitest's test with a `tape` in the
 * context (a ready `fetch`, a ReplayCache on request, the global fetch switch), named after the
 * test file and test, closed after the test whatever happens. Add the plugin from
 * `llm-tapedeck/vitest/plugin` to vitest's config for `vitest --mode <tape mode>` and the run
 * summary. docs/vitest.md has the details.
 *
 * @example
 * import { test, expect } from 'llm-tapedeck/vitest'
 * import OpenAI from 'openai'
 * test('says hello', async ({ tape }) => {
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape.fetch })
 *   const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })
 *   expect(r.choices[0].message.content).toBeTruthy()
 * })
 */
export { it, recordCommandFor, tapedeckFixtures, test, testNames, type TapedeckContext, type TapedeckTestOptions } from './fixture.ts';
export type { ProvidedTapedeck } from './provided.ts';
export * from '../testing/index.ts';
// So a test file needs one import line.
export { afterAll, afterEach, beforeAll, beforeEach, describe, expect, vi } from 'vitest';
