/**
 * llm-tapedeck/jest: a tape per jest test. Add the setup file, and the reporter for the run
 * summary (docs/vitest.md, "Jest and mocha"):
 *
 * ```js
 * // jest.config.js
 * module.exports = {
 *   setupFilesAfterEnv: ['llm-tapedeck/jest'],
 *   reporters: ['default', 'llm-tapedeck/jest/reporter'],
 * }
 * ```
 *
 * Each test gets `__tapes__/<file>/<test name>.tape` beside its file; `tape()` is the running
 * test's tape. Jest loads setup files as CommonJS: the package ships this entry bundled as
 * CommonJS too.
 *
 * @example
 * const { tape } = require('llm-tapedeck/jest')
 * test('says hello', async () => {
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape().fetch })
 * })
 */
import { beginTest, configureTapes, endTest, tape } from './runner.ts';

export { configureTapes, tape, type RunnerTapeOptions } from './runner.ts';

interface JestGlobals {
  beforeEach?: (fn: () => unknown) => void;
  afterEach?: (fn: () => unknown) => void;
  expect?: { getState(): { testPath?: string; currentTestName?: string } };
}

const g = globalThis as JestGlobals;
// Imported outside a jest test environment (a script reading `tape`): no hooks to add.
if (typeof g.beforeEach === 'function' && typeof g.afterEach === 'function' && g.expect) {
  g.beforeEach(() => {
    const st = g.expect!.getState();
    beginTest({ file: st.testPath ?? 'unknown.test.js', names: [st.currentTestName ?? 'test'], runner: 'jest' });
  });
  g.afterEach(() => endTest());
}

// Kept for `import tapedeck from 'llm-tapedeck/jest'`.
export default { tape, configureTapes };
