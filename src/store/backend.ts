/**
 * Where recordings live. A backend stores an ordered list of records (plain data: objects,
 * arrays, strings, numbers, booleans, null, bigint, Date, Map, Set, Uint8Array) and knows nothing
 * of keys, modes or matching: that is the collection's job (src/store/collection.ts), written
 * once for every backend. A backend is done when the conformance suite
 * (test/store/conformance.test.ts) passes on it.
 *
 * Four operations, all async so a network store fits as well as a file:
 * - `load`    every record, in order, plus damage the backend survived;
 * - `append`  add records at the end, atomically with respect to other writers, resolving only
 *             once they are durable (a crash after it resolves loses none of them);
 * - `rewrite` atomically remove records chosen from the CURRENT contents (other writers' records
 *             included), never a record appended after the choice was made;
 * - `close`   release what `load` opened.
 *
 * Rules every backend keeps (the conformance suite checks them):
 * 1. A record appended by any writer is never lost by another writer's append or rewrite.
 * 2. Damage costs only the damaged records: `load` returns every intact record and reports
 *    the rest as warnings, never throws past an unreadable header.
 * 3. Records come back in append order, and equal to what was appended (as plain data).
 * 4. Secrets are masked before a record reaches the backend (src/store/redact.ts): a backend
 *    never sees a byte the user did not agree to store.
 *
 * @example
 * // The smallest backend: memory (src/store/backends/memory.ts).
 * const backend = new MemoryBackend();
 * await backend.append([{ v: 1, key: 'k', value: 1 }], { durable: true });
 * const { records } = await backend.load({ create: false });
 * records[0].value(); // { v: 1, key: 'k', value: 1 }
 */

/** A scalar field read from the start of a record without decoding the rest. */
export type HeadScalar = string | number | boolean | null;

/** Damage a backend survived while loading, or a record it could not use. */
export interface StoreWarning {
  /** E_TAPE_TORN_TAIL, E_TAPE_CORRUPT, ... */
  code: string;
  /** Where: a byte offset in a file, an index in a list. */
  offset: number;
  message: string;
  /**
   * For a lost record, whose it was when the backend knows it without reading the damaged bytes
   * (Redis files each record under its kind and key): the record's `kind` (`cache` when it has
   * none) and `key` fields.
   */
  record?: { kind: string; key: string };
}

/**
 * One stored record as loaded. Decoding is lazy so a backend that holds encoded bytes can open a
 * large store without decoding anything: `head()` is enough to index a record.
 */
export interface LoadedRecord {
  /** Where the record is, for messages: a byte offset in a file, an index in a list. */
  readonly at: number;
  /**
   * The record's leading scalar fields (`v`, `kind`, `key`, `recordedAt`, ...: every field before
   * the first object or array value, in the field order of src/store/records.ts). A backend that
   * cannot peek returns the scalar fields of the decoded value. With `fields`, only those are
   * needed (a backend may return more): a tape then reads no other name or value. With `deep`,
   * scalar fields after the first container are read too (containers are stepped over); a
   * number: only that many of `fields` (the first ones) are looked for there.
   */
  head(fields?: readonly string[], deep?: boolean | number): Readonly<Record<string, HeadScalar>>;
  /** The decoded record. Throws TapedeckError E_TAPE_CORRUPT if its stored form does not decode. */
  value(): unknown;
  /**
   * One top-level member of the record, decoded without the others (undefined: it has none),
   * where the backend can; else absent, and value() gives it. Throws as value() does.
   */
  member?(name: string): unknown;
  /**
   * The JSON text (UTF-8) of the value at `path` (member names of nested maps), made from the
   * stored bytes without decoding the record, where the backend can; undefined where it cannot
   * say or the value is not plain JSON data: then member() or value() gives it. Throws as
   * value() does.
   */
  json?(path: readonly string[]): Uint8Array | undefined;
  /**
   * A stable identity of this stored record: unchanged by other writers' appends and rewrites,
   * equal for two records only if their stored content is equal. The collection uses it to
   * remove exactly the records it loaded, after someone else may have rewritten the store.
   */
  id(): string;
  /**
   * For a record with a time to live (Redis TTL): when it expires, on this process's clock. The
   * collection stops serving it then, though it was loaded before.
   */
  readonly expiresAt?: number;
}

/**
 * What RecordBackend.load returns: the records (or a table of them), whether the store exists, and
 * the damage it survived.
 */
export interface LoadResult {
  /** False when the store does not exist and `create` was false. */
  exists: boolean;
  records: LoadedRecord[];
  warnings: StoreWarning[];
  /**
   * The same records by index, made when asked for, where a backend can: the collection then
   * keeps an index per record instead of an object (100,000 objects made at open cost ~20 ms
   * here, and the collector copies them). A backend sets it not enumerable, so that a wrapper
   * copying the result with other `records` is read by those.
   */
  table?: RecordTable;
}

/**
 * The records of a load by index. A record is made anew on each call: nothing is kept per record.
 *
 * @example
 * const { table } = await backend.load({ create: false });
 * if (table) for (let i = 0; i < table.length; i++) console.log(table.at(i), table.record(i).head(['key']));
 */
export interface RecordTable {
  readonly length: number;
  /** Record i, as `records[i]` of the same load would be. */
  record(i: number): LoadedRecord;
  /** Record i's `at`, without making the record. */
  at(i: number): number;
}

/** Chooses which records a rewrite removes, from the store's current contents (by index). */
export type RewriteSelect = (records: readonly LoadedRecord[]) => Iterable<number>;

/**
 * Where a RecordCollection keeps its records: a tape file, Redis, memory, or a store of your own.
 */
export interface RecordBackend {
  /** For messages: a file path, a Redis key, `memory:<name>`. */
  readonly location: string;
  /**
   * The command that lists this store's damage, for messages, when `tapedeck verify <location>`
   * is not it (a Redis namespace: `tapedeck verify 'redis://host:6379/0' --namespace NS`).
   */
  readonly verifyCommand?: string;
  /**
   * A record's `at` in words, for messages, when "the record at byte N" is not it: a Redis
   * namespace numbers its records (`record 7`, as its verify says).
   */
  recordAt?(at: number): string;
  /**
   * A line for a miss about the store, known once `load` resolved: a tape whose record run ended
   * without closing it may lack the calls that run had not made yet.
   */
  readonly missNote?: string | undefined;
  /**
   * What a missing store is, for messages, when "no tape at <location>" is not it: a Redis
   * namespace that holds nothing, which is what a wrong URL, database or namespace looks like.
   */
  // `| undefined` on these two: the backends keep them as `string | undefined` fields, which a
  // consumer compiling with exactOptionalPropertyTypes (and the declarations checked) would
  // otherwise see as not implementing this interface.
  readonly absent?: string | undefined;
  /**
   * The store's redaction salt (32 hex digits), known once `load` resolved: made with the store
   * (a tape header's `salt`, a Redis namespace's header), never changed. Absent for stores made
   * before salts existed; masked values are then stored as plain `[REDACTED]` (src/store/redact.ts).
   */
  readonly salt?: string | undefined;
  /**
   * Every record, in order. With `create` a missing store is created empty (two processes
   * creating at once must both succeed and share it); without, a missing store is
   * `{ exists: false, records: [] }`.
   */
  load(opts: { create: boolean }): Promise<LoadResult>;
  /**
   * Appends `values` in order, as one unit with respect to other writers (no interleaving), and
   * resolves once they survive a crash (unless `durable: false`, for benchmarks and bulk imports).
   * Rejects with a TapedeckError if nothing could be written; then nothing was.
   */
  append(values: readonly unknown[], opts: { durable: boolean }): Promise<void>;
  /**
   * Under the backend's lock: reads the current records, lets `select` choose the ones to remove
   * (indexes into what it was given), and removes exactly those, atomically (a crash leaves the
   * old contents or the new, nothing between). Returns the removed records' values.
   */
  rewrite(select: RewriteSelect): Promise<{ kept: number; removed: unknown[]; warnings: StoreWarning[] }>;
  /** Releases connections or handles. The collection calls it once, from its own close(). */
  close(): Promise<void>;
  /**
   * Optional, for stores that other writers share while this one is open (Redis): the records
   * filed under this `kind` and `key` that this handle has not loaded or appended yet, in order.
   * The collection asks on a miss, so a fleet of proxies sees each other's recordings without
   * reopening. Rejects with a TapedeckError when the store cannot be reached.
   */
  refresh?(head: { kind?: string; key: string }): Promise<LoadedRecord[]>;
  /**
   * Optional, for shared stores: a new handle on the same store, which loads it as it is now.
   * A proxy that opened it before other writers recorded (it found it empty or missing) explains
   * a miss against the recordings made since, not as a store that holds none.
   */
  another?(): RecordBackend;
  /**
   * Registers a writer of `run` as open until the handle is released, and returns the runs that
   * have a writer open now (this one's included). The collection calls it before loading, in
   * the modes that write, so a record run never removes the recordings of a writer still open
   * (see docs/modes.md). A writer that dies without releasing stops counting as open on its own.
   * `mode`: the writer's mode, kept with the registration, so a record run that ended without
   * closing can be told apart from an update run (its replacements were never made).
   */
  openWriter?(run: string, mode?: 'record' | 'update'): Promise<WriterHandle>;
  /**
   * Optional: where the backend tells a problem it finds after load that no call's answer
   * carries (a Redis namespace emptied while open). Whoever serves through the collection sets
   * it to its warning channel (the proxy and createFetch: onWarning); unset, the backend warns
   * the process.
   */
  onWarning?: (message: string) => void;
}

/** An open writer's registration (see RecordBackend.openWriter). */
export interface WriterHandle {
  /** Runs with a writer open when this one registered, its own included. */
  readonly live: ReadonlySet<string>;
  release(): Promise<void>;
}

/** The scalar fields of a decoded record, in its own order, up to the first container (with `deep`, all of them). */
export function headOf(value: unknown, deep: boolean | number = false): Record<string, HeadScalar> {
  const out: Record<string, HeadScalar> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (v !== undefined && !deep) break;
  }
  return out;
}
