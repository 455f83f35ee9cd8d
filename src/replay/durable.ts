/*
 * The durable replay store: a ReplayStore with a tape behind it, so replays survive restarts
 * (a memory-only store loses them on restart). Every put goes to memory at once (a replay can follow
 * immediately) and to the tape in the background; puts that arrive while a write is in flight are
 * batched into the next one (group commit: one append and one fsync for many puts). `put`
 * resolves once its record is on disk.
 *
 * Opening replays the tape's records in file order into a fresh ReplayStore: later records for
 * the same (token, query) replace earlier ones, records older than the TTL are skipped, and the
 * max-entries bound applies as it did when they were put. Recency from gets is not written (a
 * read would otherwise cost a write), so after a restart the least recently *stored* goes first.
 *
 * The tape only grows with puts, so once it holds more replay records than `compactAfter`, it is
 * compacted: superseded and expired records are dropped, and beyond maxEntries the oldest. The
 * decision is made from the tape's own contents, never from this process's memory, so a tape that
 * several processes share never loses another process's entries. Records that are not replay
 * records (a ReplayCache sharing the tape) are always kept.
 *
 * Secrets never reach the tape unless the caller asks (`redact: { keepSecrets: true }`), as with
 * every other writer: a record's body is redacted as a recorded answer's is, its query (a user's
 * question, which may hold a pasted key) and meta as text and values are. Masks are keyed under
 * the tape's salt, so two queries stay two. The query an entry is filed under is the masked one,
 * in memory too: a replay asked with the query as sent finds its entry before and after a
 * restart alike. The bytes served before a restart are those put; after it, those on the tape.
 */

import { TapedeckError } from '../errors.ts';
import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import type { StoreWarning } from '../store/backend.ts';
import { TapeBackend } from '../store/backends/tape.ts';
import { RecordCollection } from '../store/collection.ts';
import { REPLAY_RECORD_KIND, replayRecords, type ReplayTapeRecord } from '../store/records.ts';
import type { TapeLockOptions } from '../store/tape-file.ts';
import { redactor, type RedactOptions, type Redactor } from '../store/redact.ts';
import { checkRedactOptions, REDACT_INNER } from '../store/redact-options.ts';
import type { ReplaySource } from './handler.ts';
import { entryOf, ReplayStore, type ReplayEntry, type ReplayLookup, type ReplayPut, type ReplayStoreOptions, type ReplayStoreStats } from './store.ts';
import { isBytes } from '../bytes.ts';

export { REPLAY_RECORD_KIND, type ReplayTapeRecord } from '../store/records.ts';

/**
 * Options of DurableReplayStore.open: ReplayStore's, the tape's durability and lock, when it
 * compacts, and redaction.
 */
export interface DurableReplayOptions extends ReplayStoreOptions {
  /** fsync every batch before put resolves (default true). */
  durable?: boolean;
  /** Lock timing for appends and compaction. */
  lock?: TapeLockOptions;
  /** Compact once the tape holds more replay records than this (default max(2 × maxEntries, 1024)). */
  compactAfter?: number;
  /**
   * Secret redaction before a record is written (src/store/redact.ts), as for ReplayCache: more
   * header, field and query names, or `keepSecrets: true` for a tape that never leaves the machine.
   */
  redact?: RedactOptions;
}

// A misspelt `redact` would write the very values it was meant to mask.
const DURABLE_OPTIONS = optionNames<DurableReplayOptions>()(['enabled', 'maxEntries', 'ttlMs', 'now', 'env', 'durable', 'lock', 'compactAfter', 'redact']);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The entry a tape record holds, or why it is not one. */
function fromRecord(v: Record<string, unknown>): ReplayEntry | string {
  if (v.v !== 1) return `unsupported replay record version ${String(v.v)}`;
  if (!isBytes(v.body)) return 'replay record without a binary body';
  if (typeof v.createdAt !== 'number' || !Number.isFinite(v.createdAt)) return 'replay record without a numeric createdAt';
  try {
    const e = entryOf({ token: v.token as string, documentId: v.documentId as string, query: v.query as string, body: v.body, contentType: v.contentType as string }, v.createdAt);
    return isObj(v.meta) ? { ...e, meta: v.meta } : e;
  } catch (err) {
    return err instanceof TapedeckError ? err.message : String(err);
  }
}

/** The record of an entry (its query masked already), its body and meta redacted. */
function toRecord(e: ReplayEntry, r: Redactor): ReplayTapeRecord {
  const rec: ReplayTapeRecord = { v: 1, kind: REPLAY_RECORD_KIND, token: e.token, query: e.query, documentId: e.documentId, body: r.bytes(e.body, e.contentType), contentType: e.contentType, createdAt: e.createdAt };
  if (e.meta) rec.meta = r.value(e.meta as Record<string, unknown>);
  return rec;
}

/**
 * A replay store backed by a tape. Reads are synchronous and served from memory; puts resolve
 * when their record is on disk.
 *
 * @example
 * await using replays = await DurableReplayStore.open('var/replays.tape', { maxEntries: 100_000 })
 * const { token } = await replays.put({ documentId, query, documentVersion: '1', model,
 *                                       systemPromptVersion: 'v1', selectedIds, body, contentType })
 * handleReplay(replays, requestBody)   // 200 with the same bytes, also after a restart
 */
export class DurableReplayStore implements ReplaySource {
  readonly path: string;
  /** The in-memory store every read is served from. */
  readonly memory: ReplayStore;
  /** Damage found reading the tape, and records that were not valid replay entries. */
  readonly warnings: StoreWarning[] = [];
  private readonly compactAfter: number;
  /** The recordings on the tape (undefined with replay disabled). */
  private col: RecordCollection<ReplayTapeRecord> | undefined;
  private tapeRecords = 0;
  private compacting: Promise<unknown> | undefined;
  private closed = false;
  /** Masks what is written, keyed under the tape's salt (set once the tape is open). */
  private redactor: Redactor | undefined;

  private constructor(path: string, memory: ReplayStore, opts: DurableReplayOptions) {
    this.path = path;
    this.memory = memory;
    const c = opts.compactAfter;
    if (c !== undefined && (!Number.isSafeInteger(c) || c < 1)) {
      throw new TapedeckError('E_CONFIG', `Invalid option \`compactAfter\`: ${String(c)}; expected an integer >= 1.`, { option: 'compactAfter', hint: 'e.g. compactAfter: 10_000' });
    }
    this.compactAfter = c ?? Math.max(2 * memory.config.maxEntries, 1024);
  }

  /**
   * Opens (creating if missing, with its directory) the tape at `path` and loads its replay
   * entries. With replay disabled nothing is read or written.
   *
   * @example
   * const replays = await DurableReplayStore.open('var/replays.tape', { ttlMs: 7 * 86_400_000 })
   */
  static async open(path: string, opts: DurableReplayOptions = {}): Promise<DurableReplayStore> {
    if (typeof path !== 'string' || path === '') {
      throw new TapedeckError('E_ARG', 'DurableReplayStore.open needs the path of a tape.', { hint: "e.g. DurableReplayStore.open('var/replays.tape')" });
    }
    checkOptionsObject(opts, 'DurableReplayStore.open', "DurableReplayStore.open('var/replays.tape', { maxEntries: 100_000 }) (or leave the options out)");
    checkOptionNames(opts, DURABLE_OPTIONS, 'DurableReplayStore.open', 'docs/replay.md', REDACT_INNER);
    const { durable, lock, compactAfter: _c, redact, ...memOpts } = opts;
    checkRedactOptions(redact);
    const memory = new ReplayStore(memOpts);
    const store = new DurableReplayStore(path, memory, opts);
    if (!memory.enabled) return store;
    // 'update': serve what is there, append what is new, remove only by compaction.
    const col = await RecordCollection.open(new TapeBackend(path, { lock }), { mode: 'update', kind: replayRecords, durable: durable !== false });
    store.col = col;
    store.redactor = redactor({ ...redact, salt: col.backend.salt });
    store.warnings.push(...col.warnings);
    // File order: later records for the same (token, query) replace earlier ones.
    for (const { value: v, at } of col.entries()) {
      store.tapeRecords++;
      const e = fromRecord(v as unknown as Record<string, unknown>);
      if (typeof e === 'string') {
        store.warnings.push({ code: 'E_REPLAY_RECORD', offset: at ?? 0, message: e });
        continue;
      }
      try {
        // Filed under its masked query, as puts are (a tape written before queries were masked).
        memory.insert({ ...e, query: store.queryOf(e.query) });
      } catch (err) {
        if (!(err instanceof TapedeckError)) throw err;
        store.warnings.push({ code: err.code, offset: at ?? 0, message: err.message });
      }
    }
    return store;
  }

  get enabled(): boolean {
    return this.memory.enabled;
  }

  get config(): ReplayStore['config'] {
    return this.memory.config;
  }

  get size(): number {
    return this.memory.size;
  }

  /**
   * Stores a response (in memory now; the promise resolves when it is on the tape) and returns
   * its entry. Disabled: computes the token, stores nothing.
   *
   * @example
   * const e = await replays.put({ token, documentId: 'doc-1', query: 'q', body: bytes })
   */
  async put(p: ReplayPut): Promise<ReplayEntry> {
    if (this.closed) throw new TapedeckError('E_ARG', `The replay store on ${this.path} is closed.`, { file: this.path, hint: 'Open it again to store more.' });
    // Filed under the masked query (a query that is no string is refused by memory.put).
    const entry = entryOf(p !== null && typeof p === 'object' && typeof p.query === 'string' ? { ...p, query: this.queryOf(p.query) } : p, this.memory.clock());
    const previous = this.col ? this.memory.peek(entry.token, entry.query) : undefined;
    this.memory.insert(entry);
    if (!this.col) return entry;
    try {
      await this.col.append(`${entry.token}\u0000${entry.query}`, toRecord(entry, this.redactor!));
    } catch (e) {
      // Not on the tape, so not served either: a replay would answer with bytes that vanish
      // at the next restart. The pair serves what the tape holds for it again.
      this.memory.undo(entry, previous);
      throw e;
    }
    this.tapeRecords++;
    if (this.tapeRecords > this.compactAfter && !this.compacting) {
      this.compacting = this.compactNow()
        .catch((e: unknown) => {
          // The records are safe on the tape; compaction is retried after the next put.
          this.warnings.push({ code: e instanceof TapedeckError ? e.code : 'E_TAPE_IO', offset: 0, message: `compaction failed: ${(e as Error).message}` });
        })
        .finally(() => (this.compacting = undefined));
      await this.compacting;
    }
    return entry;
  }

  /**
   * Resolves when every put made so far is on the tape.
   *
   * @example
   * await replays.flush()
   */
  async flush(): Promise<void> {
    await this.col?.flush();
    while (this.compacting) await this.compacting;
  }

  /**
   * Rewrites the tape with only the replay records that still matter: the latest per (token,
   * query), unexpired, at most maxEntries (newest kept). Other records are kept as they are.
   *
   * @example
   * const { kept, dropped } = await replays.compact()
   */
  async compact(): Promise<{ kept: number; dropped: number }> {
    await this.flush();
    return this.compactNow();
  }

  /**
   * The choice is made under the tape lock from the tape's own current contents, never from this
   * process's memory, so a tape several processes share never loses another one's entries.
   */
  private async compactNow(): Promise<{ kept: number; dropped: number }> {
    if (!this.col) return { kept: 0, dropped: 0 };
    const { ttlMs, maxEntries } = this.memory.config;
    const now = this.memory.clock();
    let kept = 0;
    const r = await this.col.rewrite((records) => {
      // Latest replay record per (token, query), by file order.
      const latest = new Map<string, { index: number; createdAt: number }>();
      const replay: number[] = [];
      records.forEach((rec, index) => {
        if (rec.head().kind !== REPLAY_RECORD_KIND) return;
        let v: unknown;
        try {
          v = rec.value();
        } catch {
          return;
        }
        if (!isObj(v) || typeof v.token !== 'string' || typeof v.query !== 'string') return;
        replay.push(index);
        latest.set(`${v.token}\u0000${v.query}`, { index, createdAt: typeof v.createdAt === 'number' ? v.createdAt : -Infinity });
      });
      let live = [...latest.values()].filter((x) => ttlMs === 0 || x.createdAt + ttlMs > now);
      if (live.length > maxEntries) live = live.sort((a, b) => a.index - b.index).slice(live.length - maxEntries);
      const keep = new Set(live.map((x) => x.index));
      kept = keep.size;
      return replay.filter((i) => !keep.has(i));
    });
    this.tapeRecords = kept;
    return { kept: r.kept, dropped: r.removed.length };
  }

  /**
   * The entry for (token, query), from memory (see ReplayStore.get).
   *
   * @example
   * const e = replays.get(token, query)
   */
  get(token: string, query: string): ReplayEntry | undefined {
    return this.memory.get(token, this.queryOf(query));
  }

  /**
   * The replay decision (see ReplayStore.lookup); handleReplay calls it.
   *
   * @example
   * replays.lookup(token, query, documentId).status // 'found' | 'unknown-token' | ...
   */
  lookup(token: string, query: string, documentId: string): ReplayLookup {
    return this.memory.lookup(token, this.queryOf(query), documentId);
  }

  /**
   * Whether (token, query) is stored and live.
   *
   * @example
   * replays.has(token, query)
   */
  has(token: string, query: string): boolean {
    return this.memory.has(token, this.queryOf(query));
  }

  /**
   * The query an entry is filed under: credential-looking text and secret members in it masked
   * (keyed under the tape's salt, so the same query always maps to the same mask). As given with
   * no tape (replay disabled) or when it is no string (the memory store refuses it).
   */
  private queryOf(query: string): string {
    return this.redactor !== undefined && typeof query === 'string' ? this.redactor.text(query) : query;
  }

  /**
   * The memory store's counters, the replay records on the tape and the appends made (one per
   * batch of puts).
   *
   * @example
   * const { size, tapeRecords, writes } = replays.stats()
   */
  stats(): ReplayStoreStats & { tapeRecords: number; writes: number } {
    return { ...this.memory.stats(), tapeRecords: this.tapeRecords, writes: this.col?.writes ?? 0 };
  }

  /**
   * Waits for pending puts and stops accepting new ones.
   *
   * @example
   * await replays.close()
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    await this.col?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * Opens a durable replay store: `DurableReplayStore.open`.
 *
 * @example
 * const replays = await openReplayStore('var/replays.tape')
 */
export function openReplayStore(path: string, opts: DurableReplayOptions = {}): Promise<DurableReplayStore> {
  return DurableReplayStore.open(path, opts);
}
