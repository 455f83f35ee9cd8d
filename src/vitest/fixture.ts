/**
 * The vitest fixture: `tape` in a test's context is a test tape named after the test file and the
 * test, opened on first use and closed after the test whatever its outcome (pass, fail, timeout).
 * A test that made a request no recording answers fails, even if the code under test swallowed
 * the error, with the short diagnosis and the command that records it.
 */
import { inject, test as base, type TestContext } from 'vitest';
import { relative, resolve } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { defaultTapePath, type TapeNamer } from '../testing/names.ts';
import { maskRedisUrl, typedRedisUrl } from '../store/backends/redis-connection.ts';
import { failedWithTapeError, missedInEarlierAttempt, SKIPPED_AFTER_ERROR, SKIPPED_AFTER_MISS } from '../testing/miss.ts';
import { openTestTape, regexEscape, resolveTestStore, shellQuote, STORE_ENV, TEST_TAPE_OPTION_NAMES, type InstallOptions, type TestTape, type TestTapeOptions } from '../testing/session.ts';
import { DECK_OPTION_NAMES } from '../proxy/deck.ts';
import { FETCH_OPTION_NAMES } from '../proxy/fetch.ts';
import { checkOptionNames, namesWithout, optionNames } from '../option-names.ts';
import { checkRedactOptions, REDACT_INNER } from '../store/redact-options.ts';
import { nthOfEach, nthOfName, testPath } from '../testing/test-identity.ts';
import type { FetchSwitch } from '../proxy/global-fetch.ts';
import type { ProvidedTapedeck } from './provided.ts';


/** Options of the fixture; every createFetch option (match, ignoreArgs, redact, timing...) applies too. */
export interface TapedeckTestOptions extends Omit<TestTapeOptions, 'tape' | 'test' | 'file' | 'recordCommand' | 'runDir' | 'cliMode' | 'root'> {
  /** Folder of the tapes, relative to the project root (default `__tapes__` beside each test file). */
  dir?: string;
  /** Names a tape from the test file and names (default: {@link defaultTapePath}). */
  name?: TapeNamer;
  /** One tape per test (default) or one per test file, shared by its tests. */
  per?: 'test' | 'file';
  /** The command that runs the tests, used in printed record commands (default `npx vitest run`). */
  testCommand?: string;
}

/** The fixture's option names: a test tape's, but those the fixture sets itself. */
const FIXTURE_OPTIONS = optionNames<TapedeckTestOptions>()([
  ...namesWithout(DECK_OPTION_NAMES, 'tape', 'test'),
  ...FETCH_OPTION_NAMES,
  ...namesWithout(TEST_TAPE_OPTION_NAMES, 'file', 'recordCommand', 'runDir', 'cliMode', 'root'),
  'dir',
  'name',
  'per',
  'testCommand',
]);

/** The test context a tape fixture adds. */
export interface TapedeckContext {
  tape: TestTape;
}

function provided(): ProvidedTapedeck {
  try {
    return inject('tapedeck') ?? {};
  } catch {
    return {};
  }
}

/** Suite names and the test's name, outermost first (the file is not a name). */
export function testNames(task: TestContext['task']): string[] {
  const names = [task.name];
  for (let s = task.suite; s && s !== (task.file as unknown); s = s.suite) {
    if (s.name) names.unshift(s.name);
  }
  return names;
}

type Task = TestContext['task'];
interface TaskTree {
  type: string;
  tasks?: TaskTree[];
}

/** Per test file: each test's place among the tests of its file with the same names (1: the first). */
const nthByFile = new WeakMap<object, Map<Task, number>>();

/** The tests under `tasks`, in the order the file lists them. */
function* testsOf(tasks: readonly TaskTree[]): Generator<Task> {
  for (const t of tasks) {
    if (t.tasks) yield* testsOf(t.tasks);
    else if (t.type === 'test') yield t as unknown as Task;
  }
}

/**
 * Which test of its names in its file this is, counted over the file's tests as they are
 * written, run or not: so a filter (`-t`, a line number, `.only`) never changes it.
 */
function nthOfItsName(task: Task): number {
  const file = task.file as unknown as TaskTree;
  let nth = nthByFile.get(file);
  if (nth === undefined) {
    nth = nthOfEach(testsOf(file.tasks ?? []), (t) => testNames(t).join('\u0000'));
    nthByFile.set(file, nth);
  }
  return nth.get(task) ?? 1;
}

/**
 * The names vitest matches `-t` against, outermost first: every task up the test's suite chain,
 * as vitest's own full name is built (the file's task too, in a vitest that puts it there).
 */
function filterNames(task: TestContext['task']): string[] {
  const names: string[] = [];
  for (let t: { name: string; suite?: unknown } | undefined = task; t; t = t.suite as typeof t) names.unshift(t.name);
  return names;
}

/**
 * The command that records one test: update mode (what is recorded stays, what is missing is
 * recorded), that file, that test. Vitest matches `-t` against the suite names and the test
 * name joined by spaces, so the pattern is that text, escaped, anchored at both ends: anchored
 * at its end only, `-t 'chat says hello$'` also ran the test `says hello` of a suite `old chat`
 * (and, with TAPEDECK_MODE=record, re-recorded it). When the
 * run's store came from TAPEDECK_STORE (`storeFromEnv`), the command sets it too, with a
 * password shown as `***` (never printed: put yours back, or keep the variable in your
 * environment and drop that part).
 *
 * @example
 * recordCommandFor('test/chat.test.ts', ['chat', 'says hello'])
 * // "TAPEDECK_MODE=update npx vitest run test/chat.test.ts -t '^chat says hello$'"
 */
export function recordCommandFor(file: string, names: readonly string[], testCommand = 'npx vitest run', storeFromEnv?: string): string {
  const t = names.length > 0 ? ` -t ${shellQuote(`^${regexEscape(names.join(' '))}$`)}` : '';
  // `<password>` where the password goes: the mask run as written is a wrong password.
  const store = storeFromEnv ? `${STORE_ENV}=${shellQuote(typedRedisUrl(maskRedisUrl(storeFromEnv)))} ` : '';
  return `${store}TAPEDECK_MODE=update ${testCommand} ${shellQuote(file)}${t}`;
}

/**
 * Per test (its task, the same object in every attempt): the first of its attempts that had a
 * request with no recording, and that attempt's failure. A later attempt that misses nothing
 * fails with it: a retry does not hide a miss.
 */
const missedAttempts = new WeakMap<object, { attempt: number; failure: TapedeckError }>();

/** Tapes that installed the fetch switch, per worker: two concurrent tests cannot share the global fetch. */
const installedBy = new Set<TestTape>();

/**
 * The fixture definitions, to add to your own extended test.
 *
 * @example
 * import { test as base } from 'vitest'
 * import { tapedeckFixtures } from 'llm-tapedeck/vitest'
 * export const test = base.extend(tapedeckFixtures({ dir: 'test/__tapes__', match: 'hybrid' }))
 */
export function tapedeckFixtures(options: TapedeckTestOptions = {}) {
  checkOptionNames(options, FIXTURE_OPTIONS, 'tapedeckFixtures', 'docs/vitest.md', REDACT_INNER);
  // Checked when the options are given, not at the first request (the fetch is made then).
  checkRedactOptions(options?.redact);
  const { dir, name, per = 'test', testCommand, ...tapeOpts } = options;
  return {
    tape: async ({ task, onTestFinished }: TestContext, use: (t: TestTape) => Promise<void>) => {
      const ctx = provided();
      // The test run this worker serves now: a worker kept from an earlier watch run has that
      // run's id in its environment, and this run's recordings must replace that run's (a
      // ReplayCache opened by hand reads it there too).
      if (ctx.run) process.env.TAPEDECK_RUN_ID = ctx.run;
      const root = ctx.root ?? process.cwd();
      const file = task.file.filepath;
      const relFile = relative(root, file) || file;
      const names = testNames(task);
      const tapeNames = per === 'file' ? [] : names;
      const info = { file, names: tapeNames, root };
      const path = resolve(root, name ? name(info) : defaultTapePath(info, dir));
      // The fixture's store option, else the plugin's, else TAPEDECK_STORE.
      const store = resolveTestStore(tapeOpts.store ?? ctx.store);
      // This attempt of the test, counted from 1 (see `retry` below).
      const attempt = (task.result?.retryCount ?? 0) + (task.result?.repeatCount ?? 0) + 1;
      const tape = openTestTape({
        ...tapeOpts,
        store: store?.url ?? false,
        tape: path,
        cliMode: ctx.mode,
        runDir: ctx.runDir,
        root,
        // Two tests of one name in a file (vitest allows it) share the tape and are told apart
        // by the name their recordings carry.
        test: `${relFile} > ${testPath(nthOfName(names, nthOfItsName(task)))}`,
        file: relFile,
        recordCommand: recordCommandFor(relFile, filterNames(task), testCommand ?? ctx.testCommand, store?.fromEnv ? store.url : undefined),
        failOnMiss: false,
        // The attempt vitest is on: a retry replaces what a failed attempt recorded, and a
        // repetition (`repeats`) what the one before it recorded, so a record run leaves one
        // test's worth of recordings, not one per attempt. vitest counts retries across
        // repetitions, so the sum numbers the attempts of one test in order.
        retry: attempt - 1,
      });
      const install = tape.install.bind(tape);
      const guarded: TestTape = Object.assign(Object.create(tape) as TestTape, {
        install(sw?: InstallOptions): FetchSwitch {
          for (const other of installedBy) {
            if (other !== tape) {
              throw new TapedeckError('E_ARG', `tape.install(): another test (${other.location}) has the global fetch switched to its tape in this worker right now.`, {
                hint: 'Concurrent tests cannot share globalThis.fetch: pass tape.fetch to the client instead, or run these tests without test.concurrent.',
              });
            }
          }
          installedBy.add(tape);
          return install(sw);
        },
      });
      /** The test skipped itself after a miss (see the teardown below). */
      let skippedAfterMiss = false;
      // The code under test may have caught the miss (or the error of a call made through an
      // ended test's fetch while this one ran): the test still fails, once. (A throw from
      // the fixture's teardown would be reported twice.) A test that failed with the miss itself
      // needs nothing more; one that failed with what a library made of it (the AI SDK's
      // streamText hands the error to onError and then says "No output generated") gets the
      // miss as well.
      onTestFinished(({ task: t }) => {
        const own = tape.missFailure();
        if (own === undefined) {
          // An earlier attempt of this test missed (and failed for it); this one made no request
          // that missed (a retry the app answers from a fallback it memoized): it fails too.
          const earlier = missedAttempts.get(task);
          if (earlier && earlier.attempt < attempt && t.result?.state !== 'fail') throw missedInEarlierAttempt(earlier.failure, earlier.attempt, attempt);
          return;
        }
        if (!missedAttempts.has(task)) missedAttempts.set(task, { attempt, failure: own });
        // A test expected to fail (test.fails) would pass by failing with the miss: vitest turns
        // a failure into a pass after this hook, whatever failed. A miss means the test never
        // got the recorded answer it is about, so it fails as an ordinary test would (its flag
        // is read once, after this hook: cleared here, the miss stands; typed read-only, it is a
        // plain field of the task, and test/vitest/miss-fails.test.ts holds vitest to this order).
        if (t.fails) (t as { fails?: boolean }).fails = false;
        if (t.result?.state === 'fail' && failedWithTapeError(t.result.errors ?? [])) return;
        if (skippedAfterMiss) own.message += `\n${SKIPPED_AFTER_MISS}`;
        throw own;
      });
      try {
        await use(guarded);
      } finally {
        installedBy.delete(tape);
        // A tape that failed its requests (damaged, its store down) throws that error here: kept
        // until the skip below is judged, so a test that skipped itself after it fails too.
        let closeError: unknown;
        let closeFailed = false;
        try {
          await tape.close();
        } catch (e) {
          closeError = e;
          closeFailed = true;
        }
        // The test skipped itself after the miss (`catch { skip('API unavailable') }`): vitest
        // reports a test that called skip() as skipped, whatever failed in it after, so the
        // throw above would go unseen and the run pass with no recording behind the test. It
        // fails instead. vitest reads the mark (`pending`, set by skip()) once the test's
        // fixtures are torn down and its onTestFinished hooks ran: cleared here, the failure
        // stands (test/vitest/skip-after-miss.test.ts holds vitest to this order).
        const result = task.result as { pending?: boolean; state?: string } | undefined;
        if (result?.pending && (tape.misses.length > 0 || closeFailed)) {
          skippedAfterMiss = tape.misses.length > 0;
          result.pending = false;
          result.state = 'fail';
          if (closeFailed && closeError instanceof Error) closeError.message += `\n${SKIPPED_AFTER_ERROR}`;
        }
        if (closeFailed) throw closeError;
      }
    },
  };
}

/**
 * vitest's `test`, with a `tape` in every test's context (opened only by tests that use it).
 *
 * @example
 * import { test, expect } from 'llm-tapedeck/vitest'
 * import OpenAI from 'openai'
 * test('says hello', async ({ tape }) => {
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape.fetch })
 *   const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })
 *   expect(r.choices[0]?.message.content).toBeTruthy()
 * })
 */
export const test = base.extend<TapedeckContext>(tapedeckFixtures());
/** vitest's `it` with a tape in every test's context: the same as {@link test}. */
export const it = test;
