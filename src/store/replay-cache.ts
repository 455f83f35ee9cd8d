/**
 * ReplayCache: seed 003's record/replay cache, on a tape. A test (or a wrapped LLM client) asks
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
 * Records are `{ v: 1, key, signature, request, value, recordedAt }`, keyed by the matcher's
 * request key (src/match/matcher.ts), so two requests that normalize alike share recordings.
 * A request made k times is answered by the k-th recording of its key, in recorded order.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { explainMiss } from '../match/diagnose.ts';
import { requestKeys, type RequestKeys, type Signature } from '../match/matcher.ts';
import { resolveModeWithSource, type TapeMode, type TapeModeSource } from './mode.ts';
import { appendRecords, createTape, readTape, rewriteTape, type TapeLockOptions, type TapeWarning } from './tape-file.ts';

// `await using` needs Symbol.asyncDispose. Node 20.20 has it; older runtimes get the registered
// symbol the TypeScript and esbuild helpers fall back to, so the two agree.
if (typeof (Symbol as { asyncDispose?: symbol }).asyncDispose !== 'symbol') {
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('Symbol.asyncDispose'), configurable: false, writable: false });
}

/** One ReplayCache record as stored on the tape. */
export interface ReplayRecord {
  v: 1;
  /** The request key (requestKeys(request, { ignoreArgs }).key) under the put's ignoredArgs. */
  key: string;
  signature: Signature;
  /** The request as given to put. */
  request: unknown;
  value: unknown;
  /** ISO 8601 time of the put. */
  recordedAt: string;
}

export interface ReplayCacheOptions {
  /** 'replay' | 'record' | 'update' | 'passthrough'; default from TAPEDECK_MODE, CACHE_MODE, else 'replay'. */
  mode?: TapeMode | (string & {});
  /** Request arguments left out of the key (seed 003's ignored_args_for_cache_key); per-call values replace it. */
  ignoredArgs?: readonly string[];
  /** Record mode: keep every record at close instead of only this run's (default false). */
  keepAll?: boolean;
  /** The command shown in E_MISS messages (default `TAPEDECK_MODE=record <your test command>`). */
  recordCommand?: string;
  /** Lock timing for appends and the close-time prune. */
  lock?: TapeLockOptions;
}

export interface ReplayCacheCloseOptions {
  /** Record mode: prune records not recorded in this run (default true; ignored with keepAll). */
  prune?: boolean;
}

/** Recordings of one request key, in recorded order, and how many were served so far. */
interface Slot {
  values: unknown[];
  served: number;
}

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

const store = new AsyncLocalStorage<ReplayCache>();

export class ReplayCache {
  readonly path: string;
  readonly mode: TapeMode;
  /** Where the mode came from: the option, TAPEDECK_MODE, CACHE_MODE or the default. */
  readonly modeSource: TapeModeSource;
  /** Damage found when the tape was read (torn tail, corrupt records, unkeyable records). */
  readonly warnings: readonly TapeWarning[];

  private readonly ignoredArgs: readonly string[] | undefined;
  private readonly keepAll: boolean;
  private readonly recordCommand: string;
  private readonly lock: TapeLockOptions;
  /** False in replay when the tape file does not exist. */
  private readonly tapeExists: boolean;
  private readonly slots = new Map<string, Slot>();
  /** Records on the tape when it was opened: [key, recordedAt] of each, in file order. */
  private readonly loaded: [string, unknown][];
  private readonly putKeys = new Set<string>();
  /** Record mode: puts per key so far, and old records kept because a put re-recorded them unchanged. */
  private readonly recordPuts = new Map<string, number>();
  private readonly reused = new Map<string, number>();
  /** Records on the tape when it was opened, per key, in file order (for unchanged re-recordings). */
  private readonly loadedByKey = new Map<string, { recordedAt: unknown; value: unknown }[]>();
  private readonly gotKeys = new Set<string>();
  /** Puts run one after another, so the tape's order is the order of the put calls. */
  private queue: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | undefined;
  private warnedReplayPut = false;

  private constructor(
    path: string,
    mode: { mode: TapeMode; source: TapeModeSource },
    opts: ReplayCacheOptions,
    tape: { exists: boolean; warnings: TapeWarning[]; loaded: [string, unknown][] },
  ) {
    this.path = path;
    this.mode = mode.mode;
    this.modeSource = mode.source;
    this.ignoredArgs = opts.ignoredArgs;
    this.keepAll = opts.keepAll === true;
    this.recordCommand = opts.recordCommand ?? 'TAPEDECK_MODE=record <your test command>';
    this.lock = opts.lock ?? {};
    this.tapeExists = tape.exists;
    this.warnings = tape.warnings;
    this.loaded = tape.loaded;
  }

  /**
   * Opens the tape at `path`. In record and update mode a missing tape (and its directory) is
   * created; in replay a missing tape is not an error, but every get is then a miss; passthrough
   * does not touch the file at all. Records that carry a `key` are indexed as they are (never
   * re-hashed); older records without one get it computed with `ignoredArgs`.
   *
   * @example
   * const cache = await ReplayCache.open('test/fixtures/qa.tape', { mode: 'update' });
   */
  static async open(path: string, opts: ReplayCacheOptions = {}): Promise<ReplayCache> {
    if (typeof path !== 'string' || path === '') {
      throw new TapedeckError('E_ARG', 'ReplayCache.open needs a tape path.', { hint: "e.g. ReplayCache.open('test/fixtures/qa.tape')" });
    }
    const mode = resolveModeWithSource(opts.mode);
    const warnings: TapeWarning[] = [];
    const loaded: [string, unknown][] = [];
    const pending: { key: string; value: unknown }[] = [];
    let exists = true;
    if (mode.mode === 'passthrough') {
      exists = false;
    } else {
      if (mode.mode === 'record' || mode.mode === 'update') {
        await mkdir(dirname(path), { recursive: true });
        try {
          await createTape(path);
        } catch (e) {
          // Another worker may have created it first: then we simply share it.
          if (!(e instanceof TapedeckError && e.code === 'E_TAPE_EXISTS')) throw e;
        }
      }
      let contents: Awaited<ReturnType<typeof readTape>> | undefined;
      try {
        contents = await readTape(path);
      } catch (e) {
        if (!(mode.mode === 'replay' && e instanceof TapedeckError && e.code === 'E_TAPE_NOT_FOUND')) throw e;
        exists = false;
      }
      if (contents) {
        warnings.push(...contents.warnings);
        for (const r of contents.records) {
          const v = r.value;
          if (!isCacheRecord(v)) continue;
          let key = v.key;
          if (typeof key !== 'string') {
            try {
              key = requestKeys(v.request, { ignoreArgs: opts.ignoredArgs }).key;
            } catch (e) {
              if (!(e instanceof TapedeckError)) throw e;
              warnings.push({ code: e.code, offset: r.offset, message: `${path}: record at byte ${r.offset} has no usable request and is not replayed (${e.message}).` });
              continue;
            }
          }
          loaded.push([key, v.recordedAt]);
          pending.push({ key, value: v.value });
        }
      }
    }
    const cache = new ReplayCache(path, mode, opts, { exists, warnings, loaded });
    pending.forEach(({ key, value }, i) => {
      cache.slot(key).values.push(value);
      let list = cache.loadedByKey.get(key);
      if (!list) cache.loadedByKey.set(key, (list = []));
      list.push({ recordedAt: loaded[i]![1], value });
    });
    if (warnings.length > 0) {
      process.emitWarning(`${path}: ${warnings.length} problem(s) reading the tape; the first: ${warnings[0]!.message}`, { code: 'TAPEDECK_TAPE' });
    }
    return cache;
  }

  /** Number of recordings this cache can serve or has recorded. */
  get size(): number {
    let n = 0;
    for (const s of this.slots.values()) n += s.values.length;
    return n;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  private slot(key: string): Slot {
    let s = this.slots.get(key);
    if (!s) this.slots.set(key, (s = { values: [], served: 0 }));
    return s;
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
   */
  async get(request: unknown, ignoredArgs?: readonly string[]): Promise<unknown> {
    this.assertOpen('get');
    if (this.mode === 'passthrough') return undefined;
    const keys = this.keysOf(request, ignoredArgs);
    if (this.mode === 'record') {
      this.gotKeys.add(keys.key);
      return undefined;
    }
    const s = this.slots.get(keys.key);
    if (s && s.served < s.values.length) {
      this.gotKeys.add(keys.key);
      return s.values[s.served++];
    }
    if (this.mode === 'update') return undefined;
    throw await this.explained(this.miss(request, keys, s), keys);
  }

  /**
   * Records a value for a request: appends `{ v: 1, key, signature, request, value, recordedAt }`
   * to the tape and resolves once it is fsynced (a kill -9 right after loses nothing). A no-op in
   * replay (which never writes) and passthrough.
   */
  async put(request: unknown, value: unknown, ignoredArgs?: readonly string[]): Promise<void> {
    this.assertOpen('put');
    if (this.mode === 'passthrough') return;
    if (this.mode === 'replay') {
      if (!this.warnedReplayPut) {
        this.warnedReplayPut = true;
        process.emitWarning(`ReplayCache for ${this.path} is in replay mode: put() records nothing.`, { code: 'TAPEDECK_REPLAY_PUT' });
      }
      return;
    }
    // Key first: a request that cannot be keyed fails here, before anything is written.
    const keys = this.keysOf(request, ignoredArgs);
    if (this.mode === 'record') {
      // Re-recording an interaction that came out the same keeps the old record, timestamp and
      // all, so a re-record of unchanged calls leaves the tape byte for byte as it was (no churn
      // in code review). The k-th put of a key is compared with the k-th recording of it.
      const k = this.recordPuts.get(keys.key) ?? 0;
      this.recordPuts.set(keys.key, k + 1);
      const old = this.loadedByKey.get(keys.key)?.[k];
      if (old !== undefined && isDeepStrictEqual(old.value, value)) {
        const id = identity(keys.key, old.recordedAt);
        this.reused.set(id, (this.reused.get(id) ?? 0) + 1);
        this.putKeys.add(keys.key);
        return this.queue.then(() => undefined);
      }
    }
    const record: ReplayRecord = {
      v: 1,
      key: keys.key,
      signature: keys.signature,
      request,
      value,
      recordedAt: new Date().toISOString(),
    };
    const op = this.queue.then(async () => {
      await appendRecords(this.path, [record], this.lock);
      const s = this.slot(keys.key);
      // A put that follows the misses of its key fills the next call's slot, so the next
      // identical request misses again (and is recorded) rather than replaying this one.
      const fills = s.served === s.values.length;
      s.values.push(value);
      if (fills) s.served++;
      this.putKeys.add(keys.key);
    });
    this.queue = op.catch(() => {});
    return op;
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
        ? `this request was recorded ${s.values.length} time(s) and this is call ${s.values.length + 1}`
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
      recorded: s?.values.length ?? 0,
      command: fromOption ? undefined : this.recordCommand,
      hint,
    });
  }

  /**
   * Waits for pending puts, then, in record mode, rewrites the tape keeping only this run's
   * records (seed 003's cleanup): the records put in this run, records another writer appended
   * meanwhile, records of other tools, and the old recordings of a request that was asked for
   * (get) but not re-recorded. Nothing is rewritten with `keepAll`, when nothing would be
   * dropped, or with `{ prune: false }`. Idempotent: later calls return the first call's promise.
   */
  close(opts: ReplayCacheCloseOptions = {}): Promise<void> {
    this.closing ??= this.finish(opts.prune !== false);
    return this.closing;
  }

  private async finish(prune: boolean): Promise<void> {
    await this.queue;
    if (this.mode !== 'record' || this.keepAll || !prune || !this.tapeExists) return;
    // Old records to drop, by identity (key + recordedAt), counted: identities survive another
    // writer's rewrite (offsets do not), and counting keeps duplicates apart.
    const drop = new Map<string, number>();
    const reused = new Map(this.reused);
    for (const [key, recordedAt] of this.loaded) {
      if (this.gotKeys.has(key) && !this.putKeys.has(key)) continue;
      const id = identity(key, recordedAt);
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
        if (typeof key !== 'string') {
          try {
            key = requestKeys(v.request, { ignoreArgs: this.ignoredArgs }).key;
          } catch {
            return true;
          }
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
