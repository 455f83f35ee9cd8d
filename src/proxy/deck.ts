/**
 * The engine shared by the proxy handler and createFetch: it owns the tape, the per-route
 * matchers, the redactor and the counters, and decides for each request whether a recording
 * answers it or the upstream must. Transport (node:http or fetch Response) is the callers' job.
 * How an answer becomes a record (keyed, redacted, appended) is its record side, ./deck-record.ts.
 *
 * The replay hot path is synchronous and, for a JSON body, one matcher call on the raw bytes:
 * the matcher's memo (SHA-256 of the bytes) or fingerprint answers without JSON.parse.
 */
import { hashJSON, hashValue, sha256 } from '../core/index.ts';
import { hex } from '../core/engine.ts';
import { TapedeckError, withContext } from '../errors.ts';
import { createMatcher, requestDigests, requestKeys, type Matcher, type MatchMode, type MatchOptions, type Recording, type Signature } from '../match/matcher.ts';
import { missHeadline, recordHow, type MissEntry } from '../match/diagnose.ts';
import type { RecordBackend, StoreWarning } from '../store/backend.ts';
// Browser bundles get open.browser.ts instead (package.json "browser"): backend objects only, so
// no tape-file or Redis code reaches a page; the browser entry passes the tape it loaded as `store`.
import { storeBackend } from '../store/backends/open.ts';
import { checkRecordOptions, checkStoreOption } from './deck-options.ts';
import { RecordCollection, type CloseReport } from '../store/collection.ts';
import { resolveModeWithSource, type TapeMode } from '../store/mode.ts';
import { checkKeyOptions, type NormalizeOptions } from '../providers/normalize.ts';
import { volatilePatterns } from '../providers/volatile-text.ts';
import type { HookRecording, RecordingHook } from '../store/hooks.ts';
import { beforeReplay, checkHooks, pickByMatch, type MatchFunction } from './deck-hooks.ts';
import { rekeyNotes } from '../store/rekey-note.ts';
import { isTelemetry, recordingUrl, routeEndpoint, routeOf } from '../providers/index.ts';
import { filedHeaders } from '../providers/gateway-headers.ts';
import { isUploadData } from '../providers/upload-data.ts';
import { httpMissDetail, usedUpDetail, type HttpMissDetail } from './http-difference.ts';
import { contentTypeDifference, contentTypeFix } from './content-type-difference.ts';
import { jsonBodyDifference } from './json-body-difference.ts';
import { headersOfOldRecording, headersOnOtherRoute, modelOnOtherRoute, pathOnOtherRoute, queryOnOtherRoute, streamOnOtherRoute } from './other-route.ts';
import { missOnDamagedTape } from './damage-miss.ts';
import { emptyStoreMiss } from './empty-store-miss.ts';
import { missingTapeMiss } from './missing-tape-miss.ts';
import { currentHttpKey, httpRecordKey, keyedAsFiled, httpRecords, type HttpRecord, type MatchKind, type StoredHeaders } from '../store/records.ts';
import { decodeContentEncoding, normalizeBody } from '../store/http-body.ts';
import { KnownBodies } from './known-bodies.ts';
import { latin1Text, redactor, type RedactOptions, type Redactor } from '../store/redact.ts';
import { checkRedactOptions } from '../store/redact-options.ts';
import { DEFAULT_MISS_STATUS } from './http-errors.ts';
import { checkChaos, type ChaosOptions } from '../chaos/options.ts';
import { askedFor, keptOf, pruneMayRemove, sayPruned } from './prune-guard.ts';
import { refuseChaos } from '../chaos/refused.ts';
import { openChaos, openSessionChaos, type HttpChaos, type SessionChaos } from './chaos.ts';
import { IndexRuns } from './index-runs.ts';
import { FiledRecording } from './filed-recording.ts';
import { KeyTurns } from './key-turns.ts';
import type { RecordTurn } from './record-turns.ts';
// Browser bundles get deck-record.browser.ts (package.json "browser"): a page never records.
import { openRecorder, type DeckRecorder } from './deck-record.ts';
// Browser bundles get fleet.browser.ts (package.json "browser"): a page's tape is never shared.
import { Fleet } from './fleet.ts';
// Browser bundles get origins.browser.ts and host-match.browser.ts: a page compares no hosts.
import { filedKey, filedName, ORIGIN_FILING, recordedRoutes } from '../store/origins.ts';
import { polledAgain } from './polled-again.ts';
import { telemetryTake } from './telemetry-take.ts';
import { HeldForRetry } from './held-for-retry.ts';
import { checkHostMatch, openHostMatch, type Found, type HostLookup, type HostMatchMode } from './host-match.ts';
import { isBytes } from '../bytes.ts';

/** Replay pacing of recorded streams: all at once, as recorded, or a fixed gap between chunks. */
export type Timing = 'none' | 'recorded' | number;

/** Options shared by createHandler, createFetch and `tapedeck serve`. */
export interface DeckOptions {
  /** Tape file path. Required except in passthrough mode (or give `store`). */
  tape?: string;
  /**
   * Where the recordings live instead of a tape file: a `redis://` / `rediss://` URL shared by a
   * fleet of proxies (docs/redis.md), a tape path, or a store backend object.
   */
  store?: string | RecordBackend;
  /** replay | record | update | passthrough | once (docs/modes.md); default from TAPEDECK_MODE, CACHE_MODE, else replay. */
  mode?: TapeMode;
  /**
   * How LLM requests are matched (docs/matching.md); default 'exact'. A function
   * `(request, recording) => boolean` is a custom matcher instead of the key: it is asked about
   * each recording of the request's route, in recorded order (slower than the key; docs/hooks.md).
   */
  match?: MatchMode | MatchFunction;
  /** Sees each exchange before it is stored: change it, or return null to not record it (docs/hooks.md). */
  beforeRecord?: RecordingHook;
  /** Sees each recording before it answers: change the answer, or return null for a miss (docs/hooks.md). */
  beforeReplay?: RecordingHook;
  /**
   * Identical requests replay their recordings in recorded order; past the last one the last is
   * served again (a proxy is shared by many clients). With strictOrder a further call is a miss.
   */
  strictOrder?: boolean;
  /** Stream replay pacing; default 'none'. */
  timing?: Timing;
  /** Record upstream 4xx/5xx answers too (default false: passed through, not recorded). */
  recordErrors?: boolean;
  /**
   * What a client gets when its answer cannot be recorded (tape lock held past its timeout, disk
   * full, Redis down) in record and update mode: `'fail'` (default) a 503 E_RECORD_FAILED in the
   * provider's error shape, or a cut stream, so nothing looks recorded that is not; `'serve'`
   * the live answer with `x-tapedeck-recorded: false` (counted in stats as `unrecorded`).
   */
  onRecordFailure?: 'fail' | 'serve';
  /** Largest request body accepted, in bytes (default 32 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** HTTP status of a replay miss (default 400, see DEFAULT_MISS_STATUS). */
  missStatus?: number;
  /** Header names that take part in matching non-JSON requests (default none). */
  matchHeaders?: readonly string[];
  /**
   * How non-JSON bodies (multipart uploads, forms, text, binary) take part in matching:
   * `'bytes'` (default) keys them by their normalized, redacted bytes (a new multipart boundary
   * does not change the key, a different file does); `'route'` ignores them, so every body sent
   * to a route gets the same recording. Only ask for `'route'` when the body truly never
   * changes the answer.
   */
  bodyMatch?: 'bytes' | 'route';
  /**
   * Whether the host takes part in matching (docs/matching.md, "Hosts"). `'origin'` (default): a
   * recording answers requests to the origin it was recorded for (scheme, host and port; a
   * loopback host's port is not compared), so an app that falls back to another provider with
   * the same path and body is never served the first provider's answer; recordings that name no
   * origin (tapes written before origins were stored) answer any host. `'any'`: any host's
   * recording answers, the request's own host's first: for hosts that give the same answers
   * (tapedeck serve --host-match any).
   *
   * @example
   * createFetch({ tape: 'tapes/fallback.tape', hostMatch: 'any' }) // a mirror answers as the primary did
   */
  hostMatch?: HostMatchMode;
  /** Request arguments left out of LLM request keys (docs/matching.md). */
  ignoreArgs?: readonly string[];
  /** Member names dropped at any depth from messages and tools before keying. */
  volatileKeys?: readonly string[];
  /**
   * Patterns of text that changes from run to run inside messages (dates, UUIDs, timestamps):
   * replaced by `<volatile>` before keying, and shown in misses (docs/matching.md).
   */
  volatileText?: readonly (RegExp | string)[];
  /** Redaction rules; `{ keepSecrets: true }` stores secrets as they are. */
  redact?: RedactOptions;
  /** fsync each batch of records (default true). */
  durable?: boolean;
  /**
   * The run this writer belongs to (default TAPEDECK_RUN_ID, else a new one): writers of one run
   * never replace each other's recordings in record mode (docs/modes.md).
   */
  run?: string;
  /**
   * The test this writer records and replays for, on a tape several tests share: its records
   * name the test, and a test is served its own recordings of a request, in the order it made
   * them (docs/vitest.md, "Tapes shared by tests"; the test helpers set it).
   */
  test?: string;
  /** At close, also remove the recordings no request used in this run, and report them (default false). */
  pruneUnused?: boolean;
  /**
   * Faults on demand (docs/chaos.md): `{ faults: { 429: 0.2, cut: 0.1 }, latencyMs, seed,
   * attempts }`. Injected answers are never recorded; outside replay mode chaos is refused
   * (E_CHAOS_MODE) unless `live: true`.
   */
  chaos?: ChaosOptions;
  /** Called with problems that cannot reach a client (a failed append, tape warnings). */
  onWarning?: (message: string) => void;
}

/** DeckOptions' names, for the entries that check the names they are given (src/option-names.ts). */
export const DECK_OPTION_NAMES = ['tape', 'store', 'mode', 'match', 'beforeRecord', 'beforeReplay', 'strictOrder', 'timing', 'recordErrors', 'onRecordFailure', 'maxBodyBytes', 'missStatus', 'matchHeaders', 'bodyMatch', 'hostMatch', 'ignoreArgs', 'volatileKeys', 'volatileText', 'redact', 'durable', 'run', 'test', 'pruneUnused', 'chaos', 'onWarning'] as const;

/** A request as the engine sees it. `url` is path and query. */
export interface DeckRequest {
  method: string;
  url: string;
  /**
   * Where it goes: `scheme://host[:port]` (originOf in src/store/origins.ts), the URL's for
   * createFetch, the upstream's for the proxy; undefined when unknown (a proxy with no upstream).
   * Recorded with the answer, and compared when a recording is looked for (see hostMatch).
   */
  origin?: string;
  /**
   * The path prefix of the upstream it goes under (the proxy's `--upstream` path; `url` is the
   * rest): recorded beside the origin (HttpRecord.upstreamPath), and compared with it (see hostMatch).
   */
  upstreamPath?: string;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  /**
   * Sent to record the answer of a call an injected fault stood in for (./chaos.ts,
   * recordBehind): its recording is that call's, which the call's retry takes.
   */
  behindFault?: boolean;
}

/** What the engine keeps of a request it is about to send upstream and record. */
export interface Prepared {
  match: MatchKind;
  route: string;
  key: string;
  signature?: Signature;
  model: string;
  body?: unknown;
  url: string;
  /**
   * The stored body is the request's JSON body as parsed, which redaction left as it was (so it
   * holds what the body's bytes hold). Importers count the masks they add with it.
   */
  bodyAsSent?: boolean;
}

/**
 * How a replayed answer was chosen (its `x-tapedeck-match` header): by request key, by signature,
 * or in recorded order.
 */
export type MatchedBy = 'exact' | 'signature' | 'sequential';

/** A replay decision kept for a body seen before; it is handed out again, so nothing may change it. */
type ExactReplay = { readonly kind: 'replay'; readonly record: HttpRecord; readonly matchedBy: 'exact'; readonly warnings: readonly string[] };
const NO_WARNINGS: readonly string[] = Object.freeze([]);
/** How update mode asks a matcher: a miss goes upstream, so its diagnosis waits until it is shown. */
const UNDIAGNOSED: MatchOptions = Object.freeze({ diagnose: false });

export type Decision =
  | { kind: 'replay'; record: HttpRecord; matchedBy: MatchedBy; warnings: readonly string[] }
  | { kind: 'upstream'; prepared: Prepared | undefined; /** Update mode: the miss that sends it upstream. */ miss?: TapedeckError };

/**
 * Counters for /__tapedeck/stats. An answer counts as `recorded` only once its record is
 * stored; one whose record could not be stored (full disk, tape lock held, Redis gone) counts
 * as `recordFailed`, whatever the client got (503, a cut stream, or the answer marked
 * unrecorded).
 *
 * @example
 * handler.stats() // { recorded: 2, byMatch: { recorded: 2, recordFailed: 1, ... }, appendFailures: 1, ... }
 */
export interface DeckStats {
  mode: TapeMode;
  tape: string | undefined;
  recordings: number;
  requests: number;
  hits: number;
  misses: number;
  errors: number;
  /** Answers recorded in this run whose record is stored. */
  recorded: number;
  /**
   * Requests by how they were answered: replayed (exact, signature, sequential), live and
   * stored (recorded), live with a record that could not be stored (recordFailed), live and not
   * for recording (passthrough), or a miss.
   */
  byMatch: Record<'exact' | 'signature' | 'sequential' | 'recorded' | 'recordFailed' | 'passthrough' | 'miss', number>;
  /** Records that could not be stored (the same answers as byMatch.recordFailed). */
  appendFailures: number;
  /** Answers served although their record failed (onRecordFailure: 'serve'). */
  unrecorded: number;
  /** MCP exchanges on the tape when it was opened (served by the proxy's MCP endpoint). */
  mcpRecordings?: number;
  /** Realtime sessions on the tape when it was opened (served on WebSocket upgrades). */
  realtimeSessions?: number;
  /** Injected faults by name (chaos), once there was one; `latency` counts delayed answers. */
  faults?: Record<string, number>;
  /**
   * Calls answered by a recording again past those recorded for their request (a request asked
   * more often than when it was recorded: a loop that now runs longer?). Absent when none;
   * `strictOrder` makes such calls misses.
   */
  repeats?: number;
  /**
   * Of `repeats`, those answered by a recording this run made: update mode answers a request
   * asked again with the recording its first ask just made, without sending it (record mode
   * sends each). Absent when none.
   */
  repeatsOfMade?: number;
  /**
   * Record mode: trace tokens of recordings this run asked for again whose new answer was not
   * recorded (the API failed, the stream was cut): they stay on the tape and are not unused, so
   * a prune after the run keeps them. Absent when there are none.
   */
  kept?: string[];
  /**
   * Record mode, once closed: how many of the `recorded` answers took the place of an older
   * recording of their request (CloseReport.rerecorded); the rest were added. Absent when none.
   */
  rerecorded?: number;
  /**
   * Record mode, once closed: how many of the `recorded` answers took the place of one an earlier
   * attempt of the same test recorded in this run (CloseReport.retried): neither added nor
   * re-recorded. Absent when none.
   */
  retried?: number;
}

const EMPTY = new Uint8Array(0);

const decoder = new TextDecoder();

/** The largest request body read when maxBodyBytes is not given. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

interface Route {
  /** LLM recordings for the matcher, in tape order. */
  llm: Recording[];
  /**
   * Set while some LLM recordings of the route were filed by their heads only (exact matching,
   * current keys): requests are then served by their key from the collection, and the matcher
   * is made (decoding and keying the route's recordings once) at the route's first miss, to
   * find what stored keys did not or to explain the miss.
   */
  deferred?: boolean;
  /** The collection indexes of the route's LLM recordings loaded at open, in tape order. */
  llmAt?: IndexRuns;
  /** The collection indexes of its other recordings filed by their heads, read only to explain a miss. */
  httpAt?: IndexRuns;
  matcher?: Matcher;
  /** Recordings of this route (all kinds), for miss messages. */
  count: number;
  /** LLM recordings per current request key, and their turns (a key with one recording answers the same every time). */
  turns: KeyTurns;
  /**
   * Raw request bodies that matched exactly a key with a single recording, and the decision
   * that serves that recording (made once per body: no object per request), found again by
   * their exact bytes (src/proxy/known-bodies.ts): the same bytes get the same answer, so the
   * next identical body skips the secret scan, the SHA-256 of the bytes and the matcher (the
   * proxy's replay hot path; proxy benchmark). Only with repeats allowed, and for bodies up to
   * FAST_BODY_MAX bytes.
   */
  fast: KnownBodies<ExactReplay>;
  /** Every recording of the route, in order, for a custom `match` function. */
  records: HttpRecord[];
  /**
   * Names (and stored routes) its non-LLM recordings of an older tapedeck are filed under in the
   * collection, when that route is not the one their URL gets today (Azure's `api-version` in
   * it): their keys were made with that route, so a request is keyed with it again to find them.
   */
  filedBefore?: Map<string, string>;
}

/** The head fields of a recording fileLlm() reads besides its request. */
const HEAD_FIELDS: readonly string[] = ['match', 'key', 'keyVersion', 'repeat'];
/** Where a record holds its request's body (docs/tape-format.md). */
const REQUEST_BODY: readonly string[] = ['request', 'body'];

/** Largest body remembered by a route's `fast` map, and how many bodies it holds at most. */
const FAST_BODY_MAX = 16 * 1024;
const FAST_ENTRIES = 1024;

function header(h: DeckRequest['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

let lastType = '';
let lastTypeJson = false;

/**
 * Whether a body is JSON: by content type, or sniffed when there is none. Upload data is a
 * file's bytes whatever its content type says (@google/genai sends it as application/json).
 */
export function isJsonBody(headers: DeckRequest['headers'], body: Uint8Array): boolean {
  if (body.length === 0 || isUploadData(headers)) return false;
  const ct = header(headers, 'content-type');
  if (ct !== undefined) {
    // Clients send one content type over and over: the last answer is kept.
    if (ct !== lastType) {
      lastType = ct;
      lastTypeJson = /[/+]json\b/i.test(ct);
    }
    return lastTypeJson;
  }
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  return body[i] === 0x7b || body[i] === 0x5b;
}


// Request headers that describe one hop or one body encoding, never the request itself.
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'expect',
]);

/** Response headers not stored: hop-by-hop ones, and length/encoding (bodies are stored decoded). */
export const UNSTORED_RESPONSE_HEADERS = new Set([...HOP_BY_HOP, 'content-encoding']);

/**
 * What a missing store is called in messages (RecordBackend.absent), except a test's tape file:
 * test tapes are named after their tests, so a tape one typo away is another test's, not the
 * one meant (the test helpers say "this test was never recorded" instead).
 */
function absentOf(backend: RecordBackend | undefined, opts: DeckOptions, entry: MissEntry): string | undefined {
  if (entry.kind === 'test' && opts.store === undefined) return undefined;
  return backend?.absent;
}

/**
 * The request key of every telemetry upload (providers' `telemetry` routes): the digest of an
 * empty object, the same for every body, so the route alone finds its recordings. Made on first
 * use, not at import: a bad TAPEDECK_BACKEND then fails the call, where the caller catches it,
 * not the import of the package.
 */
let telemetryKey: string | undefined;
export const telemetryRequestKey = (): string => (telemetryKey ??= hashValue({}));

/** Counters of a deck that has served nothing yet (also what stats show before the tape is open). */
export function emptyStats(mode: TapeMode, tape: string | undefined): DeckStats {
  return {
    mode,
    tape,
    recordings: 0,
    requests: 0,
    hits: 0,
    misses: 0,
    errors: 0,
    recorded: 0,
    byMatch: { exact: 0, signature: 0, sequential: 0, recorded: 0, recordFailed: 0, passthrough: 0, miss: 0 },
    appendFailures: 0,
    unrecorded: 0,
  };
}

export class Deck {
  readonly mode: TapeMode;
  readonly tape: string | undefined;
  readonly timing: Timing;
  readonly maxBodyBytes: number;
  readonly missStatus: number;
  readonly recordErrors: boolean;
  /** Serve the live answer when its record fails (else 503 E_RECORD_FAILED or a cut stream). */
  readonly serveUnrecorded: boolean;
  readonly redactor: Redactor;
  readonly warnings: readonly StoreWarning[];
  /**
   * What lists the store's damage when `tapedeck verify` on the tape is not it (a Redis
   * namespace: `tapedeck verify '<url>' --namespace NS`), set by open().
   */
  private verifyCommand: string | undefined;
  /** What the store is when it does not exist, where "no tape at" is not it (see RecordBackend.absent). */
  private absent: string | undefined;
  /** Faults on demand (undefined outside replay unless asked for with `live`). */
  get chaos(): HttpChaos | undefined {
    return this.chaosNow;
  }
  private chaosNow: HttpChaos | undefined;
  /** Faults on demand for the proxy's realtime sessions (the `close` fault), beside `chaos`. */
  get sessionChaos(): SessionChaos | undefined {
    return this.sessionChaosNow;
  }
  private sessionChaosNow: SessionChaos | undefined;
  /** Faults injected by chaos settings replaced since (useChaos). */
  private readonly pastFaults: Record<string, number> = {};

  private readonly opts: DeckOptions;
  /** The recordings (undefined in passthrough): ordered repeats, appends, the mode rules. */
  private readonly col: RecordCollection<HttpRecord> | undefined;
  private readonly routes = new Map<string, Route>();
  private readonly matchHeaders: string[];
  /** The key options of every request (its endpoint is the request's own). */
  private readonly norm: Omit<NormalizeOptions, 'endpoint'>;
  private readonly counters: DeckStats;
  private readonly warn: (m: string) => void;
  /** Appends not yet settled (durable or failed). */
  private readonly writes = new Set<Promise<unknown>>();
  private closing: Promise<CloseReport> | undefined;
  private recordingCount = 0;
  private readonly repeatLast: boolean;
  /** Who serves through this deck (createFetch, the proxy, ...): misses name its options only. */
  /** Whose API its misses name the fixes of (createFetch, the proxy, a test). */
  readonly entry: MissEntry;
  /** Finds a request's recording host by host (./host-match.ts; a page's by its route alone). */
  private readonly hosts: HostLookup;
  /** Keys, builds and appends the records of this run (./deck-record.ts; a page records nothing). */
  private readonly recorder: DeckRecorder;

  private constructor(opts: DeckOptions, mode: TapeMode, col: RecordCollection<HttpRecord> | undefined, warnings: StoreWarning[], entry: MissEntry) {
    this.opts = opts;
    this.entry = entry;
    this.col = col;
    this.repeatLast = opts.strictOrder !== true;
    this.mode = mode;
    this.tape = opts.tape;
    this.timing = opts.timing ?? 'none';
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.missStatus = opts.missStatus ?? DEFAULT_MISS_STATUS;
    this.recordErrors = opts.recordErrors === true;
    this.serveUnrecorded = opts.onRecordFailure === 'serve';
    this.redactor = redactor(opts.redact);
    this.warnings = warnings;
    this.warn = opts.onWarning ?? ((m) => (typeof process !== 'undefined' && process.emitWarning ? process.emitWarning(m, { code: 'TAPEDECK_PROXY' }) : console.warn(m)));
    // A provider credential never takes part in a key, even when asked for (docs/matching.md).
    this.matchHeaders = (opts.matchHeaders ?? []).map((h) => h.toLowerCase()).filter((h) => !this.redactor.isCredentialHeader(h)).sort();
    this.norm = { ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys, volatileText: opts.volatileText };
    this.counters = emptyStats(mode, opts.tape);
    this.chaosNow = openChaos(opts.chaos, mode, this.warn);
    this.sessionChaosNow = openSessionChaos(opts.chaos, mode, this.warn, this.chaosNow);
    this.hosts = openHostMatch((req, route, name) => this.find(req, route, name), this.routes, col, opts, this);
    this.recorder = openRecorder({
      opts,
      norm: this.norm,
      redactor: this.redactor,
      col,
      tape: this.tape,
      counters: this.counters,
      writes: this.writes,
      warn: this.warn,
      warnOnce: (m) => this.warnOnce(m),
      decoded: (req) => this.decoded(req),
      parse: (body) => this.parse(body),
      httpKey: (route, headers, body) => this.httpKey(route, headers, body),
      added: (rec) => this.added(rec),
    });
    // Exact matching finds a recording by its stored key, which the collection indexes from the
    // records' heads: a record whose key is current is filed without being decoded or hashed,
    // so a large tape opens in one pass over its frames. Other modes and a match function read
    // every recording, so they get them decoded.
    const fromHeads = typeof opts.match !== 'function' && (opts.match ?? 'exact') === 'exact';
    if (col) col.forEachLoadedRun((group, key, from, to) => this.add(group, key, from, to, fromHeads));
    if (mode === 'replay' || mode === 'update') {
      for (const [name, route] of this.routes) {
        if (route.llm.length === 0 || route.deferred || typeof opts.match === 'function') continue;
        route.matcher = this.matcherFor(name, route);
      }
    }
  }

  /**
   * The matcher of a route's LLM recordings (each keyed now). `used`: recordings already served
   * by their stored keys before it was made, at the route's first miss (see undefer()).
   */
  private matcherFor(name: string, route: Route, used?: (i: number) => boolean): Matcher {
    const opts = this.opts;
    try {
      return createMatcher({
        recordings: route.llm,
        mode: (opts.match as MatchMode | undefined) ?? 'exact',
        allowRepeats: opts.strictOrder !== true,
        ignoreArgs: opts.ignoreArgs,
        volatileKeys: opts.volatileKeys,
        // Every recording of a route was sent there: APIs that name the model or the
        // operation in the URL (Gemini) are keyed with it.
        endpoint: routeEndpoint(name),
        volatileText: opts.volatileText,
        source: opts.tape,
        entry: this.entry,
        // Made at a first miss (`used`): the request that missed and those after it are keyed
        // in full, not by fingerprint. Fingerprints would cost ~5 us per recording at that
        // miss (0.5 s of 5 on 100,000 recordings) to spare a few core calls after it.
        ...(used ? { used, fingerprints: false } : {}),
      });
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      throw withContext(e, `Tape ${opts.tape}, route ${name}: `, { file: opts.tape });
    }
  }

  /**
   * Checks the options and resolves the mode without touching the tape, so a bad mode or option
   * is reported where the proxy or fetch is created (synchronously) rather than on a request.
   *
   * @example
   * Deck.check({ tape: 'app.tape', mode: 'recrod' }) // throws TapedeckError E_MODE
   */
  static check(opts: DeckOptions): TapeMode {
    const { mode } = resolveModeWithSource(opts.mode);
    if (opts.match !== undefined && typeof opts.match !== 'function' && !['exact', 'signature', 'sequential', 'hybrid'].includes(opts.match)) {
      throw new TapedeckError('E_ARG', `Unknown matching mode ${JSON.stringify(opts.match)}.`, { hint: 'Use exact, signature, sequential or hybrid, or a function (request, recording) => boolean.' });
    }
    checkHooks(opts);
    checkHostMatch(opts.hostMatch);
    checkRedactOptions(opts.redact);
    // bodyMatch and onRecordFailure, which only Node's entry points take (./deck-options.ts).
    checkRecordOptions(opts);
    if (opts.timing !== undefined && opts.timing !== 'none' && opts.timing !== 'recorded' && !(typeof opts.timing === 'number' && opts.timing >= 0)) {
      throw new TapedeckError('E_ARG', `Invalid timing ${JSON.stringify(opts.timing)}.`, { hint: "Use 'none', 'recorded' or a number of milliseconds between chunks." });
    }
    // A miss answered 2xx would read as an answer: an SDK parses the miss's body as its result.
    if (opts.missStatus !== undefined && !(Number.isInteger(opts.missStatus) && opts.missStatus >= 400 && opts.missStatus <= 599)) {
      throw new TapedeckError('E_ARG', `Invalid missStatus ${JSON.stringify(opts.missStatus)}.`, { hint: 'Use an error status from 400 to 599 (default 400), as --miss-status takes.' });
    }
    volatilePatterns(opts.volatileText);
    // When the fetch or proxy is made, not as a 500 at its first request.
    checkKeyOptions({ ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys }, 'the key options');
    if (opts.chaos !== undefined) {
      checkChaos(opts.chaos, 'proxy');
      // Refused where the fetch or proxy is made, once, rather than by every call and by
      // stats() later (a rejection a script may not be waiting for). `once` is decided when
      // the tape opens: its refusal comes then.
      if (mode !== 'once') refuseChaos(mode, opts.chaos.live, 'chaos option, --chaos');
    }
    // The tape or store (./deck-options.ts: a page's is the tape it loaded).
    checkStoreOption(opts, mode);
    return mode;
  }

  /**
   * Opens the tape or store (a tape is created in record and update mode) and indexes its HTTP
   * records. `entry` says who serves through the deck (default the proxy), so that a miss names
   * the fixes that exist there: `TAPEDECK_MODE=record` for createFetch, `--mode record` for the
   * proxy, the test's own record command for the test helpers.
   *
   * @example
   * const deck = await Deck.open({ tape: 'recordings/app.tape', mode: 'replay' }, { kind: 'fetch' })
   */
  static async open(opts: DeckOptions, entry: MissEntry = { kind: 'proxy' }, cannotRecord?: (mode: TapeMode) => Error | undefined): Promise<Deck> {
    const mode = Deck.check(opts);
    // An explicit mode option is not overridden by TAPEDECK_MODE: the miss must say so.
    entry = { ...entry, modeFromOption: resolveModeWithSource(opts.mode).source === 'option' };
    const store = opts.store ?? opts.tape;
    const backend = mode === 'passthrough' || store === undefined ? undefined : storeBackend(store);
    // Messages and stats name a store by its location (a Redis URL with its password masked).
    if (opts.store !== undefined && backend) opts = { ...opts, tape: backend.location };
    let col: RecordCollection<HttpRecord> | undefined;
    let mcpRecordings = 0;
    let realtimeSessions = 0;
    const warnings: StoreWarning[] = [];
    // What messages call the missing store: looked up once, and only when the store is missing
    // (a tape file's looks through its directory for a near name).
    let absent: string | undefined;
    if (mode !== 'passthrough') {
      // Filed under the origins they were recorded for too (see hostMatch).
      const kind = httpRecords({ ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys, volatileText: opts.volatileText }, ORIGIN_FILING);
      col = await RecordCollection.open(backend!, { mode, kind, durable: opts.durable !== false, ...(cannotRecord ? { cannotRecord } : {}), ...(opts.run !== undefined ? { run: opts.run } : {}), ...(opts.test !== undefined ? { test: opts.test } : {}) });
      warnings.push(...col.warnings);
      // Once per tape in a process (./rekey-note.ts): the proxy of every test opens it again.
      warnings.push(...rekeyNotes(opts.tape, kind.rekeyed));
      mcpRecordings = kind.mcp;
      realtimeSessions = kind.realtime;
      // A missing tape in replay is not fatal: every request is a miss that says so.
      if (!col.exists) absent = absentOf(backend, opts, entry);
      if (!col.exists) warnings.push({ code: 'E_TAPE_NOT_FOUND', offset: 0, message: absent !== undefined ? `${absent}; every request will be a miss.` : `Tape ${opts.tape} does not exist; every request will be a miss.` });
    }
    const known = col?.warnings.length ?? 0;
    // Masks that are not credentials are keyed under the store's salt (src/store/redact.ts):
    // a live request is masked as its recording was, so one value finds it and another misses.
    if (backend?.salt !== undefined) opts = { ...opts, redact: { ...opts.redact, salt: backend.salt } };
    // `once` became record or replay when the tape was opened.
    const deck = new Deck(opts, col?.mode ?? mode, col, warnings, entry);
    // What the store finds later (a Redis namespace emptied while open) goes where the deck warns.
    if (backend && backend.onWarning === undefined) backend.onWarning = (m) => deck.warnOnce(m);
    deck.verifyCommand = backend?.verifyCommand;
    deck.absent = absent;
    if (mcpRecordings > 0) deck.counters.mcpRecordings = mcpRecordings;
    if (realtimeSessions > 0) deck.counters.realtimeSessions = realtimeSessions;
    // Records found unusable while indexing (a malformed record in a Redis namespace, a frame
    // whose checksum holds but whose value does not decode) are told like a damaged tape.
    if (col) warnings.push(...col.warnings.slice(known));
    // Once: a session tape opened on the same tape later (realtime, MCP) finds the same.
    for (const w of warnings) deck.warnOnce(w.message);
    return deck;
  }

  private route(name: string): Route {
    let r = this.routes.get(name);
    if (!r) this.routes.set(name, (r = { llm: [], count: 0, turns: new KeyTurns(), fast: new KnownBodies<ExactReplay>(FAST_ENTRIES), records: [] }));
    return r;
  }

  /**
   * Files the recordings loaded at open at collection indexes `from` to `to - 1`, which the
   * collection files under one key group (`route NUL match:`), or the one at `from` under
   * `key` (see httpRecordKey): LLM ones go to the route's matcher, the rest are found by key.
   * With `fromHeads`, they are only counted (the collection finds them by their keys) and
   * decoded when served.
   */
  private add(group: string, key: string | undefined, from: number, to: number, fromHeads: boolean): void {
    this.recordingCount += to - from;
    this.counters.recordings = this.recordingCount;
    this.loaded.add(from, to);
    // Their route and match kind, from their key group when the collection has one (one string
    // for the records of a route and kind), else from the whole key.
    if (fromHeads && (group === '' || group !== this.lastGroup)) {
      this.lastGroup = group === '' ? undefined : group;
      this.filedGroup(group === '' ? (key ?? this.col!.loadedKey(from)) : group);
    }
    // A route with a query may be filed under another route today (see filedRoute): decoded.
    if (fromHeads && this.lastRouteFiled !== undefined) {
      const r = this.lastRouteFiled;
      r.count += to - from;
      if (this.lastLlm) {
        r.deferred = true;
        (r.llmAt ??= new IndexRuns()).add(from, to);
      } else (r.httpAt ??= new IndexRuns()).add(from, to);
      return;
    }
    for (let i = from; i < to; i++) {
      const rec = this.col!.loadedValue(i);
      // Damage found while decoding: told by the collection's warnings, served as damage.
      if (rec === undefined) continue;
      const filed = this.filedRoute(rec);
      const r = this.route(filedName(filed, rec.origin, rec.upstreamPath));
      r.count++;
      r.records.push(rec);
      if (filed !== rec.route && rec.match !== 'llm') (r.filedBefore ??= new Map()).set(filedName(rec.route, rec.origin, rec.upstreamPath), rec.route);
      if (this.fileLlm(r, rec, i)) (r.llmAt ??= new IndexRuns()).add(i, i + 1);
    }
  }

  /** The key group of the last recording {@link add} filed by its head, its Route, and whether it is an LLM recording. */
  private lastGroup: string | undefined;
  private lastRouteFiled: Route | undefined;
  private lastLlm = false;

  /**
   * Takes the route and match kind of a collection key or key group (`route NUL match:...`)
   * as those of the records filed next; a route with a query gets no Route here (see add).
   */
  private filedGroup(key: string): void {
    const nul = key.indexOf('\u0000');
    const route = key.slice(0, nul);
    this.lastRouteFiled = route.includes('?') ? undefined : this.route(route);
    this.lastLlm = key.startsWith('llm:', nul + 1);
  }
  /** Collection indexes of the recordings loaded at open, for {@link unusedCount}. */
  private readonly loaded = new IndexRuns();

  /**
   * Gives the LLM recording loaded at collection index `index` to its route's matcher (with
   * stand-ins for lost ones before it); false for other kinds. Where it is stored is said when a
   * message asks (see FiledRecording).
   */
  private fileLlm(r: Route, rec: HttpRecord, index: number, response: unknown = rec): boolean {
    // By its kind under the current key spec (an older record may have changed kind). A record
    // keyed under it is as it was filed, with no options object made for it (undefer() files
    // every recording of a route).
    const cur = keyedAsFiled(rec) ? rec : currentHttpKey(rec, { ...this.norm, endpoint: { method: rec.request.method, url: rec.request.url } });
    if (cur.match !== 'llm') return false;
    const body = rec.request.body;
    // Recordings lost to damage before this one keep their turns as stand-ins, so the k-th call
    // gets the k-th recording or E_TAPE_DAMAGED, never its neighbour. The collection says which
    // (by `repeat`, the rule it serves by: src/store/turns.ts).
    const lost = this.col!.lostBefore(index, (rec as { repeat?: unknown }).repeat);
    r.turns.file(cur.key, lost?.count);
    if (lost) {
      const at = this.sourceAt(index);
      for (let k = lost.first; k < lost.first + lost.count; k++) {
        // A new object for each lost turn, whatever `response` is.
        const stand = { lost: response };
        this.damagedStandIns.set(stand, { k, at });
        r.llm.push({ request: body, response: stand, source: at });
      }
    }
    r.llm.push(new FiledRecording(body, response, this.sourceAt, index));
    return true;
  }

  /** Where the recording loaded at collection index `i` is stored, as miss messages name it. */
  private readonly sourceAt = (i: number): string => `${this.opts.tape}@${this.col!.loadedAt(i)}`;

  /**
   * Makes a deferred route's matcher: decodes and keys its LLM recordings (once), and counts as
   * used those already served by their stored keys.
   */
  private undefer(name: string, r: Route): void {
    r.deferred = false;
    r.llm = [];
    r.turns = new KeyTurns();
    const used: boolean[] = [];
    for (const i of r.llmAt ?? []) {
      const filed = this.requestOnly(i);
      // Damage: the collection serves it as such under its stored key.
      if (filed === undefined) continue;
      const n = r.llm.length;
      this.fileLlm(r, filed[0], i, filed[1]);
      for (let j = n; j < r.llm.length; j++) used.push(this.col!.loadedUsed(i));
    }
    r.matcher = this.matcherFor(name, r, (i) => used[i] === true);
  }

  /**
   * What undefer() files of the LLM recording loaded at `index` (filed by its head): the head's
   * fields fileLlm() reads and the request, decoded on their own, and `index` for the matcher
   * to answer with: the record is decoded whole only when served ({@link answerRecord}).
   * Decoding every recording whole took a third of the first miss on a large tape, and kept
   * every answer in memory. A record of another shape is decoded whole (undefined: damage).
   */
  private requestOnly(index: number): [HttpRecord, unknown] | undefined {
    const col = this.col!;
    const head = col.loadedHead(index, HEAD_FIELDS);
    // Keyed under the current spec (nothing to key again from the request as objects): the
    // body's JSON text, an object's, made from the stored bytes, which the matcher keys as a raw body. No
    // request is decoded, and each recording keeps one small view instead of its body's
    // objects (src/store/msgpack-json.ts has the measurements).
    if (head.match === 'llm' && keyedAsFiled(head)) {
      const body = col.loadedObjectJson(index, REQUEST_BODY);
      if (body !== undefined) return [{ ...head, request: { body } } as unknown as HttpRecord, index];
    }
    const request = col.loadedMember(index, 'request') as HttpRecord['request'] | undefined;
    if (typeof request?.method === 'string') return [{ ...head, request } as unknown as HttpRecord, index];
    const rec = col.loadedValue(index);
    return rec && [rec, rec];
  }

  /**
   * The record a matcher's answer stands for: itself, or the recording loaded at the index
   * requestOnly() filed, decoded now (E_TAPE_DAMAGED for one that does not decode; the
   * collection warns).
   */
  private answerRecord(answer: unknown, route: string, key: string): HttpRecord {
    if (typeof answer !== 'number') return answer as HttpRecord;
    const rec = this.col!.loadedValue(answer);
    if (rec) return rec;
    // An intact record is not damage: a newer tapedeck's is E_TAPE_VERSION (upgrade), one whose fields are not an HTTP record's E_TAPE_CORRUPT saying which.
    throw this.col!.loadedNewer(answer) ?? this.damagedAt(route, `request key ${key}`, key, { details: { repeat: this.col!.loadedField(answer, 'repeat') ?? 0 } });
  }

  /**
   * The route a loaded record is served under: its stored route, unless the module of its route
   * now files recordings without some query parameters (Azure OpenAI's `api-version`): then the
   * route its URL gets today, so tapes written before that keep replaying.
   */
  private filedRoute(rec: HttpRecord): string {
    const { method, url } = rec.request;
    // Also a URL written before today's rules masked one of its query values (`?auth=`,
    // `?session=`): filed under the route a request gets now, so an old tape still replays.
    if (typeof url !== 'string' || !url.includes('?') || (recordingUrl({ method, url }) === url && this.redactor.url(url) === url)) return rec.route;
    return this.routeOf(method, url, rec.request.headers);
  }

  /** Stand-ins for LLM recordings lost to damage: the lost one's place, and the next intact one. */
  private readonly damagedStandIns = new WeakMap<object, { k: number; at: string }>();

  /** The next recording of a key, in recorded order (past the last: the last again, unless strictOrder). */
  private take(route: string, match: MatchKind, key: string, repeatLast = this.repeatLast): HttpRecord | undefined {
    try {
      return this.col?.next(httpRecordKey(route, match, key), { repeatLast });
    } catch (e) {
      if (!(e instanceof TapedeckError && e.code === 'E_TAPE_DAMAGED')) throw e;
      throw this.damagedAt(route, `${match} key ${key}`, key, e);
    }
  }

  /** The collection's E_TAPE_DAMAGED said with the request's route and key (the collection's key joins them with a NUL). */
  private damagedAt(route: string, which: string, key: string | undefined, e: Pick<TapedeckError, 'details'>, more = ''): TapedeckError {
    const n = Number(e.details.repeat) + 1;
    if (e.details.missing === true) {
      // A gap in the recordings' numbers on a tape with no damage of its own (collection.ts).
      return new TapedeckError('E_TAPE_DAMAGED', `Recording ${n} of ${route} (${which}) in ${this.tape} is missing${more}: nothing on this tape is damaged, it was lost before this tape was written (an import of an export that left a damaged recording out); it is not replaced by another call's recording.`, {
        file: this.tape,
        route,
        ...(key !== undefined ? { key } : {}),
        repeat: e.details.repeat,
        missing: true,
        hint: `To replace the missing recording, ${recordHow(this.entry)}.`,
      });
    }
    return new TapedeckError('E_TAPE_DAMAGED', `Recording ${n} of ${route} (${which}) in ${this.tape} is damaged${more}; it is not replaced by another call's recording.`, {
      file: this.tape,
      route,
      ...(key !== undefined ? { key } : {}),
      repeat: e.details.repeat,
      hint: `To replace the damaged recording, ${recordHow(this.entry)}; ${this.verifyCommand ? `\`${this.verifyCommand}\`` : '`tapedeck verify` on the tape'} lists the damage.`,
    });
  }

  /**
   * `METHOD /path?query` with secret query parameters masked, and the query parameters the
   * route's provider does not file recordings under (Azure's `api-version`) left out.
   */
  routeOf(method: string, url: string, headers?: DeckRequest['headers']): string {
    // Requests mostly repeat one route: the last one is kept, so its string (and the hash the
    // route map computes for it) is made once, not on every request.
    let last = this.lastRoute;
    if (url !== last.url || method !== last.method) {
      const filed = url.includes('?') ? recordingUrl({ method, url }) : url;
      // Masked as the stored URL is: a key in the path (a gateway's /k/sk-…) must not reach the
      // tape in the route either. Once per distinct URL (the route is kept).
      const route = `${method.toUpperCase()} ${this.redactor.url(filed)}`;
      this.lastRoute = last = { method, url, route, keyed: routeOf({ method, url })?.provider.keyHeaders !== undefined };
    }
    // Headers that decide the answer (anthropic-beta, a gateway's routing headers) file its
    // recordings apart: see filedHeaders.
    return last.route + filedHeaders(last, headers, this);
  }

  private lastRoute = { method: '', url: '', route: '', keyed: false };

  /**
   * Key of a non-JSON request: SHA-256 of the route, the headers asked for and, unless
   * `bodyMatch: 'route'`, a blank line and the normalized body (src/store/http-body.ts). A request
   * without a body keys as before bodies took part.
   */
  private httpKey(route: string, headers: DeckRequest['headers'], body: Uint8Array): string {
    let s = route;
    for (const h of this.matchHeaders) s += `\n${h}: ${header(headers, h) ?? ''}`;
    if (body.length === 0 || this.opts.bodyMatch === 'route') return hex(sha256(s));
    // Joined without Buffer: a page keys non-JSON bodies here too (llm-tapedeck/browser).
    const head = new TextEncoder().encode(`${s}\n\n`);
    const keyed = new Uint8Array(head.length + body.length);
    keyed.set(head);
    keyed.set(body, head.length);
    return hex(sha256(keyed));
  }

  /**
   * A body is given to the matcher as raw bytes unless redaction could change it: recordings
   * hold redacted bodies, so a body with a secret in it is redacted before matching, exactly as
   * it was before recording.
   */
  private hasSecrets(body: Uint8Array): boolean {
    return this.redactor.mayHaveSecrets(latin1Text(body));
  }

  /** The request with its body decoded from its Content-Encoding (what is keyed and stored). */
  private decoded(req: DeckRequest): DeckRequest {
    const body = decodeContentEncoding(req.headers, req.body, this.maxBodyBytes);
    return body === req.body ? req : { ...req, body };
  }

  /** Parses a JSON body; malformed JSON is reported by the strict core reader, with its offset. */
  private parse(body: Uint8Array): unknown {
    try {
      return JSON.parse(decoder.decode(body));
    } catch {
      hashJSON(body); // throws the precise E_JSON / E_UTF8
      throw new TapedeckError('E_JSON', 'The request body is not valid JSON.', { hint: 'Send a JSON body.' });
    }
  }

  /**
   * Decides who answers a request: a recording (replay, update) or the upstream (record,
   * update on a miss, passthrough). Throws TapedeckError: E_MISS in replay, E_JSON for a
   * malformed JSON body.
   */
  decide(sent: DeckRequest): Decision {
    this.counters.requests++;
    if (this.mode === 'passthrough') return { kind: 'upstream', prepared: undefined };
    // Keyed and stored decoded; the caller still forwards the bytes as sent.
    const req = this.decoded(sent);
    const route = this.routeOf(req.method, req.url, req.headers);
    if (this.mode === 'record') {
      const prepared = this.recorder.prepare(req, route);
      // Its old recordings are asked for, whether or not the new answer gets recorded (pruning).
      if (this.col) askedFor(this.col, prepared, req);
      // A faulted call's retry: answered by what was recorded behind the fault (./held-for-retry.ts).
      const held = this.heldForRetry.size > 0 ? this.heldForRetry.take(filedKey({ ...req, ...prepared })) : undefined;
      if (held) return { kind: 'replay', record: held, matchedBy: 'exact', warnings: [] };
      return { kind: 'upstream', prepared };
    }
    const found = this.served(this.hosts.find(req, route), route, req);
    if (found.kind === 'replay') return found;
    if (this.mode === 'update') return { kind: 'upstream', prepared: this.recorder.prepare(req, route), miss: found.miss };
    throw missOnDamagedTape(found.miss, this.col, this.verifyCommand);
  }

  /**
   * {@link decide}, and on a shared store (Redis), where this proxy's own recordings do not
   * answer, asks the store for recordings other proxies made of this request since this one
   * opened: a fleet sees each other's recordings. A miss with the store unreachable fails with
   * E_STORE_UNAVAILABLE in replay mode; update mode then goes to the upstream (and says why
   * once). A replayed answer this proxy holds is returned as it is, not as a promise, on any
   * store, so the proxy can write it in the same tick the body arrived.
   *
   * @example
   * const d = deck.decideShared(req);
   * const decision = d instanceof Promise ? await d : d;
   */
  decideShared(req: DeckRequest): Decision | Promise<Decision> {
    if (!this.col?.shared || !this.col.serves) return this.decide(req);
    return (this.fleet ??= this.openFleet()).decide(req);
  }

  /** What a shared store's fleet asks of this deck (see ./fleet.ts); made at the first request. */
  private fleet: Fleet | undefined;

  private openFleet(): Fleet {
    const col = this.col!;
    return new Fleet({
      decide: (req) => this.decide(req),
      lookAgain: (req) => {
        const route = this.routeOf(req.method, req.url, req.headers);
        return this.served(this.hosts.find(req, route), route, req);
      },
      refresh: (key) => col.refresh!({ kind: 'http', key }),
      routes: this.routes,
      // Opened empty or missing: a miss may be explained against what others recorded since.
      stale: () => (this.recordingCount ? undefined : [this.opts, this.entry]),
      warnOnce: (m) => this.warnOnce(m),
    });
  }

  /** A found recording as beforeReplay leaves it (null from the hook: a miss). */
  private served(found: Found, route: string, req: DeckRequest): Found {
    if (found.kind !== 'replay') return found;
    // A recording made before its route was filed by these headers, with other values than the
    // request's: another request's answer (see keyedHeaders). `route` was made by routeOf()
    // for this request, so lastRoute is its route and the rest of `route` its header values.
    if (this.lastRoute.keyed) {
      const rec = found.record.request;
      const theirs = filedHeaders(rec, rec.headers, this);
      const mine = route.slice(this.lastRoute.route.length);
      if (theirs !== mine) return this.servedMiss(route, found.record.key, headersOfOldRecording(route, theirs, mine));
    }
    if (!this.opts.beforeReplay) return found;
    const record = beforeReplay(this.opts.beforeReplay, found.record);
    if (record) return { ...found, record };
    return this.servedMiss(route, found.record.key, `the beforeReplay hook skipped the recording for ${route}`);
  }

  /** The miss a found recording that is not served becomes (see served()). */
  private servedMiss(route: string, key: string, difference: string): { kind: 'miss'; miss: TapedeckError } {
    const fix = recordHow(this.entry);
    return { kind: 'miss', miss: new TapedeckError('E_MISS', missHeadline(difference, fix), { file: this.tape, route, key, difference, kind: 'other', fix }) };
  }

  /** The recording a custom `match` function picks among those filed under `name` (of `route`), or the miss. */
  private findByFunction(req: DeckRequest, route: string, match: MatchFunction, name: string): Found {
    const r = this.routes.get(name);
    // As it would be stored (a page has no match function: deck-hooks.browser.ts refuses one).
    const request = this.recorder.storedRequest(req);
    const picked = this.matchedByFunction.size;
    const asked = { count: 0 };
    const rec = r ? pickByMatch(match, request, r.records, this.matchedByFunction, this.hookViews, this.repeatLast, asked) : undefined;
    if (rec) {
      // The last one again (nothing new was picked): not when lost records may follow it.
      const lost = this.matchedByFunction.size === picked ? this.col?.lostPast(rec) : undefined;
      if (lost) throw this.damagedAt(route, 'the last one the match function accepted', undefined, lost);
      this.col?.use(rec);
      return { kind: 'replay', record: rec, matchedBy: 'exact', warnings: [] };
    }
    const fix = recordHow(this.entry);
    const n = r?.records.length ?? 0;
    // None of the route's recordings has the request's answer shape: the function was asked
    // about none, and saying it accepted none would send the user to debug the function.
    const difference =
      n === 0 ? `no recording for ${route}` : asked.count === 0 ? `none of the ${n} recording(s) for ${route} has this request's answer shape (streamed or not, n, response format), so the match function was shown none` : `the match function accepted none of the ${asked.count} recording(s) for ${route} with this request's answer shape`;
    return { kind: 'miss', miss: new TapedeckError('E_MISS', missHeadline(difference, fix), { file: this.tape, route, difference, kind: r ? 'other' : 'no-recordings', fix }) };
  }

  private readonly matchedByFunction = new Set<HttpRecord>();
  private readonly hookViews = new WeakMap<HttpRecord, HookRecording>();

  /**
   * A request's recording among those of `route` filed under `name` (the route, or the route and
   * an origin: src/store/origins.ts), or its miss.
   */
  private find(req: DeckRequest, route: string, name = route): Found {
    if (typeof this.opts.match === 'function') return this.findByFunction(req, route, this.opts.match, name);
    const r = this.routes.get(name);
    if (!isJsonBody(req.headers, req.body)) {
      const bytes = normalizeBody(req.headers, req.body, this.redactor).bytes;
      const key = this.httpKey(route, req.headers, bytes);
      // Update mode: a GET or HEAD asked past its recordings reads a state that may have moved
      // on (a batch, a background response, a run being polled), so it goes to the API and its
      // answer is recorded; served the last one again, a poll loop never saw the state change.
      const polled = this.mode === 'update' && (req.method === 'GET' || req.method === 'HEAD');
      const rec = this.take(name, 'http', key, polled ? false : this.repeatLast) ?? this.takeFiledBefore(r, 'http', (old) => this.httpKey(old, req.headers, bytes), polled ? false : this.repeatLast);
      if (rec) return { kind: 'replay', record: rec, matchedBy: 'exact', warnings: [] };
      const detail = r && r.count > 0 ? (this.contentTypeMiss(req, r, false) ?? httpMissDetail({ key, bytes, headers: req.headers, matchHeaders: this.matchHeaders, bodyMatch: this.opts.bodyMatch, redactor: this.redactor, entry: this.entry }, this.storedRequests(r, 'http'))) : undefined;
      return { kind: 'miss', miss: this.routeMiss(route, key, 'http', r, detail, name) };
    }
    // A telemetry upload (the Agents SDK's trace export) is answered whatever it holds, and
    // holds fresh ids and timestamps every run: its recordings are taken in order by route.
    if (isTelemetry(req)) {
      // Past the recorded ones: see ./telemetry-take.ts.
      const rec = telemetryTake(this.col, this.mode, (last) => this.take(name, 'json', telemetryRequestKey(), last));
      if (rec) return { kind: 'replay', record: rec, matchedBy: 'exact', warnings: [] };
      return { kind: 'miss', miss: this.routeMiss(route, telemetryRequestKey(), 'json', r, undefined, name) };
    }
    // The same bytes as an earlier body that matched exactly: found by comparing the bytes, so
    // no string of the body is made and hashed on this path.
    const fast = (r?.matcher !== undefined || r?.deferred === true) && this.repeatLast && req.body.length <= FAST_BODY_MAX;
    if (fast) {
      const known = r!.fast.get(req.body);
      if (known !== undefined && !this.col!.expired(known.record)) {
        // Kept only for a request of one recording, once served: every hit is a repeat.
        this.countRepeat(known.record);
        return known;
      }
    }
    const input: unknown = this.hasSecrets(req.body) ? this.redactor.value(this.parse(req.body)) : req.body;
    let llmKey: string | undefined;
    let llmMiss: TapedeckError | undefined;
    if (r?.deferred) {
      // Found by its key among the recordings filed by their stored keys; a request none has
      // is looked for by the matcher, made now (see Route.deferred), which explains a miss.
      const key = this.llmKeyOf(input, route);
      if (key !== undefined) {
        const rec = this.take(name, 'llm', key);
        if (rec) {
          const decision: ExactReplay = { kind: 'replay', record: rec, matchedBy: 'exact', warnings: NO_WARNINGS };
          // Kept for the next identical body only when serving it again cannot hide damage.
          if (fast && this.col!.count(httpRecordKey(name, 'llm', key)).recorded === 1 && !this.col!.lostPast(rec)) r.fast.set(req.body, decision);
          return decision;
        }
        this.undefer(name, r);
      }
    }
    if (r?.matcher) {
      try {
        // Update mode sends a miss upstream: undiagnosed, unless it is shown (see explained()).
        const m = r.matcher.match(input, this.mode === 'update' ? UNDIAGNOSED : undefined);
        const lost = this.damagedStandIns.get(m.recording.response as object);
        if (lost) throw this.damagedAt(name, `request key ${m.request.key}`, m.request.key, { details: { repeat: lost.k, missing: !this.col!.damagedAnywhere } }, ` (recording ${lost.k + 2} is intact, at ${lost.at})`);
        const rec = this.answerRecord(m.recording.response, name, m.request.key);
        if (this.col!.expired(rec)) {
          // Its TTL passed since it was loaded: not served, as if it were not there.
          this.col!.use(rec);
          throw new TapedeckError('E_MISS', `The recording of ${route} expired (its time to live in ${this.tape} passed).`, { key: m.request.key, route, file: this.tape, hint: recordHow(this.entry) });
        }
        // Served again past its key's last recording (repeats): when damaged records that may be
        // later recordings of this request follow it, this call may be one of their turns. The
        // matcher says so: a recording a fallback served is used, yet its own request's turn.
        const lostPast = m.repeat ? this.col!.lostPast(rec) : undefined;
        if (lostPast) throw this.damagedAt(name, `request key ${m.request.key}`, m.request.key, lostPast);
        if (m.repeat) this.countRepeat(rec);
        this.col!.use(rec);
        if (fast && m.matchedBy === 'exact' && m.warnings.length === 0 && r.turns.recordings(m.request.key) === 1 && !this.col!.lostPast(rec)) r.fast.set(req.body, { kind: 'replay', record: rec, matchedBy: 'exact', warnings: NO_WARNINGS });
        return { kind: 'replay', record: rec, matchedBy: m.matchedBy, warnings: m.warnings };
      } catch (e) {
        if (!(e instanceof TapedeckError)) throw e;
        if (e.code === 'E_MISS') {
          // JSON.parse accepts what canonical JSON rejects (duplicate keys, lone surrogates): a
          // body with no canonical form is a 400, not a miss. Checked on the miss path only.
          if (isBytes(input)) hashJSON(input);
          llmMiss = e;
          if (e.details.diagnosed === false) {
            const matcher = r.matcher;
            this.undiagnosed.set(e, () => matcher.explain(input));
          }
          llmKey = typeof e.details.key === 'string' ? e.details.key : undefined;
        } else if (e.code !== 'E_REQUEST') throw e;
      }
    } else {
      try {
        llmKey = requestKeys(isBytes(input) ? this.parse(input) : input, { ...this.norm, endpoint: { method: req.method, url: req.url } }).key;
      } catch (e) {
        if (!(e instanceof TapedeckError && e.code === 'E_REQUEST')) throw e;
      }
    }
    if (llmKey !== undefined) {
      // LLM recordings made in this run (update mode) are found by the key the matcher reported.
      const rec = this.take(name, 'llm', llmKey);
      if (rec) return { kind: 'replay', record: rec, matchedBy: 'exact', warnings: [] };
      // Recorded before tapedeck understood the body's shape (a provider added since): keyed
      // then as plain JSON, and found that way still.
      if (r && r.count > r.llm.length) {
        const old = this.take(name, 'json', isBytes(input) ? hashJSON(input) : hashValue(input));
        if (old) return { kind: 'replay', record: old, matchedBy: 'exact', warnings: [] };
      }
      // Recorded as it is under another route of its path (the API key sent the other way,
      // other betas): that is the difference, not the text of the closest recording here.
      const switched = this.streamSwitchMiss(route, name, input) ?? this.movedMiss(route, name, llmKey);
      if (switched) return { kind: 'miss', miss: switched };
      const elsewhere = r && r.count > 0 ? this.elsewhereMiss(route, name, 'llm', llmKey) : undefined;
      const typed = r && r.count > 0 && !elsewhere ? this.contentTypeMiss(req, r, true) : undefined;
      if (typed) return { kind: 'miss', miss: this.routeMiss(route, llmKey, 'llm', r, typed, name) };
      return { kind: 'miss', miss: elsewhere ?? (llmMiss ? this.enrich(llmMiss, route) : this.routeMiss(route, llmKey, 'llm', r, undefined, name, input)) };
    }
    const key = isBytes(input) ? hashJSON(input) : hashValue(input);
    const rec = this.take(name, 'json', key) ?? this.takeFiledBefore(r, 'json', () => key);
    if (rec) return { kind: 'replay', record: rec, matchedBy: 'exact', warnings: [] };
    const detail = r && r.count > 0 ? (usedUpDetail(key, this.storedRequests(r, 'json'), this.entry) ?? this.contentTypeMiss(req, r, true) ?? jsonBodyDifference(isBytes(input) ? this.parse(input) : input, this.storedBodies(r, 'json'))) : undefined;
    return { kind: 'miss', miss: this.routeMiss(route, key, 'json', r, detail, name) };
  }

  /**
   * The next recording of a request among those an older tapedeck filed under another route of
   * this one (see Route.filedBefore), keyed for that route by `keyFor`; only after a miss.
   */
  private takeFiledBefore(r: Route | undefined, match: MatchKind, keyFor: (route: string) => string, repeatLast = this.repeatLast): HttpRecord | undefined {
    for (const [name, route] of r?.filedBefore ?? []) {
      const rec = this.take(name, match, keyFor(route), repeatLast);
      if (rec) return rec;
    }
    return undefined;
  }

  /** The request key of an LLM request sent to `route`, as its matcher computes it; undefined for another JSON body. */
  private llmKeyOf(input: unknown, route: string): string | undefined {
    try {
      return requestDigests(input, { ...this.norm, endpoint: routeEndpoint(route) }).key;
    } catch (e) {
      if (!(e instanceof TapedeckError && e.code === 'E_REQUEST')) throw e;
      return undefined;
    }
  }

  /**
   * The miss of a request this tape holds, key for key, under another route of the same path
   * (filed by other headers, or with other query parameters: the API key in the query rather
   * than a header), saying how the request differs from that recording's; undefined when no
   * other route holds it. Only on a miss, so looking through the routes costs no hit.
   */
  private elsewhereMiss(route: string, name: string, match: MatchKind, key: string): TapedeckError | undefined {
    const col = this.col;
    if (!col) return undefined;
    for (const [other, r] of this.routes) {
      if (other === name || r.count === 0 || col.count(httpRecordKey(other, match, key)).recorded === 0) continue;
      const one = new Map([[other, r]]);
      const difference = headersOnOtherRoute(name, one, col, match, key) ?? queryOnOtherRoute(name, one);
      if (difference === undefined) continue;
      const fix = recordHow(this.entry);
      return new TapedeckError('E_MISS', missHeadline(difference, fix), { file: this.tape, route, key, match, difference, kind: 'other', fix });
    }
    return undefined;
  }

  /**
   * The miss of a request this tape holds, key for key, under another path of the same
   * operation (the client's base URL gained or lost `/v1`): named before any recording on the
   * request's own path, which is another request. Only on a miss.
   */
  private movedMiss(route: string, name: string, key: string): TapedeckError | undefined {
    const col = this.col;
    if (!col) return undefined;
    for (const [other, r] of this.routes) {
      if (other === name || r.count === 0) continue;
      const difference = pathOnOtherRoute(name, other);
      if (difference === undefined || col.count(httpRecordKey(other, 'llm', key)).recorded === 0) continue;
      // Also recorded on this very path under another query or headers (a second gateway holds
      // the same body elsewhere): what changed here explains it, the other path does not.
      const here = this.elsewhereMiss(route, name, 'llm', key);
      if (here) return here;
      const fix = `send it to the path it was recorded at, or ${recordHow(this.entry)}`;
      return new TapedeckError('E_MISS', missHeadline(difference, fix), { file: this.tape, route, key, match: 'llm', difference, kind: 'other', fix });
    }
    return undefined;
  }

  /**
   * The miss of a request recorded on the other route of its stream/plain pair (Gemini's
   * `:generateContent` and `:streamGenerateContent`, Bedrock's `converse` and `converse-stream`):
   * keyed for that route's endpoint, it has a recording there. Only on a miss.
   */
  private streamSwitchMiss(route: string, name: string, input: unknown): TapedeckError | undefined {
    const col = this.col;
    if (!col) return undefined;
    let body: unknown;
    const difference = streamOnOtherRoute(name, this.routes, (other, endpoint) => {
      try {
        body ??= isBytes(input) ? this.parse(input) : input;
        return col.count(httpRecordKey(other, 'llm', requestKeys(body, { ...this.norm, endpoint }).key)).recorded > 0;
      } catch (e) {
        if (e instanceof TapedeckError) return false;
        throw e;
      }
    });
    if (difference === undefined) return undefined;
    const fix = `call it as it was recorded, or ${recordHow(this.entry)}`;
    return new TapedeckError('E_MISS', missHeadline(difference, fix), { file: this.tape, route, difference, kind: 'other', fix });
  }

  /** How an LLM request differs from the closest recording of another route, `name` (a miss names it before that route's headers). */
  private explainOn(name: string, input: unknown): unknown {
    const r = this.routes.get(name)!;
    if (r.deferred) this.undefer(name, r);
    return r.matcher?.explain(input).details.difference;
  }

  /** The matcher's miss (already short, with the fix for this entry point), with the tape and route added to its details. */
  private enrich(e: TapedeckError, route: string): TapedeckError {
    const out = new TapedeckError('E_MISS', e.message, { ...e.details, route, file: this.tape });
    const later = this.undiagnosed.get(e);
    if (later) this.undiagnosed.set(out, () => this.enrich(later(), route));
    return out;
  }

  /**
   * Update mode's misses, taken without the matcher's diagnosis (it goes upstream and records
   * them; on a large tape the diagnosis was ~90% of a new request's time), and how to diagnose
   * each, should it be shown after all (the upstream unreachable, the key refused).
   */
  private readonly undiagnosed = new WeakMap<TapedeckError, () => TapedeckError>();

  /**
   * A miss as it is shown: update mode's undiagnosed miss diagnosed now (what differs from the
   * closest recording, as replay says it), any other as it is.
   *
   * @example
   * const shown = deck.explained(decision.miss) // E_MISS: message 0 (user) text differs …
   */
  explained(miss: TapedeckError): TapedeckError {
    const later = this.undiagnosed.get(miss);
    return later ? later() : miss;
  }

  /** The stored requests of a route's recordings of one non-LLM kind, with their keys (decoded from the tape as they are asked for). */
  private *storedRequests(r: Route, kind: 'http' | 'json'): Generator<{ key: string; request: HttpRecord['request'] }> {
    for (const rec of r.records) if (rec.match === kind) yield rec;
    for (const i of r.httpAt ?? []) {
      const rec = this.col?.loadedValue(i);
      if (rec?.match === kind) yield rec;
    }
  }

  /**
   * The stored requests of a route's recordings whose body was keyed as JSON (`json`: LLM and
   * JSON recordings) or not (HTTP ones): a miss's explanation only. Only the request of each is
   * read from the tape, never its answer (the first miss decodes no answer).
   */
  private *storedRequestsKeyed(r: Route, json: boolean): Generator<HttpRecord['request']> {
    // A recording decoded at open is in `records` and may be at an index of `llmAt` too: met
    // twice, it is compared twice, which changes nothing.
    for (const rec of r.records) if ((rec.match !== 'http') === json) yield rec.request;
    const col = this.col;
    if (!col) return;
    for (const runs of json ? [r.llmAt, r.httpAt] : [r.httpAt]) {
      for (const i of runs ?? []) {
        if ((col.loadedField(i, 'match') !== 'http') !== json) continue;
        const request = col.loadedMember(i, 'request') as HttpRecord['request'] | undefined;
        if (request !== undefined) yield request;
      }
    }
  }

  /** A miss whose body a recording of the route holds, sent with a content type that keys it the other way (JSON against text): see content-type-difference.ts. */
  private contentTypeMiss(req: DeckRequest, r: Route, asJson: boolean): HttpMissDetail | undefined {
    const text = contentTypeDifference(req.body, req.headers, asJson, this.storedRequestsKeyed(r, !asJson), this.redactor);
    return text === undefined ? undefined : { text, fix: contentTypeFix(recordHow(this.entry)) };
  }

  /** The stored request bodies of a route's recordings of one non-LLM kind. */
  private *storedBodies(r: Route, kind: 'http' | 'json'): Generator<unknown> {
    for (const rec of this.storedRequests(r, kind)) yield rec.request.body;
  }

  /**
   * A miss no matcher explains: no LLM recordings on the route, or a non-LLM request; `detail`
   * says how it differs from the closest recording, where that is known (an upload's part).
   * `name`: what the recordings looked among are filed under (the route and its origin).
   */
  private routeMiss(route: string, key: string, kind: MatchKind, r: Route | undefined, detail?: string | HttpMissDetail, name = route, input?: unknown): TapedeckError {
    const recorded = r?.count ?? 0;
    // Routes are `METHOD /path?query`; a long query must not push the fix off the line.
    const shown = route.length > 80 ? `${route.slice(0, 79)}…` : route;
    const tape = this.tape && this.tape.length > 100 ? `…${this.tape.slice(-99)}` : this.tape;
    let difference = `no recording for ${shown}`;
    let cacheFix: string | undefined;
    const otherModel = r && recorded > 0 ? undefined : (modelOnOtherRoute(name, this.routes) ?? headersOnOtherRoute(name, this.routes, this.col, kind, key, input !== undefined && ((o) => this.explainOn(o, input))) ?? queryOnOtherRoute(name, this.routes));
    if (otherModel) difference = otherModel;
    const missing = missingTapeMiss(this.col, this.tape, this.entry);
    if (missing) {
      difference = missing.difference;
      cacheFix = missing.fix;
    } else if (this.col && !this.col.exists) difference = this.absent ?? `no tape at ${tape}`;
    // A shared store (a Redis namespace) is no tape, and MCP or realtime records it may hold
    // answer no HTTP request.
    else if (this.recordingCount === 0) {
      // A tape of ReplayCache records, or a namespace that lost its index: said so (./empty-store-miss.ts).
      const store = this.col?.shared ? 'store' : 'tape';
      const said = emptyStoreMiss(this.col, this.tape, this.entry, store);
      difference = said?.difference ?? `the ${store} has no HTTP recordings`;
      cacheFix = said?.fix;
    }
    else if (r && recorded > 0 && detail !== undefined) difference = typeof detail === 'string' ? detail : detail.text;
    else if (r && recorded > 0) difference = recorded === 1 ? `the one recording for ${shown} has another ${kind === 'http' ? 'body' : 'request'}` : `none of the ${recorded} recordings for ${shown} has this ${kind === 'http' ? 'body' : 'request'}`;
    const told = typeof detail === 'object' && difference === detail.text ? detail : undefined;
    const fix = told?.fix ?? cacheFix ?? recordHow(this.entry);
    const routes = recordedRoutes(this.routes.keys());
    return new TapedeckError('E_MISS', missHeadline(difference, fix), {
      file: this.tape,
      route,
      key,
      match: kind,
      recordedRoutes: routes,
      difference,
      kind: this.recordingCount === 0 || !r || recorded === 0 ? 'no-recordings' : (told?.kind ?? 'other'),
      fix,
      fixes: [`${fix[0]!.toUpperCase()}${fix.slice(1)}${this.tape ? ` (recordings in ${this.tape})` : ''}.`],
      report: `No recording in ${this.tape ?? 'the store'} for ${route} (${kind} key ${key}). Recorded routes: ${routes.join(', ') || 'none'}.`,
    });
  }

  /** The recordings (none in passthrough): for faults on demand, which ask what the tape holds (./chaos.ts). */
  get collection(): RecordCollection<HttpRecord> | undefined {
    return this.col;
  }

  /**
   * Keys and redacts a request the way one about to be recorded is, without deciding anything
   * (hand-written recordings are added with it, so they are keyed like recorded ones).
   *
   * @example
   * deck.record(deck.prepareRequest(req), req, response, new Date(), 0)
   */
  prepareRequest(req: DeckRequest): Prepared {
    const decoded = this.decoded(req);
    return this.recorder.prepare(decoded, this.routeOf(decoded.method, decoded.url, decoded.headers));
  }

  /** Request headers as stored: lowercase names, hop-by-hop ones dropped, secrets masked. */
  storedRequestHeaders(h: DeckRequest['headers']): StoredHeaders {
    return this.recorder.storedRequestHeaders(h);
  }

  /**
   * Records an exchange: appends it (many concurrent requests share one lock and one fsync) and
   * returns the record with `durable`, which resolves once it is on disk (to undefined) or its
   * append failed (to the E_RECORD_FAILED error the client gets, see {@link unrecorded}).
   * Callers end their answer only after `durable`, so an answer a client received whole is on
   * the tape (a kill -9 cannot take it back). A failed append is also reported via onWarning
   * and stats.appendFailures; `durable` never rejects.
   */
  record(p: Prepared, req: DeckRequest, response: HttpRecord['response'], recordedAt: Date, durationMs: number, turn?: RecordTurn): { rec: HttpRecord | undefined; durable: Promise<TapedeckError | undefined> } {
    const r = this.recorder.record(p, req, response, recordedAt, durationMs, turn, polledAgain({ mode: this.mode, repeatLast: this.repeatLast, col: this.col }, p, req));
    const rec = r.rec;
    // Record mode: held for the faulted call's retry once stored (./held-for-retry.ts).
    if (rec && req.behindFault === true && this.mode === 'record') return { rec, durable: r.durable.then((e) => (e === undefined && this.heldForRetry.hold(rec), e)) };
    return r;
  }

  /** Record mode: recordings made behind a fault, for the faulted calls' retries. */
  private readonly heldForRetry = new HeldForRetry();

  /**
   * Record mode: whether a recording made behind a fault is held for this request (its call's
   * retry takes it): a retry faulted again needs no second one, which would call the API again
   * and leave the tape two answers where its replay gives one.
   *
   * @example
   * if (deck.mode === 'record' && !deck.holdsForRetry(req)) await recordBehind()
   */
  holdsForRetry(req: DeckRequest): boolean {
    if (this.heldForRetry.size === 0) return false;
    try {
      const r = this.decoded(req);
      const p = this.recorder.prepare(r, this.routeOf(r.method, r.url, r.headers));
      return this.heldForRetry.has(filedKey({ ...r, ...p }));
    } catch {
      // Not keyable: its decision says why; nothing is held for it.
      return false;
    }
  }

  /**
   * A turn among the identical requests being recorded (./record-turns.ts), for a request the
   * caller sends upstream to record: pass it to {@link record}, and finish() it whatever
   * happens (record() finishes it once the record is appended or declined).
   *
   * @example
   * const turn = deck.takeTurn(p); try { ... deck.record(p, req, response, at, ms, turn) ... } finally { turn.finish() }
   */
  takeTurn(p: Prepared): RecordTurn {
    return this.recorder.takeTurn(p);
  }

  /**
   * The record an exchange is stored as (the beforeRecord hook applied, secrets masked), without
   * storing it: undefined when the hook declined it. Importers build records with it so an
   * imported exchange is keyed and redacted exactly as a recorded one. `recordedAt` is a Date or
   * the text its toISOString() gives (an importer that has the text spares a Date per record).
   * `answerAscii`: the answer's body as text, when the caller has it and every byte of the body
   * is ASCII (the text one character a byte): it is then not decoded again.
   *
   * @example
   * const rec = deck.recordOf(deck.prepareRequest(req), req, response, new Date(), 0)
   */
  recordOf(p: Prepared, req: DeckRequest, response: HttpRecord['response'], recordedAt: Date | string, durationMs: number, answerAscii?: string): HttpRecord | undefined {
    return this.recorder.recordOf(p, req, response, recordedAt, durationMs, answerAscii);
  }

  /**
   * Appends a record built by {@link recordOf}; resolves like `durable` of {@link record}.
   *
   * @example
   * const rec = deck.recordOf(deck.prepareRequest(req), req, response, new Date(), 0)
   * if (rec) await deck.appendRecord(rec)
   */
  appendRecord(rec: HttpRecord, forRetry = false): Promise<TapedeckError | undefined> {
    return this.recorder.append(rec, forRetry);
  }

  /** A record of this run is stored: counted among the recordings; in update mode, filed on its route (a match function looks there). */
  private added(rec: HttpRecord): void {
    if (this.mode === 'update') {
      const r = this.route(filedName(rec.route, rec.origin, rec.upstreamPath));
      r.count++;
      r.records.push(rec);
    }
    this.counters.recordings = ++this.recordingCount;
  }

  /**
   * A recording's trace token (the core's traceToken, docs/hash-spec.md): document = the route,
   * version = the time it was recorded, model = the key view's model (the URL's for Gemini,
   * Bedrock and Azure deployments), else the body's, system prompt version =
   * 'tapedeck-http-1', selected ids = [request key]. It names one recording, stably.
   */
  traceFor(p: Prepared, recordedAt: string): string {
    return this.recorder.traceFor(p, recordedAt);
  }

  /** Resolves once every record handed to record() so far is on disk (or reported failed). */
  async flush(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  /**
   * Flushes pending records and applies the mode's rule (docs/modes.md): in record mode the
   * recordings of every request re-recorded in this run replace the old ones (recordings of
   * requests not made in this run stay); with `pruneUnused`, recordings nothing used are
   * removed too. Resolves to what was removed. Idempotent.
   */
  close(): Promise<CloseReport> {
    this.closing ??= (async () => {
      await this.flush();
      // Not after injected faults answered calls (prune-guard.ts).
      const prune = this.opts.pruneUnused === true && pruneMayRemove(this.stats().faults, this.tape, this.warn);
      const report = (await this.col?.close({ pruneUnused: prune })) ?? { replaced: [], pruned: [] };
      this.closeCounts = { ...(report.rerecorded ? { rerecorded: report.rerecorded } : {}), ...(report.retried ? { retried: report.retried } : {}) };
      // The proxy's realtime sessions on the same tape no connect of this run used go too (their endpoint closed before).
      const rtStore = this.opts.store ?? this.opts.tape;
      const sessions = prune && this.col && this.entry.kind === 'proxy' && (this.counters.realtimeSessions ?? 0) > 0 && typeof rtStore === 'string' ? rtStore : undefined;
      await sayPruned(report, prune ? this.col : undefined, sessions, this.tape, this.warn);
      return report;
    })();
    return this.closing;
  }

  /** How many recordings on the tape have a trace token not in `used` (nothing asked for them). */
  unusedCount(used: ReadonlySet<string>): number {
    let n = 0;
    const kept = new Set(keptOf(this.mode, this.col).kept);
    // Trace tokens are read now, from the stored records: nothing is kept per recording for this.
    for (const i of this.loaded) {
      const trace = this.col!.loadedField(i, 'trace');
      if (typeof trace !== 'string' || (!used.has(trace) && !kept.has(trace))) n++;
    }
    return n;
  }

  /** Counts a request that no decide() counts (one answered from a decision held for it). */
  countRequest(): void {
    this.counters.requests++;
  }

  count(by: keyof DeckStats['byMatch']): void {
    this.counters.byMatch[by]++;
    if (by === 'miss') this.counters.misses++;
    else if (by === 'exact' || by === 'signature' || by === 'sequential') this.counters.hits++;
  }

  private warned = new Set<string>();

  /**
   * Reports a problem once per distinct message (a failing side store must not flood logs). The
   * session tapes on the deck's tape (realtime, MCP) say what they found on opening it with a
   * `tapedeck: ` before the deck's own words: the same message either way.
   */
  warnOnce(message: string): void {
    const k = message.startsWith('tapedeck: ') ? message.slice('tapedeck: '.length) : message;
    if (this.warned.has(k)) return;
    this.warned.add(k);
    this.warn(message);
  }

  countError(): void {
    this.counters.errors++;
  }

  /** Counts an answer served although its record failed (onRecordFailure: 'serve'). */
  countUnrecorded(): void {
    this.counters.unrecorded++;
  }

  /**
   * Replaces the chaos settings from now on (the test fixture's `tape.chaos()`); undefined
   * stops injecting. Faults injected so far stay counted. Throws E_ARG or E_CHAOS_MODE.
   *
   * @example
   * deck.useChaos({ faults: { 429: 1 }, attempts: 1 })
   */
  useChaos(opts: ChaosOptions | undefined): void {
    if (opts !== undefined) checkChaos(opts, 'proxy');
    const next = openChaos(opts, this.mode, this.warn);
    const nextSessions = openSessionChaos(opts, this.mode, this.warn, next);
    for (const c of [this.chaosNow, this.sessionChaosNow]) for (const [f, n] of Object.entries(c?.counts() ?? {})) this.pastFaults[f] = (this.pastFaults[f] ?? 0) + n;
    this.chaosNow = next;
    this.sessionChaosNow = nextSessions;
  }

  stats(): DeckStats {
    const faults = { ...this.pastFaults };
    for (const c of [this.chaosNow, this.sessionChaosNow]) for (const [f, n] of Object.entries(c?.counts() ?? {})) faults[f] = (faults[f] ?? 0) + n;
    const repeats = this.repeats;
    const repeatsOfMade = this.repeatsOfMade + (this.col?.repeatsOfMade ?? 0);
    return { ...this.counters, byMatch: { ...this.counters.byMatch }, ...(Object.keys(faults).length > 0 ? { faults } : {}), ...(repeats > 0 ? { repeats } : {}), ...(repeatsOfMade > 0 ? { repeatsOfMade } : {}), ...keptOf(this.mode, this.col), ...this.closeCounts };
  }

  /**
   * Calls answered past their request's recordings so far (DeckStats.repeats), read without
   * making the stats: ./past-error.ts reads it around each lookup.
   */
  get repeats(): number {
    return this.repeatsServed + (this.col?.repeatsServed ?? 0);
  }

  /** A call answered past its request's recordings, by `rec`: one this run made or one it found. */
  private countRepeat(rec: HttpRecord): void {
    this.repeatsServed++;
    if (this.col!.madeHere(rec)) this.repeatsOfMade++;
  }

  /** Of the recordings made, those that replaced an older one or an earlier attempt's at close (see DeckStats.rerecorded, retried). */
  private closeCounts: Pick<DeckStats, 'rerecorded' | 'retried'> = {};

  /** Calls answered past their request's recordings by the fast path and the matcher (the collection counts its own). */
  private repeatsServed = 0;
  /** Of those, the ones answered by a recording this run made (see DeckStats.repeatsOfMade). */
  private repeatsOfMade = 0;
}
