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
import { TapedeckError } from '../errors.ts';
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

const g = jestGlobals();
// Imported outside a jest test environment (a script reading `tape`): no hooks to add.
if (g) {
  g.beforeEach(() => {
    const st = g.expect.getState();
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
 * jest's hooks and expect: the globals jest injects or, with `injectGlobals: false` (the tests
 * take them from @jest/globals), that module, which jest's own require gives a setup file. Not
 * in a jest test environment (a script reading `tape`, a globalSetup module): none.
 */
function jestGlobals(): Required<JestGlobals> | undefined {
  const injected = globalThis as JestGlobals;
  if (typeof injected.beforeEach === 'function' && typeof injected.afterEach === 'function' && injected.expect) return injected as Required<JestGlobals>;
  // jest-circus keeps its state on the global object of a test environment (see runningTest).
  if (circusStateSymbol() === undefined) return undefined;
  // Only jest's require (the CommonJS bundle's, in a setup file) has the module: in an ES module
  // (jest with --experimental-vm-modules) there is no require to ask.
  let fromModule: JestGlobals | undefined;
  let why = 'this entry was loaded as an ES module, where jest gives no require';
  if (typeof require === 'function') {
    try {
      fromModule = require('@jest/globals') as JestGlobals;
    } catch (e) {
      why = `require('@jest/globals') failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  if (fromModule && typeof fromModule.beforeEach === 'function' && typeof fromModule.afterEach === 'function' && fromModule.expect) return fromModule as Required<JestGlobals>;
  // Without the hooks no test would get a tape, and tape() would say to add this setup file.
  throw new TapedeckError('E_ARG', `llm-tapedeck/jest found no beforeEach and afterEach to register its hooks with: jest does not inject its globals (injectGlobals: false), and ${why}.`, {
    option: 'injectGlobals',
    hint: "List llm-tapedeck/jest in setupFilesAfterEnv of a CommonJS jest setup (it takes the hooks from @jest/globals there), or set injectGlobals: true in the jest config.",
  });
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
  const sym = circusStateSymbol();
  const st = sym ? (globalThis as Record<symbol, { currentlyRunningTest?: { errors?: unknown[]; invocations?: number } | null } | undefined>)[sym] : undefined;
  return st?.currentlyRunningTest ?? undefined;
}

/** The symbol jest-circus keeps its state under on the global object, if any (see runningTestErrors). */
function circusStateSymbol(): symbol | undefined {
  return Object.getOwnPropertySymbols(globalThis).find((s) => s.description === 'JEST_STATE_SYMBOL');
}

// Kept for `import tapedeck from 'llm-tapedeck/jest'`.
export default { tape, configureTapes };
