/**
 * The config side of `llm-tapedeck/vitest`: a plugin that passes the run's tape mode
 * (`vitest --mode update`), a run directory and the store to the workers, and a reporter that
 * prints the run summary (tapes or Redis namespaces written, recordings added, misses, unused
 * recordings) and, when asked, prunes unused recordings. Imports nothing from vitest at run time: it loads in the config.
 *
 * ```ts
 * // vitest.config.ts
 * import { defineConfig } from 'vitest/config'
 * import { tapedeck } from 'llm-tapedeck/vitest/plugin'
 * export default defineConfig({ plugins: [tapedeck()] })
 * ```
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
// The plugin's type from vitest/config (which adds configureVitest to Vite's plugin type). The
// declarations this file emits name no type of vitest's node entry: in vitest 3.2 those import
// an untyped package, and a config checked with skipLibCheck false failed on the plugin's import.
import type { Plugin } from 'vitest/config';
import type { Reporter, Vitest } from 'vitest/node';
import { tapeModeOfViteMode } from './mode-flag.ts';
import type { ProvidedTapedeck } from './provided.ts';
import { formatSummary, lateCalls, pruneUnused, readTapeReports, runFailure, summarizeRun, type RunSummary } from '../testing/run-report.ts';
import { pruneNotUnderstood, pruneRequested } from '../testing/mode.ts';
import { vitestCommand } from './test-command.ts';
import { shellQuote, STORE_ENV } from '../testing/session.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';
import { maskRedisUrl, typedRedisUrl } from '../store/backends/redis-connection.ts';
import { driftAgainstCommitted, formatCommittedDrift } from '../drift/committed.ts';
import { defaultTapeFolder } from '../testing/orphan-tapes.ts';

/**
 * Options of the tapedeck() vitest plugin: the store, pruning, the run summary and drift reports;
 * a test tape's own options go to tapedeckFixtures.
 */
export interface TapedeckPluginOptions {
  /**
   * A shared Redis store for every test's recordings instead of tape files (`redis://` or
   * `rediss://` URL; its `?namespace=` is the base of the per-test namespaces). Default:
   * TAPEDECK_STORE. A fixture's own `store` option wins.
   */
  store?: string;
  /**
   * Drop recordings no test used, at the end of a complete passing run (default: when
   * TAPEDECK_PRUNE is `1`, `true` or `unused`). Never in a run that skipped or filtered tests.
   */
  prune?: boolean;
  /** The command that runs the tests, for the printed prune command (default `npx vitest run`). */
  testCommand?: string;
  /** Print the summary (default true); the run directory is kept for your own tooling when false. */
  summary?: boolean;
  /** Called with the summary after it is printed (and after pruning). */
  onSummary?: (summary: RunSummary, pruned: number) => void;
  /**
   * After a run that recorded into tape files, say how the new recordings differ from the tapes
   * committed in git (one line per drift class, docs/drift.md) and the `tapedeck diff` command
   * for the detail (default true; needs git and a work tree).
   */
  drift?: boolean;
}


/**
 * The vitest instance, as the reporter's declarations name it (vitest passes its own, which has
 * this and more): vitest's own type for it comes with its node entry's types (see the imports).
 */
interface VitestInstance {
  readonly config: { readonly root: string };
}

/** What the reporter reads of a test of the run (vitest's TestCase has this and more). */
interface RunTest {
  readonly fullName: string;
  readonly options: { readonly mode: string };
  result(): { readonly state: string };
}

/** What the reporter reads of a test file of the run (vitest's TestModule has this and more). */
interface RunModule {
  readonly moduleId: string;
  state(): string;
  readonly children: { allTests(): Iterable<RunTest> };
}

/** A `test.todo`: no body, so it never runs and owns no recording. */
const isTodo = (t: RunTest): boolean => t.options.mode === 'todo';

const PLUGIN_OPTIONS = optionNames<TapedeckPluginOptions>()(['store', 'prune', 'testCommand', 'summary', 'onSummary', 'drift']);

/**
 * Prints the run summary from the tape reports the workers wrote, and prunes when asked.
 *
 * @example
 * // vitest.config.ts, without the plugin (then pass the run directory as TAPEDECK_RUN_DIR)
 * reporters: ['default', new TapedeckReporter(runDir)]
 */
export class TapedeckReporter {
  private vitest: Vitest | undefined;
  /** The stores of every plugin that shares this run (a project's config may name its own). */
  private readonly stores: (string | undefined)[];
  /** @internal Told the run once vitest initializes this reporter (see runShare). */
  joined: ((vitest: VitestInstance) => void) | undefined;
  /** @internal Told the run when each test run starts (see runShare). */
  started: (() => void) | undefined;
  constructor(
    readonly runDir: string,
    private readonly opts: TapedeckPluginOptions = {},
  ) {
    this.stores = [opts.store];
  }

  onInit(vitest: VitestInstance): void {
    this.vitest = vitest as Vitest;
    this.joined?.(vitest);
  }

  /** @internal Another project's plugin joined the run with its store. */
  addStore(store: string | undefined): void {
    if (!this.stores.includes(store)) this.stores.push(store);
  }

  onTestRunStart(): void {
    // Watch mode runs again and again: each summary is of its own run.
    rmSync(this.runDir, { recursive: true, force: true });
    mkdirSync(this.runDir, { recursive: true });
    this.started?.();
  }

  async onTestRunEnd(modules: ReadonlyArray<RunModule>, _errors: ReadonlyArray<unknown>, reason: string): Promise<void> {
    const reports = readTapeReports(this.runDir);
    if (reports.length === 0) return;
    const stores = this.stores;
    // A run that stopped early (--bail, Ctrl-C) never reached some files: none is judged whole.
    const testFiles = reason === 'interrupted' ? [] : this.completeFiles(modules);
    const summary = await summarizeRun(reports, { stores, testFiles, wholeProject: await this.ranWholeProject(modules, testFiles) });
    const log = (s: string) => (this.reportOnStdout() ? void process.stderr.write(`${s}\n`) : this.vitest ? this.vitest.logger.log(s) : console.log(s));
    for (const line of this.notJudged(modules, reason)) log(`tapedeck: ${line}.`);
    const cmd = this.opts.testCommand ?? (this.vitest ? vitestCommand(this.vitest.config.config, this.vitest.config.root) : 'npx vitest run');
    let pruned = 0;
    let refused: string | undefined;
    const unclear = this.opts.prune === undefined ? pruneNotUnderstood() : undefined;
    if (unclear) log(`tapedeck: ${unclear}.`);
    if (summary.unused > 0 && (this.opts.prune ?? pruneRequested())) {
      // A late call's recording was not asked for by any test: it would look unused.
      const why = lateCalls(summary) > 0 ? `${lateCalls(summary)} call(s) were made after their test ended` : this.whyNotPrune(modules, reason);
      refused = why;
      if (why) log(`tapedeck: not pruning: ${why}.`);
      else {
        pruned = await pruneUnused(summary, { stores });
        log(`tapedeck: pruned ${pruned} unused recording(s).`);
      }
    }
    // The workers took the store from TAPEDECK_STORE unless the plugin gave one: so must the prune.
    const env = process.env[STORE_ENV];
    const storeEnv = !this.stores.some((st) => st) && env && summary.tapes.some((t) => t.store) ? `${STORE_ENV}=${shellQuote(typedRedisUrl(maskRedisUrl(env)))} ` : '';
    if (this.opts.summary !== false) log(formatSummary(summary, { root: this.vitest?.config.root, pruneCommand: pruned ? undefined : `${storeEnv}TAPEDECK_PRUNE=1 ${cmd}`, pruned: pruned > 0, ...(refused ? { notPruned: refused } : {}) }));
    if (this.opts.summary !== false && this.opts.drift !== false) {
      const written = summary.tapes.filter((t) => t.added > 0 && !t.store).map((t) => t.tape);
      if (written.length > 0) {
        try {
          const d = await driftAgainstCommitted(written, { root: this.vitest?.config.root });
          if (d) log(formatCommittedDrift(d, { pruneCommand: `TAPEDECK_PRUNE=1 ${cmd}` }));
        } catch (e) {
          // The summary is advice: a drift that cannot be computed is said, never fails the run.
          log(`tapedeck: no drift summary: ${(e as Error).message.split('\n')[0]}`);
        }
      }
    }
    // A call made after its test ended got an error answer no test failed for (and a miss of a
    // test marked skipped after it, which the fixture fails itself where vitest lets it): the
    // run fails, as vitest fails a run for an error that escapes its tests.
    const failure = runFailure(summary);
    if (failure !== undefined) {
      process.exitCode = 1;
      if (this.opts.summary === false) log(failure);
    }
    this.opts.onSummary?.(summary, pruned);
    // Read: nothing else needs the reports (the next run makes the directory again).
    rmSync(this.runDir, { recursive: true, force: true });
  }

  /**
   * The test files every test of which ran and passed: their tape folders tell which tapes no
   * test opened. None in a run filtered with -t, and no file with a skipped test, where an
   * unopened tape is expected; nor one with a failed test, which may have failed before its call;
   * nor one that ran no test (it failed to load, or the run ended before it), where "every test
   * passed" holds of none. A `test.todo` has no body and owns no recording: it does not count.
   */
  private completeFiles(modules: ReadonlyArray<RunModule>): string[] {
    if (this.vitest?.config.testNamePattern) return [];
    return modules
      .filter((m) => {
        const tests = [...m.children.allTests()].filter((t) => !isTodo(t));
        return m.state() === 'passed' && tests.length > 0 && tests.every((t) => t.result().state === 'passed');
      })
      .map((m) => m.moduleId);
  }

  /**
   * Why tapes no test opened were not looked for where the reader would expect it: a run that
   * stopped early, a test file that failed to load (its tests never ran, so their tapes are
   * neither stale nor checked).
   */
  private notJudged(modules: ReadonlyArray<RunModule>, reason: string): string[] {
    if (reason === 'interrupted') return ['the run stopped early (interrupted): tapes no test opened were not looked for'];
    const root = this.vitest?.config.root ?? process.cwd();
    return modules
      .filter((m) => m.state() === 'failed' && [...m.children.allTests()].length === 0 && existsSync(defaultTapeFolder(m.moduleId)))
      .map((m) => `${relative(root, m.moduleId) || m.moduleId} failed to load: its tapes were not checked for tapes no test opened`);
  }

  /**
   * Whether every test file of the run's projects ran, whole, and passed (no file arguments,
   * `--changed`, `--shard` or watch re-run of some files): then the tape folders of test files
   * that no longer exist are judged too (a moved test file's old folder).
   */
  private async ranWholeProject(modules: ReadonlyArray<RunModule>, complete: readonly string[]): Promise<boolean> {
    if (!this.vitest || complete.length === 0 || complete.length !== modules.length) return false;
    try {
      const ran = new Set(complete);
      return (await this.vitest.globTestSpecifications()).every((spec) => ran.has(spec.moduleId));
    } catch {
      return false; // the summary is advice: a project it cannot list is not judged
    }
  }

  /**
   * Whether a reporter of the run prints a machine-readable report on stdout (json, junit, tap
   * with no outputFile): the summary then goes to stderr, or the report would not parse.
   */
  private reportOnStdout(): boolean {
    const config = this.vitest?.config as { reporters?: unknown[]; outputFile?: string | Record<string, string> } | undefined;
    return (config?.reporters ?? []).some((r) => {
      const [name, options] = Array.isArray(r) ? (r as [unknown, { outputFile?: string } | undefined]) : [r, undefined];
      if (typeof name !== 'string' || !['json', 'junit', 'tap', 'tap-flat'].includes(name)) return false;
      const file = options?.outputFile ?? (typeof config?.outputFile === 'string' ? config.outputFile : config?.outputFile?.[name]);
      return !file;
    });
  }

  /**
   * A reason not to prune, or undefined: pruning needs every test of every project to have run
   * and passed (a skipped test's recordings look unused). A `test.todo` has no body and no
   * recording: it does not stop the prune.
   */
  private whyNotPrune(modules: ReadonlyArray<RunModule>, reason: string): string | undefined {
    if (reason !== 'passed') return `the run did not pass (${reason})`;
    if (this.vitest?.config.testNamePattern) return 'tests were filtered with -t';
    // Projects may run the same test files in another environment (another prompt): the tests
    // of those left out ask for recordings this run did not, and their names do not say whose.
    if (this.vitest?.config.project?.length) return 'the run was narrowed to some projects with --project (another project may run the same test files and need recordings this run did not ask for): prune in a run of every project';
    const root = this.vitest?.config.root ?? process.cwd();
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed' || isTodo(t)) continue;
        return `${relative(root, m.moduleId) || m.moduleId} > ${t.fullName} ${state === 'skipped' ? 'was skipped' : 'did not run'}`;
      }
    }
    return undefined;
  }
}

/**
 * What the plugin instances of one vitest run share. A monorepo's `test.projects` loads a config
 * per project, each with its own plugin: were each to make its own run directory and summary,
 * each summary would take the tapes of the other projects' passing test files for tapes no test
 * opened, and a prune would delete them. One run, one directory, one reporter.
 */
interface RunShare {
  readonly runDir: string;
  readonly reporter: TapedeckReporter;
  /** The vitest the run belongs to, once known. */
  vitest: Vitest | undefined;
  /** Set by a root config that lists projects: the mode and store it gives every project. */
  fromRoot: (() => { mode: string | undefined; store: string | undefined }) | undefined;
  /** What the workers of a project are given. */
  context(vitest: Vitest, o: { mode: string | undefined; store: string | undefined }): ProvidedTapedeck;
  /** Ties the run to `vitest`: its reporter joins, and its directory goes when vitest closes. */
  adopt(vitest: Vitest): void;
}

/**
 * The run id the plugin set in TAPEDECK_RUN_ID, kept where a second copy of this module finds it:
 * an id the user set is theirs, and stays for every test run.
 */
const PLUGIN_RUN_ID = Symbol.for('llm-tapedeck.vitest-run-id');

/**
 * The run id of the n-th test run (from 1) of a vitest process whose run directory is `runDir`.
 * Each watch re-run is a run of its own: in record mode its recordings replace the previous
 * run's, as a retry's replace an earlier attempt's, so the tape keeps the last run's answers.
 */
const runIdOf = (runDir: string, n: number): string => (n <= 1 ? `run-dir:${runDir}` : `run-dir:${runDir} (run ${n})`);

// On globalThis: each config file is bundled and loaded on its own, and a copy of this module
// loaded twice must still find the run.
const SHARED_RUN = Symbol.for('llm-tapedeck.vitest-run');

/** The run the plugin instances of one vitest share, made by the first that asks. */
function runShare(opts: TapedeckPluginOptions, vitest?: Vitest): RunShare {
  const slot = globalThis as { [SHARED_RUN]?: RunShare };
  const current = slot[SHARED_RUN];
  if (current !== undefined && (vitest === undefined || current.vitest === undefined || current.vitest === vitest)) return current;
  const runDir = mkdtempSync(join(tmpdir(), 'tapedeck-run-'));
  // Workers inherit it: every writer of this test run (ReplayCache opened by hand too) is
  // one run, so no worker replaces another's recordings (docs/modes.md).
  const ids = globalThis as { [PLUGIN_RUN_ID]?: string };
  const given = process.env.TAPEDECK_RUN_ID?.trim();
  const ownId = !given || given === ids[PLUGIN_RUN_ID];
  if (ownId) process.env.TAPEDECK_RUN_ID = ids[PLUGIN_RUN_ID] = runIdOf(runDir, 1);
  // What each project's workers were given (vitest sends a project's provided context to its
  // workers at each test run): a new test run's id is set in them.
  const contexts: ProvidedTapedeck[] = [];
  let runs = 0;
  const reporter = new TapedeckReporter(runDir, opts);
  const run: RunShare = {
    runDir,
    reporter,
    vitest: undefined,
    fromRoot: undefined,
    context: (v, o) => {
      const c: ProvidedTapedeck = { runDir, root: v.config.root, testCommand: opts.testCommand ?? vitestCommand(v.config.config, v.config.root), ...(o.mode ? { mode: o.mode } : {}), ...(o.store ? { store: o.store } : {}), ...(ownId ? { run: process.env.TAPEDECK_RUN_ID } : {}) };
      contexts.push(c);
      return c;
    },
    adopt(v) {
      if (run.vitest === v) return;
      run.vitest = v;
      // The reporter removes it after a run's summary; a run that opened no tape, or that
      // vitest ended before any test ran (no test at a given line), has none, and the folder
      // would stay behind in the temp directory.
      v.onClose(() => {
        rmSync(runDir, { recursive: true, force: true });
        if (slot[SHARED_RUN] === run) slot[SHARED_RUN] = undefined;
      });
      const reporters = v.config.reporters as unknown[];
      if (!reporters.includes(reporter)) {
        reporter.onInit(v);
        reporters.push(reporter satisfies Reporter);
      }
    },
  };
  // A watch re-run (or another run of the same vitest) is a new run: the workers get its id,
  // those started now through the environment, those kept from before through the context.
  reporter.started = () => {
    runs++;
    if (!ownId || runs === 1) return;
    process.env.TAPEDECK_RUN_ID = ids[PLUGIN_RUN_ID] = runIdOf(runDir, runs);
    for (const c of contexts) c.run = process.env.TAPEDECK_RUN_ID;
  };
  reporter.joined = (joined) => {
    // The reporter's declarations name vitest by the members they read; vitest passes its own.
    const v = joined as Vitest;
    run.adopt(v);
    const root = run.fromRoot?.();
    if (root !== undefined) v.getRootProject().provide('tapedeck', run.context(v, root));
  };
  slot[SHARED_RUN] = run;
  return run;
}

/**
 * The vitest plugin: `vitest --mode record|update|replay|passthrough` sets the tape mode, and
 * the run ends with the tapedeck summary.
 *
 * @example
 * import { defineConfig } from 'vitest/config'
 * import { tapedeck } from 'llm-tapedeck/vitest/plugin'
 * export default defineConfig({ plugins: [tapedeck()] })
 */
export function tapedeck(opts: TapedeckPluginOptions = {}): Plugin {
  // A test tape's option given to the plugin (mode, redact, match) does nothing here: each
  // test's fixture takes those. Said where the config is read, not left to a silent run.
  checkOptionNames(opts, PLUGIN_OPTIONS, 'tapedeck() plugin', "docs/vitest.md; a test tape's own options go to tapedeckFixtures");
  let warned = false;
  const modeOf = (viteMode: string | undefined) => {
    const { mode, warning } = tapeModeOfViteMode(viteMode);
    if (warning !== undefined && !warned) {
      warned = true;
      process.stderr.write(`${warning}\n`);
    }
    return mode;
  };
  return {
    name: 'llm-tapedeck',
    config(config, env) {
      // A root config that lists projects is no project itself: vitest calls configureVitest only
      // for the projects, which load their own configs. The plugin here still speaks for the whole
      // run: its reporter joins the root's reporters, and once it has the run it provides the
      // tapedeck context to the root, which every project inherits.
      const test = (config as { test?: { projects?: unknown; reporters?: unknown } }).test;
      if (test?.projects === undefined) return;
      const run = runShare(opts);
      run.fromRoot = () => ({ mode: modeOf(env.mode), store: opts.store });
      const given = test.reporters === undefined ? ['default'] : Array.isArray(test.reporters) ? test.reporters : [test.reporters];
      if (!given.includes(run.reporter)) test.reporters = [...given, run.reporter];
    },
    configureVitest({ vitest, project }) {
      const run = runShare(opts, vitest);
      // The run's `--mode`, the root server's: a project's own config is loaded in Vite's default.
      const mode = modeOf(vitest.vite?.config.mode);
      project.provide('tapedeck', run.context(vitest, { mode, store: opts.store }));
      run.reporter.addStore(opts.store);
      run.adopt(vitest);
    },
  };
}
