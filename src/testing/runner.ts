/**
 * What the jest setup file and the mocha root hooks share: a tape per test, opened before it
 * and closed after it, named like the vitest fixture's (`__tapes__/<file>/<test>.tape` beside
 * the test file), and the run summary printed once at the end. docs/vitest.md, "Jest and mocha".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { pruneNotUnderstood, pruneRequested } from './mode.ts';
import { defaultTapePath, type TapeNamer } from './names.ts';
import { defaultTapeFolder } from './orphan-tapes.ts';
import { formatSummary, lateCalls, pruneUnused, readFileNotes, readTapeReports, runFailure, summarizeRun, writeFileNote, type MissReport } from './run-report.ts';
import { callsSettled, openTestTape, regexEscape, shellQuote, TEST_TAPE_OPTION_NAMES, type TestTape, type TestTapeOptions } from './session.ts';
import { DECK_OPTION_NAMES } from '../proxy/deck.ts';
import { FETCH_OPTION_NAMES } from '../proxy/fetch.ts';
import { checkOptionNames, namesWithout, optionNames } from '../option-names.ts';
import { checkRedactOptions, REDACT_INNER } from '../store/redact-options.ts';
import { nthOfName } from './test-identity.ts';
import { missedInEarlierAttempt } from './miss.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../proxy/timeouts.ts';

/**
 * The time the jest and mocha after-each hooks that close a test's tape may take: the close
 * gives a call still waiting for the upstream (a test that timed out) the shutdown timeout, then
 * the fetch's close as much again before aborting it, and writes the tape. Internal to src/testing.
 */
export const CLOSE_HOOK_TIMEOUT_MS = 2 * DEFAULT_SHUTDOWN_TIMEOUT_MS + 5000;

/** Options of the tapes the jest and mocha hooks open: every test tape option, and where tapes go. */
export interface RunnerTapeOptions extends Omit<TestTapeOptions, 'tape' | 'test' | 'file' | 'recordCommand' | 'runDir' | 'cliMode' | 'root' | 'failOnMiss'> {
  /** Folder of the tapes, relative to the project root (default `__tapes__` beside each test file). */
  dir?: string;
  /** Names a tape from the test file and name (default: the vitest fixture's naming). */
  name?: TapeNamer;
  /**
   * The command that runs the tests, for the record command a miss prints (its file and test
   * pattern follow it). Default `npx jest` (with `NODE_OPTIONS=--experimental-vm-modules` when the
   * run has that flag: jest's native ESM) or `npx mocha --require llm-tapedeck/mocha`.
   */
  testCommand?: string;
}

/** configureTapes' option names: a test tape's, but those the runner sets itself. */
const RUNNER_OPTIONS = optionNames<RunnerTapeOptions>()([
  ...namesWithout(DECK_OPTION_NAMES, 'tape', 'test'),
  ...FETCH_OPTION_NAMES,
  ...namesWithout(TEST_TAPE_OPTION_NAMES, 'file', 'recordCommand', 'runDir', 'cliMode', 'root', 'failOnMiss'),
  'dir',
  'name',
  'testCommand',
]);

// On globalThis: a runner may load this module twice (a setup file and a test file that import
// it through different paths or module systems); both must see the same tape.
const STATE = Symbol.for('llm-tapedeck.runner');
interface State {
  options: RunnerTapeOptions;
  current?: TestTape;
  /** Test files whose tape folder this process has noted in the run directory. */
  noted?: Set<string>;
  /** How many tests of each file and names have started (first attempts), for runners that cannot list a file's tests. */
  started?: Map<string, number>;
  /** The running test: which one (file, names, its place among those of its names) and its attempt (1: the first). */
  running?: { key: string; attempt: number };
  /** Per test (as `running.key`): the first attempt of it that had a miss, and its failure (see earlierAttemptFailure). */
  missedAttempts?: Map<string, { attempt: number; failure: TapedeckError }>;
}
function state(): State {
  const g = globalThis as { [STATE]?: State };
  return (g[STATE] ??= { options: {} });
}

/**
 * Sets the options of the tapes opened from now on (call it in a setup file, before the tests).
 *
 * @example
 * configureTapes({ dir: 'test/__tapes__', volatileText: [VOLATILE_PATTERNS.date] })
 */
export function configureTapes(options: RunnerTapeOptions): void {
  checkOptionNames(options, RUNNER_OPTIONS, 'configureTapes', 'docs/vitest.md#jest-and-mocha', REDACT_INNER);
  // Checked when the options are given, not at the first request (the fetch is made then).
  checkRedactOptions(options?.redact);
  state().options = { ...options };
}

/**
 * The running test's tape (its `fetch`, `cache()`, `install()`); E_ARG outside a test.
 *
 * @example
 * const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape().fetch })
 */
export function tape(): TestTape {
  const t = state().current;
  if (!t) {
    throw new TapedeckError('E_ARG', 'No tapedeck tape is open: tape() works inside a test, with the tapedeck setup loaded.', {
      hint: "jest: setupFilesAfterEnv: ['llm-tapedeck/jest'], and test() rather than test.concurrent (its tests start before beforeEach hooks run; openTestTape() opens a tape in the test itself); mocha: --require llm-tapedeck/mocha (docs/vitest.md).",
    });
  }
  return t;
}

/**
 * Opens the tape of a test that starts. Internal to the jest and mocha entries. `nth`: which
 * test of its names in its file this is (1 for the first); without it, counted from the tests
 * started so far in this process (a retry is not a new test).
 */
export function beginTest(info: { file: string; names: readonly string[]; runner: 'jest' | 'mocha'; retry?: number; nth?: number }): TestTape {
  const s = state();
  const { dir, name, testCommand, ...opts } = s.options;
  const root = process.cwd();
  const file = resolve(root, info.file);
  const path = resolve(root, name ? name({ file, names: info.names, root }) : defaultTapePath({ file, names: info.names, root }, dir));
  const rel = relative(root, file) || file;
  const started = (s.started ??= new Map());
  const key = `${file}\u0000${info.names.join('\u0000')}`;
  const nth = Math.max(1, info.nth ?? (started.get(key) ?? 0) + ((info.retry ?? 0) > 0 ? 0 : 1));
  started.set(key, nth);
  // A retry is the same test again: an earlier attempt's miss is remembered for it (and
  // forgotten when the test starts afresh, as in a watch run).
  const attempt = (info.retry ?? 0) + 1;
  s.running = { key: `${key}\u0000${nth}`, attempt };
  if (attempt === 1) s.missedAttempts?.delete(s.running.key);
  // Two tests of one name in a file share the tape and are told apart by the name their
  // recordings carry.
  const title = nthOfName(info.names, nth).join(' ');
  // The summary's search for a deleted test's tape looks in the file's folder, and the process
  // that prints it may not have run this setup (jest's reporter, mocha's parallel mode).
  const runDir = process.env.TAPEDECK_RUN_DIR;
  if (runDir && !(s.noted ??= new Set()).has(file)) {
    s.noted.add(file);
    try {
      writeFileNote(runDir, { file, folder: configuredTapeFolder()?.(file) ?? null });
    } catch {
      // the summary is advice: without the note it looks in the default folder
    }
  }
  s.current = openTestTape({ ...opts, tape: path, test: title, file: rel, recordCommand: runnerRecordCommand(info.runner, rel, info.names, testCommand), root, failOnMiss: false, retry: info.retry ?? 0 });
  return s.current;
}

/**
 * The command that records one jest or mocha test: update mode, that file, that test. Both
 * runners match the suite names and the test name joined by spaces against a regular
 * expression, so the pattern is that text, escaped and anchored. Mocha's includes
 * `--require llm-tapedeck/mocha` (without it no tape is opened; a .mocharc that requires it
 * too loads it once).
 *
 * @example
 * runnerRecordCommand('mocha', 'test/chat.test.mjs', ['chat', 'says hello'])
 * // "TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha test/chat.test.mjs --grep '^chat says hello$'"
 * runnerRecordCommand('jest', 'chat.test.js', ['asks'], undefined, { NODE_OPTIONS: '--experimental-vm-modules' })
 * // "TAPEDECK_MODE=update NODE_OPTIONS=--experimental-vm-modules npx jest chat.test.js -t '^asks$'"
 */
export function runnerRecordCommand(runner: 'jest' | 'mocha', file: string, names: readonly string[], testCommand?: string, env: NodeJS.ProcessEnv = process.env): string {
  const pattern = shellQuote(`^${regexEscape(names.join(' '))}$`);
  // jest runs native ESM test files only under this flag: a command without it fails them all.
  const esm = runner === 'jest' && /(^|\s)--experimental-vm-modules(\s|$)/.test(env.NODE_OPTIONS ?? '') ? 'NODE_OPTIONS=--experimental-vm-modules ' : '';
  const command = testCommand ?? (runner === 'jest' ? `${esm}npx jest` : 'npx mocha --require llm-tapedeck/mocha');
  return `TAPEDECK_MODE=update ${command} ${shellQuote(file)} ${runner === 'jest' ? '-t' : '--grep'} ${pattern}`;
}

/**
 * The error that fails the running test if one of its requests had no recording (caught by the
 * code under test or not), else undefined. Internal to the jest and mocha entries.
 */
export function missFailure(): TapedeckError | undefined {
  const s = state();
  if (!s.current) return undefined;
  return s.current.missFailure() ?? (s.running && s.missedAttempts ? earlierAttemptFailure(s.missedAttempts, s.running) : undefined);
}

/**
 * The failure of attempt `run` of a retried test that made no request that missed, when an
 * earlier attempt of it had one (see missedInEarlierAttempt); else undefined.
 */
function earlierAttemptFailure(missed: ReadonlyMap<string, { attempt: number; failure: TapedeckError }>, run: { key: string; attempt: number }): TapedeckError | undefined {
  const earlier = missed.get(run.key);
  return earlier && earlier.attempt < run.attempt ? missedInEarlierAttempt(earlier.failure, earlier.attempt, run.attempt) : undefined;
}

/**
 * Resolves when the running test's calls are answered, a call it made without awaiting it
 * included (see callsSettled): then missFailure() counts that call's miss too. Internal to the
 * mocha entry, which judges a test as its function ends.
 */
export function runningCallsSettled(): Promise<void> {
  const t = state().current;
  return t ? callsSettled(t) : Promise.resolve();
}

/**
 * Closes the tape of the test that ended (its report goes to the run directory), after its calls
 * in flight are answered; resolves with the error that fails the test if one of its requests,
 * those included, had no recording (see missFailure). `skipped`: the runner marked the test
 * skipped (mocha's `this.skip()` where the test could not be failed instead): its misses are
 * reported as a skipped test's, and the run fails for them (see MissReport.skipped).
 * `passed`: the runner reported the test passed already, with no miss (mocha runs a suite's
 * afterEach hooks after that): its misses, made in those hooks, are reported as misses after a
 * pass, and the run fails for them (see MissReport.afterPass). A retried test whose attempt
 * missed nothing resolves with the failure of an earlier attempt's miss.
 */
export async function endTest(how: { skipped?: boolean; passed?: boolean } = {}): Promise<TapedeckError | undefined> {
  const s = state();
  const t = s.current;
  const run = s.running;
  s.current = undefined;
  s.running = undefined;
  if (t && (how.skipped || how.passed)) {
    // Its calls answered first: a call it did not await may miss too.
    await callsSettled(t);
    for (const m of t.misses) {
      if (how.skipped) (m as MissReport).skipped = true;
      else (m as MissReport).afterPass = true;
    }
  }
  await t?.close();
  const own = t?.missFailure();
  if (!t || !run) return own;
  // Remembered for the test's next attempt, if the runner retries it.
  const missed = (s.missedAttempts ??= new Map());
  if (own && !missed.has(run.key)) missed.set(run.key, { attempt: run.attempt, failure: own });
  return own ?? earlierAttemptFailure(missed, run);
}

/**
 * Makes the run directory the tapes report into (TAPEDECK_RUN_DIR, inherited by worker
 * processes started after this), unless one is set already. Returns it.
 */
export function startRun(): string {
  process.env.TAPEDECK_RUN_DIR ??= mkdtempSync(join(tmpdir(), 'tapedeck-run-'));
  return process.env.TAPEDECK_RUN_DIR;
}

const tests = (n: number): string => `${n} ${n === 1 ? 'test' : 'tests'}`;

/**
 * The test files every test of which ran and passed, for the run summary to find the tapes no
 * test opened in their folders (a deleted or renamed test's), and where those folders are.
 */
export interface RunFiles {
  files: readonly string[];
  /** Where a file's tapes are when its worker noted nothing (default: the default folder). */
  tapeFolder?: (file: string) => string | undefined;
  /** Every test file of the project ran whole: gone test files' tape folders are judged too (SummaryOptions.wholeProject). */
  wholeProject?: boolean;
}

/**
 * Where the tapes of a test file are under the options configureTapes() set in this process, or
 * undefined when a `name` function places them (no folder is the file's own then).
 *
 * @example
 * configuredTapeFolder()?.('/p/test/chat.test.js') // '/p/test/__tapes__/chat.test'
 */
export function configuredTapeFolder(): ((file: string) => string) | undefined {
  const { dir, name } = state().options;
  if (name) return undefined;
  const root = process.cwd();
  return (file) => defaultTapePath({ file, names: [], root }, dir).replace(/\.tape$/, '');
}

/**
 * The reasons jest's and mocha's summaries give for not pruning (see endRun's `whyNotPrune`),
 * worded alike whichever runner counted.
 *
 * @example
 * notPruning.failed(1) // 'the run did not pass (1 test failed)'
 */
export const notPruning = {
  failed: (n: number): string => `the run did not pass (${tests(n)} failed)`,
  notRun: (n: number): string => `${tests(n)} did not run`,
  filtered: (flag: string): string => `tests were filtered with ${flag}`,
};

/**
 * Prints the run summary (the vitest plugin's) from the reports in the run directory, then
 * removes the directory. With TAPEDECK_PRUNE=1 (the command the summary prints), first drops
 * the recordings no test of the run used from the tapes it opened, unless `whyNotPrune` says
 * why this run cannot tell (a failed, skipped or filtered-out test leaves recordings unused
 * that it still needs).
 *
 * Resolves to why the run fails, when calls were made after their test ended or a test was
 * skipped after a miss (see runFailure in ./run-report.ts): the runner integration fails the
 * run with it.
 *
 * @example
 * await endRun(startRun(), 'npx jest')
 * await endRun(runDir, 'npx jest', undefined, '1 test failed') // prints "tapedeck: not pruning: 1 test failed."
 */
export async function endRun(runDir: string, testCommand: string, log: (s: string) => void = (s) => process.stdout.write(`${s}\n`), whyNotPrune?: string, completeFiles?: RunFiles): Promise<string | undefined> {
  try {
    const reports = readTapeReports(runDir);
    if (reports.length === 0) return undefined;
    // Where each file's tapes are: as the process that ran it noted, else as this one knows;
    // and the complete files the workers saw (mocha's in parallel mode) beside this one's.
    const noted = readFileNotes(runDir);
    const known = completeFiles?.tapeFolder ?? defaultTapeFolder;
    const tapeFolder = (file: string): string | undefined => (noted.folders.has(file) ? (noted.folders.get(file) ?? undefined) : known(file));
    const summary = await summarizeRun(reports, completeFiles ? { testFiles: [...new Set([...completeFiles.files, ...noted.complete])], tapeFolder, wholeProject: completeFiles.wholeProject === true } : {});
    // The prune command the summary prints: this run, told to drop what no test used.
    let pruned = 0;
    let refused: string | undefined;
    const unclear = pruneNotUnderstood();
    if (unclear) log(`tapedeck: ${unclear}.`);
    if (summary.unused > 0 && pruneRequested()) {
      // A late call's recording was not asked for by any test: it would look unused.
      if (lateCalls(summary) > 0) whyNotPrune = `${lateCalls(summary)} call(s) were made after their test ended`;
      refused = whyNotPrune;
      if (whyNotPrune) log(`tapedeck: not pruning: ${whyNotPrune}.`);
      else {
        pruned = await pruneUnused(summary);
        log(`tapedeck: pruned ${pruned} unused recording(s).`);
      }
    }
    log(formatSummary(summary, { pruneCommand: pruned ? undefined : `TAPEDECK_PRUNE=1 ${testCommand}`, pruned: pruned > 0, ...(refused ? { notPruned: refused } : {}) }));
    return runFailure(summary);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
    if (process.env.TAPEDECK_RUN_DIR === runDir) delete process.env.TAPEDECK_RUN_DIR;
  }
}
