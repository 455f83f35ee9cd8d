/**
 * ReplayCache: a DSPy-style record/replay cache, on a tape. A test (or a wrapped LLM client) asks
 * the cache before calling the live API and hands it every live answer:
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
 * Modes (src/store/mode.ts): `replay` serves recordings and never writes; `record` serves
 * nothing, records everything, and at close keeps only what this run recorded; `update` serves
 * what the tape has and records what is missing; `passthrough` neither reads nor writes.
 *
 * Records are `{ v: 1, key, recordedAt, durationMs?, ignored?, signature, hashes, request, value,
 * raw?, meta? }` (docs/tape-format.md), keyed by the matcher's request key (src/match/matcher.ts),
 * so two requests that normalize alike share recordings. A request made k times is answered by
 * the k-th recording of its key, in recorded order. Requests, values and metadata pass through
 * the redactor (src/store/redact.ts) before they are written, unless `redact.keepSecrets`.
 *
 * Opening does not decode records: the tape is read and checked frame by frame (CRC), each
 * record's key is read from its first bytes (writers put the scalar fields first), and a record
 * is decoded the first time it is served. A 100,000-record tape opens in about a tenth of a second.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { explainMiss } from '../match/diagnose.ts';
import { requestKeys, type RequestKeys, type Signature } from '../match/matcher.ts';
import { KEY_SPEC_VERSION } from '../match/normalize.ts';
import { keyIsCurrent, rekey, rekeyWarning } from '../match/rekey.ts';
import { resolveModeWithSource, type TapeMode, type TapeModeSource } from './mode.ts';
import { sortedKeys } from './record-order.ts';
import { redactor, type RedactOptions, type Redactor } from './redact.ts';
import { appendRecords, createTape, decodeFrame, FRAME_HEADER_SIZE, peekFrame, readTape, rewriteTape, scanTape, type TapeLockOptions, type TapeWarning } from './tape-file.ts';

// `await using` needs Symbol.asyncDispose. Node 20.20 has it; older runtimes get the registered
// symbol the TypeScript and esbuild helpers fall back to, so the two agree.
if (typeof (Symbol as { asyncDispose?: symbol }).asyncDispose !== 'symbol') {
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('Symbol.asyncDispose'), configurable: false, writable: false });
}

/**
 * One ReplayCache record as stored on the tape, fields in this order (the scalar ones first, so
 * an index reads them without decoding the record). Records written by older versions may lack
 * the optional fields and `hashes`.
 */
export interface ReplayRecord {
  v: 1;
  /** The request key (requestKeys(request, { ignoreArgs }).key) under the put's ignoredArgs. */
  key: string;
  /** The request key spec version of `key`; absent in records written before version 2. */
  keyVersion?: number;
  /** ISO 8601 time of the put. */
  recordedAt: string;
  /** How long the live call took, when the caller said (put option `durationMs`). */
  durationMs?: number;
  /** The ignoredArgs the key was computed with, as a JSON array of sorted names; absent when none. */
  ignored?: string;
  signature: Signature;
  /** Message hashes and cumulative path hashes, 32 bytes each, concatenated (hash spec). */
  hashes?: { messages: Uint8Array; paths: Uint8Array };
  /** The request as given to put, redacted. */
  request: unknown;
  /** The value as given to put, redacted. */
  value: unknown;
  /** The response exactly as it came off the wire, when byte-exact replay matters. */
  raw?: { body: Uint8Array; contentType?: string };
  /** The caller's own metadata (put option `meta`), redacted. */
  meta?: Record<string, unknown>;
}

/** Per-call options of put (an array is shorthand for `{ ignoredArgs }`). */
export interface ReplayPutOptions {
  ignoredArgs?: readonly string[];
  /** How long the live call took, in milliseconds. */
  durationMs?: number;
  /** The exact response bytes (and content type) for byte-exact replay. */
  raw?: { body: Uint8Array | string; contentType?: string };
  /** Anything worth keeping with the record: test name, run id, cost. */
  meta?: Record<string, unknown>;
}

export interface ReplayCacheOptions {
  /** 'replay' | 'record' | 'update' | 'passthrough'; default from TAPEDECK_MODE, CACHE_MODE, else 'replay'. */
  mode?: TapeMode | (string & {});
  /** Request arguments left out of the key (DSPy-style ignored_args_for_cache_key); per-call values replace it. */
  ignoredArgs?: readonly string[];
  /** Record mode: keep every record at close instead of only this run's (default false). */
  keepAll?: boolean;
  /** The command shown in E_MISS messages (default `TAPEDECK_MODE=record <your test command>`). */
  recordCommand?: string;
  /** Lock timing for appends and the close-time prune. */
  lock?: TapeLockOptions;
  /**
   * Secret redaction before anything is written (src/store/redact.ts): more header and field
   * names to mask, or `{ keepSecrets: true }` to store secrets as given (never for shared tapes).
   */
  redact?: RedactOptions;
}

export interface ReplayCacheCloseOptions {
  /** Record mode: prune records not recorded in this run (default true; ignored with keepAll). */
  prune?: boolean;
}

/**
 * One recording: on the tape (decoded the first time it is needed) or put in this run. `bad`
 * marks a record that turned out not to be a ReplayCache record or not to decode; it is skipped.
 */
interface Entry {
  /** The key it is filed under (on the tape: its stored key); '' while it is only bytes at keyAt. */
  key: string;
  keyAt?: number;
  frame?: { offset: number; length: number };
  record?: Partial<ReplayRecord> & { request: unknown; value: unknown };
  recordedAt?: unknown;
  bad?: boolean;
}

/**
 * Recordings of one request key, in recorded order, and how many were served so far. Most keys
 * have one recording, so the first is a field and only further ones get an array: a tape opens
 * with one allocation less per record.
 */
class Slot {
  served = 0;
  private rest: Entry[] | undefined;
  /** Next slot whose key shares this one's index prefix. */
  next: Slot | undefined;
  constructor(
    /** The key, or undefined while it is only known as 64 hex bytes at `keyAt` in the tape image. */
    public key: string | undefined,
    readonly keyAt: number,
    private readonly first: Entry,
  ) {}
  get length(): number {
    return this.rest ? this.rest.length + 1 : 1;
  }
  at(i: number): Entry | undefined {
    return i === 0 ? this.first : this.rest?.[i - 1];
  }
  push(e: Entry): void {
    (this.rest ??= []).push(e);
  }
}

const HEX_KEY = /^[0-9a-f]{64}$/;

function hexVal(c: number): number {
  return c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
}

/**
 * Slots by request key. Keys are 64-hex SHA-256 digests, so the first 7 hex digits (28 bits, a
 * small integer V8 hashes for free) spread them evenly; slots sharing a prefix are chained and
 * compared in full. Keys read from a tape stay bytes in the tape image until a lookup needs to
 * compare them, so opening a tape creates no key strings at all.
 */
class KeyIndex {
  private readonly byPrefix = new Map<number, Slot>();
  /** Keys that are not 64 lowercase hex digits (hand-written records). */
  private readonly other = new Map<string, Slot>();
  size = 0;
  constructor(private readonly bytes: Buffer | undefined) {}

  private keyEquals(slot: Slot, key: string): boolean {
    if (slot.key !== undefined) return slot.key === key;
    const b = this.bytes!;
    for (let i = 0; i < 64; i++) if (b[slot.keyAt + i] !== key.charCodeAt(i)) return false;
    slot.key = key; // it matched: keep the string, later compares are one ===
    return true;
  }

  get(key: string): Slot | undefined {
    if (!HEX_KEY.test(key)) return this.other.get(key);
    for (let s = this.byPrefix.get(parseInt(key.slice(0, 7), 16)); s; s = s.next) if (this.keyEquals(s, key)) return s;
    return undefined;
  }

  /** Files an entry under a key given as a string. */
  add(key: string, e: Entry): Slot {
    const s = this.get(key);
    if (s) {
      s.push(e);
      return s;
    }
    const created = new Slot(key, -1, e);
    this.size++;
    if (!HEX_KEY.test(key)) {
      this.other.set(key, created);
      return created;
    }
    const prefix = parseInt(key.slice(0, 7), 16);
    created.next = this.byPrefix.get(prefix);
    this.byPrefix.set(prefix, created);
    return created;
  }

  /**
   * Files an entry under the 64 hex bytes at `at` in the tape image; false if they are not
   * lowercase hex (the caller then decodes the key as a string).
   */
  addBytes(at: number, e: Entry): boolean {
    const b = this.bytes!;
    let prefix = 0;
    for (let i = 0; i < 64; i++) {
      const v = hexVal(b[at + i]!);
      if (v < 0) return false;
      if (i < 7) prefix = prefix * 16 + v;
    }
    for (let s = this.byPrefix.get(prefix); s; s = s.next) {
      const key = s.key;
      const other = s.keyAt;
      let same = true;
      for (let i = 0; i < 64 && same; i++) same = b[at + i] === (key !== undefined ? key.charCodeAt(i) : b[other + i]);
      if (same) {
        s.push(e);
        return true;
      }
    }
    const created = new Slot(undefined, at, e);
    created.next = this.byPrefix.get(prefix);
    this.byPrefix.set(prefix, created);
    this.size++;
    return true;
  }

  *slots(): IterableIterator<Slot> {
    for (let s of this.byPrefix.values()) for (; s; s = s.next!) yield s;
    yield* this.other.values();
  }
}

/**
 * Where the 64-byte hex key of a record written as `{ v: 1, key: <64 hex>, ... }` starts in
 * the tape image, or -1 for any other layout (then the generic peek reads it). This is the
 * layout ReplayCache has always written, checked byte by byte.
 */
function fastKeyAt(b: Buffer, frame: { offset: number; length: number }): number {
  const p = frame.offset + FRAME_HEADER_SIZE;
  if (frame.length < FRAME_HEADER_SIZE + 86) return -1;
  const m = b[p]!;
  return m >= 0x82 && m <= 0x8f &&
    b[p + 1] === 0xa1 && b[p + 2] === 0x76 && b[p + 3] === 0x01 && // "v": 1
    b[p + 4] === 0xa3 && b[p + 5] === 0x6b && b[p + 6] === 0x65 && b[p + 7] === 0x79 && // "key"
    b[p + 8] === 0xd9 && b[p + 9] === 64 && // str8 of 64 bytes
    // "keyVersion": the current one; an older key is recomputed on the slow path.
    b[p + 74] === 0xaa && b.toString('latin1', p + 75, p + 85) === 'keyVersion' && b[p + 85] === KEY_SPEC_VERSION
    ? p + 10
    : -1;
}

/** The canonical form of an ignoredArgs list stored in records: sorted JSON, '' for none. */
const ignoredText = (args: readonly string[] | undefined): string => (args && args.length > 0 ? JSON.stringify([...new Set(args)].sort()) : '');

const hexBytes = (hashes: readonly string[]): Uint8Array => Buffer.from(hashes.join(''), 'hex');

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

/** A ReplayCache record: anything else on the tape (other tools' records) is left alone. */
function isCacheRecord(v: unknown): v is Partial<ReplayRecord> & { request: unknown; value: unknown } {
  return isObject(v) && 'request' in v && 'value' in v && !(typeof v.v === 'number' && v.v > 1);
}

const identity = (key: string, recordedAt: unknown) => `${key}\u0000${typeof recordedAt === 'string' ? recordedAt : ''}`;

function modelOf(keys: RequestKeys | undefined, request: unknown): string {
  const m = keys?.view.model ?? (isObject(request) ? request.model : undefined);
  return typeof m === 'string' ? m : 'unknown';
}

/**
 * A record in the layout of docs/tape-format.md (field order included: scalars first). `value`
 * must already be redacted and key-sorted (put compares it with old recordings first); the
 * request and metadata are redacted here. Shared by ReplayCache.put and the importers.
 *
 * @example
 * const rec = buildRecord(requestKeys(req), req, sortedKeys(answer), {}, redactor(), new Date().toISOString());
 */
export function buildRecord(keys: RequestKeys, request: unknown, storedValue: unknown, opts: ReplayPutOptions, r: Redactor, recordedAt: string): ReplayRecord {
  const record = { v: 1, key: keys.key, keyVersion: KEY_SPEC_VERSION, recordedAt } as ReplayRecord;
  if (opts.durationMs !== undefined) {
    if (typeof opts.durationMs !== 'number' || !(opts.durationMs >= 0)) {
      throw new TapedeckError('E_ARG', `put: durationMs must be a non-negative number, got ${String(opts.durationMs)}.`, { hint: 'Pass the elapsed milliseconds of the live call.' });
    }
    record.durationMs = opts.durationMs;
  }
  const ignored = ignoredText(opts.ignoredArgs);
  if (ignored !== '') record.ignored = ignored;
  record.signature = sortedKeys(keys.signature);
  record.hashes = { messages: hexBytes(keys.messageHashes), paths: hexBytes(keys.pathHashes) };
  record.request = sortedKeys(r.value(request));
  record.value = storedValue;
  if (opts.raw !== undefined) {
    const body = opts.raw.body;
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new TapedeckError('E_ARG', 'put: raw.body must be a Uint8Array or a string.', { hint: 'Pass the response bytes exactly as received.' });
    }
    record.raw = { body: typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
    if (opts.raw.contentType !== undefined) record.raw.contentType = String(opts.raw.contentType);
  }
  if (opts.meta !== undefined) record.meta = sortedKeys(r.value(opts.meta));
  return record;
}

const store = new AsyncLocalStorage<ReplayCache>();

export class ReplayCache {
  readonly path: string;
  readonly mode: TapeMode;
  /** Where the mode came from: the option, TAPEDECK_MODE, CACHE_MODE or the default. */
  readonly modeSource: TapeModeSource;
  /** Damage found when the tape was read (torn tail, corrupt records, unkeyable records). */
  readonly warnings: TapeWarning[];

  private readonly ignoredArgs: readonly string[] | undefined;
  private readonly keepAll: boolean;
  private readonly recordCommand: string;
  private readonly lock: TapeLockOptions;
  private readonly redactor: Redactor;
  /** False in replay when the tape file does not exist. */
  private readonly tapeExists: boolean;
  /** The tape as read at open; records are decoded from it on demand. */
  private bytes: Buffer | undefined;
  private slots: KeyIndex = new KeyIndex(undefined);
  /** Records on the tape when it was opened, in file order. */
  private readonly loaded: Entry[] = [];
  private readonly putKeys = new Set<string>();
  /** Record mode: puts per key so far, and old records kept because a put re-recorded them unchanged. */
  private readonly recordPuts = new Map<string, number>();
  private readonly reused = new Map<string, number>();
  /** Records on the tape when it was opened, per key, in file order (record mode, built on first use). */
  private loadedByKey: Map<string, Entry[]> | undefined;
  private readonly gotKeys = new Set<string>();
  /** Puts waiting for the next append; one append (one lock, one fsync) writes them all. */
  private batch: { record: ReplayRecord; done: (e?: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private warnedReplayPut = false;

  private constructor(path: string, mode: { mode: TapeMode; source: TapeModeSource }, opts: ReplayCacheOptions, exists: boolean, warnings: TapeWarning[]) {
    this.path = path;
    this.mode = mode.mode;
    this.modeSource = mode.source;
    this.ignoredArgs = opts.ignoredArgs;
    this.keepAll = opts.keepAll === true;
    this.recordCommand = opts.recordCommand ?? 'TAPEDECK_MODE=record <your test command>';
    this.lock = opts.lock ?? {};
    this.redactor = redactor(opts.redact);
    this.tapeExists = exists;
    this.warnings = warnings;
  }

  /**
   * Opens the tape at `path`. In record and update mode a missing tape (and its directory) is
   * created; in replay a missing tape is not an error, but every get is then a miss; passthrough
   * does not touch the file at all. Records are indexed by their stored `key` without being
   * decoded or re-hashed; older records without one get it computed with `ignoredArgs`. A
   * record keyed under other ignoredArgs than this cache's (non-empty) `ignoredArgs` is found
   * under both keys, so changing the option never strands recordings.
   *
   * @example
   * const cache = await ReplayCache.open('test/fixtures/qa.tape', { mode: 'update' });
   */
  static async open(path: string, opts: ReplayCacheOptions = {}): Promise<ReplayCache> {
    if (typeof path !== 'string' || path === '') {
      throw new TapedeckError('E_ARG', 'ReplayCache.open needs a tape path.', { hint: "e.g. ReplayCache.open('test/fixtures/qa.tape')" });
    }
    const mode = resolveModeWithSource(opts.mode);
    if (mode.mode === 'passthrough') return new ReplayCache(path, mode, opts, false, []);
    if (mode.mode === 'record' || mode.mode === 'update') {
      await mkdir(dirname(path), { recursive: true });
      try {
        await createTape(path);
      } catch (e) {
        // Another worker may have created it first: then we simply share it.
        if (!(e instanceof TapedeckError && e.code === 'E_TAPE_EXISTS')) throw e;
      }
    }
    let scan: Awaited<ReturnType<typeof scanTape>>;
    try {
      scan = await scanTape(path);
    } catch (e) {
      if (mode.mode === 'replay' && e instanceof TapedeckError && e.code === 'E_TAPE_NOT_FOUND') return new ReplayCache(path, mode, opts, false, []);
      throw e;
    }
    const cache = new ReplayCache(path, mode, opts, true, [...scan.warnings]);
    cache.bytes = scan.bytes;
    cache.slots = new KeyIndex(scan.bytes);
    const wantIgnored = ignoredText(opts.ignoredArgs);
    let staleKeys = 0;
    for (const frame of scan.frames) {
      if (wantIgnored === '') {
        // The common case: index the record by its key bytes without decoding anything.
        const at = fastKeyAt(scan.bytes, frame);
        if (at >= 0) {
          const entry: Entry = { key: '', keyAt: at, frame };
          if (cache.slots.addBytes(at, entry)) {
            cache.loaded.push(entry);
            continue;
          }
        }
      }
      const head = peekFrame(scan.bytes, frame);
      // A newer record version, or another tool's record kind, is not ours to serve.
      if ((typeof head.v === 'number' && head.v > 1) || head.kind !== undefined) continue;
      let key = typeof head.key === 'string' ? head.key : undefined;
      const entry: Entry = { key: key ?? '', frame, recordedAt: head.recordedAt };
      // A key from an older spec version is recomputed from the stored request, and only the
      // new key files the record (the old one may lump shapes the new one separates).
      const stale = key !== undefined && !keyIsCurrent(head.keyVersion);
      if (key === undefined || stale || (wantIgnored !== '' && (head.ignored ?? '') !== wantIgnored)) {
        const record = cache.materialize(entry);
        if (!record) continue;
        let rekeyed: string;
        try {
          const keys = rekey(record.request, head.keyVersion ?? undefined, { ignoreArgs: opts.ignoredArgs });
          if (!keys) throw new TapedeckError('E_REQUEST', 'the stored request is no LLM request shape');
          rekeyed = keys.key;
        } catch (e) {
          if (!(e instanceof TapedeckError)) throw e;
          if (key === undefined) {
            cache.warnings.push({ code: e.code, offset: frame.offset, message: `${path}: record at byte ${frame.offset} has no usable request and is not replayed (${e.message}).` });
            continue;
          }
          rekeyed = key;
        }
        if (stale) {
          staleKeys++;
          key = rekeyed;
        } else if (key !== undefined && rekeyed !== key) cache.slots.add(rekeyed, entry);
        key ??= rekeyed;
        entry.key = key;
      }
      cache.slots.add(key, entry);
      cache.loaded.push(entry);
    }
    if (cache.warnings.length > 0) {
      process.emitWarning(`${path}: ${cache.warnings.length} problem(s) reading the tape; the first: ${cache.warnings[0]!.message}`, { code: 'TAPEDECK_TAPE' });
    }
    if (staleKeys > 0) process.emitWarning(rekeyWarning(path, staleKeys), { code: 'TAPEDECK_REKEY' });
    return cache;
  }

  /** Number of recordings this cache can serve or has recorded. */
  get size(): number {
    let n = 0;
    for (const s of this.slots.slots()) n += s.length;
    return n;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** An entry's key as a string (read from the tape image the first time). */
  private keyOf(e: Entry): string {
    if (e.key === '' && e.keyAt !== undefined) e.key = this.bytes!.toString('latin1', e.keyAt, e.keyAt + 64);
    return e.key;
  }

  /** The entry's record, decoding it from the tape the first time; undefined if it is not one. */
  private materialize(e: Entry): Entry['record'] {
    if (e.record || e.bad) return e.record;
    let v: unknown;
    try {
      v = decodeFrame(this.bytes!, e.frame!, this.path);
    } catch (err) {
      if (!(err instanceof TapedeckError)) throw err;
      this.warnings.push({ code: err.code, offset: e.frame!.offset, message: err.message });
      process.emitWarning(err.message, { code: 'TAPEDECK_TAPE' });
      e.bad = true;
      return undefined;
    }
    if (!isCacheRecord(v)) {
      e.bad = true;
      return undefined;
    }
    e.record = v;
    e.recordedAt = v.recordedAt;
    return v;
  }

  private keysOf(request: unknown, ignoredArgs: readonly string[] | undefined): RequestKeys {
    return requestKeys(request, { ignoreArgs: ignoredArgs ?? this.ignoredArgs });
  }

  private assertOpen(op: string): void {
    if (this.closing) {
      throw new TapedeckError('E_CLOSED', `ReplayCache for ${this.path} is closed; ${op} is not possible any more.`, {
        file: this.path,
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
   * @example
   * const answer = (await cache.get(request)) ?? (await callAndPut(request));
   */
  async get(request: unknown, ignoredArgs?: readonly string[]): Promise<unknown> {
    return (await this.getRecord(request, ignoredArgs))?.value;
  }

  /**
   * Like {@link get}, but the whole record: value, raw response bytes and content type, duration,
   * metadata, hashes and the time it was recorded. Consumes the recording just as get does.
   *
   * @example
   * const rec = await cache.getRecord(request); if (rec?.raw) res.end(rec.raw.body)
   */
  async getRecord(request: unknown, ignoredArgs?: readonly string[]): Promise<ReplayRecord | undefined> {
    this.assertOpen('get');
    if (this.mode === 'passthrough') return undefined;
    const keys = this.keysOf(request, ignoredArgs);
    if (this.mode === 'record') {
      this.gotKeys.add(keys.key);
      return undefined;
    }
    const s = this.slots.get(keys.key);
    while (s && s.served < s.length) {
      const record = this.materialize(s.at(s.served++)!);
      if (record) {
        this.gotKeys.add(keys.key);
        return record as ReplayRecord;
      }
    }
    if (this.mode === 'update') return undefined;
    throw await this.explained(this.miss(request, keys, s), keys);
  }

  /**
   * Records a value for a request: appends a record (see {@link ReplayRecord}) to the tape and
   * resolves once it is fsynced (a kill -9 right after loses nothing). Puts made while an append
   * is in flight go to disk together in the next one (one lock, one fsync), in call order. A
   * no-op in replay (which never writes) and passthrough. The third argument is the per-call
   * ignoredArgs, or options with raw bytes, duration and metadata.
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
    const opts: ReplayPutOptions = Array.isArray(options) ? { ignoredArgs: options as readonly string[] } : ((options ?? {}) as ReplayPutOptions);
    const ignoredArgs = opts.ignoredArgs ?? this.ignoredArgs;
    // Key first: a request that cannot be keyed fails here, before anything is written. The
    // key is computed from the request as given, then secrets are masked in what is stored.
    const keys = this.keysOf(request, ignoredArgs);
    const storedValue = sortedKeys(this.redactor.value(value));
    if (this.mode === 'record') {
      // Re-recording an interaction that came out the same keeps the old record, timestamp and
      // all, so a re-record of unchanged calls leaves the tape byte for byte as it was (no churn
      // in code review). The k-th put of a key is compared with the k-th recording of it.
      const k = this.recordPuts.get(keys.key) ?? 0;
      this.recordPuts.set(keys.key, k + 1);
      if (!this.loadedByKey) {
        this.loadedByKey = new Map();
        for (const e of this.loaded) {
          const k = this.keyOf(e);
          const list = this.loadedByKey.get(k);
          if (list) list.push(e);
          else this.loadedByKey.set(k, [e]);
        }
      }
      const oldEntry = this.loadedByKey.get(keys.key)?.[k];
      const old = oldEntry && this.materialize(oldEntry);
      if (old && isDeepStrictEqual(old.value, storedValue) && opts.raw === undefined) {
        const id = identity(keys.key, old.recordedAt);
        this.reused.set(id, (this.reused.get(id) ?? 0) + 1);
        this.putKeys.add(keys.key);
        return this.flushing?.then(() => undefined);
      }
    }
    const record = buildRecord(keys, request, storedValue, { ...opts, ignoredArgs }, this.redactor, new Date().toISOString());
    await new Promise<void>((done, fail) => {
      this.batch.push({ record, done: (e) => (e === undefined ? done() : fail(e)) });
      this.flushing ??= this.flush();
    });
    // A put that follows the misses of its key fills the next call's slot, so the next
    // identical request misses again (and is recorded) rather than replaying this one.
    const before = this.slots.get(keys.key);
    const fills = before === undefined || before.served === before.length;
    const s = this.slots.add(keys.key, { key: keys.key, record });
    if (fills) s.served++;
    this.putKeys.add(keys.key);
  }

  /** Writes queued puts, a batch per append, until the queue is empty. */
  private async flush(): Promise<void> {
    // Let puts issued in the same tick join the first batch.
    await Promise.resolve();
    while (this.batch.length > 0) {
      const batch = this.batch;
      this.batch = [];
      let err: unknown;
      try {
        await appendRecords(this.path, batch.map((b) => b.record), this.lock);
      } catch (e) {
        err = e ?? new Error('append failed');
      }
      for (const b of batch) b.done(err);
    }
    this.flushing = undefined;
  }

  /**
   * Adds the matcher's diagnostics to a replay miss: the closest recordings on the tape (longest
   * shared conversation prefix, then signature), where they diverge, tools added and removed,
   * recordings already used. Misses are rare and end the test, so re-reading the tape here
   * costs nothing that matters, and no memory is spent on it while things go well.
   */
  private async explained(base: TapedeckError, keys: RequestKeys): Promise<TapedeckError> {
    if (!this.tapeExists) return base;
    let records: { request: unknown; response: unknown; key: string }[];
    try {
      records = (await readTape(this.path)).records
        .map((r) => r.value)
        .filter(isCacheRecord)
        .map((v) => ({ request: v.request, response: v.value, key: typeof v.key === 'string' ? v.key : '' }));
    } catch {
      return base;
    }
    const norm = { ignoreArgs: this.ignoredArgs };
    const digests: RequestKeys[] = [];
    for (const r of records) {
      try {
        digests.push(requestKeys(r.request, norm));
      } catch {
        return base; // a record the matcher cannot read: keep the plain message
      }
    }
    const used = new Uint8Array(records.length);
    const seen = new Map<string, number>();
    records.forEach((r, i) => {
      const k = r.key || digests[i]!.key;
      const n = seen.get(k) ?? 0;
      seen.set(k, n + 1);
      if (n < (this.slots.get(k)?.served ?? 0)) used[i] = 1;
    });
    const detail = explainMiss({
      mode: 'exact',
      request: keys,
      recordings: records,
      keys: digests,
      full: (i) => digests[i]!,
      used,
      allowRepeats: false,
      source: this.path,
      recordCommand: this.recordCommand,
      hasKey: (k) => digests.some((d) => d.key === k),
      hasSignature: (d) => digests.some((x) => x.signatureDigest === d),
    });
    // The first line of the matcher's report repeats what `base` says; keep the rest. The hint
    // goes last again (TapedeckError appends it), after the diagnostics.
    const body = detail.message.split('\n').slice(1).join('\n');
    const head = base.hint ? base.message.slice(0, base.message.length - base.hint.length - 1) : base.message;
    return new TapedeckError('E_MISS', `${head}\n${body}`, { ...base.details, closest: detail.details.closest, fixes: detail.details.fixes });
  }

  private miss(request: unknown, keys: RequestKeys, s: Slot | undefined): TapedeckError {
    const model = modelOf(keys, request);
    const why = !this.tapeExists
      ? 'the tape does not exist'
      : s
        ? `this request was recorded ${s.length} time(s) and this is call ${s.length + 1}`
        : 'no recording has this request key';
    const fromOption = this.modeSource === 'option';
    const hint = fromOption
      ? `This cache was opened with { mode: 'replay' }, which the environment does not override: open it with { mode: 'record' } ` +
        `to re-record the tape, or { mode: 'update' } to record only what is missing.`
      : `To record it, run: ${this.recordCommand} (or TAPEDECK_MODE=update to record only what is missing), then commit ${this.path}.`;
    return new TapedeckError('E_MISS', `Replay miss in tape ${this.path}: ${why} (key ${keys.key}, model ${model}, provider ${keys.provider}).`, {
      file: this.path,
      key: keys.key,
      model,
      provider: keys.provider,
      signature: keys.signature,
      recorded: s?.length ?? 0,
      command: fromOption ? undefined : this.recordCommand,
      hint,
    });
  }

  /**
   * Waits for pending puts, then, in record mode, rewrites the tape keeping only this run's
   * records (the record-mode cleanup): the records put in this run, records another writer appended
   * meanwhile, records of other tools, and the old recordings of a request that was asked for
   * (get) but not re-recorded. Nothing is rewritten with `keepAll`, when nothing would be
   * dropped, or with `{ prune: false }`. Idempotent: later calls return the first call's promise.
   */
  close(opts: ReplayCacheCloseOptions = {}): Promise<void> {
    this.closing ??= this.finish(opts.prune !== false);
    return this.closing;
  }

  private async finish(prune: boolean): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.mode !== 'record' || this.keepAll || !prune || !this.tapeExists) return;
    // Old records to drop, by identity (key + recordedAt), counted: identities survive another
    // writer's rewrite (offsets do not), and counting keeps duplicates apart.
    const drop = new Map<string, number>();
    const reused = new Map(this.reused);
    for (const entry of this.loaded) {
      const key = this.keyOf(entry);
      if (this.gotKeys.has(key) && !this.putKeys.has(key)) continue;
      if (entry.recordedAt === undefined) this.materialize(entry);
      const id = identity(key, entry.recordedAt);
      const keep = reused.get(id) ?? 0;
      if (keep > 0) {
        reused.set(id, keep - 1);
        continue;
      }
      drop.set(id, (drop.get(id) ?? 0) + 1);
    }
    if (drop.size === 0) return;
    await rewriteTape(
      this.path,
      (entry) => {
        const v = entry.value;
        if (!isCacheRecord(v)) return true;
        let key = v.key;
        // Entries were filed under current-version keys (see open).
        if (typeof key !== 'string' || !keyIsCurrent(v.keyVersion)) {
          try {
            key = rekey(v.request, v.keyVersion, { ignoreArgs: this.ignoredArgs })?.key ?? key;
          } catch {
            // unkeyable: keep the stored key, as open did
          }
          if (typeof key !== 'string') return true;
        }
        const id = identity(key, v.recordedAt);
        const n = drop.get(id) ?? 0;
        if (n === 0) return true;
        drop.set(id, n - 1);
        return false;
      },
      this.lock,
    );
  }

  /** `await using cache = await ReplayCache.open(path)` closes (and in record mode prunes) on scope exit. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Runs `fn` with a cache open on `path` as the active cache ({@link activeReplayCache}) of its
 * async scope, then closes it. Scopes are per async call chain (AsyncLocalStorage): parallel
 * tests never see each other's cache. If `fn` fails, the cache is closed without pruning, so a
 * failed record run never deletes recordings it did not get to.
 *
 * @example
 * await withReplayCache('test/fixtures/qa.tape', async () => { await runQa() }) // runQa uses activeReplayCache()
 */
export async function withReplayCache<T>(path: string, fn: (cache: ReplayCache) => Promise<T>, opts?: ReplayCacheOptions): Promise<T> {
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

/** The cache of the innermost enclosing withReplayCache scope, if any. */
export function activeReplayCache(): ReplayCache | undefined {
  return store.getStore();
}
