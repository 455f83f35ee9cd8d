/**
 * llm-tapedeck/mocha: a tape per mocha test, and the run summary at the end, in one line:
 *
 * ```js
 * // .mocharc.json: { "require": ["llm-tapedeck/mocha"] }   or   mocha --require llm-tapedeck/mocha
 * ```
 *
 * Each test gets `__tapes__/<file>/<suite>/<test>.tape` beside its file; `tape()` (or
 * `this.tape` in a `function () {}` test) is the running test's tape. docs/vitest.md.
 *
 * @example
 * import { tape } from 'llm-tapedeck/mocha'
 * it('says hello', async () => {
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape().fetch })
 * })
 */
import { failedWithTapeError, SKIPPED_AFTER_MISS } from './miss.ts';
import { writeFileNote } from './run-report.ts';
import { nthOfEach } from './test-identity.ts';
import { beginTest, CLOSE_HOOK_TIMEOUT_MS, configuredTapeFolder, endRun, endTest, missFailure, notPruning, runningCallsSettled, startRun } from './runner.ts';

export { configureTapes, tape, type RunnerTapeOptions } from './runner.ts';

type TestFn = (this: unknown, ...args: unknown[]) => unknown;

interface MochaTest {
  file?: string;
  titlePath(): string[];
  fn?: TestFn;
  currentRetry?(): number;
  parent?: MochaSuite;
  state?: string;
  /** Set by `this.skip()`: mocha reports the test pending, whatever error it ended with. */
  pending?: boolean;
}
interface MochaContext {
  currentTest?: MochaTest;
  /** In a test's function: the test running (mocha's Context sets it). */
  test?: MochaTest;
  tape?: unknown;
  /** The running hook's or test's timeout (mocha's Context): read without an argument, set with one. */
  timeout?(ms?: number): unknown;
}

/** Per root suite: each test's place among the tests of its file with the same title path (1: the first). */
const nthByRoot = new WeakMap<MochaSuite, Map<MochaTest, number>>();

/**
 * Which test of its title path in its file this is, counted over the tests as they are written,
 * run or not (a `--grep` or `.only` never changes it); undefined for a test not in the tree (a
 * retry is a copy of its test: the runner counts it as the test it retries).
 */
function nthOfItsName(t: MochaTest): number | undefined {
  let root = t.parent;
  if (root === undefined) return undefined;
  while (root.parent) root = root.parent;
  let nth = nthByRoot.get(root);
  if (nth === undefined) {
    nth = nthOfEach(testsOf(root), (test) => `${test.file ?? ''}\u0000${test.titlePath().join('\u0000')}`);
    nthByRoot.set(root, nth);
  }
  return nth.get(t);
}

/** The tests of a suite and of the suites under it, in the order mocha lists them. */
function* testsOf(suite: MochaSuite): Generator<MochaTest> {
  yield* suite.tests ?? [];
  for (const child of suite.suites ?? []) yield* testsOf(child);
}

/** Test functions already wrapped by {@link failsOnMiss} (a retried test keeps its wrapper). */
const wrapped = new WeakSet<TestFn>();
/** Tests whose tape is open: the hooks run once per test even when mocha registered them twice. */
const opened = new WeakSet<object>();

/**
 * What a test ends with: its own error, or, when a request missed, the miss (with the record
 * command), even if the test's code caught it. A test that failed with the miss itself keeps
 * its error; one that failed with something else (what a library made of the miss) gets the
 * miss, its own message after it.
 */
function outcome(err: unknown, test: MochaTest | undefined): unknown {
  const failure = missFailure();
  if (!failure || (err !== undefined && err !== null && failedWithTapeError([err]))) return err;
  if (test?.pending) {
    // `catch { this.skip() }`: mocha reports a test that called this.skip() as pending, whatever
    // error it ends with, and the run would pass with no recording behind the test. Unmarked,
    // it fails with the miss (a done-style test's this.skip() ends it before this wrapper
    // hears of it: the run fails for it instead, see afterEach).
    test.pending = false;
    failure.message += `\n${SKIPPED_AFTER_MISS}`;
    return failure;
  }
  if (err !== undefined && err !== null) failure.message += `\nThe test failed with: ${err instanceof Error ? err.message : String(err)}`;
  return failure;
}

/**
 * The test function, failing when a request of the test missed. Failing the after-each hook
 * instead would make mocha skip the rest of the suite; a failing test does not. The wrapper
 * keeps the arity mocha reads (`done`-style tests take one argument). A test is judged once the
 * calls it made are answered (runningCallsSettled): one it did not await reaches its fetch a few
 * ticks after the test's function returned, and its miss fails the test too.
 */
function failsOnMiss(fn: TestFn): TestFn {
  let out: TestFn;
  if (fn.length > 0) {
    out = function (this: unknown, done: unknown) {
      const test = (this as MochaContext | undefined)?.test;
      try {
        return fn.call(this, (err?: unknown) => {
          void runningCallsSettled().then(() => (done as (e?: unknown) => void)(outcome(err, test)));
        });
      } catch (e) {
        throw outcome(e, test);
      }
    };
  } else {
    out = function (this: unknown) {
      const test = (this as MochaContext | undefined)?.test;
      let r: unknown;
      const end = async (err?: unknown) => {
        await runningCallsSettled();
        const e = outcome(err, test);
        if (e !== undefined) throw e;
        return r;
      };
      try {
        r = fn.call(this);
      } catch (e) {
        // A synchronous this.skip(): judged once the calls the test did not await are answered
        // (mocha takes the rejection as it took the throw).
        if (test?.pending) return end(e);
        throw outcome(e, test);
      }
      // A test that returns no promise gets one: mocha waits for it (a synchronous test can
      // start a call it does not await as well as an async one can).
      if (r && typeof (r as PromiseLike<unknown>).then === 'function') return Promise.resolve(r).then(() => end(), (e: unknown) => end(e ?? new Error(String(e))));
      return end();
    };
  }
  wrapped.add(out);
  return out;
}

/** Root hooks (mocha's --require plugin): open the test's tape before it, close it after. */
export const mochaHooks = {
  beforeEach(this: MochaContext): void {
    const t = this.currentTest;
    if (t && opened.has(t)) return;
    if (t) opened.add(t);
    // this.retries(n): a retried test is a copy of it that knows its attempt.
    this.tape = beginTest({ file: t?.file ?? 'unknown.test.js', names: t ? t.titlePath() : ['test'], runner: 'mocha', retry: t?.currentRetry?.() ?? 0, nth: t ? nthOfItsName(t) : undefined });
    if (t?.fn && !wrapped.has(t.fn)) t.fn = failsOnMiss(t.fn);
  },
  async afterEach(this: MochaContext): Promise<void> {
    const t = this.currentTest;
    if (t && !opened.has(t)) return;
    if (t) opened.delete(t);
    this.tape = undefined;
    // mocha's hook timeout (2 s by default) would fail this hook before a bounded close ends
    // (a call still waiting for the upstream), and mocha would skip the rest of the suite. No
    // timeout (0) stays none.
    const limit = this.timeout?.();
    if (typeof limit === 'number' && limit > 0 && limit < CLOSE_HOOK_TIMEOUT_MS) this.timeout?.(CLOSE_HOOK_TIMEOUT_MS);
    // Still pending after a miss: the test skipped itself where its wrapper could not fail it (a
    // done-style test's this.skip() ends it at once; a user's beforeEach hook that skips). A
    // failing after-each hook would skip the rest of the suite: the run fails for it instead,
    // in the summary (see MissReport.skipped). Passed: its wrapper found no miss, and mocha has
    // reported it passed before running the afterEach hooks of its describe blocks (this root
    // hook runs last): a miss now was made in one of those, and the run fails for it the same
    // way (see MissReport.afterPass).
    await endTest({ skipped: t?.pending === true, passed: t?.state === 'passed' });
  },
  // In parallel mode each file runs in a worker, and the main process that prints the summary
  // holds none of its tests: the worker notes the files every test of which ran and passed, so
  // a deleted test's tape in their folders is found there too.
  afterAll(this: { test?: { parent?: MochaSuite } }): void {
    const dir = process.env.TAPEDECK_RUN_DIR;
    if (!dir) return;
    try {
      for (const file of completeFiles({ suite: this.test?.parent })) writeFileNote(dir, { file, complete: true });
    } catch {
      // the summary is advice: without the note this file's folder is not searched
    }
  },
};

let runDir: string | undefined;

/** Global fixture: the run directory, made before any test (and worker) starts. */
export function mochaGlobalSetup(): void {
  runDir = startRun();
}

/** What is read of mocha's suites: their tests (file, title, outcome), child suites and parent. */
interface MochaSuite {
  total?(): number;
  hasOnly?(): boolean;
  tests?: MochaTest[];
  suites?: MochaSuite[];
  parent?: MochaSuite;
}

/** What the global teardown reads of mocha's runner (its `this`): the run's counts and suites. */
interface MochaRunner {
  stats?: { passes?: number; failures?: number; pending?: number };
  total?: number;
  suite?: MochaSuite;
  /** The runner's test filter (`--grep`, `--fgrep`), and the one that lets every test through. */
  _grep?: unknown;
  _defaultGrep?: unknown;
}

/** Whether a test or suite of the run was marked `.only` (mocha then ran those alone). */
const hasOnly = (runner: MochaRunner | undefined): boolean => runner?.suite?.hasOnly?.() === true;

/**
 * The test files every test of which ran and passed under a suite (the runner's, or in a
 * parallel worker one file's root suite): a tape in such a file's folder that no test opened
 * belonged to a deleted or renamed test.
 *
 * @example
 * completeFiles({ suite: { suites: [{ tests: [{ file: '/p/a.test.mjs', state: 'passed' }] }] } }) // ['/p/a.test.mjs']
 */
function completeFiles(runner: MochaRunner | undefined): string[] {
  if (hasOnly(runner)) return []; // a file's tests that .only left out are in none of its suites
  const ok = new Map<string, boolean>();
  for (const t of runner?.suite ? testsOf(runner.suite) : []) if (t.file) ok.set(t.file, (ok.get(t.file) ?? true) && t.state === 'passed');
  return [...ok].filter(([, passed]) => passed).map(([f]) => f);
}

/**
 * Why a mocha run's unused recordings cannot be pruned, or undefined: a test that failed before
 * its last call, one pending (`it.skip`) or filtered out with `--grep` leaves recordings unused
 * that it still needs.
 *
 * @example
 * whyNotPruneMocha({ stats: { failures: 1 } }) // 'the run did not pass (1 test failed)'
 */
function whyNotPruneMocha(runner: MochaRunner | undefined): string | undefined {
  const stats = runner?.stats;
  if (!stats) return 'mocha gave no results';
  const failed = stats.failures ?? 0;
  if (failed > 0) return notPruning.failed(failed);
  if ((stats.pending ?? 0) > 0) return notPruning.notRun(stats.pending!);
  // The tests .only left out are not pending, and mocha counts only those it ran.
  if (hasOnly(runner)) return notPruning.filtered('.only');
  // --grep: the runner runs fewer tests than its suites hold. In parallel mode the main process
  // holds no tests to compare, and the workers filter with the filter this runner was given:
  // one is set, so tests the workers left out may need what looks unused.
  const all = runner.suite?.total?.() ?? 0;
  if (all > 0 && runner.total !== undefined && runner.total < all) return notPruning.filtered('--grep');
  if (all === 0 && runner._grep !== undefined && runner._grep !== runner._defaultGrep) return notPruning.filtered('--grep');
  return undefined;
}

/** Global fixture: the run summary (mocha calls it with its runner as `this`). */
export async function mochaGlobalTeardown(this: MochaRunner | undefined): Promise<void> {
  if (!runDir) return;
  const folder = configuredTapeFolder();
  const failure = await endRun(runDir, 'npx mocha --require llm-tapedeck/mocha', undefined, whyNotPruneMocha(this), { files: completeFiles(this), tapeFolder: folder ?? (() => undefined) });
  // Said in the summary already. Mocha sets its exit code (its failures) in an exit listener of
  // its own added after this one, and ignores an error thrown here: exiting 1 from this listener
  // comes first, in --exit mode too. A run with failed tests fails anyway.
  if (failure !== undefined && !((this?.stats?.failures ?? 0) > 0)) process.once('exit', () => process.exit(1));
}
