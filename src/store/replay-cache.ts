/**
 * ReplayCache: a record/replay cache for LLM calls, on a tape (or any store backend). A test (or
 * a wrapped LLM client) asks the cache before calling the live API and hands it every live answer:
 *
 * ```ts
 * await using cache = await ReplayCache.open('test/fixtures/qa.tape');   // mode from TAPEDECK_MODE
 * let answer = await cache.get(request);          // replay: the recording, or E_MISS
 * if (answer === undefined) {                     // record / update / passthrough
 *   answer = await callTheApi(request);
 *   await cache.put(request, answer);             // on disk (fsynced) when this resolves
 * }
 * ```
 *
 * The modes are the recording collection's (src/store/collection.ts, docs/modes.md): `replay`
 * serves recordings and never writes; `record` serves nothing, records everything, and at close
 * replaces the recordings of the requests it re-recorded (and nothing else); `update` serves what
 * the tape has and records what is missing; `passthrough` neither reads nor writes. Recordings no
 * run used are removed only when asked: `close({ pruneUnused: true })`.
 *
 * Records are ReplayRecords (src/store/records.ts, docs/tape-format.md), keyed by the matcher's
 * request key (src/match/matcher.ts), so two requests that normalize alike share recordings. A
 * request made k times is answered by the k-th recording of its key, in recorded order; calls of
 * one request that miss at the same time are recorded in the order their gets missed, not the
 * order their answers came back in (./cache-turns.ts).
 * Requests, values and metadata pass through the redactor (src/store/redact.ts) before they are
 * written, unless `redact.keepSecrets`.
 *
 * Opening does not decode records: the tape is read and checked frame by frame (CRC), each
 * record's key is read from its first bytes (writers put the scalar fields first), and a record
 * is decoded the first time it is served.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { assertNoCycle, assertStorable } from './cycle.ts';
import { missOnDamagedTape } from './damage-miss.ts';
import { redactRequest } from './request-redact.ts';
import { isDeepStrictEqual } from 'node:util';
import { TapedeckError, type TapedeckErrorDetails } from '../errors.ts';
import { checkIgnoredArgs, checkRaw, checkVolatileText } from './cache-option-values.ts';
import { checkOptionNames, checkOptionsObject, describeArgument, optionNames } from '../option-names.ts';
import { explainMiss, missHeadline, recordHow, type MissContext, type MissEntry } from '../match/diagnose.ts';
import { recordingDigests, requestKeys, type RequestDigests, type RequestKeys } from '../match/matcher.ts';
import { RequestTexts } from '../match/request-texts.ts';
import { rekeyNotes } from './rekey-note.ts';
import { withVolatileSpans } from '../match/volatile-miss.ts';
import { samplingNote } from '../match/sampling-temperature.ts';
import { volatileAdvice } from '../match/volatile-advice.ts';
import type { RecordBackend, StoreWarning } from './backend.ts';
import { storeBackend } from './backends/open.ts';
import { TapeBackend } from './backends/tape.ts';
import { relativeTapeMiss } from './nearby-tape.ts';
import { RecordCollection, type CloseReport } from './collection.ts';
import { resolveModeWithSource, type TapeMode, type TapeModeSource } from './mode.ts';
import { sortedKeys } from './record-order.ts';
import { buildRecord, cacheRecords, type ReplayPutOptions, type ReplayRecord } from './records.ts';
import { redactor, type RedactOptions, type Redactor } from './redact.ts';
import { echoing } from './echo-redact.ts';
import { checkRedactOptions, REDACT_INNER } from './redact-options.ts';
import { checkHooks, runCacheHook, type CacheHook } from './hooks.ts';
import type { TapeLockOptions } from './tape-file.ts';
import { CACHE_MARK_FIELDS, cacheUsageMark } from './cache-usage-mark.ts';
import { CacheTurns, turnTimeout, type CacheTurn } from './cache-turns.ts';
import { otherShape, shapeName, shapeOf } from './cache-shape.ts';

export type { ReplayPutOptions, ReplayRecord } from './records.ts';


const utf8 = new TextEncoder();
/** Where a ReplayRecord keeps its request (loadedObjectJson's path). */
const REQUEST = ['request'] as const;

// `await using` needs Symbol.asyncDispose. Node 20.20 has it; older runtimes get the registered
// symbol the TypeScript and esbuild helpers fall back to, so the two agree.
if (typeof (Symbol as { asyncDispose?: symbol }).asyncDispose !== 'symbol') {
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('Symbol.asyncDispose'), configurable: false, writable: false });
}

/**
 * What a miss's diagnosis made of every recording, kept for the next miss while the collection
 * holds the same recordings (none added since).
 */
interface Diagnosed {
  /** The collection's index count it was made at: recordings are only ever added while open. */
  indexes: number;
  records: { request: unknown; response: undefined; key: string }[];
  /** Each recording's index in the collection. */
  at: number[];
  digests: RequestDigests[];
  /** The full keys (with normalized views) of the recordings the diagnosis looked at closely. */
  full: (RequestKeys | undefined)[];
  texts: RequestTexts;
  keys: Set<string>;
  signatures: Set<string>;
}

/**
 * Options of ReplayCache.open: the mode, what is left out of keys, hooks, redaction, and the run
 * and test it records for.
 */
export interface ReplayCacheOptions {
  /** replay | record | update | passthrough | once (docs/modes.md); default from TAPEDECK_MODE, CACHE_MODE, else replay. */
  mode?: TapeMode;
  /** Request arguments left out of the key (ignored arguments of the cache key); per-call values replace it. */
  ignoredArgs?: readonly string[];
  /**
   * Patterns of text that changes from run to run inside messages (dates, UUIDs): replaced by
   * `<volatile>` before keying (docs/matching.md). Recordings are keyed with it when put.
   */
  volatileText?: readonly (RegExp | string)[];
  /**
   * Sees `{ request, response }` (the value) before a put stores it: change them, or return null
   * to not record. Redaction runs after it. Synchronous (docs/hooks.md).
   */
  beforeRecord?: CacheHook;
  /** Sees `{ request, response }` before a recording is served: change the value, or return null for a miss. */
  beforeReplay?: CacheHook;
  /** Record mode: remove nothing at close, not even the recordings this run replaced (default false). */
  keepAll?: boolean;
  /**
   * The command shown in E_MISS messages, e.g. `TAPEDECK_MODE=record npm test` (default: how to
   * record with the cache itself, `TAPEDECK_MODE=record (or ReplayCache mode 'record')`, or its
   * `mode` option when that set the mode).
   */
  recordCommand?: string;
  /** Lock timing for appends and the close-time rewrite (tape files). */
  lock?: TapeLockOptions;
  /**
   * Secret redaction before anything is written (src/store/redact.ts): more header and field
   * names to mask, or `{ keepSecrets: true }` to store secrets as given (never for shared tapes).
   */
  redact?: RedactOptions;
  /**
   * The run this cache belongs to (default TAPEDECK_RUN_ID, else a new one): caches of one run
   * (test workers) never replace each other's recordings in record mode (docs/modes.md).
   */
  run?: string;
  /**
   * The test this cache records and replays for, on a tape several tests share: its records
   * name the test, and a test is served its own recordings of a request, in the order it made
   * them (docs/vitest.md, "Tapes shared by tests"; the test helpers set it).
   */
  test?: string;
  /**
   * Identical calls that miss at once are recorded in the order their gets were made, so a put
   * waits for the puts of earlier identical calls (docs/modes.md, rule 1). This is how long it
   * waits for one that has not put (its call failed and nothing retried it) before recording
   * without it, with a warning (default 60000 ms; 0: never waits for such a call).
   */
  turnTimeoutMs?: number;
}

const CACHE_OPTIONS = optionNames<ReplayCacheOptions>()(['mode', 'ignoredArgs', 'volatileText', 'beforeRecord', 'beforeReplay', 'keepAll', 'recordCommand', 'lock', 'redact', 'run', 'test', 'turnTimeoutMs']);
/** The names ReplayCache.put's options object takes (checked against ReplayPutOptions). */
const PUT_OPTIONS = optionNames<ReplayPutOptions>()(['ignoredArgs', 'durationMs', 'raw', 'meta']);

/** Options of ReplayCache.close: whether recordings nobody used this run are removed too. */
export interface ReplayCacheCloseOptions {
  /** Record mode: replace the recordings this run re-recorded (default true). false removes nothing. */
  prune?: boolean;
  /**
   * Also remove the recordings this run neither served nor re-recorded (default false). Run the
   * whole suite first: a recording only one skipped test needs is unused too.
   */
  pruneUnused?: boolean;
}

function modelOf(keys: RequestKeys | undefined, request: unknown): string {
  const m = keys?.view.model ?? (request !== null && typeof request === 'object' ? (request as { model?: unknown }).model : undefined);
  return typeof m === 'string' ? m : 'unknown';
}

const store = new AsyncLocalStorage<ReplayCache>();

/**
 * A ReplayCache miss as its caller reads it, the error itself (no SDK in between to put the
 * words in front): `tapedeck miss: ` before the message, as every other miss says it, and the
 * fix its first line(s) end with as its `hint` too. The message already says the hint, so it
 * is not said again at the end (see TapedeckError); a fix put on a line of its own starts with a
 * capital (missHeadline), and the hint is it as shown.
 *
 * @example
 * const fix = "re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')";
 * cacheMiss(`no tape at qa.tape; ${fix}`, fix, { file: 'qa.tape' })
 * // message `tapedeck miss: no tape at qa.tape; ${fix}`, hint fix
 */
export function cacheMiss(message: string, fix: string, details: TapedeckErrorDetails): TapedeckError {
  const ownLine = `${fix.charAt(0).toUpperCase()}${fix.slice(1)}`;
  const hint = message.includes(fix) ? fix : ownLine;
  return new TapedeckError('E_MISS', `tapedeck miss: ${message}`, { ...details, hint });
}

/**
 * What a miss past a request's last recording says: how many times it was recorded (`damaged`
 * of them the turns of damaged recordings, which their calls were told of) and which call this is.
 *
 * @example
 * usedUpText(3, 1) // 'this request was recorded 4 times (1 of them damaged) and this is call 5'
 */
function usedUpText(intact: number, damaged: number): string {
  const n = intact + damaged;
  return `this request was recorded ${n} time${n === 1 ? '' : 's'}${damaged > 0 ? ` (${damaged} of them damaged)` : ''} and this is call ${n + 1}`;
}

/**
 * Each cache's recordings, for {@link usedCacheMarks}: kept off the class so the public
 * ReplayCache gains no member for what only the test-runner summary reads.
 */
const collections = new WeakMap<ReplayCache, RecordCollection<ReplayRecord>>();

/**
 * A cache of answers on a tape, keyed by request: get what was recorded, put what was not, by
 * mode.
 */
export class ReplayCache {
  /** The tape path (or the backend's location). */
  readonly path: string;
  readonly mode: TapeMode;
  /** Where the mode came from: the option, TAPEDECK_MODE, CACHE_MODE or the default. */
  readonly modeSource: TapeModeSource;
  /** Damage found when the tape was read (torn tail, corrupt records, unkeyable records). */
  readonly warnings: StoreWarning[];

  private readonly ignoredArgs: readonly string[] | undefined;
  private readonly volatileText: readonly (RegExp | string)[] | undefined;
  private readonly hooks: { beforeRecord?: CacheHook; beforeReplay?: CacheHook };
  private readonly keepAll: boolean;
  /** The caller's record command (then a miss names it even when the mode is an option). */
  private readonly recordCommand: string | undefined;
  private readonly redactor: Redactor;
  private readonly col: RecordCollection<ReplayRecord>;
  /** Record mode: puts per key so far (the k-th put is compared with the k-th old recording). */
  private readonly recordPuts = new Map<string, number>();
  private closing: Promise<CloseReport> | undefined;
  /** What the last miss's diagnosis made of every recording (see diagnosis()). */
  private diagnosed: Diagnosed | undefined;
  private warnedReplayPut = false;
  private appended = 0;
  /** The turns of identical calls that missed, so their puts append in the order of the gets. */
  private readonly turns: CacheTurns;
  /** Per request key, the calls answered E_TAPE_DAMAGED (a damaged recording's turn): a miss past the end counts them. */
  private readonly damagedCalls = new Map<string, number>();
  /** Puts holding a turn and not done yet: close lets them append before the store closes. */
  private readonly turnPuts = new Set<Promise<void>>();

  private constructor(col: RecordCollection<ReplayRecord>, mode: { mode: TapeMode; source: TapeModeSource }, opts: ReplayCacheOptions) {
    this.col = col;
    collections.set(this, col);
    this.path = col.location;
    // `once` became record or replay when the tape was opened.
    this.mode = col.mode;
    this.modeSource = mode.source;
    this.ignoredArgs = opts.ignoredArgs;
    this.volatileText = opts.volatileText;
    this.hooks = { beforeRecord: opts.beforeRecord, beforeReplay: opts.beforeReplay };
    this.keepAll = opts.keepAll === true;
    this.recordCommand = opts.recordCommand;
    // Masks that are not credentials are keyed under the store's salt (src/store/redact.ts).
    this.redactor = redactor({ ...opts.redact, salt: col.backend.salt });
    this.warnings = col.warnings;
    this.turns = new CacheTurns(this.mode === 'record' || this.mode === 'update', turnTimeout(opts.turnTimeoutMs), (key, count, waitedMs) => {
      process.emitWarning(
        `ReplayCache for ${this.path}: ${count} earlier identical call${count === 1 ? '' : 's'} of request ${key} missed and put no answer within ${waitedMs} ms of a later one's put; ` +
          'the later answer is recorded without waiting (a put that still comes is recorded after it). Raise turnTimeoutMs if answers take longer to come back.',
        { code: 'TAPEDECK_CACHE_TURN' },
      );
    });
  }

  /**
   * Opens the tape at `path` (or a shared Redis store, `redis://host:6379/0?namespace=app`, see
   * docs/redis.md; or a store backend object: `new MemoryBackend()`). In
   * record and update mode a missing tape (and its directory) is created; in replay a missing
   * tape is not an error, but every get is then a miss; passthrough does not touch it at all.
   * Records are indexed by their stored `key` without being decoded or re-hashed; older records
   * without one get it computed with `ignoredArgs`. A record keyed under other ignoredArgs than
   * this cache's (non-empty) `ignoredArgs` is found under both keys, so changing the option never
   * strands recordings.
   *
   * @example
   * const cache = await ReplayCache.open('test/fixtures/qa.tape', { mode: 'update' });
   */
  static async open(path: string | RecordBackend, opts: ReplayCacheOptions = {}): Promise<ReplayCache> {
    if (!(typeof path === 'string' && path !== '') && !(path !== null && typeof path === 'object' && typeof (path as RecordBackend).load === 'function')) {
      throw new TapedeckError('E_ARG', 'ReplayCache.open needs a tape path (or a store backend).', { hint: "e.g. ReplayCache.open('test/fixtures/qa.tape')" });
    }
    checkOptionsObject(opts, 'ReplayCache.open', "ReplayCache.open('qa.tape', { mode: 'record' }) (or leave the options out)");
    const mode = resolveModeWithSource(opts.mode);
    checkOptionNames(opts, CACHE_OPTIONS, 'ReplayCache.open', 'docs/api.md', REDACT_INNER);
    checkHooks(opts as Parameters<typeof checkHooks>[0]);
    checkRedactOptions(opts.redact);
    turnTimeout(opts.turnTimeoutMs);
    checkIgnoredArgs(opts.ignoredArgs, 'ReplayCache.open');
    checkVolatileText(opts.volatileText, 'ReplayCache.open');
    // A tape path, a redis:// URL (docs/redis.md) or a backend object.
    const backend = storeBackend(path, opts.lock ? { lock: opts.lock } : {});
    const kind = cacheRecords(opts.ignoredArgs, opts.volatileText);
    const col = await RecordCollection.open(backend, { mode: mode.mode, kind, ...(opts.run !== undefined ? { run: opts.run } : {}), ...(opts.test !== undefined ? { test: opts.test } : {}) });
    const cache = new ReplayCache(col, mode, opts);
    if (cache.warnings.length > 0) {
      process.emitWarning(`${cache.path}: ${cache.warnings.length} problem(s) reading the tape; the first: ${cache.warnings[0]!.message}`, { code: 'TAPEDECK_TAPE' });
    }
    // Once per tape in a process, whoever opens it (./rekey-note.ts).
    for (const w of rekeyNotes(cache.path, kind.rekeyed)) process.emitWarning(w.message, { code: w.code });
    return cache;
  }

  /**
   * How many recordings this cache wrote in this run (record and update modes), each stored
   * when counted. A record-mode put whose value came out the same as the recording it would
   * replace keeps that recording and writes nothing: it is not counted (the tape did not grow).
   *
   * @example
   * await cache.put(request, answer);
   * console.log(`${cache.recorded} recorded`);
   */
  get recorded(): number {
    return this.appended;
  }

  /** Number of recordings this cache can serve or has recorded. */
  get size(): number {
    return this.col.size;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  private keysOf(request: unknown, ignoredArgs: readonly string[] | undefined): RequestKeys {
    // A per-call list is checked here, for get, peek, cacheKey and forgo alike, so the message
    // names this cache's option rather than normalizeRequest's.
    if (ignoredArgs !== undefined && ignoredArgs !== this.ignoredArgs) checkIgnoredArgs(ignoredArgs, 'ReplayCache (the ignoredArgs after the request)');
    return requestKeys(request, { ignoreArgs: ignoredArgs ?? this.ignoredArgs, volatileText: this.volatileText });
  }

  private assertOpen(op: string): void {
    if (this.closing) {
      // Said without the method: a middleware's call (its peek) is not one the user made.
      throw new TapedeckError('E_CLOSED', `ReplayCache for ${this.path} is closed: it serves and records nothing any more.`, {
        file: this.path,
        op,
        hint: 'Open the tape again, or move the call inside the cache scope.',
      });
    }
  }

  /**
   * The request key: requestKeys(request, { ignoreArgs }).key, with `ignoredArgs` (or the
   * cache's own) left out. Requests with equal keys share recordings.
   *
   * @example
   * cache.cacheKey({ model: 'gpt-4o', messages, seed: 1 }, ['seed']) === cache.cacheKey({ model: 'gpt-4o', messages }) // true
   */
  cacheKey(request: unknown, ignoredArgs?: readonly string[]): string {
    return this.keysOf(request, ignoredArgs).key;
  }

  /**
   * The recorded value for a request: the k-th call with a key gets the k-th recording of it.
   * - replay: the value, or a TapedeckError `E_MISS` naming the tape, key, model and the command
   *   that records it;
   * - update: the value, or undefined on a miss (call the API, then put);
   * - record: always undefined (record calls the live API for everything);
   * - passthrough: always undefined.
   *
   * A miss in record or update takes the request's turn in the caller's async context: the put
   * of this call, made from the same async function, is stored after the puts of identical calls
   * that missed before it (docs/modes.md, rule 1).
   *
   * @example
   * const answer = (await cache.get(request)) ?? (await callAndPut(request));
   */
  async get(request: unknown, ignoredArgs?: readonly string[]): Promise<unknown> {
    return (await this.getRecord(request, ignoredArgs))?.value;
  }

  /**
   * The record the next {@link get} of `request` would be served, without making a call of it:
   * the next get still gets this record. Undefined in record and passthrough modes (they serve
   * nothing), when no recording is left, and when one ahead is lost (get says so). The
   * beforeReplay hook is not run: this is the record as stored.
   *
   * @example
   * // put(request, value, { meta: { promptVersion: 3 } }) recorded it; a run on another prompt version says so
   * const next = await cache.peek(request); if (next && next.meta?.promptVersion !== 3) throw new Error('recorded with another prompt version')
   */
  async peek(request: unknown, ignoredArgs?: readonly string[]): Promise<ReplayRecord | undefined> {
    this.assertOpen('peek');
    if (this.mode === 'record' || this.mode === 'passthrough') return undefined;
    return this.col.upcoming(this.keysOf(request, ignoredArgs).key);
  }

  /**
   * Like {@link get}, but the whole record: value, raw response bytes and content type, duration,
   * metadata, hashes and the time it was recorded. It is a call just as get is (the k-th call of
   * a request, get or getRecord, gets the k-th recording), so `get` then `getRecord` of one
   * request are two calls: for the value and the record of one call, call getRecord alone (its
   * `value` is what get returns).
   *
   * @example
   * const rec = await cache.getRecord(request); if (rec?.raw) res.end(rec.raw.body)
   */
  async getRecord(request: unknown, ignoredArgs?: readonly string[]): Promise<ReplayRecord | undefined> {
    this.assertOpen('get');
    if (this.mode === 'passthrough') return undefined;
    const keys = this.keysOf(request, ignoredArgs);
    if (this.mode === 'record') {
      // Asked for: if the API then fails and nothing is put, a prune keeps the old recordings.
      this.col.ask(keys.key);
      // Taken here, synchronously, so the caller's continuation carries it to its put.
      this.turns.take(keys.key);
      return undefined;
    }
    // The recording ahead must have been made with this request's API (./cache-shape.ts): in
    // update mode too, whose new recording would come after it and never be served.
    const ahead = this.col.upcoming(keys.key);
    const sentShape = ahead === undefined ? undefined : shapeOf(request);
    const recordedShape = ahead === undefined ? undefined : otherShape(ahead.request, sentShape);
    if (recordedShape !== undefined) throw this.shapeMiss(request, keys, sentShape!, recordedShape);
    let record: ReplayRecord | undefined;
    try {
      record = this.col.next(keys.key);
    } catch (e) {
      if (e instanceof TapedeckError && e.code === 'E_TAPE_DAMAGED') this.damagedCalls.set(keys.key, (this.damagedCalls.get(keys.key) ?? 0) + 1);
      throw e;
    }
    if (record && this.hooks.beforeReplay) {
      const r = runCacheHook('beforeReplay', this.hooks.beforeReplay, record.request, record.value);
      if (r) return { ...record, value: r.response };
      if (this.mode === 'update') {
        this.turns.take(keys.key);
        return undefined;
      }
      const fix = recordHow(this.missEntry());
      throw cacheMiss(missHeadline('the beforeReplay hook skipped the recording', fix), fix, { file: this.path, key: keys.key, kind: 'other', fix });
    }
    if (record) {
      this.noteSampling(request, record.request);
      return record;
    }
    if (this.mode === 'update') {
      this.turns.take(keys.key);
      return undefined;
    }
    // A miss is shown as a put would store the request: its excerpts and report go to test logs
    // (a key pasted into the prompt must not), and the recordings it is compared with are stored
    // masked, so a mask on each side compares alike.
    const shown = redactRequest(this.redactor, request);
    const shownKeys = shown === request ? keys : this.keysOf(shown, ignoredArgs);
    throw withVolatileSpans(shown, { volatileText: this.volatileText }, this.miss(request, keys, shown, shownKeys));
  }

  /** Pairs of temperatures already said (./../match/sampling-temperature.ts): once each. */
  private samplingSaid: Set<string> | undefined;

  /** Says once per pair when a recording made at another sampling temperature answers. */
  private noteSampling(request: unknown, recorded: unknown): void {
    const note = samplingNote(request, recorded);
    if (note === undefined || (this.samplingSaid ??= new Set()).has(note)) return;
    this.samplingSaid.add(note);
    process.emitWarning(`${this.path}: ${note}`, { code: 'TAPEDECK_SAMPLING' });
  }

  /**
   * Records a value for a request: appends a record (see {@link ReplayRecord}) and resolves once
   * it is durable (a kill -9 right after loses nothing). Puts made while an append is in flight
   * go to disk together in the next one (one lock, one fsync), in call order. A no-op in replay
   * (which never writes) and passthrough. The third argument is the per-call ignoredArgs, or
   * options with raw bytes, duration and metadata.
   *
   * The put of a call whose get missed (its turn is in this async context) first waits for the
   * puts of the identical calls that missed before it, so they are stored in the order they were
   * asked; it waits at most `turnTimeoutMs` for one that has not put, and close() ends the wait.
   * A put without such a turn is stored at once.
   *
   * @example
   * await cache.put(request, answer, { durationMs: 812, raw: { body, contentType: 'application/json' } });
   */
  async put(request: unknown, value: unknown, options?: readonly string[] | ReplayPutOptions): Promise<void> {
    this.assertOpen('put');
    if (this.mode === 'passthrough') return;
    if (this.mode === 'replay') {
      if (!this.warnedReplayPut) {
        this.warnedReplayPut = true;
        process.emitWarning(`ReplayCache for ${this.path} is in replay mode: put() records nothing.`, { code: 'TAPEDECK_REPLAY_PUT' });
      }
      return;
    }
    // A misspelt option (`metadata` for `meta`) was dropped: the record was stored without it.
    if (!Array.isArray(options)) checkOptionNames(options, PUT_OPTIONS, 'ReplayCache.put', 'docs/api.md');
    const opts: ReplayPutOptions = Array.isArray(options) ? { ignoredArgs: options as readonly string[] } : ((options ?? {}) as ReplayPutOptions);
    checkIgnoredArgs(opts.ignoredArgs, 'ReplayCache.put');
    checkRaw(opts.raw);
    const ignoredArgs = opts.ignoredArgs ?? this.ignoredArgs;
    // The turn this call's get took when it missed, keyed as that get keyed the request (before
    // beforeRecord may change it); none for a put without a get (it appends at once).
    const turn = this.turns.claim(() => this.keysOf(request, ignoredArgs).key);
    if (!turn) return this.store(request, value, opts, ignoredArgs, undefined);
    const putting = this.store(request, value, opts, ignoredArgs, turn).finally(() => {
      // Whatever happened (stored, nothing to store, failed), later turns go on.
      turn.finish();
      this.turnPuts.delete(putting);
    });
    this.turnPuts.add(putting);
    return putting;
  }

  /**
   * Says that the call whose get missed will put nothing (its API call failed for good): the
   * turn that get took in this async context ends, so the puts of identical calls asked after it
   * are stored at once rather than waiting `turnTimeoutMs` for it. A retry that gets again after
   * it takes a new turn, after the calls already waiting. Nothing happens when this context holds
   * no turn of the request (replay, passthrough, a put already made).
   *
   * @example
   * const answer = await cache.get(request);
   * if (answer === undefined) {
   *   let result;
   *   try { result = await callTheApi(request) } catch (e) { cache.forgo(request); throw e }
   *   await cache.put(request, result);
   * }
   */
  forgo(request: unknown, ignoredArgs?: readonly string[]): void {
    this.turns.claim(() => this.keysOf(request, ignoredArgs ?? this.ignoredArgs).key)?.finish();
  }

  /** The body of {@link put}: after its turn's wait, if it holds one, in the order of the gets. */
  private async store(request: unknown, value: unknown, opts: ReplayPutOptions, ignoredArgs: readonly string[] | undefined, turn: CacheTurn | undefined): Promise<void> {
    if (this.hooks.beforeRecord) {
      const r = runCacheHook('beforeRecord', this.hooks.beforeRecord, request, value);
      if (!r) return;
      ({ request, response: value } = r);
    }
    // Before redaction copies them: a cycle would be copied without end.
    assertStorable(value, 'value');
    assertNoCycle(opts.meta, 'meta');
    // Key first: a request that cannot be keyed fails here, before anything is written. The
    // key is computed from the request as given, then secrets are masked in what is stored.
    const keys = this.keysOf(request, ignoredArgs);
    // The answer may repeat the request's own secrets (a member the model was asked to repeat):
    // masked there as the request's copy is. Looked for only when the request has some (its
    // redaction changed it).
    const redacted = redactRequest(this.redactor, request);
    const masks = redacted === request ? this.redactor : echoing(this.redactor, { headers: {}, url: '', body: utf8.encode(JSON.stringify(request)) });
    const storedValue = sortedKeys(masks.value(value));
    // When the answer came, not when its turn came.
    const recordedAt = new Date().toISOString();
    const wait = turn && this.turns.before(turn);
    if (wait) await wait;
    if (this.mode === 'record') {
      // Re-recording an interaction that came out the same keeps the old record, timestamp and
      // all, so a re-record of unchanged calls leaves the tape byte for byte as it was (no churn
      // in code review). The k-th put of a key is compared with the k-th recording of it: counted
      // after the turn's wait, so k is the call's place among the gets, not among the answers.
      const k = this.recordPuts.get(keys.key) ?? 0;
      this.recordPuts.set(keys.key, k + 1);
      const old = this.col.previous(keys.key, k);
      if (old && isDeepStrictEqual(old.value, storedValue) && opts.raw === undefined) {
        this.col.reuse(keys.key, k);
        turn?.finish();
        return this.col.flush();
      }
    }
    const record = buildRecord(keys, request, storedValue, { ...opts, ignoredArgs }, this.redactor, recordedAt, masks, redacted);
    // append queues the record synchronously, so ending the turn right after keeps the order of
    // the stores while the later turns need not wait for this one's fsync.
    const appending = this.col.append(keys.key, record);
    turn?.finish();
    await appending;
    this.appended++;
  }

  /** How a miss of this cache is fixed: its own mode option and ignoredArgs, or the given command. */
  private missEntry(): MissEntry {
    return { kind: 'cache', modeFromOption: this.modeSource === 'option', ...(this.recordCommand === undefined ? {} : { recordCommand: this.recordCommand }) };
  }

  /**
   * The matcher's diagnosis of a miss: the closest recordings (longest shared conversation
   * prefix, then signature), what differs, tools added and removed, recordings already used.
   * Misses are rare and end the test, so no memory is spent on it while things go well: the
   * first miss keys every recording. A recording not decoded yet gives its request as the JSON
   * text of its stored bytes (src/store/msgpack-json.ts), keyed as a raw body: no record is
   * decoded, and no answer kept (on 100,000 recordings, decoding each whole was ~1 s of a
   * ~3.7 s first miss, and its collection more). What the first miss made (each recording's
   * digests, and the canonical texts the ranking of tied recordings reads) is kept for the
   * misses after it while the recordings are the same ones: a tape of 100,000 recordings took
   * ~3-5 s on every miss when each made them again. Undefined when a record cannot be read by
   * the matcher (the short miss then stands alone).
   */
  private diagnosis(keys: RequestKeys, request: unknown): TapedeckError | undefined {
    const col = this.col;
    const norm = { ignoreArgs: this.ignoredArgs, volatileText: this.volatileText };
    let d = this.diagnosed;
    if (d === undefined || d.indexes !== col.indexes) {
      const indexes = col.indexes;
      const records: Diagnosed['records'] = [];
      const at: number[] = [];
      const digests: RequestDigests[] = [];
      for (let i = 0; i < indexes; i++) {
        const text = col.loadedObjectJson(i, REQUEST);
        const stored = text === undefined ? col.loadedValue(i) : undefined;
        // Damage: left out, as the recordings served are (the collection warns).
        if (text === undefined && stored === undefined) continue;
        const r = { request: text ?? stored!.request, response: undefined, key: col.keyAt(i) };
        try {
          digests.push(recordingDigests(r.request, norm));
        } catch {
          return undefined;
        }
        records.push(r);
        at.push(i);
      }
      d = this.diagnosed = { indexes, records, at, digests, full: [], texts: new RequestTexts(records), keys: new Set(digests.map((k) => k.key)), signatures: new Set(digests.map((k) => k.signatureDigest)) };
    }
    const { records, digests, full, texts } = d;
    // Each recording's own flag, set when it was served: no key looked up per recording on
    // each miss (~0.1 s of every miss on 100,000 recordings).
    const used = new Uint8Array(records.length);
    for (let i = 0; i < records.length; i++) if (col.loadedUsed(d.at[i]!)) used[i] = 1;
    const ctx: MissContext = {
      mode: 'exact',
      request: keys,
      recordings: records,
      keys: digests,
      // The normalized views of the few closest recordings only, made when the diagnosis asks.
      full: (i) => (full[i] ??= requestKeys(records[i]!.request, norm)),
      requestBody: request,
      requestText: (i) => texts.get(i),
      used,
      allowRepeats: false,
      source: this.path,
      entry: this.missEntry(),
      hasKey: (k) => d.keys.has(k),
      hasSignature: (x) => d.signatures.has(x),
    };
    // A date or timestamp in the request that changes every run: the built-in pattern that fixes it.
    return volatileAdvice(request, norm, explainMiss(ctx), ctx);
  }

  /**
   * The E_MISS of a replay miss: a short message (what differs, how to re-record with this
   * cache's options) and details naming the tape, key, model and, on a recorded tape, the
   * diagnosis (`closest`, `fixes`, the full `report`).
   */
  /** The miss of a request whose recording was made with another API (see otherShape). */
  private shapeMiss(request: unknown, keys: RequestKeys, sent: string, recorded: string): TapedeckError {
    const entry = this.missEntry();
    // Only record mode replaces the old API's recording; update would add one after it.
    const fix = recordHow(entry).replace('TAPEDECK_MODE=update', 'TAPEDECK_MODE=record');
    // Short, the recorded API first: a headline is clipped at its end.
    const difference = `recorded with another API (${shapeName(recorded)}), this request is ${shapeName(sent)}`;
    return cacheMiss(missHeadline(difference, fix), fix, {
      file: this.path,
      key: keys.key,
      model: modelOf(keys, request),
      provider: keys.provider,
      recordedAs: recorded,
      kind: 'other',
      fix,
      ...(entry.recordCommand === undefined ? {} : { command: entry.recordCommand.replace('TAPEDECK_MODE=update', 'TAPEDECK_MODE=record') }),
    });
  }

  private miss(request: unknown, keys: RequestKeys, shown: unknown, shownKeys: RequestKeys): TapedeckError {
    const model = modelOf(keys, request);
    const { recorded } = this.col.count(keys.key);
    const entry = this.missEntry();
    const fix = recordHow(entry);
    // A tape of other records only (createFetch's or the proxy's HTTP recordings, MCP, realtime):
    // "no recordings" would read as an empty tape, which verify contradicts.
    const foreign = this.col.exists && this.col.size === 0 && this.col.otherKinds > 0;
    const detail = this.col.exists && recorded === 0 && !foreign ? this.diagnosis(shownKeys, shown) : undefined;
    const shownPath = this.path.length > 100 ? `…${this.path.slice(-99)}` : this.path;
    // A relative tape path missing from here is most often a tape recorded from another working
    // directory: the absolute path looked at and that directory are named, and re-recording (a
    // second tape in the wrong place) comes last.
    const elsewhere = !this.col.exists && this.col.backend instanceof TapeBackend ? relativeTapeMiss(this.path, fix) : undefined;
    const difference = !this.col.exists
      ? (elsewhere?.difference ?? `no tape at ${shownPath}`)
      : foreign
        ? `the tape has no ReplayCache recordings (its ${this.col.otherKinds} record${this.col.otherKinds === 1 ? ' is' : 's are'} of another kind: createFetch or tapedeck serve HTTP recordings, MCP or realtime sessions, which their own entry point replays)`
      : recorded > 0
        ? usedUpText(recorded, this.damagedCalls.get(keys.key) ?? 0)
        : typeof detail?.details.difference === 'string'
          ? detail.details.difference
          : 'no recording has this request key';
    // Used up: often get() then getRecord() of one request, which are two calls.
    const usedUp = this.col.exists && recorded > 0;
    const shownFix = detail
      ? String(detail.details.fix)
      : usedUp
        ? `${fix}; or, if get() and getRecord() read one call, use getRecord() alone (each is a call)`
        : (elsewhere?.fix ?? fix);
    const message = detail ? detail.message : missHeadline(difference, shownFix);
    // Damage on the tape may have held this very request's recording: said, not left to look like a changed request.
    return missOnDamagedTape(cacheMiss(message, shownFix, {
      file: this.path,
      key: keys.key,
      model,
      provider: keys.provider,
      signature: keys.signature,
      recorded,
      ...(entry.recordCommand === undefined ? {} : { command: entry.recordCommand }),
      difference,
      fix: detail ? detail.details.fix : fix,
      ...(detail ? { kind: detail.details.kind, closest: detail.details.closest, fixes: detail.details.fixes, report: detail.details.report } : { kind: recorded > 0 ? 'used-up' : 'no-recordings', fixes: [...(usedUp ? ['get() and getRecord() each count as a call: to read the value and the whole record of one call, call getRecord() alone (its value is what get() returns).'] : []), `${fix[0]!.toUpperCase()}${fix.slice(1)}, then commit ${this.path}.`] }),
    }), this.col, this.col.verifyCommand);
  }

  /**
   * Waits for pending puts, then applies the mode's rule at close: in record mode the recordings
   * this run re-recorded replace the ones those requests had (only once every new one is on
   * disk; an unchanged answer keeps its old record). Nothing else is removed: not the
   * recordings this run did not use (unless `pruneUnused`), not what other writers appended.
   * With `keepAll` or `{ prune: false }` nothing is removed. Resolves to what was removed.
   * Idempotent: later calls return the first call's promise.
   *
   * @example
   * const { replaced, pruned } = await cache.close({ pruneUnused: true })
   */
  close(opts: ReplayCacheCloseOptions = {}): Promise<CloseReport> {
    if (this.closing) return this.closing;
    const closeCol = () => this.col.close({ abandon: this.keepAll || opts.prune === false, pruneUnused: opts.pruneUnused === true });
    // A call that missed and never put (its API call failed) gives up its turn now; the puts
    // waiting on it append, in order, before the store closes.
    this.turns.close();
    this.closing = this.turnPuts.size === 0 ? closeCol() : Promise.allSettled([...this.turnPuts]).then(closeCol);
    return this.closing;
  }

  /** `await using cache = await ReplayCache.open(path)` closes on scope exit. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * Runs `fn` with a cache open on `path` as the active cache ({@link activeReplayCache}) of its
 * async scope, then closes it. Scopes are per async call chain (AsyncLocalStorage): parallel
 * tests never see each other's cache. If `fn` fails, the cache is closed without removing
 * anything, so a failed record run never deletes recordings.
 *
 * @example
 * await withReplayCache('test/fixtures/qa.tape', async () => { await runQa() }) // runQa uses activeReplayCache()
 */
export async function withReplayCache<T>(path: string | RecordBackend, fn: (cache: ReplayCache) => Promise<T>, opts?: ReplayCacheOptions): Promise<T> {
  // Before the cache opens: a record run would otherwise make the tape for a call that cannot run.
  if (typeof fn !== 'function') throw new TapedeckError('E_ARG', `withReplayCache takes the function to run as its second argument; got ${describeArgument(fn)}.`, { hint: "withReplayCache('qa.tape', async (cache) => { ... }, { mode: 'record' })" });
  const cache = await ReplayCache.open(path, opts);
  let result: T;
  try {
    result = await store.run(cache, () => fn(cache));
  } catch (e) {
    await cache.close({ prune: false }).catch(() => {});
    throw e;
  }
  await cache.close();
  return result;
}

/**
 * The marks (src/store/cache-usage-mark.ts) of the recordings a cache used: served, kept as an
 * unchanged re-record, or appended; and in record mode the old recordings of requests it was
 * asked for whose new answer was never stored (they stay on the tape, so they are not stale).
 * The run summary judges the cache tape's other recordings unused by this list, as it does a
 * fetch tape's by trace tokens. Read it after close(): appends still in flight are then counted.
 * Internal to src/testing (not exported from the package).
 *
 * @example
 * await cache.close();
 * writeTapeReport(runDir, { ...report, tape: cache.path, used: usedCacheMarks(cache) })
 */
export function usedCacheMarks(cache: ReplayCache): string[] {
  const col = collections.get(cache);
  if (!col) return [];
  const marks = new Set<string>();
  const add = (mark: string | undefined) => {
    if (mark !== undefined) marks.add(mark);
  };
  for (let i = 0; i < col.indexes; i++) {
    if (!col.loadedUsed(i)) continue;
    // Served and loaded ones carry their stored head; a recording appended this run has only
    // its value (already decoded: it is the record put).
    const head = col.loadedHead(i, CACHE_MARK_FIELDS);
    add(cacheUsageMark(head.key !== undefined ? head : (col.loadedValue(i) ?? {})));
  }
  for (const r of col.keptAsked()) add(cacheUsageMark(r.head(CACHE_MARK_FIELDS, true)));
  return [...marks];
}

/** The cache of the innermost enclosing withReplayCache scope, if any. */
export function activeReplayCache(): ReplayCache | undefined {
  return store.getStore();
}
