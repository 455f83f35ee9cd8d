/**
 * A test tape: one tape, a ready `fetch` on it, a ReplayCache beside it on request, the fetch
 * switch for code that takes no fetch option, and at close a report for the run summary. Runner
 * agnostic: the vitest fixture uses it, and so can mocha, jest or node:test (docs/vitest.md).
 *
 * With a store (a `redis://` / `rediss://` URL: the `store` option, else TAPEDECK_STORE) the
 * recordings go to Redis instead of the tape file, in a namespace of their own named after the
 * tape path (src/testing/names.ts, testNamespace): the same modes, misses and reports.
 *
 * The tape is opened on the first request, so a test that makes none writes no file. Misses
 * come back as the provider's 400 error (SDKs raise it at once, without retries) whose message
 * starts with the short diagnosis and the command that records the request.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { HEADLINE_MAX, missHeadline } from '../match/diagnose.ts';
import { createFetchFor, FETCH_OPTION_NAMES, lateCallError, missOf, type FetchOptions, type TapedeckFetch } from '../proxy/fetch.ts';
import { DECK_OPTION_NAMES } from '../proxy/deck.ts';
import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import { checkRedactOptions, REDACT_INNER } from '../store/redact-options.ts';
import { redactor, type Redactor } from '../store/redact.ts';
import { checkHooks } from '../store/hooks.ts';
import { errorAnswer } from '../proxy/http-errors.ts';
import { endedWithErrorEvent } from '../proxy/error-event-answers.ts';
import { installFetchSwitch, type FetchSwitch, type HostPattern } from '../proxy/global-fetch.ts';
import { RedisBackend, saltOf } from '../store/backends/redis-backend.ts';
import { isRedisUrl, maskRedisUrl, typedRedisUrl } from '../store/backends/redis-connection.ts';
import { namespaceOf, RedisRecords } from '../store/backends/redis.ts';
import type { TapeMode } from '../store/mode.ts';
import { ReplayCache, usedCacheMarks, type ReplayCacheOptions } from '../store/replay-cache.ts';
import { retryRun } from '../store/collection.ts';
import { startProxy, type ProxyServer } from '../proxy/server.ts';
import { makeLocalCertificate } from '../proxy/tls.ts';
import { tapeTransport, type McpTransportLike, type TapeTransport, type TapeTransportOptions } from '../mcp/transport.ts';
import { diagnoseMiss, type MissDetails } from './miss.ts';
import { othersRecordingsOnly } from './others-recordings.ts';
import { bodyText, describeFallbacks, type FallbackCall } from './fallback-answers.ts';
import { movedRecordings, tapeWithRequest, type MovedRecordings, type SameRequestTape } from './moved-tapes.ts';
import { adoptMovedRecordings } from './adopt-moved.ts';
import { shellQuote } from './shell-quote.ts';
import { resolveTestMode, type TestModeSource } from './mode.ts';
import { forTestOutput } from './test-output.ts';
import { failIfStuckOnFakeTimers, fakeMicrotasksError, microtasksFaked, nextTurn, realNow, realTimer } from './real-timers.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../proxy/timeouts.ts';
import { testNamespace } from './names.ts';
import { testSeed } from './test-seed.ts';
import { shareSalt, tapeFileSalt, type SaltSource } from '../store/salt-group.ts';
import { testFileIdentity, testIdentity } from './test-identity.ts';
import { keptClientError, openedTest, runningOtherThan, type OpenTest } from './open-tests.ts';
import { writeTapeReport, type MissReport, type TapeReport } from './run-report.ts';
import { checkChaos, familyOptions, type ChaosOptions } from '../chaos/options.ts';

/** How long past the calls' shutdown timeout a close may take under fake timers before it fails (see close()). */
const CLOSE_MARGIN_MS = 5000;

/** Late calls a tape reports to the run summary (a loop of them must not fill the run directory). */
const MAX_LATE_REPORTS = 20;
/** Masks a route's path for the run summary (see routeOf); made when first needed. */
let routeMasks: Redactor | undefined;

/** How a miss's hint starts when its test's recordings are at its test file's old place. */
const MOVE_FIX = 'fix: move its recordings where the test looks now: ';

/** The environment variable that names the shared store of a test run. */
export const STORE_ENV = 'TAPEDECK_STORE';

/** A store URL as reports and messages show it: password masked, query (namespace, ttl) left out. */
export const storeLabel = (url: string): string => maskRedisUrl(url).replace(/[?#].*$/, '');

/**
 * The store a test run uses: the option (`false`: tape files even if TAPEDECK_STORE is set),
 * else TAPEDECK_STORE, else none. Throws E_ARG for a store that is not a Redis URL.
 *
 * @example
 * resolveTestStore(undefined, { TAPEDECK_STORE: 'redis://ci-cache:6379/0?namespace=app' })
 * // { url: 'redis://ci-cache:6379/0?namespace=app', fromEnv: true }
 */
export function resolveTestStore(option: string | false | undefined, env: NodeJS.ProcessEnv = process.env): { url: string; fromEnv: boolean } | undefined {
  if (option === false) return undefined;
  const fromEnv = option === undefined || option === '';
  const url = fromEnv ? env[STORE_ENV]?.trim() : option;
  if (!url) return undefined;
  if (!isRedisUrl(url)) {
    throw new TapedeckError('E_ARG', `${fromEnv ? STORE_ENV : 'The store option'} must be a redis:// or rediss:// URL, not ${JSON.stringify(maskRedisUrl(url))}.`, {
      hint: `Give a Redis URL (redis://host:6379/0?namespace=my-app), or unset ${STORE_ENV} to record into tape files.`,
    });
  }
  return { url, fromEnv };
}

/**
 * Options of a test tape; every createFetch option (matching, redaction, timing...) applies too,
 * to `fetch` and to the proxies of serve().
 */
export interface TestTapeOptions extends Omit<FetchOptions, 'tape' | 'store' | 'mode' | 'onWarning'> {
  /** The tape file; with a store, the name the test's Redis namespace is made from. */
  tape: string;
  /**
   * A shared Redis store for the recordings instead of the tape file: `redis://` or `rediss://`
   * URL, whose namespace (`?namespace=`, default `tapedeck`) is the base under which each test
   * gets its own (default TAPEDECK_STORE; `false`: tape files whatever the environment says).
   */
  store?: string | false;
  /** The project's default mode; the run's switches (vitest --mode, TAPEDECK_MODE) win over it. */
  mode?: TapeMode;
  /** The mode given on the command line (`vitest --mode update`, passed on by the plugin). */
  cliMode?: string;
  /** Where the run's tape reports go (default TAPEDECK_RUN_DIR; none: no report). */
  runDir?: string;
  /** The test's name, for reports and messages. */
  test?: string;
  /** The test file, for reports. */
  file?: string;
  /** The exact command that records this test (printed on a miss); default `TAPEDECK_MODE=update <your test command>`. */
  recordCommand?: string;
  /** Paths in messages are relative to this directory (default the working directory). */
  root?: string;
  /** Called with tape warnings: damaged records, failed appends, re-keyed tapes (default: a process warning). */
  onWarning?: (message: string) => void;
  /** The environment to read modes from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * close() rejects with E_MISS (the misses and the record command) when a request of the test
   * had no recording, even one the code under test caught, so the after-each hook that closes the
   * tape fails the test (default true; the vitest, jest and mocha helpers fail the test
   * themselves and pass false).
   */
  failOnMiss?: boolean;
  /**
   * Which retry of the test this tape is for (default 0, its first attempt; the vitest, jest and
   * mocha helpers set it, and vitest counts a repetition under `repeats` as one more). In record
   * mode a retry's recordings replace what the test's earlier attempts recorded in the same run,
   * so a replay gives the test the answers its last attempt got, not a failed attempt's.
   */
  retry?: number;
}

/** The names of a test tape's own options (createFetch's are the rest). */
export const TEST_TAPE_OPTION_NAMES = ['cliMode', 'runDir', 'file', 'recordCommand', 'root', 'env', 'failOnMiss', 'retry'] as const;
const TEST_TAPE_OPTIONS = optionNames<TestTapeOptions>()([...DECK_OPTION_NAMES, ...FETCH_OPTION_NAMES, ...TEST_TAPE_OPTION_NAMES]);

export { shellQuote } from './shell-quote.ts';

/**
 * The command that runs one test, for the record command of a tape opened without one: under
 * `node --test` (which marks its test processes with NODE_TEST_CONTEXT), given the test's name
 * and file, the node:test command that runs just that test; else a placeholder. A test named
 * by its full name (`t.fullName`: `english > greets`, suites first) is matched by its own name
 * (`greets`): Node 20 matches a pattern against each test's and suite's own name, never the
 * full one, so the command also runs the file's other tests of that name (in update mode
 * they only record what they miss); the whole name is an alternative, for a test whose own
 * name holds ` > `.
 *
 * @example
 * testCommandOf({ test: 'says hello', file: 'test/chat.test.mjs' }, { NODE_TEST_CONTEXT: 'child-v8' }, '/p')
 * // "node --test --test-name-pattern='^says hello$' test/chat.test.mjs"
 * testCommandOf({ test: 'english > greets', file: 'test/chat.test.mjs' }, { NODE_TEST_CONTEXT: 'child-v8' }, '/p')
 * // "node --test --test-name-pattern='^(?:greets|english > greets)$' test/chat.test.mjs"
 */
export function testCommandOf(opts: { test?: string; file?: string }, env: NodeJS.ProcessEnv, root: string): string {
  if (!env.NODE_TEST_CONTEXT || !opts.test || !opts.file) return '<your test command>';
  const file = isAbsolute(opts.file) ? relative(root, opts.file) || opts.file : opts.file;
  const own = opts.test.split(' > ').pop()!;
  const pattern = own === opts.test ? regexEscape(opts.test) : `(?:${regexEscape(own)}|${regexEscape(opts.test)})`;
  return `node --test --test-name-pattern=${shellQuote(`^${pattern}$`)} ${shellQuote(file)}`;
}

/** A literal text as a regular expression (for the test name patterns of record commands). */
export const regexEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Options of {@link TestTape.install}. */
export interface InstallOptions {
  /** Hosts routed through the tape (default every host). */
  hosts?: readonly HostPattern[];
  /** Refuse requests to other hosts (E_NETWORK_BLOCKED) instead of letting them through. */
  blockNetwork?: boolean;
  /** Hosts let through when the network is blocked. */
  allowHosts?: readonly HostPattern[];
}

/** A test's tape. */
export interface TestTape {
  /** The tape file (with a store: the name its namespace was made from). */
  readonly path: string;
  /** Where the recordings are, for messages: the tape path, or `Redis namespace NS`. */
  readonly location: string;
  /** With a store: its URL, password masked, without the query. */
  readonly store?: string;
  /** With a store: this test's namespace. */
  readonly namespace?: string;
  readonly mode: TapeMode;
  /** Where the mode came from (`CI` when CI alone made it replay). */
  readonly modeSource: TestModeSource;
  /** A standard fetch that records and replays through the tape. */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Misses so far, short diagnosis first. */
  readonly misses: readonly MissReport[];
  /** A ReplayCache on `<tape>.cache.tape` (with a store: namespace `<namespace>.cache`) in the same mode, opened once, closed with the tape. */
  cache(opts?: Omit<ReplayCacheOptions, 'mode'>): Promise<ReplayCache>;
  /** Routes globalThis.fetch through this tape until close() (or the switch's uninstall()). */
  install(opts?: InstallOptions): FetchSwitch;
  /**
   * Wraps an MCP SDK client Transport (or a function making one: nothing is made in replay) so
   * its exchanges record to `<tape>.mcp.tape` (with a store: namespace `<namespace>.mcp`) in the
   * test's mode; a miss fails the test with its record command, like a fetch miss. Closed with
   * the tape. docs/mcp.md.
   */
  mcp(transport: McpTransportLike | (() => McpTransportLike) | undefined, opts?: Omit<TapeTransportOptions, 'tape' | 'mode' | 'recordCommand'>): TapeTransport;
  /**
   * The E_MISS error that fails a test in which a request had no recording (caught by the code
   * under test or not): each miss's route and diagnosis, then the command that records it. A
   * call made while this test ran through the fetch of a test that had ended (a client kept from
   * it) fails the test as well: E_PROXY_CLOSED when nothing missed, else said after the misses.
   * Undefined when neither happened.
   *
   * @example
   * const failure = tape.missFailure(); if (failure) throw failure
   */
  missFailure(): TapedeckError | undefined;
  /**
   * A proxy of this test's own, on a free loopback port, recording to and replaying from this
   * tape in the test's mode, with the tape's options as `fetch` has them (match, hostMatch,
   * ignoreArgs, volatileText, redact, timing...): for realtime clients (OpenAI Realtime needs
   * `wss:`, so TLS is on by default and `ca` is the PEM to trust) and for child processes the
   * test starts (a Python script, a CLI). Closed with the tape. docs/realtime.md.
   *
   * @example
   * const { url, ca } = await tape.serve({ upstream: 'https://api.openai.com' })
   * const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', baseURL: `${url}/v1` }))
   */
  serve(opts?: TestServeOptions): Promise<{ url: string; ca?: string }>;
  /**
   * Faults on demand for the rest of the test, on `fetch` (and what install() routes through
   * it): `{ faults: { 429: 1 }, attempts: 1 }` makes every call fail once before its recorded
   * answer (docs/chaos.md); undefined stops them. Unlike the chaos option elsewhere, it applies
   * in every mode (`live` defaults to true; `live: false` refuses it outside replay): the test
   * itself asks for the faults, and what its update run records is what its replay needs.
   * Faulted attempts are never recorded. The proxies of serve() take them too (a realtime
   * session gets `close`: closed 1011 in the middle of a response). MCP transports take `chaos`
   * in mcp()'s options.
   */
  chaos(opts: ChaosOptions | undefined): void;
  /**
   * Uninstalls switches, closes the fetch and the cache, writes the run report; then rejects
   * with {@link TestTape.missFailure} if a request missed (unless `failOnMiss: false`).
   * Idempotent.
   */
  close(): Promise<TapeReport>;
}

/** Options of {@link TestTape.serve}. */
export interface TestServeOptions {
  /** Where the proxy forwards in record and update mode (e.g. https://api.openai.com). */
  upstream?: string;
  /** HTTPS and WSS with a certificate made for this proxy (default true); false for plain HTTP (Gemini Live's `ws:`). */
  tls?: boolean;
}

/**
 * Opens a test tape. Runner-agnostic: call it in a before-each hook and close() it in the
 * after-each hook (the vitest fixture in `llm-tapedeck/vitest` does both for you).
 *
 * @example
 * // node:test; any runner's before-each and after-each hooks do the same
 * import { afterEach, beforeEach, it } from 'node:test'
 * import OpenAI from 'openai'
 * import { openTestTape, slug, type TestTape } from 'llm-tapedeck/testing'
 * let tape: TestTape
 * beforeEach((t) => { tape = openTestTape({ tape: `test/__tapes__/${slug(t.name)}.tape` }) })
 * afterEach(() => tape.close())
 * it('says hello', async () => {
 *   // a key only to record with: the SDK refuses to start without one, in a CI replay too
 *   const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: tape.fetch })
 * })
 */
export function openTestTape(opts: TestTapeOptions): TestTape {
  try {
    return openTape(opts);
  } catch (e) {
    throw forTestOutput(e);
  }
}

/** A Redis namespace as a member of a group sharing one salt (../store/salt-group.ts). */
function namespaceSalt(url: string, namespace: string): SaltSource {
  return {
    key: new RedisBackend(url, { namespace }).location,
    async read() {
      const records = await RedisRecords.open(url, { namespace });
      try {
        const header = await records.header();
        return header === undefined ? undefined : (saltOf(header, namespace) ?? null);
      } finally {
        await records.close();
      }
    },
  };
}

function openTape(opts: TestTapeOptions): TestTape {
  checkOptionsObject(opts, 'openTestTape', "openTestTape({ tape: 'test/__tapes__/my-test.tape' })");
  checkOptionNames(opts, TEST_TAPE_OPTIONS, 'openTestTape', 'docs/vitest.md', REDACT_INNER);
  // Checked when the options are given, not at the first request (the fetch is made then).
  checkRedactOptions(opts?.redact);
  // An async hook or match found at the first request would fail the fetch, which an SDK
  // retries and then reports as "Connection error.": the test gets the E_ARG here instead.
  checkHooks(opts, 'openTestTape options');
  if (typeof opts?.tape !== 'string' || opts.tape === '') {
    throw new TapedeckError('E_ARG', 'openTestTape needs a tape path.', { hint: "Pass { tape: 'test/__tapes__/my-test.tape' }." });
  }
  const env = opts.env ?? process.env;
  const { mode, source } = resolveTestMode({ option: opts.mode, cliMode: opts.cliMode, env });
  const root = opts.root ?? process.cwd();
  const store = resolveTestStore(opts.store, env);
  const namespace = store ? testNamespace(namespaceOf(store.url), opts.tape, root) : undefined;
  const rel = namespace ? `Redis namespace ${namespace}` : relative(root, opts.tape) || opts.tape;
  const recordCommand = opts.recordCommand ?? `${store?.fromEnv ? `${STORE_ENV}=${shellQuote(typedRedisUrl(maskRedisUrl(store.url)))} ` : ''}TAPEDECK_MODE=update ${testCommandOf(opts, env, root)}`;
  // A realtime session that has a recording is replayed whole in update mode (it cannot go live
  // halfway), so its miss is fixed only by recording the test again.
  const sessionRecordCommand = recordCommand.replace(/\bTAPEDECK_MODE=update\b/, 'TAPEDECK_MODE=record');
  // A store namespace that did not exist when the test opened it (replay): nothing was recorded.
  let storeMissing = false;
  const runDir = opts.runDir ?? env.TAPEDECK_RUN_DIR;
  // The workers of one test run share a run, so they never replace each other's recordings.
  const runOf = opts.run ?? (env.TAPEDECK_RUN_ID?.trim() || (runDir ? `run-dir:${runDir}` : undefined));
  // A retry writes apart from the test's earlier attempts, and replaces what they recorded. (In
  // a run of its own the attempts' runs have ended anyway: record mode replaces them already.)
  const run = runOf !== undefined && (opts.retry ?? 0) > 0 ? retryRun(runOf, opts.retry!) : runOf;
  const runOpt = run ? { run } : {};
  // On a tape several tests share, each record names its test and each test replays its own
  // recordings, in its own order: what record mode gave a test is what replay gives it, however
  // the tests sharing the tape were ordered, run concurrently or spread over workers.
  const owner = testIdentity(opts.test, opts.file, root);
  const ownerOpt = owner !== undefined ? { test: owner } : {};
  /**
   * Record mode: the recordings of this test made before its test file moved, on a tape of it,
   * renamed to it before the tape opens, so this run replaces them (./adopt-moved.ts). Once per
   * tape file; nothing to do in other modes, on a store, or for a test with no name.
   */
  const adopted = new Map<string, Promise<unknown>>();
  const adopt = (file: string): Promise<unknown> => {
    if (mode !== 'record' || store || owner === undefined || !opts.file) return Promise.resolve();
    let p = adopted.get(file);
    if (!p) adopted.set(file, (p = adoptMovedRecordings(file, owner, root).catch(() => 0)));
    return p;
  };
  const misses: MissReport[] = [];
  const used = new Set<string>();
  const switches: FetchSwitch[] = [];
  let hits = 0;
  /** Calls answered by another request's recording (signature, hybrid): said in the run summary. */
  const fallbacks: FallbackCall[] = [];
  // Upstream error answers got live and not recorded (no recordErrors): said in the summary,
  // since each local run calls the API for them again and passes while CI misses them.
  let errorsNotRecorded = 0;
  /** Requests the tape or its store failed with an error of its own (not a miss). */
  let failedRequests = 0;
  // Answers being recorded that may end as the API's error event inside a 200 stream: known at
  // their end, counted with the errors above then (before the report is written).
  const endings = new Set<Promise<void>>();
  let inner: TapedeckFetch | undefined;
  // Whether the tape file was absent when the fetch first opened it, and what the fetch recorded
  // since: an update (or record) run makes the file when it opens it, so a miss there must not
  // take the file's existence for recordings (a renamed test offline was told to record with a
  // key, not that its old tape holds the request).
  let absentAtOpen = false;
  let recordedHere = 0;
  /** Whether the tape holds nothing of this test's run yet: no file, or only the one this run made, empty. */
  const tapeAbsent = (): boolean => !existsSync(opts.tape) || (absentAtOpen && recordedHere === 0);
  let cache: Promise<ReplayCache> | undefined;
  let cacheAdded = 0;
  /** Recordings the cache served: its own line of the run summary counts them replayed. */
  let cacheHits = 0;
  /** The cache misses among `misses`: the run summary lists them under the cache's tape. */
  const cacheMisses = new Set<MissReport>();
  const mcps: TapeTransport[] = [];
  /** The MCP misses among `misses`: the run summary lists them under the MCP tape. */
  const mcpMisses = new Set<MissReport>();
  /** The MCP tape beside the test's tape (see mcp()), as the run summary names it. */
  /** A tape beside the test's: its ReplayCache's (`cache`) or its MCP exchanges' (`mcp`). */
  const besideTape = (kind: 'cache' | 'mcp'): string => `${opts.tape.replace(/\.tape$/, '')}.${kind}.tape`;
  const mcpTape = besideTape('mcp');
  // The MCP tape masks secrets under the test tape's salt: a tool result it replays goes into
  // the model's next request, keyed as masked under the test tape's salt (../store/salt-group.ts).
  const saltSources = store ? [namespaceSalt(store.url, namespace!), namespaceSalt(store.url, `${namespace}.mcp`)] : [tapeFileSalt(opts.tape), tapeFileSalt(mcpTape)];
  const endSharedSalt = shareSalt(saltSources);
  /**
   * What a miss of the model says when the test's tape and its MCP tape exist with two salts
   * (both recorded by a release that gave each its own): a secret in a tool result is masked
   * one way on each, so the request built from a replayed tool result never matches, and
   * recording again into them keeps both salts. Read once, at the first miss after tape.mcp().
   */
  let splitSalts: Promise<string | undefined> | undefined;
  const splitSaltsNote = (): Promise<string | undefined> =>
    (splitSalts ??= Promise.all(saltSources.map((x) => x.read().catch(() => undefined))).then(([a, b]) =>
      a === undefined || b === undefined || a === b
        ? undefined
        : `${rel} and its MCP tape ${namespace ? `Redis namespace ${namespace}.mcp` : relative(root, mcpTape) || mcpTape} were recorded with different redaction salts (by an older tapedeck), so a secret in a tool result is masked differently on each and the model's request built from it never matches: delete both${namespace ? ` namespaces (their keys ${namespace}:* and ${namespace}.mcp:*)` : ` (rm ${shellQuote(relative(root, opts.tape) || opts.tape)} ${shellQuote(relative(root, mcpTape) || mcpTape)})`}, then record the test again`,
    ));
  /** Requests the fetch switches of install() refused (blockNetwork), by host. */
  const refused: Record<string, number> = {};
  const proxies: Promise<ProxyServer>[] = [];
  /** The chaos option, until tape.chaos() asks for other faults (the proxies of later serve() calls start with it). */
  let chaosNow: ChaosOptions | undefined = opts.chaos;
  let closing: Promise<TapeReport> | undefined;
  // Set one event-loop turn after close() was called: until then the fetch still takes calls.
  // A call the test made without awaiting it reaches the fetch a few ticks later (the OpenAI SDK
  // builds its request first), often after the runner's after-each hook has called close(): it
  // is a call of this test, to be answered and, if it missed, to fail the test (node:test's
  // `afterEach(() => tape.close())`, jest's and mocha's hooks), not a late call nobody counts.
  let shut = false;
  /** The fetch's calls not answered yet (close() and callsSettled() wait for them). */
  const inFlight = new Set<Promise<unknown>>();
  // Open from here to close (./open-tests.ts: a late call made while another test runs).
  // Calls made while this test ran through the fetch of a test that had ended (a client kept
  // from it, or a call it did not await): they got an error answer the code under test may have
  // caught, so this test fails for them too (missFailure), plugin or reporter or not.
  const keptCalls: { from: string | undefined; route: string }[] = [];
  const self: OpenTest = { test: opts.test, keptCall: (from, route) => void keptCalls.push({ from, route }) };
  const closed = openedTest(self);

  const { tape: _t, store: _s, mode: _m, cliMode: _c, runDir: _r, test: _n, file: _f, recordCommand: _rc, root: _ro, onWarning, env: _e, failOnMiss: _fm, retry: _rt, ...fetchOpts } = opts;
  // Update mode records what has no recording of its own, as it promises: with signature or
  // hybrid matching another request's recording answered it, and an edited prompt was never
  // recorded. Replay (CI) keeps the fallback, and the run summary counts it (see `fallbacks`).
  if (mode === 'update' && (fetchOpts.match === 'signature' || fetchOpts.match === 'hybrid')) fetchOpts.match = 'exact';
  // The proxies of serve() match, redact, time and reach the API as the fetch does: a test
  // whose tape options say hostMatch 'any' (or ignoreArgs, volatileText, match...) replays the
  // same through either. Only the fetch's summary is not a proxy's (the run summary says it),
  // and a proxy does not prune: it knows only the recordings it served, and would remove those
  // the fetch used (the run's own prune, `--prune-unused`, sees every writer's).
  const { summary: _sum, chaos: _ch, pruneUnused: _pu, ...proxyOpts } = fetchOpts;
  const open = (): TapedeckFetch => {
    if (shut) throw new TapedeckError('E_PROXY_CLOSED', `The test tape ${rel} is closed.`, { hint: 'Use the tape only inside the test that opened it.' });
    if (inner === undefined && !store) absentAtOpen = !existsSync(opts.tape);
    // Misses name this test's record command, not createFetch's mode option.
    inner ??= createFetchFor({
      ...fetchOpts,
      ...(store ? { store: new RedisBackend(store.url, { namespace }) } : { tape: opts.tape }),
      ...runOpt,
      ...ownerOpt,
      mode,
      onWarning: (m) => {
        // A missing tape in replay is told by each miss, better than by a warning up front.
        if (/; every request will be a miss\.$/.test(m)) {
          storeMissing = true;
          return;
        }
        if (onWarning) onWarning(m);
        else process.emitWarning(m, { code: 'TAPEDECK_TAPE' });
      },
    }, { kind: 'test', recordCommand });
    return inner;
  };

  /** Where a moved test file's recordings are, as a miss's headline says it. */
  const movedText = (moved: MovedRecordings): string => `this test's recordings are at ${relative(root, moved.tape) || moved.tape}: its test file ${moved.file} is gone (moved?)`;

  /** A miss of a test with no recording on a tape whose recordings are other tests' (see othersRecordingsOnly). */
  const othersText = (others: { stopped: boolean }, where: string): string => `this test has no recording on ${where}, only other tests' are there${others.stopped ? ` (${stoppedText})` : ''}`;
  /** A recording run of the tape that did not end (Ctrl-C): its writer note is still beside it. */
  const stoppedText = `a recording run of this tape did not end: its note ${relative(root, opts.tape) || opts.tape}.writers/ is still there`;

  /** The fix a miss gives when a tape under another name or place holds its request (see tapeWithRequest): it may be another test's. */
  const sameFix = (same: SameRequestTape, orRecord = true): string =>
    `if ${same.test ? `"${same.test}"` : 'its test'} is this test renamed or moved, move its tape: ${same.move}${orRecord ? `; else record it: ${recordCommand}` : ''}`;

  /** Notes a miss for the run report and the failure at close: its route and what differs. */
  function noteMiss(details: MissDetails, route: string, cache?: { label: string; file?: string }, moved?: MovedRecordings, note?: string, same?: SameRequestTape, others?: { stopped: boolean }): { never: boolean; diagnosis: string } {
    // Before the first recording there is no tape at all: say so rather than "no recordings".
    const never = cache ? cache.file !== undefined && !existsSync(cache.file) : store ? storeMissing : tapeAbsent();
    const diagnosis = never
      ? store
        ? 'the namespace has no recordings yet (this test was never recorded)'
        : moved
          ? `the tape does not exist here: this test's recordings are at ${relative(root, moved.tape) || moved.tape} (its test file ${moved.file} is gone: moved or renamed)`
          : same
            ? `the tape does not exist yet, but ${relative(root, same.tape) || same.tape} holds this exact request: ${sameFix(same, false)}`
            : 'the tape does not exist yet (this test was never recorded)'
      : others
        ? `${othersText(others, 'this tape')} (the closest, another test's: ${diagnoseMiss(details, 'tape')})`
        : diagnoseMiss(details, store ? 'namespace' : 'tape');
    // Update mode, and recording it failed (no network, a placeholder key): said with why, and
    // not "run update mode", which is what was run.
    const failed = typeof details.unrecordable === 'string' ? `; recording it failed: ${details.unrecordable}` : '';
    const hint = never && moved ? { hint: `${MOVE_FIX}${moved.move}` } : failed ? { hint: `fix: recording it needs the network and a real API key; then: ${recordCommand}` } : {};
    misses.push({ ...(opts.test ? { test: opts.test } : {}), route: cache?.label ?? details.route ?? route, diagnosis: `${diagnosis}${failed}${note && !never ? `; ${note}` : ''}`, command: recordCommand, ...hint });
    return { never, diagnosis };
  }

  /**
   * The answer to a miss of the test's fetch. The message already says what differs and gives this
   * test's record command; a test never recorded (no tape yet) says that instead. The miss is
   * read from the error the fetch answered with, not from the body: each provider's error body
   * has its own shape (Gemini's carries no details, Ollama's `error` is a string).
   */
  function missResponse(res: Response, moved: MovedRecordings | undefined, splitNote?: string, same?: SameRequestTape, others?: { stopped: boolean }): Response {
    const answered = missOf(res);
    const details = (answered?.error.details ?? {}) as MissDetails;
    const { never, diagnosis } = noteMiss(details, '(request)', undefined, moved, splitNote, same, others);
    // Only other tests' recordings on the tape: what differs from the closest is no prompt change.
    if (!never && others && answered && typeof details.unrecordable !== 'string') return answered.retell(missHeadline(othersText({ stopped: false }, rel), `${others.stopped ? `${stoppedText}; ` : ''}record it: ${recordCommand}`), { difference: diagnosis });
    // Recording again into these tapes cannot fix it: said where the test sees the miss.
    if (!never && splitNote && answered) return answered.retell(`${answered.error.message}\n${splitNote.charAt(0).toUpperCase()}${splitNote.slice(1)}.`);
    if (!never || !answered) return res;
    // Recorded before its file moved: where the recordings are and how to move them, not a
    // live re-record of what is on disk already.
    if (moved) return answered.retell(missHeadline(movedText(moved), `move them: ${moved.move}`), { difference: diagnosis });
    // The test may have been renamed (or moved to another file): its tape under the old name.
    if (same && typeof details.unrecordable !== 'string') return answered.retell(missHeadline(`this test was never recorded under this name, but ${relative(root, same.tape) || same.tape} holds this exact request`, sameFix(same)), { difference: diagnosis });
    const ci = mode === 'replay' && source === 'CI' ? ' (CI is set: nothing records)' : '';
    // A namespace, or a tape path too long for the headline (clipping it would cut the file
    // name, the part that tells which test this is), gets a line of its own.
    const what = `this test was never recorded${ci}`;
    const inline = `${what}: no tape at ${rel}`;
    const [headline, ownLine] = store
      ? [`${what}: its Redis namespace has no recordings`, `\n  namespace: ${namespace}`]
      : inline.length <= HEADLINE_MAX
        ? [inline, '']
        : [`${what}: its tape does not exist yet`, `\n  tape: ${rel}`];
    // Update mode with no network or no key: recording is what failed, say why.
    const fix = typeof details.unrecordable === 'string' ? `recording it needs the network and a real API key: ${details.unrecordable}` : `record it: ${recordCommand}`;
    // The same provider's error shape, with this message wherever its SDK reads one.
    return answered.retell(`${missHeadline(headline, fix)}${ownLine}`, { difference: diagnosis });
  }

  /**
   * The failure for the calls made while this test ran through an ended test's fetch (see
   * keptCalls), or undefined when there were none.
   */
  const keptCallsFailure = (): TapedeckError | undefined => {
    if (keptCalls.length === 0) return undefined;
    const n = keptCalls.length;
    const from = [...new Set(keptCalls.map((c) => (c.from === undefined ? 'an earlier test' : `"${c.from}"`)))].join(', ');
    return forTestOutput(
      new TapedeckError(
        'E_PROXY_CLOSED',
        `tapedeck: ${n === 1 ? '1 call' : `${n} calls`} made while this test ran came through the tape.fetch of ${from}, which had ended, and got no answer (${keptCalls.map((c) => c.route).join(', ')}): the code under test may have caught the error, so the test fails here.`,
        { calls: keptCalls.map((c) => ({ ...c })), hint: "Build the client inside each test from that test's tape.fetch (a client kept in a module-level variable, or an SDK's default client, keeps the first test's fetch); if the earlier test did not await this call, await it there." },
      ),
    );
  };

  /** A call's `METHOD /path`, as the summary names it (`(request)` for a path it cannot read). */
  const routeOf = (input: string | URL | Request, init?: RequestInit): string => {
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    let path = '(request)';
    try {
      // Masked as a miss's route is: this one goes to the run summary (a bot's token in the path).
      path = (routeMasks ??= redactor()).url(new URL(input instanceof Request ? input.url : String(input)).pathname);
    } catch {
      // not a URL: the route stays unnamed
    }
    return `${method} ${path}`;
  };

  /** What every report of this tape says: which tape, test and mode. */
  const reportOf = (): Pick<TapeReport, 'tape' | 'store' | 'namespace' | 'test' | 'file' | 'testFile' | 'root' | 'mode'> => ({
    tape: opts.tape,
    ...(store ? { store: storeLabel(store.url), namespace } : {}),
    ...(opts.test ? { test: opts.test } : {}),
    ...(opts.file ? { file: opts.file, testFile: testFileIdentity(opts.file, root), root } : {}),
    mode,
  });
  let lateReports = 0;
  /**
   * A call after the tape closed: one the test did not await, made after it ended. A final 400
   * (a rejected fetch is an SDK's "Connection error.", retried), and a line of the run summary:
   * the test has passed already, and the call's caller may never look at its answer.
   */
  const lateCall = (input: string | URL | Request, init?: RequestInit): Response => {
    const [method, path] = routeOf(input, init).split(' ') as [string, string];
    // Another test's tape open now: the call was made in that test's time, through a client
    // this test's fetch was given (see ./open-tests.ts).
    const runningTape = runningOtherThan(self);
    const running = runningTape ? (runningTape.test ?? '(a test)') : undefined;
    runningTape?.keptCall?.(opts.test, `${method} ${path}`);
    if (runDir && lateReports < MAX_LATE_REPORTS) {
      lateReports++;
      const miss: MissReport = running === undefined
        ? { ...(opts.test ? { test: opts.test } : {}), route: `${method} ${path}`, diagnosis: 'made after the test ended (the test did not await it): it got no answer', command: recordCommand, hint: 'fix: await every call the test makes', late: true }
        : { ...(opts.test ? { test: opts.test } : {}), route: `${method} ${path}`, diagnosis: `made through this test's fetch after it ended, while "${running}" was running: it got no answer`, command: recordCommand, hint: "fix: await every call the test makes; if it was awaited, a client built with this test's tape.fetch was used again later (an SDK's default client keeps it): build the client in each test from its own tape.fetch", late: true };
      try {
        writeTapeReport(runDir, { ...reportOf(), added: 0, hits: 0, misses: [miss], used: [] });
      } catch {
        // The summary is advice: a report it cannot write is not the caller's failure.
      }
    }
    const headers = Object.fromEntries(new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)));
    const a = errorAnswer(running === undefined ? lateCallError() : keptClientError(running), path, headers, 400, false, true);
    return new Response(a.body, { status: 400, headers: a.headers });
  };

  /** Set when the test called with queueMicrotask faked (see fakeMicrotasksError): close fails the test with it. */
  let microtaskFailure: TapedeckError | undefined;
  const fetchFn = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (shut) return Promise.resolve(lateCall(input, init));
    // Refused before any answer is made: reading one would spin the worker, silently.
    if (microtasksFaked()) return Promise.reject((microtaskFailure ??= fakeMicrotasksError()));
    const call = answer(input, init);
    inFlight.add(call);
    const done = () => inFlight.delete(call);
    call.then(done, done);
    return call;
  };
  const answer = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let res: Response;
    try {
      if (mode === 'record') await adopt(opts.tape);
      res = await open()(input, init);
    } catch (e) {
      // The tape or its store failed the request (a damaged tape, a store down): counted, so the
      // run summary does not say the test made no request.
      if (e instanceof TapedeckError) failedRequests++;
      throw e;
    }
    const how = res.headers.get('x-tapedeck-match');
    if (how === 'miss') {
      // No tape at all for a test with a name: its test file may have moved from where its
      // recordings are (./moved-tapes.ts). Looked for only then: a miss on a tape that exists is
      // a request that changed.
      const moved = !store && owner !== undefined && opts.file && tapeAbsent() ? await movedRecordings(opts.tape, owner, root).catch(() => undefined) : undefined;
      // Else a tape of another name or place holding this very request (a test renamed, or
      // moved to another file that stays): named, rather than "never recorded".
      const key = missOf(res)?.error.details.key;
      const same = !moved && !store && typeof key === 'string' && tapeAbsent() ? await tapeWithRequest(opts.tape, key, root).catch(() => undefined) : undefined;
      // A tape the file's tests share on which this test has no recording (a recording run
      // stopped before it): the closest recording is another test's, not this one's changed.
      const others = !moved && !same && !store && owner !== undefined && !tapeAbsent() ? await othersRecordingsOnly(opts.tape, owner, root).catch(() => undefined) : undefined;
      return missResponse(res, moved, mcps.length > 0 ? await splitSaltsNote() : undefined, same, others);
    }
    // An error answer of the tape or its store (damaged, unreachable), not of the upstream.
    if (how === 'error' && !(res.headers.get('x-tapedeck-error') ?? '').startsWith('E_UPSTREAM')) failedRequests++;
    if (how === 'exact' || how === 'signature' || how === 'sequential') hits++;
    // Another request's recording answered: a fallback of 'signature' or 'hybrid' (in
    // 'sequential' mode every call is answered in order, by design: none is a fallback).
    if (how === 'signature' || (how === 'sequential' && opts.match === 'hybrid')) fallbacks.push({ route: routeOf(input, init), how, trace: res.headers.get('x-tapedeck-trace'), body: bodyText(init) });
    // createFetch hands an unrecorded upstream answer back as it came: no x-tapedeck-match.
    if ((how === null || how === 'passthrough') && res.status >= 400 && mode !== 'passthrough' && !res.headers.has('x-tapedeck-fault')) errorsNotRecorded++;
    // A stream that carried the API's error event after a 200 is such an error answer too.
    else if (how === 'recording' || how === 'recorded') {
      recordedHere++;
      const ending = endedWithErrorEvent(res).then((e) => {
        if (e) errorsNotRecorded++;
        endings.delete(ending);
      });
      endings.add(ending);
    }
    const trace = res.headers.get('x-tapedeck-trace');
    if (trace && how !== 'passthrough') used.add(trace);
    return res;
  };

  /** The calls' shutdown timeout: how long a close lets a call still waiting for the upstream go on. */
  const shutdownMs = typeof opts.shutdownTimeoutMs === 'number' && opts.shutdownTimeoutMs > 0 ? opts.shutdownTimeoutMs : DEFAULT_SHUTDOWN_TIMEOUT_MS;

  /**
   * Waits a turn of the event loop (see `shut`), then for every call made until then, for at most
   * the shutdown timeout (or until `deadline`, a realNow() time: close() shares one with the
   * fetch's own close): a call still waiting for the upstream then (a test that timed out, an
   * upstream that hangs) is left to the fetch's close, which aborts it unrecorded, rather than
   * holding the test's teardown until the upstream answers (up to its idle timeout, 10 minutes).
   * The turn and the bound are on the real timers: a test that installed fake timers and left
   * them (vitest does not restore them) must not keep its tape, and the run, waiting
   * (./real-timers.ts).
   */
  const settle = async (deadline?: number): Promise<void> => {
    await nextTurn();
    if (inFlight.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((r) => {
      timer = realTimer('setTimeout')(r, deadline === undefined ? shutdownMs : Math.max(0, deadline - realNow()));
    });
    let past = false;
    void bound.then(() => (past = true));
    try {
      while (inFlight.size > 0 && !past) await Promise.race([Promise.allSettled([...inFlight]), bound]);
    } finally {
      realTimer('clearTimeout')(timer);
    }
  };

  const tape: TestTape = {
    path: opts.tape,
    location: rel,
    ...(store ? { store: storeLabel(store.url), namespace } : {}),
    mode,
    modeSource: source,
    fetch: fetchFn,
    misses,
    cache(cacheOpts = {}) {
      if (closing) return Promise.reject(new TapedeckError('E_PROXY_CLOSED', `The test tape ${rel} is closed.`, { hint: 'Use the tape only inside the test that opened it.' }));
      const where = store ? new RedisBackend(store.url, { namespace: `${namespace}.cache` }) : besideTape('cache');
      // Its recordings at the old place of a moved test file: found only when it misses.
      const movedHere = (): Promise<MovedRecordings | undefined> =>
        typeof where === 'string' && mode === 'replay' && owner !== undefined && opts.file && !existsSync(where) ? movedRecordings(where, owner, root).catch(() => undefined) : Promise.resolve(undefined);
      cache ??= adopt(typeof where === 'string' ? where : '').then(() => ReplayCache.open(where, { recordCommand, ...runOpt, ...ownerOpt, ...cacheOpts, mode })).then((c) => {
        // A miss fails the test like a fetch miss, even one the code under test caught (a
        // caching layer that falls back to a default on any error). get() reads through this.
        const getRecord = c.getRecord.bind(c);
        const label = `ReplayCache ${typeof where === 'string' ? where : `Redis namespace ${namespace}.cache`}`;
        c.getRecord = async (...args: Parameters<ReplayCache['getRecord']>) => {
          let record: Awaited<ReturnType<ReplayCache['getRecord']>>;
          try {
            record = await getRecord(...args);
          } catch (e) {
            if (e instanceof TapedeckError && e.code === 'E_MISS') {
              const moved = await movedHere();
              noteMiss(e.details as MissDetails, label, { label, ...(typeof where === 'string' ? { file: where } : {}) }, moved);
              cacheMisses.add(misses[misses.length - 1]!);
              // Where its recordings are and how to move them, not a live re-record.
              if (moved) e.message = missHeadline(movedText(moved), `move them: ${moved.move}`);
            }
            throw e;
          }
          if (record !== undefined) cacheHits++;
          return record;
        };
        return c;
      });
      return cache;
    },
    mcp(transport, mcpOpts = {}) {
      if (closing) throw new TapedeckError('E_PROXY_CLOSED', `The test tape ${rel} is closed.`, { hint: 'Use the tape only inside the test that opened it.' });
      const where = store ? new RedisBackend(store.url, { namespace: `${namespace}.mcp` }) : mcpTape;
      /** Its recordings at the old place of a moved test file (looked for as it starts, in replay, with no MCP tape here). */
      let moved: MovedRecordings | undefined;
      const transportOpts: TapeTransportOptions = {
        ...mcpOpts,
        // As tape.chaos(): the test asked for the faults, in whatever mode it runs.
        ...(mcpOpts.chaos ? { chaos: { live: true, ...mcpOpts.chaos } } : {}),
        tape: where,
        mode,
        // The test is the program: its transports are its sessions 1, 2, … in the order it
        // makes them, so each (another server, or the same in another state) replays its own.
        session: mcpOpts.session ?? mcps.length + 1,
        // A tape tests share (per file): the test's own exchanges, as for its fetch.
        ...runOpt,
        ...ownerOpt,
        // The miss the client gets names the MCP tape: a test that throws it fails with it alone.
        recordCommand: `record it: ${recordCommand} (MCP tape: ${namespace ? `Redis namespace ${namespace}.mcp` : relative(root, mcpTape) || mcpTape})`,
        redact: mcpOpts.redact ?? opts.redact,
        onWarning: mcpOpts.onWarning ?? onWarning,
        // The test fails with the miss; the report is in the run summary, not on stderr.
        onMiss: (report, x) => {
          const miss: MissReport = moved
            ? { ...(opts.test ? { test: opts.test } : {}), route: `MCP ${x.label}`, diagnosis: `the tape does not exist here: ${movedText(moved)}`, command: recordCommand, hint: `${MOVE_FIX}${moved.move}` }
            : { ...(opts.test ? { test: opts.test } : {}), route: `MCP ${x.label}`, diagnosis: x.message.split('\n')[0]!.replace(/; record it: .*$/, '').replace(`${x.label}: `, ''), command: recordCommand };
          misses.push(miss);
          mcpMisses.add(miss);
          mcpOpts.onMiss?.(report, x);
        },
      };
      const t = tapeTransport(transport, transportOpts);
      if (typeof where === 'string' && mode === 'record') {
        const start = t.start.bind(t);
        t.start = async () => {
          await adopt(where);
          return start();
        };
      } else if (typeof where === 'string' && mode === 'replay' && owner !== undefined && opts.file && !existsSync(where)) {
        // The transport reads its record command as it starts: found before, a miss says where
        // the recordings are and how to move them, as a fetch miss of the test does.
        const start = t.start.bind(t);
        t.start = async () => {
          moved = await movedRecordings(where, owner, root).catch(() => undefined);
          if (moved) transportOpts.recordCommand = `${movedText(moved)}; move them: ${moved.move}`;
          return start();
        };
      }
      mcps.push(t);
      return t;
    },
    missFailure() {
      if (misses.length === 0) return keptCallsFailure();
      // MCP misses are misses of the MCP tape beside the test's (tape.mcp()): named as such.
      const mcpRel = namespace ? `Redis namespace ${namespace}.mcp` : relative(root, mcpTape) || mcpTape;
      const mcpOnly = misses.every((x) => mcpMisses.has(x));
      const inTapes = mcpOnly ? mcpRel : misses.some((x) => mcpMisses.has(x)) ? `${rel} and ${mcpRel}` : rel;
      return forTestOutput(new TapedeckError(
        'E_MISS',
        `tapedeck miss: ${misses.length} request${misses.length === 1 ? '' : 's'} had no recording in ${inTapes}:\n${misses.map((x) => `  ${x.route}: ${x.diagnosis}`).join('\n')}\n${misses.every((x) => x.hint?.startsWith(MOVE_FIX)) ? `Move them: ${misses[0]!.hint!.slice(MOVE_FIX.length)}` : `${misses.every((x) => x.hint?.startsWith('fix: recording it needs')) ? 'Recording needs the network and a real API key (the upstream could not be reached or refused the key); then record it: ' : 'Record it: '}${(misses.find((x) => x.command === sessionRecordCommand) ?? misses[0]!).command}`}${keptCalls.length > 0 ? `\n${keptCallsFailure()!.message}` : ''}`,
        { file: namespace ? (mcpOnly ? mcpRel : rel) : mcpOnly ? mcpTape : opts.tape, misses: [...misses] },
      ));
    },
    serve(serveOpts = {}) {
      if (closing) return Promise.reject(new TapedeckError('E_PROXY_CLOSED', `The test tape ${rel} is closed.`, { hint: 'Use the tape only inside the test that opened it.' }));
      const p = (async () => {
        await adopt(opts.tape);
        const tls = serveOpts.tls === false ? undefined : await makeLocalCertificate();
        return startProxy({
          ...proxyOpts,
          ...(store ? { store: new RedisBackend(store.url, { namespace }) } : { tape: opts.tape }),
          ...runOpt,
          ...ownerOpt,
          mode,
          port: 0,
          ...(serveOpts.upstream ? { upstream: serveOpts.upstream } : {}),
          ...(tls ? { tls } : {}),
          sessionRecordCommand: `re-record: ${sessionRecordCommand}`,
          testRecordCommand: recordCommand,
          // An HTTP miss of this proxy fails the test like a fetch miss, even one the client
          // (a child process, an SDK that takes no fetch) swallowed.
          onMiss: (line, e) => void noteMiss(e.details as MissDetails, line.slice(0, line.indexOf(': '))),
          ...(chaosNow ? { chaos: chaosNow } : {}),
          onWarning: (m) => {
            // A realtime miss fails the test like a fetch miss, with this test's record command.
            const miss = /^tapedeck: realtime miss in [^:]+: (.*)/.exec(m);
            if (miss) misses.push({ ...(opts.test ? { test: opts.test } : {}), route: 'realtime session', diagnosis: miss[1]!.split('\n')[0]!, command: sessionRecordCommand });
            else if (onWarning) onWarning(m);
            else process.emitWarning(m, { code: 'TAPEDECK_TAPE' });
          },
        });
      })();
      proxies.push(p);
      return p.then((proxy) => ({ url: proxy.url, ...(proxy.ca ? { ca: proxy.ca } : {}) }));
    },
    chaos(c) {
      // A test that asks for faults wants them in the mode it runs in (update locally, replay
      // in CI): its retry goes on to the tape or, in update mode, to the API and is recorded.
      if (c !== undefined) checkChaos(c, 'proxy');
      // Without a seed, one of the test's own: each run of it gets the same faults.
      chaosNow = c === undefined ? undefined : { live: true, ...c, seed: c.seed ?? testSeed(owner ?? rel) };
      // fetch answers HTTP only: it takes the HTTP faults (a realtime `close` is the proxies').
      const http = chaosNow && familyOptions(chaosNow, 'http');
      // In record mode the tape opens only after this test's recordings of a moved file were
      // renamed (adopt, which the first request awaits too, after this): not before, under it.
      if (mode === 'record') void adopt(opts.tape).then(() => open().chaos(http));
      else open().chaos(http);
      // The proxies of serve() too: their HTTP answers and realtime sessions (a `close` fault).
      for (const p of proxies) void p.then((proxy) => proxy.handler.chaos(chaosNow)).catch(() => {});
    },
    install(sw = {}) {
      const s = installFetchSwitch({
        ...sw,
        fetch: fetchFn,
        // Counted for the run summary: the code under test may catch the refusal and pass.
        onRefused: ({ host }) => {
          refused[host] = (refused[host] ?? 0) + 1;
        },
      });
      switches.push(s);
      return s;
    },
    close() {
      // Past its bounds (the calls' shutdown timeout, then a margin for writing the tape) a close
      // that waits on with fake timers installed fails, saying so: those bounds run on the timers
      // the test faked (./real-timers.ts).
      const bound = shutdownMs + CLOSE_MARGIN_MS;
      unclosed.delete(tape);
      closing ??= failIfStuckOnFakeTimers((async () => {
        // One shutdown timeout in all: what the wait for the calls used of it, the fetch's own
        // close (streams still being recorded) does not get again.
        const deadline = realNow() + shutdownMs;
        await settle(deadline);
        shut = true;
        closed();
        for (const s of switches.splice(0)) s.uninstall();
        const errors: unknown[] = [];
        let added = 0;
        // Record mode replaces the older recordings of each request recorded again as the tape
        // closes; the writers' close says how many of their new recordings took such a place.
        let rerecorded = 0;
        let repeats = 0;
        let repeatsOfMade = 0;
        let unrecorded = 0;
        const faults: Record<string, number> = {};
        const addFaults = (f: Record<string, number> | undefined) => {
          for (const [k, n] of Object.entries(f ?? {})) faults[k] = (faults[k] ?? 0) + n;
        };
        if (inner) {
          try {
            await inner.close(Math.max(0, deadline - realNow()));
            // The calls settle() stopped waiting for are answered now (aborted past the shutdown
            // timeout): their misses and errors count in this report.
            while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
            await Promise.all([...endings]);
            const st = await inner.stats();
            // A retry's recordings that took the place of its failed attempt's did not grow the
            // tape: that attempt's report said them added.
            added = st.recorded - (st.retried ?? 0);
            rerecorded += st.rerecorded ?? 0;
            // createFetch counts as errors the answers it could not record (cut or ended early
            // upstream, cut by its close), and as append failures those whose write failed.
            unrecorded = st.appendFailures + st.errors;
            addFaults(st.faults);
            // Recordings whose calls were made again but not recorded stay: used, not stale.
            for (const t of st.kept ?? []) used.add(t);
            repeats += st.repeats ?? 0;
            repeatsOfMade += st.repeatsOfMade ?? 0;
          } catch (e) {
            errors.push(e);
          }
        }
        for (const p of proxies) {
          try {
            const proxy = await p;
            await proxy.close();
            const st = proxy.handler.stats();
            // What its clients were served and what it recorded: used, as tape.fetch's answers
            // are by their trace headers (else a prune after the run would remove them).
            for (const t of proxy.handler.usedTraces()) used.add(t);
            hits += st.hits + (st.realtime?.replayed ?? 0);
            added += st.recorded - st.appendFailures - (st.retried ?? 0) + (st.realtime?.recorded ?? 0);
            rerecorded += st.rerecorded ?? 0;
            addFaults(st.faults);
            for (const t of st.kept ?? []) used.add(t);
            repeats += st.repeats ?? 0;
            repeatsOfMade += st.repeatsOfMade ?? 0;
          } catch (e) {
            errors.push(e);
          }
        }
        // The MCP tape is a tape of its own in the run summary (its name, its unused
        // recordings); the report close() returns counts it with the test's tape, as before.
        const mcp = { opened: false, hits: 0, added: 0, rerecorded: 0, used: new Set<string>(), faults: {} as Record<string, number> };
        for (const t of mcps) {
          try {
            await t.close();
            for (const [k, n] of Object.entries(t.faults())) mcp.faults[k] = (mcp.faults[k] ?? 0) + n;
            const m = await Promise.race([t.tape, Promise.resolve(undefined)]);
            if (!m) continue;
            mcp.opened = true;
            mcp.hits += m.hits;
            mcp.added += m.recorded;
            // Read after the transport's close, which closed the tape: what replaced a recording.
            mcp.rerecorded += m.rerecorded;
            for (const u of m.used) mcp.used.add(u);
          } catch (e) {
            errors.push(e);
          }
        }
        let cacheTape: string | undefined;
        // The recordings the cache used, read once it closed (puts still in flight included).
        let cacheUsed: string[] = [];
        // Of the cache's puts, those that took the place of a recording it held (record mode):
        // from its close, as the fetch's re-recordings are.
        let cacheRerecorded = 0;
        if (cache) {
          try {
            const c = await cache;
            cacheTape = c.path;
            const closedCache = await c.close();
            cacheRerecorded = closedCache.rerecorded ?? 0;
            // What it wrote, not what was put (an unchanged re-record keeps its recording), less
            // what took the place of a failed attempt's (that attempt's report said it added).
            cacheAdded = c.recorded - (closedCache.retried ?? 0);
            cacheUsed = usedCacheMarks(c);
          } catch (e) {
            errors.push(e);
          }
        }
        const ownMisses = misses.filter((m) => !mcpMisses.has(m) && !cacheMisses.has(m));
        // Worded once, reading the tape once: only a run that had such calls pays for it.
        const fallbackLines = runDir ? await describeFallbacks(fallbacks, store ? undefined : opts.tape, { ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys, volatileText: opts.volatileText }).catch(() => fallbacks.map((f) => f.route)) : [];
        const matchName = typeof opts.match === 'string' ? opts.match : 'function';
        const own: TapeReport = {
          ...reportOf(),
          added,
          ...(rerecorded > 0 ? { rerecorded } : {}),
          ...(unrecorded > 0 ? { unrecorded } : {}),
          ...(errorsNotRecorded > 0 ? { errorsNotRecorded } : {}),
          ...(failedRequests > 0 ? { failedRequests } : {}),
          hits,
          misses: ownMisses,
          used: [...used],
          ...(repeats > 0 ? { repeats } : {}),
          ...(repeatsOfMade > 0 ? { repeatsOfMade } : {}),
          ...(fallbackLines.length > 0 ? { fallbacks: fallbackLines.map((answer) => ({ ...(opts.test ? { test: opts.test } : {}), answer, match: matchName, command: recordCommand })) } : {}),
          ...(Object.keys(faults).length > 0 ? { faults: { ...faults } } : {}),
          ...(cacheTape ? { cacheTape: store ? `${namespace}.cache` : cacheTape, cacheAdded } : {}),
          ...(Object.keys(refused).length > 0 ? { refused: { ...refused } } : {}),
        };
        // Also for a test that asked for its tape and made no call this time (a feature flag off),
        // when the tape is there: the summary must not take it for a deleted test's and prune it.
        // The cache's tape has a report of its own (below): its puts are not this tape's.
        const { cacheTape: _ct, cacheAdded: _ca, ...ownWritten } = own;
        if (runDir && (inner || proxies.length > 0 || own.refused || (!store && existsSync(opts.tape)))) writeTapeReport(runDir, ownWritten);
        // The cache tape is a tape of its own in the run summary too: its name, its added and
        // replayed recordings, and the used ones, so those no call asked for count as unused
        // and the prune removes them (before, cache entries the code dropped stayed forever).
        /** The report of a tape beside the test's: its own misses, counts and used recordings. */
        const besideReport = (dir: string, kind: 'cache' | 'mcp', tape: string, own: ReadonlySet<MissReport>, r: { added: number; rerecorded?: number; hits: number; used: string[]; faults?: Record<string, number> }): void =>
          writeTapeReport(dir, {
            ...reportOf(),
            tape,
            ...(store ? { namespace: `${namespace}.${kind}` } : {}),
            added: r.added,
            ...(r.rerecorded ? { rerecorded: r.rerecorded } : {}),
            hits: r.hits,
            misses: misses.filter((m) => own.has(m)),
            used: r.used,
            ...(r.faults && Object.keys(r.faults).length > 0 ? { faults: r.faults } : {}),
          });
        // A test that ran and skipped its cache or MCP work this run (behind a flag that is off)
        // opened those tapes all the same, as its own: an idle report says so, or the summary
        // takes the tape for a deleted test's and the prune deletes it.
        if (runDir && cacheTape) besideReport(runDir, 'cache', store ? besideTape('cache') : cacheTape, cacheMisses, { added: cacheAdded, rerecorded: cacheRerecorded, hits: cacheHits, used: cacheUsed });
        else if (runDir && !store && existsSync(besideTape('cache'))) besideReport(runDir, 'cache', besideTape('cache'), cacheMisses, { added: 0, hits: 0, used: [] });
        if (runDir && (mcp.opened || (!store && existsSync(mcpTape)))) besideReport(runDir, 'mcp', mcpTape, mcpMisses, { added: mcp.added, rerecorded: mcp.rerecorded, hits: mcp.hits, used: [...mcp.used], faults: mcp.faults });
        addFaults(mcp.faults);
        const report: TapeReport = {
          ...own,
          added: added + mcp.added,
          ...(rerecorded + mcp.rerecorded > 0 ? { rerecorded: rerecorded + mcp.rerecorded } : {}),
          hits: hits + mcp.hits,
          misses,
          ...(Object.keys(faults).length > 0 ? { faults } : {}),
        };
        if (errors.length > 0) throw errors[0];
        // The code under test may have caught the refusal (an SDK retries it): the test fails here.
        if (microtaskFailure && opts.failOnMiss !== false) throw microtaskFailure;
        const failure = opts.failOnMiss === false ? undefined : tape.missFailure();
        if (failure) throw Object.assign(failure, { report });
        return report;
      })().finally(endSharedSalt), bound, `Closing the test tape ${rel}`);
      return closing;
    },
  };
  settlers.set(tape, settle);
  if (opts.failOnMiss !== false) watchUnclosed(tape);
  return tape;
}

/** The tapes that fail their test on a miss (failOnMiss) and were not closed yet (see watchUnclosed). */
const unclosed = new Set<TestTape>();
let exitListener = false;

/**
 * Fails the process (exit code 1, and the miss with its record command on stderr) if `tape` is
 * never closed and a request of its test had no recording. node:test runs no after-each hook
 * for a test that called `t.skip()` (`catch { t.skip('API unavailable') }`; Node 20 as tested
 * here, see docs/vitest.md for a Node that runs it), so the hook that closes
 * the tape, and would fail the test with its miss, never runs: the test was reported skipped and
 * the run passed with no recording behind it. The test cannot be failed then, but its file can: `node --test` fails a test file
 * whose process exits non-zero (when none of its tests failed), and shows its stderr. Not in a
 * vitest or jest worker: their runners fail their tests themselves, and a worker's exit code is
 * not the run's.
 */
function watchUnclosed(tape: TestTape): void {
  if (process.env.VITEST !== undefined || process.env.JEST_WORKER_ID !== undefined) return;
  unclosed.add(tape);
  if (exitListener) return;
  exitListener = true;
  // Synchronous, at exit: nothing can be closed any more, only said (stderr to a file or a
  // pipe is written at once on POSIX).
  process.on('exit', () => {
    for (const t of unclosed) {
      const failure = t.missFailure();
      if (!failure) continue;
      const test = t.misses.find((m) => m.test !== undefined)?.test;
      process.stderr.write(`tapedeck: the run fails: the tape of ${test === undefined ? 'a test' : `test ${JSON.stringify(test)}`} was never closed, and a request of it had no recording (node:test runs no afterEach hook for a test that called t.skip(): a skip does not hide a miss).\n${failure.message}\n`);
      process.exitCode = 1;
    }
  });
}

const settlers = new WeakMap<TestTape, () => Promise<void>>();

/**
 * Resolves when the calls a test made through its tape's fetch until now (and in the event-loop
 * turn after this call: see `shut` in openTape) are answered, their misses noted in
 * `tape.misses`; the tape stays open. For a runner's wrapper that judges a test as it ends
 * (mocha's), before its after-each hook closes the tape. Internal to src/testing.
 *
 * @example
 * await callsSettled(tape) // then tape.missFailure() counts the call the test did not await
 */
export function callsSettled(tape: TestTape): Promise<void> {
  return settlers.get(tape)?.() ?? Promise.resolve();
}
