/**
 * The run summary: every test tape, in whatever worker (thread or process) it was used, writes a
 * small JSON report into the run directory when it closes; at the end of the run one process
 * reads them all, looks at the tapes (or the Redis namespaces of a run on a shared store), and
 * prints what was written, added, missed and never used. Files work across every pool and need
 * no channel between workers. Reports never hold a store password: a store is named by its
 * masked URL, and the summary finds the real one among the URLs the run was given.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { LoadedRecord } from '../store/backend.ts';
import { RedisBackend } from '../store/backends/redis-backend.ts';
import { maskRedisUrl } from '../store/backends/redis-connection.ts';
import { decodeFrame, readTape, rewriteTapeFrames } from '../store/tape-file.ts';
import { isCacheRecord, isHttpRecord, isMcpRecord, isRealtimeRecord } from '../store/records.ts';
import { isTelemetry } from '../providers/index.ts';
import { mcpUsageMark } from '../mcp/usage-mark.ts';
import { realtimeUsageMark, sessionRemains } from '../realtime/usage-mark.ts';
import { cacheUsageMark } from '../store/cache-usage-mark.ts';
import type { TapeMode } from '../store/mode.ts';
import { faultsInPlaceOfRecordings } from '../chaos/answer-faults.ts';
import { checkOptionsObject } from '../option-names.ts';
import { goneFileTapes, goneRecordCount, orphanRecordCount, orphanTapes, removeOrphanTape } from './orphan-tapes.ts';

/** One miss, as the summary lists it. */
export interface MissReport {
  test?: string;
  /**
   * The test file, when `test` does not name it (mocha and jest name a test by its titles): set
   * by the run summary from the tape's report, so two files' tests of one title stay apart.
   */
  file?: string;
  route: string;
  diagnosis: string;
  command: string;
  /** What to do instead of recording (a call made after its test ended: await it). */
  hint?: string;
  /** A call made after its test ended: no test failed for it, so the run does (see {@link lateCalls}). */
  late?: true;
  /**
   * Its test was marked skipped after the miss where the runner lets no one fail it then
   * (mocha's `this.skip()` in a done-style test): no test failed for it, so the run does (see
   * {@link runFailure}).
   */
  skipped?: true;
  /**
   * Made after its test was reported passed, where the runner lets no one fail it then (a
   * describe-level `afterEach` hook in mocha, which runs after mocha reported the test): no test
   * failed for it, so the run does (see {@link runFailure}).
   */
  afterPass?: true;
}

/**
 * A call answered with another request's recording (`match: 'signature'` or `'hybrid'` in
 * replay): no miss, so said in the summary, or an edited prompt passes on the old one's answer.
 */
export interface FallbackReport {
  test?: string;
  /** The route, how it matched and what differed from the recording that answered. */
  answer: string;
  /** The matching that allowed it (`hybrid`, `signature`). */
  match: string;
  /** The command that records the test (update mode records a request with no recording of its own). */
  command: string;
}

/** What one test tape did in one test (or file). */
export interface TapeReport {
  /** The tape file (with a store: the name its namespace was made from). */
  tape: string;
  /** With a store: its URL, password masked, without the query. */
  store?: string;
  /** With a store: the test's namespace. */
  namespace?: string;
  test?: string;
  file?: string;
  /** The test file as the records' `test` field names it (relative to `root`, `/` separators). */
  testFile?: string;
  /** The project root test files are named relative to. */
  root?: string;
  mode: TapeMode;
  /** Recordings added to the tape. */
  added: number;
  /** Of `added`, those that replaced an older recording of their request (record mode re-recorded it). */
  rerecorded?: number;
  /** Answers whose record failed (served anyway with onRecordFailure 'serve', else failed). */
  unrecorded?: number;
  /** Requests answered from the tape. */
  hits: number;
  misses: MissReport[];
  /**
   * The recordings served or made: the used ones. Trace tokens (x-tapedeck-trace) of HTTP
   * recordings; on an MCP tape, the marks of its exchanges (src/mcp/usage-mark.ts); on a
   * ReplayCache tape, its recordings' marks (src/store/cache-usage-mark.ts); the marks of the
   * realtime sessions its proxies replayed or recorded (src/realtime/usage-mark.ts).
   */
  used: string[];
  /** Recordings added to the ReplayCache tape (or namespace) beside it, if one was opened. */
  cacheTape?: string;
  cacheAdded?: number;
  /** Faults injected on demand (chaos), by name. */
  faults?: Record<string, number>;
  /** Upstream 4xx/5xx answers this test got live and did not record (no `recordErrors`). */
  errorsNotRecorded?: number;
  /** Requests the tape or its store failed with an error of its own (damaged, unreachable). */
  failedRequests?: number;
  /** Calls answered by a recording again, past those recorded for their request (see DeckStats.repeats). */
  repeats?: number;
  /** Of `repeats`, those answered unsent by a recording this run made (update mode; see DeckStats.repeatsOfMade). */
  repeatsOfMade?: number;
  /** Calls answered by another request's recording (a fallback of signature or hybrid matching). */
  fallbacks?: FallbackReport[];
  /** Requests the test's fetch switch refused (`install({ blockNetwork: true })`), by host. */
  refused?: Record<string, number>;
}

/** One tape, or one Redis namespace, in the run summary. */
export interface TapeSummary {
  /** The tape file, or for a store `<masked URL> namespace <NS>`. */
  tape: string;
  /** With a store: its masked URL and the namespace. */
  store?: string;
  namespace?: string;
  mode: TapeMode;
  added: number;
  /** Of `added`, re-recordings that replaced an older recording. */
  rerecorded?: number;
  /** Answers whose record failed. */
  unrecorded?: number;
  hits: number;
  misses: number;
  /** Upstream error answers got live and not recorded: CI, which replays, misses them. */
  errorsNotRecorded?: number;
  unused: number;
  unusedTraces: string[];
  /** Calls answered by a recording again past those recorded for them. */
  repeats?: number;
  /** Of `repeats`, those answered unsent by a recording the same run made (see TapeReport). */
  repeatsOfMade?: number;
  /** Calls answered by another request's recording (see TapeReport.fallbacks). */
  fallbacks?: number;
  /** Requests refused by the fetch switch of its tests (blockNetwork). */
  refused?: number;
  /**
   * Why its unused recordings were not looked for: a store the summary could not reach, or calls
   * answered by injected faults instead of the recordings they would have got.
   */
  unreadable?: string;
  /** A tape no test opened in the run (a deleted or renamed test's): all its recordings are unused. */
  orphan?: true;
  /** Of the orphans: in the tape folder of a test file that no longer exists (moved, renamed or deleted). */
  goneFile?: true;
}

/** The summary of a run, per tape (or namespace) and in total. */
export interface RunSummary {
  tapes: TapeSummary[];
  /** Tapes, and namespaces, that got recordings in the run. */
  tapesWritten: number;
  added: number;
  /** Of `added`, re-recordings that replaced an older recording. */
  rerecorded?: number;
  /** Answers whose record failed (served anyway, or failed). */
  unrecorded?: number;
  hits: number;
  misses: MissReport[];
  /** Upstream error answers tests got live and did not record (see TapeSummary). */
  errorsNotRecorded?: number;
  /** Calls answered by a recording again past those recorded for them (see TapeSummary). */
  repeats?: number;
  /** Of `repeats`, those answered unsent by a recording the same run made (see TapeReport). */
  repeatsOfMade?: number;
  /** Calls answered by another request's recording, with their tape (see TapeReport.fallbacks). */
  fallbacks?: number;
  fallbackCalls?: (FallbackReport & { tape: string })[];
  unused: number;
  /** Faults injected on demand (chaos) in the run, by name. */
  faults?: Record<string, number>;
  /**
   * Requests refused by the tests' fetch switches (`install({ blockNetwork: true })`), by host:
   * the code under test got E_NETWORK_BLOCKED for them, which it may have caught.
   */
  refused?: Record<string, number>;
}

let counter = 0;

/**
 * Writes one tape report into the run directory (atomically: a reader never sees half a file).
 *
 * @example
 * writeTapeReport(process.env.TAPEDECK_RUN_DIR!, report)
 */
export function writeTapeReport(runDir: string, report: TapeReport): void {
  writeRunFile(runDir, REPORT, report);
}

/** A report's name ends so; a file note's (see FileNote) so. */
const REPORT = '.json';
const NOTE = '.note';

/** Writes `value` as JSON into the run directory under a fresh name ending in `suffix`, atomically. */
function writeRunFile(runDir: string, suffix: string, value: unknown): void {
  mkdirSync(runDir, { recursive: true });
  const name = `${process.pid}-${Date.now()}-${counter++}-${randomBytes(4).toString('hex')}`;
  const tmp = `${runDir}/.${name}.tmp`;
  writeFileSync(tmp, JSON.stringify(value));
  renameSync(tmp, `${runDir}/${name}${suffix}`);
}

/**
 * The parsed files of the run directory whose names end in `suffix`, in name order. An
 * unreadable one is skipped: the summary is advice, not a gate (a file of a worker killed
 * mid-write has only its temporary name).
 */
function readRunFiles(runDir: string, suffix: string): unknown[] {
  let names: string[];
  try {
    names = readdirSync(runDir).filter((n) => n.endsWith(suffix));
  } catch {
    return [];
  }
  const out: unknown[] = [];
  for (const n of names.sort()) {
    try {
      out.push(JSON.parse(readFileSync(`${runDir}/${n}`, 'utf8')));
    } catch {
      // skipped (see above)
    }
  }
  return out;
}

/**
 * What a test worker notes about one of its test files for the process that prints the summary,
 * which may not have run the file or its setup (jest's reporter, mocha's main process in
 * parallel mode): where its tapes go under the options the worker configured (`folder`; `null`:
 * a `name` function places them, so no folder is the file's own), or that every test of it ran
 * and passed there (`complete`). The summary looks for a deleted test's tape by these.
 */
export type FileNote = { file: string; folder: string | null } | { file: string; complete: true };

/**
 * Writes a file note (see FileNote) into the run directory (atomically, as a report).
 *
 * @example
 * writeFileNote(process.env.TAPEDECK_RUN_DIR!, { file: '/p/test/chat.test.js', folder: '/p/tapes/test/chat.test' })
 */
export function writeFileNote(runDir: string, note: FileNote): void {
  writeRunFile(runDir, NOTE, note);
}

/** The file notes of a run directory, gathered. */
export interface FileNotes {
  /** Test file -> its tape folder (`null`: none of its own); a file noted twice keeps the first. */
  folders: Map<string, string | null>;
  /** Test files every test of which ran and passed in a worker. */
  complete: Set<string>;
}

/**
 * Reads the file notes of the run directory (an unreadable one is skipped, as a report is).
 *
 * @example
 * readFileNotes(runDir).folders.get('/p/test/chat.test.js') // '/p/tapes/test/chat.test'
 */
export function readFileNotes(runDir: string): FileNotes {
  const out: FileNotes = { folders: new Map(), complete: new Set() };
  for (const read of readRunFiles(runDir, NOTE)) {
    const note = (read ?? {}) as { file?: unknown; folder?: unknown; complete?: unknown };
    if (typeof note.file !== 'string') continue;
    if (note.complete === true) out.complete.add(note.file);
    else if ((typeof note.folder === 'string' || note.folder === null) && !out.folders.has(note.file)) out.folders.set(note.file, note.folder);
  }
  return out;
}

/** Reads every report of the run directory (an unreadable one is skipped: the summary is advice, not a gate). */
export function readTapeReports(runDir: string): TapeReport[] {
  return readRunFiles(runDir, REPORT) as TapeReport[];
}

/** Options of {@link summarizeRun} and {@link pruneUnused}. */
export interface SummaryOptions {
  /**
   * Store URLs the run was given (with their passwords): reports name a store by its masked URL,
   * and reading its namespaces needs the real one (default: TAPEDECK_STORE).
   */
  stores?: readonly (string | undefined)[];
  /**
   * Test files every test of which ran: tapes in their default tape folders that no test
   * opened (a deleted or renamed test's) are counted unused, and pruning removes them.
   */
  testFiles?: readonly string[];
  /**
   * The folder of a test file's tapes (default `__tapes__/<file name>/` beside it); undefined:
   * the file has no folder of its own (a `name` function places its tapes), none is looked in.
   */
  tapeFolder?: (file: string) => string | undefined;
  /**
   * Every test file of the project ran, each whole (the `testFiles`): the default tape folders
   * (`__tapes__/<file name>/`) of test files that no longer exist (moved, renamed, deleted) are
   * looked for under the run's roots, and their tapes counted unused when every recording names
   * a test of a gone file. Never for a run of some files: it says nothing of the others.
   */
  wholeProject?: boolean;
}

const baseOf = (url: string) => maskRedisUrl(url).replace(/[?#].*$/, '');

/** The URL to open a reported store with: a given one that masks to it, else the report's own (no password). */
function storeUrl(label: string, opts: SummaryOptions): string {
  const given = [...(opts.stores ?? []), process.env.TAPEDECK_STORE].filter((u): u is string => typeof u === 'string' && u !== '');
  return given.find((u) => baseOf(u) === label) ?? label;
}

/** A namespace's records, each with its value decoded (undecodable ones are skipped: not ours to judge). */
async function namespaceRecords(store: string, namespace: string, opts: SummaryOptions): Promise<{ backend: RedisBackend; records: LoadedRecord[] }> {
  const backend = new RedisBackend(storeUrl(store, opts), { namespace, connect: { connectTimeoutMs: 5000 } });
  try {
    return { backend, records: (await backend.load({ create: false })).records };
  } catch (e) {
    await backend.close().catch(() => {});
    throw e;
  }
}

/** A loaded record's value, or undefined when it does not decode. */
const safeValue = (r: LoadedRecord): unknown => {
  try {
    return r.value();
  } catch {
    return undefined;
  }
};

/**
 * What names a stored recording among a report's `used` ones: an HTTP recording's trace token,
 * an MCP exchange's mark, a ReplayCache recording's mark, a realtime session's mark (on its head
 * record: a session is one recording, its parts and audio go with it when it is pruned);
 * undefined for other records (realtime parts and audio, cache records of old versions without
 * a key), which the summary does not judge.
 */
const usageMark = (value: unknown): string | undefined =>
  isHttpRecord(value) ? value.trace : isMcpRecord(value) ? mcpUsageMark(value) : isCacheRecord(value) ? cacheUsageMark(value) : isRealtimeRecord(value) && value.role === 'session' ? realtimeUsageMark(value) : undefined;

/**
 * Of a tape's (or namespace's) records in order, the indexes of those a prune of the `stale`
 * recordings drops: each stale recording, and the parts and audio of stale realtime sessions
 * (src/realtime/usage-mark.ts), so no part is left without its session.
 */
function staleRecords(values: readonly unknown[], stale: ReadonlySet<string>): number[] {
  const out = new Set(sessionRemains(values, stale));
  values.forEach((v, i) => {
    if (stale.has(usageMark(v) ?? '')) out.add(i);
  });
  return [...out];
}

/** The test files a run ran (those whose tests opened a tape), and the roots they are named from. */
interface RanFiles {
  files: ReadonlySet<string>;
  roots: readonly string[];
}

/**
 * Whether a recording no request of this run used is a stale candidate: on a tape several test
 * files share, a recording made by a test of a file that exists but did not run in this run
 * (`vitest run a.test.ts`) was simply not asked for, and pruning it would make that file miss.
 * Recordings that name no test, a test of a file that ran, or of a file gone since, are judged.
 */
const judged = (owner: string | undefined, ran: RanFiles): boolean => {
  const sep = owner?.indexOf(' > ') ?? -1;
  if (owner === undefined || sep < 0) return true;
  const file = owner.slice(0, sep);
  if (ran.files.has(file)) return true;
  return !ran.roots.some((root) => existsSync(join(root, file)));
};

/** The test of a record, if it names one (the `test` field of a tape several tests share). */
const ownerOf = (value: unknown): string | undefined => {
  const t = typeof value === 'object' && value !== null ? (value as { test?: unknown }).test : undefined;
  return typeof t === 'string' ? t : undefined;
};

/**
 * Calls of these reports that an injected fault answered in place of a recording: such a call
 * never says which recording it would have got, so with them a recording no call used is no
 * stale candidate (another seed, or the test without its faults, asks for it).
 */
function faultedCalls(rs: readonly TapeReport[]): ReturnType<typeof faultsInPlaceOfRecordings> {
  const all: Record<string, number> = {};
  for (const r of rs) for (const [f, n] of Object.entries(r.faults ?? {})) all[f] = (all[f] ?? 0) + n;
  return faultsInPlaceOfRecordings(all);
}

/** A tape beside a test's (`<tape>.cache.tape`, `<tape>.mcp.tape`): its test may have made requests through the other. */
const COMPANION = /\.(cache|mcp)\.tape$/;

/** One tape's (or namespace's) line of the summary: its reports added up, its unused recordings found. */
async function summarizeTape(tape: string, rs: readonly TapeReport[], opts: SummaryOptions, ran: RanFiles): Promise<TapeSummary> {
  const added = rs.reduce((n, r) => n + r.added + (r.cacheAdded ?? 0), 0);
  const rerecorded = rs.reduce((n, r) => n + (r.rerecorded ?? 0), 0);
  const hits = rs.reduce((n, r) => n + r.hits, 0);
  const unrecorded = rs.reduce((n, r) => n + (r.unrecorded ?? 0), 0);
  const misses = rs.reduce((n, r) => n + r.misses.length, 0);
  const errorsNotRecorded = rs.reduce((n, r) => n + (r.errorsNotRecorded ?? 0), 0);
  const repeats = rs.reduce((n, r) => n + (r.repeats ?? 0), 0);
  const repeatsOfMade = rs.reduce((n, r) => n + (r.repeatsOfMade ?? 0), 0);
  const fallbacks = rs.reduce((n, r) => n + (r.fallbacks?.length ?? 0), 0);
  const refused = rs.reduce((n, r) => n + Object.values(r.refused ?? {}).reduce((a, b) => a + b, 0), 0);
  const used = new Set(rs.flatMap((r) => r.used));
  const unusedTraces: string[] = [];
  /** Notes a stored record no call of the run used, if it is a stale candidate (see judged). */
  const noteUnused = (value: unknown) => {
    const mark = usageMark(value);
    if (mark === undefined) return;
    // A trace upload's count follows the uploader's batching timer, not the code: those left over
    // when the run made some are no stale candidates (said only when it made none, below).
    if (isHttpRecord(value) && isTelemetry(value.request)) {
      if (used.has(mark)) telemetryUsed = true;
      else if (judged(ownerOf(value), ran)) telemetryLeft.push(mark);
      return;
    }
    if (!used.has(mark) && judged(ownerOf(value), ran)) unusedTraces.push(mark);
  };
  let telemetryUsed = false;
  const telemetryLeft: string[] = [];
  const { store, namespace } = rs[0]!;
  let unreadable: string | undefined;
  const faulted = faultedCalls(rs);
  // Opened and asked nothing this run (its call behind a flag that is off): whether its
  // recordings are stale this run cannot tell; pruning them would lose the call's recording.
  const failed = rs.reduce((n, r) => n + (r.failedRequests ?? 0), 0);
  const idle = failed === 0 && rs.every((r) => r.hits === 0 && r.added === 0 && r.misses.length === 0 && r.used.length === 0 && !r.cacheAdded) && (rs[0]!.store !== undefined || existsSync(tape));
  if (faulted.calls > 0) unreadable = `${faulted.text}, not by recordings`;
  else if (failed > 0) unreadable = `${failed} request${failed === 1 ? '' : 's'} failed with an error of the tape or its store (see the test's error)`;
  else if (idle) unreadable = rs.length === 1 && rs[0]!.test ? `its test (${rs[0]!.test}) made no request${COMPANION.test(tape) ? ' through it' : ''} in this run` : 'no test made a request through it in this run';
  else if (!rs.some((r) => r.mode === 'passthrough')) {
    if (store && namespace) {
      try {
        const { backend, records } = await namespaceRecords(store, namespace, opts);
        await backend.close();
        for (const r of records) noteUnused(safeValue(r));
      } catch (e) {
        // The summary is advice: a store it cannot reach is said, not fatal.
        unreadable = (e as Error).message.split('\n')[0];
      }
    } else {
      try {
        for (const { value } of (await readTape(tape)).records) noteUnused(value);
      } catch {
        // no tape (a replay run that missed everything) or an unreadable one: nothing to judge
      }
    }
  }
  if (!telemetryUsed) unusedTraces.push(...telemetryLeft);
  const mode = rs[rs.length - 1]!.mode;
  return { tape, ...(store && namespace ? { store, namespace } : {}), mode, added, ...(rerecorded > 0 ? { rerecorded } : {}), ...(unrecorded > 0 ? { unrecorded } : {}), hits, misses, ...(errorsNotRecorded > 0 ? { errorsNotRecorded } : {}), ...(repeats > 0 ? { repeats } : {}), ...(repeatsOfMade > 0 ? { repeatsOfMade } : {}), ...(fallbacks > 0 ? { fallbacks } : {}), ...(refused > 0 ? { refused } : {}), unused: unusedTraces.length, unusedTraces, ...(unreadable ? { unreadable } : {}) };
}

/**
 * Adds the reports up per tape (or namespace), and reads each tape or namespace to find
 * recordings no test used in this run (stale candidates). Tapes used in passthrough mode are not
 * judged: nothing was served from them.
 *
 * @example
 * const summary = await summarizeRun(readTapeReports(runDir))
 * console.log(formatSummary(summary))
 */
export async function summarizeRun(reports: readonly TapeReport[], opts: SummaryOptions = {}): Promise<RunSummary> {
  const byTape = new Map<string, TapeReport[]>();
  for (const r of reports) {
    const id = r.store && r.namespace ? `${r.store} namespace ${r.namespace}` : r.tape;
    const list = byTape.get(id) ?? [];
    list.push(r);
    byTape.set(id, list);
  }
  const summary: RunSummary = { tapes: [], tapesWritten: 0, added: 0, hits: 0, misses: [], unused: 0 };
  // The test files this run ran (those whose tests opened a tape): see judged().
  const ran: RanFiles = { files: new Set(reports.flatMap((r) => (r.testFile ? [r.testFile] : []))), roots: [...new Set(reports.flatMap((r) => (r.root ? [r.root] : [])))] };
  // Tapes and namespaces are read a few at a time: a large suite on Redis has one per test.
  const groups = [...byTape].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const entries: TapeSummary[] = [];
  for (let i = 0; i < groups.length; i += 8) entries.push(...(await Promise.all(groups.slice(i, i + 8).map(([tape, rs]) => summarizeTape(tape, rs, opts, ran)))));
  for (const t of entries) {
    summary.tapes.push(t);
    if (t.added > 0) summary.tapesWritten++;
    summary.added += t.added;
    if (t.rerecorded) summary.rerecorded = (summary.rerecorded ?? 0) + t.rerecorded;
    if (t.unrecorded) summary.unrecorded = (summary.unrecorded ?? 0) + t.unrecorded;
    summary.hits += t.hits;
    if (t.errorsNotRecorded) summary.errorsNotRecorded = (summary.errorsNotRecorded ?? 0) + t.errorsNotRecorded;
    if (t.repeats) summary.repeats = (summary.repeats ?? 0) + t.repeats;
    if (t.repeatsOfMade) summary.repeatsOfMade = (summary.repeatsOfMade ?? 0) + t.repeatsOfMade;
    if (t.fallbacks) summary.fallbacks = (summary.fallbacks ?? 0) + t.fallbacks;
    summary.unused += t.unused;
  }
  // A tape per test: a deleted test's tape is opened by no one, so only its folder finds it.
  // Not in a run whose tests used a store (TAPEDECK_STORE): they opened no tape file, so every
  // local tape would look left behind, and the prune would delete the project's tapes.
  if (opts.testFiles && opts.testFiles.length > 0 && reports.length > 0 && !reports.some((r) => r.store)) {
    const opened = new Set(reports.filter((r) => !r.store).flatMap((r) => [r.tape, ...(r.cacheTape ? [r.cacheTape] : [])]));
    for (const candidate of orphanTapes(opts.testFiles, opened, opts.tapeFolder)) {
      // None when it may be the tape of a test file that exists and did not run whole.
      const n = await orphanRecordCount(candidate, opts.testFiles, ran.roots);
      const { tape } = candidate;
      if (n === 0) continue;
      summary.tapes.push({ tape, mode: reports[0]!.mode, added: 0, hits: 0, misses: 0, unused: n, unusedTraces: [], orphan: true });
      summary.unused += n;
    }
    // A moved or deleted test file's folder: no file of the project opens its tapes again.
    if (opts.wholeProject) {
      const listed = new Set(summary.tapes.map((t) => t.tape));
      for (const { tape } of goneFileTapes(ran.roots, opened)) {
        if (listed.has(tape)) continue;
        const n = await goneRecordCount(tape, ran.roots);
        if (n === 0) continue;
        summary.tapes.push({ tape, mode: reports[0]!.mode, added: 0, hits: 0, misses: 0, unused: n, unusedTraces: [], orphan: true, goneFile: true });
        summary.unused += n;
      }
    }
  }
  summary.misses.push(...groups.flatMap(([, rs]) => rs.flatMap((r) => r.misses.map((m) => withFile(m, r)))));
  const fallbackCalls = groups.flatMap(([tape, rs]) => rs.flatMap((r) => (r.fallbacks ?? []).map((f) => ({ ...f, tape }))));
  if (fallbackCalls.length > 0) summary.fallbackCalls = fallbackCalls;
  for (const r of reports) {
    for (const [f, n] of Object.entries(r.faults ?? {})) (summary.faults ??= {})[f] = (summary.faults?.[f] ?? 0) + n;
    for (const [h, n] of Object.entries(r.refused ?? {})) (summary.refused ??= {})[h] = (summary.refused?.[h] ?? 0) + n;
  }
  return summary;
}

/**
 * Drops, from every tape (and Redis namespace) of the summary, the recordings no test used in
 * the run. Only call it after a complete, passing run: a recording that a skipped or
 * filtered-out test needs looks unused too. Returns how many were dropped. On Redis it removes
 * exactly those records, so records other runs add meanwhile stay.
 */
export async function pruneUnused(summary: RunSummary, opts: SummaryOptions = {}): Promise<number> {
  checkOptionsObject(summary, 'pruneUnused', 'await pruneUnused(await summarizeRun(reports))', "a run's summary");
  checkOptionsObject(opts, 'pruneUnused', 'pruneUnused(summary, { testFiles })', 'options as its second argument');
  let dropped = 0;
  for (const t of summary.tapes) {
    if (t.unused === 0) continue;
    if (t.orphan) {
      dropped += await removeOrphanTape(t.tape, t.unused);
      continue;
    }
    const stale = new Set(t.unusedTraces);
    if (t.store && t.namespace) {
      const backend = new RedisBackend(storeUrl(t.store, opts), { namespace: t.namespace });
      try {
        const r = await backend.rewrite((records) => staleRecords(records.map(safeValue), stale));
        // A realtime session's parts and audio go with it: counted as the one recording it is.
        dropped += r.removed.filter((v) => usageMark(v) !== undefined).length;
      } finally {
        await backend.close();
      }
      continue;
    }
    const r = await rewriteTapeFrames(t.tape, (scan) =>
      staleRecords(
        scan.frames.map((f) => {
          try {
            return decodeFrame(scan.bytes, f, t.tape);
          } catch {
            return undefined; // dropped by the rewrite itself (it does not decode)
          }
        }),
        stale,
      ),
    );
    // A realtime session's parts and audio go with it: counted as the one recording it is.
    dropped += r.dropped.filter((v) => usageMark(v) !== undefined).length;
  }
  return dropped;
}

/**
 * How many calls of the run were made after their test ended (through its tape, which had
 * closed): each got an error answer no test failed for, so a runner integration fails the run for
 * them (the vitest plugin, the jest reporter, mocha's global teardown).
 *
 * @example
 * if (lateCalls(summary) > 0) process.exitCode = 1
 */
export function lateCalls(s: RunSummary): number {
  return s.misses.filter((m) => m.late).length;
}

/**
 * The line that says the run fails for its late calls, or undefined when it has none.
 *
 * @example
 * lateFailure(summary) // 'tapedeck: the run fails: 1 call was made after its test ended and got no answer (listed under Misses): await every call a test makes.'
 */
export function lateFailure(s: RunSummary): string | undefined {
  const n = lateCalls(s);
  if (n === 0) return undefined;
  return `tapedeck: the run fails: ${n === 1 ? '1 call was' : `${n} calls were`} made after ${n === 1 ? 'its test' : 'their tests'} ended and got no answer (listed under Misses): await every call a test makes.`;
}

/** A miss with its report's test file, when its test's name does not start with it. */
function withFile(m: MissReport, r: TapeReport): MissReport {
  const file = r.testFile ?? r.file;
  if (file === undefined || m.test === undefined || m.file !== undefined || m.test.startsWith(`${file} > `) || (r.file !== undefined && m.test.startsWith(`${r.file} > `))) return m;
  return { ...m, file };
}

/** The test of a miss as the run's failure lines name it: with its file when its name has none. */
const testOf = (m: MissReport): string | undefined => (m.test !== undefined && m.file !== undefined ? `${m.file} > ${m.test}` : m.test);

/**
 * The line that says the run fails for the misses of tests that were marked skipped after them
 * (see MissReport.skipped), each with its test, what missed and the command that records it;
 * undefined when there are none.
 *
 * @example
 * skippedFailure(summary)
 * // 'tapedeck: the run fails: 1 test skipped itself after a request had no recording (a skip does not hide a miss):\n  chat.test.mjs > chat > asks: POST /v1/chat/completions: ...\n    record it: TAPEDECK_MODE=update npx mocha ...'
 */
export function skippedFailure(s: RunSummary): string | undefined {
  const skipped = s.misses.filter((m) => m.skipped);
  if (skipped.length === 0) return undefined;
  const tests = new Set(skipped.map((m) => testOf(m) ?? ''));
  const lines = [`tapedeck: the run fails: ${tests.size === 1 ? '1 test' : `${tests.size} tests`} skipped ${tests.size === 1 ? 'itself' : 'themselves'} after a request had no recording (a skip does not hide a miss):`];
  for (const m of skipped.slice(0, 20)) lines.push(`  ${m.test ? `${testOf(m)}: ` : ''}${m.route}: ${m.diagnosis}`, `    record it: ${m.command}`);
  if (skipped.length > 20) lines.push(`  ... and ${skipped.length - 20} more`);
  return lines.join('\n');
}

/**
 * The line that says the run fails for the misses made after their test was reported passed
 * (see MissReport.afterPass), each with its test, what missed and the command that records it;
 * undefined when there are none.
 *
 * @example
 * afterPassFailure(summary)
 * // 'tapedeck: the run fails: 1 request had no recording in an afterEach hook, after mocha reported its test passed (a hook does not hide a miss):\n  cleanup tidies up: POST /v1/chat/completions: ...\n    record it: TAPEDECK_MODE=update npx mocha ...'
 */
export function afterPassFailure(s: RunSummary): string | undefined {
  const after = s.misses.filter((m) => m.afterPass);
  if (after.length === 0) return undefined;
  const lines = [`tapedeck: the run fails: ${after.length === 1 ? '1 request' : `${after.length} requests`} had no recording in an afterEach hook, after mocha reported ${new Set(after.map((m) => testOf(m) ?? '')).size === 1 ? 'its test' : 'their tests'} passed (a hook does not hide a miss):`];
  for (const m of after.slice(0, 20)) lines.push(`  ${m.test ? `${testOf(m)}: ` : ''}${m.route}: ${m.diagnosis}`, `    record it: ${m.command}`);
  if (after.length > 20) lines.push(`  ... and ${after.length - 20} more`);
  return lines.join('\n');
}

/**
 * Why a run fails though its tests may all have passed, or undefined: calls made after their
 * test ended ({@link lateFailure}), misses of tests marked skipped after them
 * ({@link skippedFailure}), misses made after mocha reported their test passed
 * ({@link afterPassFailure}). The runner integrations (the vitest plugin, the jest reporter,
 * mocha's global teardown) fail the run with it.
 *
 * @example
 * if (runFailure(summary)) process.exitCode = 1
 */
export function runFailure(s: RunSummary): string | undefined {
  const lines = [lateFailure(s), skippedFailure(s), afterPassFailure(s)].filter((l): l is string => l !== undefined);
  return lines.length > 0 ? lines.join('\n') : undefined;
}

/** Options of the printed summary. */
export interface FormatOptions {
  /** Paths are shown relative to this directory (default the working directory). */
  root?: string;
  /** The command that prunes unused recordings (printed when there are any). */
  pruneCommand?: string;
  /** The run pruned its unused recordings: they are gone, and said so, not "unused" still. */
  pruned?: boolean;
  /**
   * Why this run, asked to prune, did not: the prune command is then not printed (it would be
   * refused again), the summary says what a run needs for the prune instead.
   */
  notPruned?: string;
}

/**
 * The summary as printed at the end of a run.
 *
 * @example
 * formatSummary(summary, { pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' })
 * // 'tapedeck: 3 tapes, 1 written, 2 recordings added, 5 replayed, 0 misses, 1 unused recording\n...'
 */
export function formatSummary(s: RunSummary, opts: FormatOptions = {}): string {
  const root = opts.root ?? process.cwd();
  const rel = (p: string) => relative(root, p) || p;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  const misses = s.misses.length === 1 ? '1 miss' : `${s.misses.length} misses`;
  const namespaces = s.tapes.filter((t) => t.namespace !== undefined);
  const tapes = s.tapes.filter((t) => t.namespace === undefined && !t.orphan).length;
  const stores = [...new Set(namespaces.map((t) => t.store))];
  const where = [tapes > 0 || namespaces.length === 0 ? plural(tapes, 'tape') : '', namespaces.length > 0 ? `${plural(namespaces.length, 'Redis namespace')} on ${stores.join(', ')}` : ''].filter(Boolean).join(' and ');
  const unrecorded = s.unrecorded ? `, ${plural(s.unrecorded, 'answer')} not recorded` : '';
  const faults = s.faults ? Object.entries(s.faults) : [];
  // Latency is a delay, not a failure: counted apart from the faults.
  const failures = faults.filter(([f]) => f !== 'latency');
  const injected = faults.length > 0 ? `, ${plural(failures.reduce((n, [, k]) => n + k, 0), 'fault')} injected (${faults.map(([f, n]) => `${f} ${n}`).join(', ')})` : '';
  // A re-recording replaced a recording: the tape did not grow, so it is not said added.
  const rerecorded = s.rerecorded ? `, ${s.rerecorded} re-recorded` : '';
  const lines = [`tapedeck: ${where}, ${s.tapesWritten} written, ${plural(s.added - (s.rerecorded ?? 0), 'recording')} added${rerecorded}${unrecorded}, ${s.hits} replayed, ${misses}, ${plural(s.unused, 'unused recording')}${opts.pruned && s.unused > 0 ? ' (pruned)' : ''}${injected}`];
  // A tape whose only note is repeats comes after those that changed (misses, recordings added,
  // unused, ...): a request asked twice and recorded once in update mode is noted on every run,
  // and in a large suite such lines would push the real changes past the list's end.
  const changed = (t: TapeSummary) => Boolean(t.added > 0 || t.misses > 0 || t.unused > 0 || t.unreadable || t.unrecorded || t.errorsNotRecorded || t.fallbacks || t.refused);
  const notable = [...s.tapes.filter(changed), ...s.tapes.filter((t) => !changed(t) && t.repeats)];
  for (const t of notable.slice(0, 30)) {
    const fresh = t.added - (t.rerecorded ?? 0);
    const bits = [fresh ? `+${fresh} added` : '', t.rerecorded ? `${t.rerecorded} re-recorded (replaced)` : '', t.unrecorded ? `${t.unrecorded} not recorded` : '', t.misses ? `${t.misses} missed` : '', t.repeats && t.repeats > (t.repeatsOfMade ?? 0) ? `${t.repeats - (t.repeatsOfMade ?? 0)} answered again past their recordings` : '', t.repeatsOfMade ? `${t.repeatsOfMade} answered again unsent by this run's recording` : '', t.fallbacks ? `${t.fallbacks} answered by another request's recording` : '', t.errorsNotRecorded ? `${plural(t.errorsNotRecorded, 'upstream error')} not recorded` : '', t.refused ? `${t.refused} refused (network blocked)` : '', t.unused ? `${t.unused} unused${t.goneFile ? ' (its test file is gone: moved, renamed or deleted)' : t.orphan ? ' (no test opened this tape: a deleted or renamed test)' : ''}${opts.pruned ? ', pruned' : ''}` : '', t.unreadable ? `unused recordings not checked: ${t.unreadable}` : ''].filter(Boolean);
    lines.push(`  ${t.namespace ? `namespace ${t.namespace}` : rel(t.tape)}${t.orphan ? '' : ` (${t.mode})`}: ${bits.join(', ')}`);
  }
  if (notable.length > 30) lines.push(`  ... and ${notable.length - 30} more ${tapes > 0 ? 'tapes' : 'namespaces'}`);
  if (s.misses.length > 0) {
    lines.push('Misses:');
    // The same miss again (a retried test asks again, a loop sends one request twice) is one
    // line with its count: three lines alike read as three problems.
    const alike = new Map<string, { m: MissReport; n: number }>();
    for (const m of s.misses) {
      const id = JSON.stringify([m.test, m.route, m.diagnosis, m.command, m.hint]);
      const seen = alike.get(id);
      if (seen) seen.n++;
      else alike.set(id, { m, n: 1 });
    }
    const groups = [...alike.values()];
    for (const { m, n } of groups.slice(0, 20)) lines.push(`  ${m.test ? `${m.test}: ` : ''}${m.route}: ${m.diagnosis}${n > 1 ? ` (${n} times)` : ''}`, m.hint ? `    ${m.hint}` : `    record it: ${m.command}`);
    if (groups.length > 20) lines.push(`  ... and ${groups.length - 20} more`);
  }
  if (s.errorsNotRecorded) {
    // Each local run calls the API again for them and passes; CI, which replays, misses them.
    lines.push(`Upstream errors (4xx, 5xx) are not recorded: ${s.errorsNotRecorded === 1 ? 'that call goes to the API on every run and misses' : 'those calls go to the API on every run and miss'} in CI. To replay an error a test relies on, record it: tapedeckFixtures({ recordErrors: true }) (docs/modes.md, "What is recorded when the upstream fails").`);
  }
  const pastRecorded = (s.repeats ?? 0) - (s.repeatsOfMade ?? 0);
  if (pastRecorded > 0) {
    // Served, so no miss: a request asked more often than when it was recorded (a loop that now
    // runs longer) would pass unseen. A run after the recording one cannot tell that from a
    // request update mode recorded once though the test asks it again: both causes are named.
    const one = pastRecorded === 1;
    lines.push(`${one ? '1 call was' : `${pastRecorded} calls were`} answered by a recording again, past those recorded for ${one ? 'its' : 'their'} request. Either update mode recorded ${one ? 'the request' : 'a request'} once and the test asks again (update mode answers a repeat from its first recording; TAPEDECK_MODE=record records each call, and then this line goes away), or a loop runs longer now: tapedeckFixtures({ strictOrder: true }) makes such calls misses; record again if the extra calls are meant.`);
  }
  if (s.repeatsOfMade) {
    // Not a loop that runs longer: the request was first recorded in this run, and update mode
    // answered its repeat with that recording. A test that relies on the second answer
    // differing (a prompt cache read) never saw it, and nothing else says why.
    const n = s.repeatsOfMade;
    lines.push(`${n === 1 ? '1 call was' : `${n} calls were`} answered without being sent, by the recording this run made of the same request asked earlier (update mode answers a repeat from the first recording). To send and record each call (a second answer that differs, such as a prompt cache read), record with TAPEDECK_MODE=record.`);
  }
  if (s.fallbacks) {
    // No miss, by design of the matching: an edited prompt passes on the old prompt's answer,
    // and nothing else tells (the old recording even counts as used).
    const calls = s.fallbackCalls ?? [];
    const how = [...new Set(calls.map((c) => c.match))].join(', ') || 'signature';
    lines.push(`${s.fallbacks === 1 ? '1 call was' : `${s.fallbacks} calls were`} answered by another request's recording (match ${how}): no recording of ${s.fallbacks === 1 ? 'its' : 'their'} own request (a prompt edited since it was recorded?). Update mode records such a request:`);
    for (const c of calls.slice(0, 20)) lines.push(`  ${c.test ? `${c.test}: ` : ''}${rel(c.tape)}: ${c.answer}`, `    record it: ${c.command}`);
    if (calls.length > 20) lines.push(`  ... and ${calls.length - 20} more`);
  }
  const refused = s.refused ? Object.entries(s.refused) : [];
  if (refused.length > 0) {
    // The code under test got E_NETWORK_BLOCKED for them and may have caught it (a telemetry
    // call, a fallback answer): the test passed, and nothing else would tell.
    const n = refused.reduce((k, [, c]) => k + c, 0);
    lines.push(`${n === 1 ? '1 request was' : `${n} requests were`} refused (blockNetwork): ${refused.map(([h, c]) => `${h} ${c}`).join(', ')}. The code under test got E_NETWORK_BLOCKED for ${n === 1 ? 'it' : 'them'}: list a host in install()'s hosts to record and replay it, or in allowHosts to let it through.`);
  }
  if (s.unused > 0 && opts.notPruned) {
    lines.push(`Unused recordings are stale candidates (no test asked for them in this run), not pruned: ${opts.notPruned}. The prune drops them after a run in which every test ran and passed, none skipped (.skip, .only, skipIf) or filtered out (-t, --grep), and no call was made after its test ended.`);
  } else if (s.unused > 0 && opts.pruneCommand) {
    lines.push(`Unused recordings are stale candidates (no test asked for them in this run). Drop them after a full passing run: ${opts.pruneCommand}`);
  }
  const fails = runFailure(s);
  if (fails) lines.push(fails);
  return lines.join('\n');
}
