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
 *
 * @example
 * // test.concurrent starts before beforeEach hooks run: open the tape in the test
 * const { openTestTape } = require('llm-tapedeck/jest')
 * test.concurrent('says hello', async () => {
 *   const t = openTestTape({ tape: `${__dirname}/__tapes__/says-hello.tape` })
 *   try { ... t.fetch ... } finally { await t.close() }
 * })
 */
import { failedWithTapeError } from './miss.ts';
import { beginTest, CLOSE_HOOK_TIMEOUT_MS, configureTapes, endTest, tape } from './runner.ts';

export { configureTapes, tape, type RunnerTapeOptions } from './runner.ts';
// jest's CommonJS runtime cannot require the package's ES module entries (llm-tapedeck/testing,
// /fetch, the root) on Node before 24.9: this entry, bundled as CommonJS, also gives what a jest
// test takes from them. openTestTape opens the tape of a test.concurrent test, which starts
// before any beforeEach hook.
export { openTestTape, type TestTape, type TestTapeOptions } from './session.ts';
export { createFetch, type FetchOptions, type TapedeckFetch } from '../proxy/fetch.ts';
export { TapedeckError, type TapedeckErrorCode } from '../errors.ts';

interface JestGlobals {
  beforeEach?: (fn: () => unknown) => void;
  afterEach?: (fn: () => unknown, timeout?: number) => void;
  expect?: { getState(): { testPath?: string; currentTestName?: string } };
}

const g = globalThis as JestGlobals;
// Imported outside a jest test environment (a script reading `tape`): no hooks to add.
if (typeof g.beforeEach === 'function' && typeof g.afterEach === 'function' && g.expect) {
  g.beforeEach(() => {
    const st = g.expect!.getState();
    // jest.retryTimes: the test's invocations count its attempts, this one included.
    const invocations = runningTest()?.invocations ?? 1;
    beginTest({ file: st.testPath ?? 'unknown.test.js', names: [st.currentTestName ?? 'test'], runner: 'jest', retry: Math.max(0, invocations - 1) });
  });
  // A test in which a request missed fails, even if its code caught the miss: a failing
  // afterEach fails that test (and only it) in jest-circus. A test that already failed with the
  // miss itself is not told twice. The misses are read once the tape is closed: a call the test
  // did not await is answered by then, and its miss counts too. An attempt of a retried test
  // (jest.retryTimes) that missed nothing fails all the same when an earlier attempt missed: a
  // retry does not hide a miss.
  g.afterEach(async () => {
    const failure = await endTest();
    if (failure && !failedWithTapeError(runningTestErrors())) throw failure;
    // jest's default hook timeout (its test timeout, 5 s) would fail this hook before a bounded
    // close ends, and the tape would be written after the run's summary.
  }, CLOSE_HOOK_TIMEOUT_MS);
}

/**
 * The errors the running test failed with so far. jest-circus keeps its state on the global
 * object under a symbol it does not register (`Symbol('JEST_STATE_SYMBOL')`), so it is found by
 * its description; none found (another runner), none known.
 */
function runningTestErrors(): unknown[] {
  return runningTest()?.errors ?? [];
}

/** jest-circus's running test (see runningTestErrors), if found. */
function runningTest(): { errors?: unknown[]; invocations?: number } | undefined {
  const sym = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === 'JEST_STATE_SYMBOL');
  const st = sym ? (globalThis as Record<symbol, { currentlyRunningTest?: { errors?: unknown[]; invocations?: number } | null } | undefined>)[sym] : undefined;
  return st?.currentlyRunningTest ?? undefined;
}

// Kept for `import tapedeck from 'llm-tapedeck/jest'`.
export default { tape, configureTapes };
