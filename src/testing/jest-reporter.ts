/**
 * llm-tapedeck/jest/reporter: the run summary after a jest run (tapes written, recordings
 * added, misses with their record commands, unused recordings), as the vitest plugin prints it.
 *
 * ```js
 * reporters: ['default', 'llm-tapedeck/jest/reporter']
 * ```
 */
import { endRun, notPruning, startRun } from './runner.ts';

/** What the reporter reads of jest's global config (jest's own type is not a dependency). */
interface JestGlobalConfig {
  testNamePattern?: string;
  /** Jest 30's file patterns (`npx jest chat/`); jest 29 has `testPathPattern`. */
  testPathPatterns?: { patterns?: readonly string[] } | readonly string[];
  testPathPattern?: string;
  nonFlagArgs?: readonly string[];
  onlyChanged?: boolean;
  onlyFailures?: boolean;
  findRelatedTests?: boolean;
  changedSince?: string;
  lastCommit?: boolean;
  shard?: unknown;
}

/** What the reporter reads of jest's aggregated results. */
interface JestResults {
  numFailedTests?: number;
  numRuntimeErrorTestSuites?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  wasInterrupted?: boolean;
  testResults?: { testFilePath?: string; testExecError?: unknown; testResults?: { status?: string }[] }[];
}

/**
 * The test files every test of which ran and passed (none with `-t`: the tests it filtered out
 * are skipped), for the summary to find the tapes no test opened in their `__tapes__` folders
 * (a deleted or renamed test's), or in the folders a `dir` given to configureTapes() puts them
 * in: the reporter runs apart from the setup file, whose workers note each file's folder in the
 * run directory.
 *
 * @example
 * completeFiles({}, { testResults: [{ testFilePath: '/p/a.test.js', testResults: [{ status: 'passed' }] }] }) // ['/p/a.test.js']
 */
function completeFiles(config: JestGlobalConfig | undefined, results: JestResults | undefined): string[] {
  if (config?.testNamePattern) return [];
  return (results?.testResults ?? [])
    .filter((f) => f.testFilePath && !f.testExecError && (f.testResults ?? []).length > 0 && (f.testResults ?? []).every((t) => t.status === 'passed'))
    .map((f) => f.testFilePath!);
}

/**
 * Whether the run was of every test file of the project: no file patterns, no -t, no run of
 * changed, related or failed files only, no shard; and every file ran whole (`complete`). Then
 * the tape folders of test files that no longer exist are judged too.
 *
 * @example
 * wholeProject({}, { testResults: [{}] }, 1) // true
 */
function wholeProject(config: JestGlobalConfig | undefined, results: JestResults | undefined, complete: number): boolean {
  if (!config || !results || complete === 0 || complete !== (results.testResults ?? []).length) return false;
  const patterns = Array.isArray(config.testPathPatterns) ? config.testPathPatterns : ((config.testPathPatterns as { patterns?: readonly string[] } | undefined)?.patterns ?? []);
  return !config.testNamePattern && patterns.length === 0 && !config.testPathPattern && !config.nonFlagArgs?.length && !config.onlyChanged && !config.onlyFailures && !config.findRelatedTests && !config.changedSince && !config.lastCommit && !config.shard;
}

/**
 * Why a jest run's unused recordings cannot be pruned, or undefined: a test that failed before
 * its last call, one skipped (`.skip`, or the others of a `.only`) or filtered out with `-t`
 * leaves recordings unused that it still needs.
 *
 * @example
 * whyNotPruneJest({ testNamePattern: '' }, { numFailedTests: 1 }) // 'the run did not pass (1 test failed)'
 */
function whyNotPruneJest(config: JestGlobalConfig | undefined, results: JestResults | undefined): string | undefined {
  if (!results) return 'jest gave no results';
  const failed = (results.numFailedTests ?? 0) + (results.numRuntimeErrorTestSuites ?? 0);
  if (failed > 0) return notPruning.failed(failed);
  if (results.wasInterrupted) return 'the run was interrupted';
  if (config?.testNamePattern) return notPruning.filtered('-t');
  const skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
  if (skipped > 0) return notPruning.notRun(skipped);
  return undefined;
}

/**
 * A jest reporter. Made before jest starts its workers, it sets the run directory they report
 * into (TAPEDECK_RUN_DIR); when the run completes it prints the summary.
 *
 * @example
 * // jest.config.js
 * module.exports = { reporters: ['default', 'llm-tapedeck/jest/reporter'] }
 */
export default class TapedeckJestReporter {
  private readonly runDir: string;
  constructor(
    private readonly globalConfig?: JestGlobalConfig,
    private readonly options: { testCommand?: string } = {},
  ) {
    this.runDir = startRun();
  }

  async onRunComplete(_contexts?: unknown, results?: JestResults): Promise<void> {
    const files = completeFiles(this.globalConfig, results);
    // On stderr, as jest's own reporters write: stdout may carry `jest --json`'s report.
    this.failure = await endRun(this.runDir, this.options.testCommand ?? 'npx jest', (s) => void process.stderr.write(`${s}\n`), whyNotPruneJest(this.globalConfig, results), { files, wholeProject: wholeProject(this.globalConfig, results, files.length) });
  }

  /** Why the run fails (calls made after their test ended), if it does. */
  private failure: string | undefined;

  /** Jest fails the run (exit code 1) when a reporter returns an error here. */
  getLastError(): Error | undefined {
    return this.failure === undefined ? undefined : new Error(this.failure);
  }
}
