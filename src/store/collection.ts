/**
 * The recording collection: the one engine under ReplayCache, the proxy / createFetch and the
 * durable replay store. It indexes a backend's records by key, serves a key's recordings in
 * recorded order, appends new ones (group commit, acknowledged only once durable) and applies
 * the mode rules at close (docs/modes.md). It knows nothing of files: a backend
 * (src/store/backend.ts) stores the records, a record kind (src/store/records.ts) says which
 * records are its own and under which key.
 *
 * The mode rules, written here once:
 * - replay:      serve recordings; never write.
 * - record:      serve nothing; append every answer; at close remove the recordings that were in
 *                the store when it opened under the keys this run re-recorded, and only once
 *                every append of that key succeeded (a failed append keeps the old recording).
 *                Only recordings of runs that had ended when this one opened are replaced:
 *                a recording of a writer still open then (the backend's writer registry), or
 *                of this same run (test workers share a run), is never removed. Recordings this
 *                run did not touch stay; records other writers appended while this one was
 *                open are never removed.
 * - update:      serve what is there, append what is missing; never remove.
 * - passthrough: neither read nor write.
 * - once:        decided at open: record when the store does not exist, replay when it does (so
 *                an existing store is never added to); `mode` is then that effective mode.
 * - pruning recordings nobody used is never implicit: close({ pruneUnused: true }) does it and
 *   reports what it removed.
 *
 * A writer opened for a test (`test`, on tapes several tests share) stamps its records with the
 * test and is served its own: see CollectionOptions.test.
 */
import { TapedeckError } from '../errors.ts';
import type { HeadScalar, LoadedRecord, LoadResult, RecordBackend, RecordTable, RewriteSelect, StoreWarning, WriterHandle } from './backend.ts';
import type { TapeMode } from './mode.ts';
import { HeadIndex, keyHash } from './head-index.ts';
import { inRecordOrder, sortedKeys } from './record-order.ts';
import { closeRemovalFailure } from './close-failure.ts';
import { assertNoCycle } from './cycle.ts';
import { aheadIsLoss, Turns, type TurnMark } from './turns.ts';
import { isHandWrittenRun } from './hand-written-run.ts';
import { checkRecordKind } from './kind-check.ts';

/** Which stored records a collection owns, and how it finds them. */
export interface RecordKind<R> {
  /** For messages: 'ReplayCache record', 'HTTP exchange'. */
  readonly name: string;
  /**
   * The key (or keys) a stored record is found under, or undefined for a record that is not of
   * this kind (another tool's record sharing the store is left alone). `head` is cheap; call
   * `value` only when the head is not enough. A TapedeckError thrown here (a record of this
   * kind that cannot be keyed) becomes a warning and the record is skipped.
   */
  keysOf(head: Readonly<Record<string, HeadScalar>>, value: () => unknown): string | readonly string[] | undefined;
  /** The head fields keysOf reads (default: all leading scalars). Opening reads only these. */
  readonly headFields?: readonly string[];
  /**
   * Whether some of `headFields` may follow the record's first object or array (HTTP records
   * written by earlier versions keep `route` and `match` after the request): the head is then
   * read past containers. A number: only that many of `headFields` (the first ones) are looked
   * for past containers, the others among the leading scalars alone (a field newer writers put
   * there, which older records lack: looking for it would step over every container).
   */
  readonly headDeep?: boolean | number;
  /**
   * For kinds whose keys are a group (a few distinct values: a route and a match kind) joined
   * with a key proper: the two parts of the key `keysOf` would return for this head, or
   * undefined to ask keysOf. Opening a large store then files records without making the
   * joined string of each; the same group should be the same string object each time.
   */
  keyParts?(head: Readonly<Record<string, HeadScalar>>): readonly [group: string, key: string] | undefined;
  /** With keyParts: how many leading characters of a joined key are its group (0: none). */
  groupLength?(key: string): number;
  /** Whether a decoded value really is one of this kind (checked when it is first decoded). */
  is(value: unknown): value is R;
  /**
   * For a decoded value {@link is} refuses: the error to give in its place when it is a record of
   * this kind in a record version newer than this tapedeck reads (E_TAPE_VERSION, naming `where`),
   * so a call it answers is told to upgrade tapedeck rather than that the tape is damaged.
   */
  newer?(value: unknown, where: string, details: Record<string, unknown>): TapedeckError | undefined;
  /**
   * For a decoded value {@link is} refuses that is no newer record: what in it is not of this
   * kind (`its response.body is object, not bytes`), said to a call it answers; undefined when
   * the kind cannot say.
   */
  misfit?(value: unknown): string | undefined;
  /**
   * Record mode: another key whose recordings (of ended runs) a re-recording of `key` replaces
   * too, if any: an HTTP recording filed under its origin replaces its request's recordings
   * filed before origins were stored (src/store/origins.ts).
   */
  replaces?(key: string): string | undefined;
  /** The form written to the backend (default: the one field order of record-order.ts). */
  encode?(record: R): unknown;
  /**
   * The `kind` (`cache` for records without one) and `key` fields of the stored records filed
   * under a collection key: how a backend that knows whose a lost record was (Redis) names it.
   * Without it, a request none of whose recordings survived is a miss.
   */
  storedKey?(key: string): { kind: string; key: string };
}

/**
 * Options of RecordCollection.open: the mode, the record kind, and the run and test it records
 * for.
 */
export interface CollectionOptions<R> {
  /** What the collection does with a request (docs/modes.md); passthrough loads nothing. */
  mode: TapeMode;
  /** Which records are its own and how they are keyed: cacheRecords([]), httpRecords(), replayRecords. */
  kind: RecordKind<R>;
  /** Wait for each append to be durable before acknowledging it (default true). */
  durable?: boolean;
  /**
   * The run this writer belongs to (default: TAPEDECK_RUN_ID, else a new one). Writers of one
   * run (the workers of one test run) never replace each other's recordings; each record
   * carries it as `run`. A test's retry writes under `retryRun(run, n)`: in record mode it
   * replaces what the test's earlier attempts recorded in that run, as if an ended run had.
   */
  run?: string;
  /**
   * The test this writer records and replays for, on a store several tests share (a tape per
   * file). Each record it appends names the test (`test`), and its `repeat` counts that test's
   * recordings of the key. Served per key: a key this test has recordings of gets those alone,
   * in the order the test made them, so a test replays what it recorded whichever tests ran
   * before it, at the same time or in other workers; a key it has none of gets every recording
   * of the key in recorded order, as without a test (older records name no test). Record mode
   * replaces only this test's recordings and those that name no test; another test's are left
   * alone (never replaced, compared or pruned by this writer).
   */
  test?: string;
  /**
   * Why this opener cannot record (a proxy with no upstream to record from), or undefined when
   * it can. Asked before anything is created: a mode that would record (record, update, or once
   * on a missing store) fails with it and leaves no empty store or writer behind.
   */
  cannotRecord?: (mode: TapeMode) => Error | undefined;
}

/** Options of close(): whether recordings nobody used this run are removed too. */
export interface CloseOptions {
  /** Also remove the recordings (of this kind) that this run neither served nor re-recorded. */
  pruneUnused?: boolean;
}

/** What close() removed: recordings replaced by this run's, and unused ones when asked. */
export interface CloseReport {
  replaced: { key: string; at: number }[];
  pruned: { key: string; at: number }[];
  /**
   * How many of this run's recordings took the place of a replaced one of the same key: one per
   * recording replaced, so a key recorded more often than before has its extra ones added (the
   * run summaries say "re-recorded (replaced)" for these, "added" for the rest). Absent when none.
   */
  rerecorded?: number;
  /**
   * How many of this run's recordings took the place of one an earlier attempt of the same test
   * made in the same run (a retry, see retryRun): the tape did not grow by them and had them
   * from no earlier run, so they are neither added nor re-recorded. Counted after `rerecorded`
   * (a replaced recording of an ended run is taken first). Absent when none.
   */
  retried?: number;
}

interface Entry<R> {
  key: string;
  /** The slot of `key` (its first key, for a record found under several). */
  slot?: Slot<R>;
  /** The stored record, for recordings loaded at open. */
  stored?: LoadedRecord;
  /** Modes that write: whether this is a recording of a run that had ended at open (this run may replace or prune it). */
  old?: boolean;
  /** Its place among its key's recordings as its writer counted them (`repeat`), if known; -1 once read and absent. */
  repeat?: number;
  /** The test its record names (read with `repeat`): whose recordings its `repeat` counts. */
  named?: string;
  /** A writer for a test: whether this recording names that test (known for those with an entry made at open or appended). */
  mine: boolean;
  value?: R;
  bad?: boolean;
  used: boolean;
}

/**
 * Recordings of one key, in order, how many were served, and the turns passed (./turns.ts: a
 * slot is its own Turns, no object more per key). Most keys have one recording, so
 * the first is a field and only further ones get an array (a large store opens with fewer
 * allocations); recordings loaded at open come first.
 */
class Slot<R> extends Turns {
  served = 0;
  /** The lost turns before each recording that follows some ({@link RecordCollection.lostBefore}), for the first `planned` recordings. */
  plan: Map<Entry<R>, { first: number; count: number }> | undefined;
  planned = -1;
  /** Record mode: the recordings loaded at open that this run may replace, in order. */
  olds: Entry<R>[] | undefined;
  private rest: Entry<R>[] | undefined;
  constructor(private readonly first: Entry<R>) {
    super();
  }
  get length(): number {
    return this.rest ? this.rest.length + 1 : 1;
  }
  at(i: number): Entry<R> | undefined {
    return i === 0 ? this.first : this.rest?.[i - 1];
  }
  push(e: Entry<R>): void {
    (this.rest ??= []).push(e);
  }
  /** The k-th recording loaded at open that this run may replace. */
  loaded(k: number): Entry<R> | undefined {
    return this.olds?.[k];
  }
}

/** The last recording of a slot whose time to live has not passed: what a call past the end is served again. */
function lastLive<R>(s: Slot<R>): Entry<R> | undefined {
  const now = Date.now();
  for (let i = s.length - 1; i >= 0; i--) {
    const e = s.at(i)!;
    const at = e.stored?.expiresAt;
    if (at === undefined || now < at) return e;
  }
  return undefined;
}

/**
 * The recordings of one kind in one store (a tape, Redis, memory): served in recorded order,
 * appended durably, and replaced or pruned only at close.
 *
 * @example
 * const col = await RecordCollection.open(new TapeBackend('chat.tape'), { mode: 'update', kind: cacheRecords([]) });
 * const hit = col.next(key);                      // the next recording of key, in recorded order
 * if (!hit) await col.append(key, record);        // durable when this resolves
 * const report = await col.close();               // record mode: replaces what was re-recorded
 */
export class RecordCollection<R> {
  readonly mode: TapeMode;
  readonly backend: RecordBackend;
  /** Whether the store existed (or was created) at open. */
  readonly exists: boolean;
  /** Damage the backend survived, and records of this kind that could not be used. */
  readonly warnings: StoreWarning[];

  private readonly kind: RecordKind<R>;
  private readonly durable: boolean;
  /** This writer's run, written into every record it appends. */
  readonly run: string;
  /** The test this writer records for (see CollectionOptions.test). */
  readonly test: string | undefined;
  /**
   * A writer for a test: the keys it has recordings of (loaded or appended). Their recordings
   * made by other tests, or by none, are not filed: the key is served this test's alone.
   */
  private readonly owned = new Set<string>();
  /** While {@link fileLoaded} runs for a test: the keys of this test's loaded recordings, by load index (keyed once, before filing). */
  private ownAt: Map<number, string | readonly string[]> | undefined;
  /** This writer's registration, while open in a mode that writes. */
  private writer: WriterHandle | undefined;
  /** Update mode on a store this process cannot write to: why, given to each recording asked for. */
  private unwritable: TapedeckError | undefined;
  /** Whether some recording has a time to live (see {@link expired}). */
  private expiring = false;
  /** Modes that write: the runs that had a writer open when this one opened. */
  private live: ReadonlySet<string> | undefined;
  /**
   * Recordings per key, by key group (see RecordKind.keyParts; one group, '', for kinds
   * without). A key whose only recording was loaded at open and not looked at since maps to
   * that recording's index in {@link all}: no entry or slot object is made for it until it is
   * (see {@link slotOf}), so a large store opens with one key string and one map entry per
   * recording.
   */
  private readonly slots = new Map<string, Map<string, Slot<R> | number>>();
  /**
   * Records lost to damage (bytes that did not read as a record, a record that could not be
   * keyed): where they were, and whose they were when the backend can tell (Redis files each
   * record under its key). A call past the last intact recording of a key may be the turn of
   * one of these (see {@link lostPast}).
   */
  private readonly lost: { at: number; record?: { kind: string; key: string } }[];
  /**
   * Every entry in order: loaded ones first, then this run's appends. A recording loaded at
   * open that nothing looked at yet has no entry (undefined here): its key and stored form are
   * at the same index of {@link loadedKeys} and {@link loadedStored}.
   */
  private all: (Entry<R> | undefined)[] = [];
  /**
   * The key of each recording loaded at open (without its group), by index in {@link all};
   * undefined for one filed in {@link heads} (its key is read again from its head when needed).
   */
  private loadedKeys: (string | undefined)[] = [];
  /**
   * Recordings filed at open by their key parts and not looked at since, by a hash of their
   * key (kinds with keyParts; see ./head-index.ts). {@link slots} is asked first.
   */
  private heads: HeadIndex | undefined;
  /** What {@link isProbed} compares a candidate with. */
  private probeGroup = '';
  private probeKey = '';
  private readonly isProbed = (i: number): boolean => this.loadedGroups[i] === this.probeGroup && this.loadedKeys[i] === undefined && this.headKey(i) === this.probeKey;
  /** The key group of each recording loaded at open ('' for none; see RecordKind.keyParts). */
  private loadedGroups: string[] = [];
  /** The stored form of each recording loaded at open, by index in {@link all}. */
  private loadedStored: (LoadedRecord | number)[] = [];
  /** The load's records by index, when the backend gave them so: a number in {@link loadedStored} is an index in it. */
  private table: RecordTable | undefined;
  /** While {@link fileLoaded} files from {@link table}: the index there of the record being filed (-1 otherwise). */
  private tableIndex = -1;
  /** While {@link fileLoaded} runs: the index the next recording filed at open takes (-1 otherwise). */
  private filingAt = -1;
  /** The record being filed, and its entry once keysOf asked for its value (see {@link file}). */
  private filing: LoadedRecord | undefined;
  private filingEntry: Entry<R> | undefined;
  /** The value of the record being filed, for keysOf: one function, not one per record. */
  private readonly filingValue = (): R | undefined => this.materialize((this.filingEntry ??= newEntry<R>('', this.filing)));
  private readonly rerecorded = new Set<string>();
  /** Appends in flight per key, so concurrent appends of one key get consecutive `repeat`s. */
  private readonly inFlight = new Map<string, number>();
  private readonly failed = new Set<string>();
  /** Record mode: keys a request of this run asked for (see {@link ask}); their recordings are never pruned. */
  private readonly askedFor = new Set<string>();
  private readonly reused = new Set<Entry<R>>();
  /** Decoded values back to their entries, for {@link use}. */
  private readonly byValue = new WeakMap<object, Entry<R>>();
  /** Entries of intact records this tapedeck cannot serve (a newer record version, a class not registered, fields not of this kind), and the error a call they answer gets (see materialize). */
  private readonly newerRecords = new WeakMap<Entry<R>, TapedeckError>();
  private batch: { values: unknown[]; done: (e?: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  /** Backend appends made (each carries every append queued while the previous one ran). */
  writes = 0;
  /** Calls {@link next} answered with a key's last recording again, past those recorded (repeatLast). */
  repeatsServed = 0;
  /** Of {@link repeatsServed}, those whose recording this run made (see {@link madeHere}). */
  repeatsOfMade = 0;
  private closing: Promise<CloseReport> | undefined;

  private constructor(backend: RecordBackend, opts: CollectionOptions<R>, exists: boolean, warnings: StoreWarning[]) {
    this.backend = backend;
    this.mode = opts.mode;
    this.kind = opts.kind;
    this.durable = opts.durable !== false;
    this.run = opts.run ?? newRun();
    this.test = opts.test;
    this.exists = exists;
    this.warnings = warnings;
    // A torn tail is a lost record too (a tape cut short by a partial copy, or by a crash during
    // an append): the call whose recording it held gets E_TAPE_DAMAGED, not the one before again.
    this.lost = warnings.filter((w) => w.code === 'E_TAPE_CORRUPT' || w.code === 'E_TAPE_TORN_TAIL').map((w) => (w.record ? { at: w.offset, record: w.record } : { at: w.offset }));
  }

  /**
   * Loads the backend's records of this kind (creating the store in record and update mode; a
   * missing store in replay is empty, every lookup a miss; passthrough loads nothing).
   *
   * @example
   * const col = await RecordCollection.open(new MemoryBackend(), { mode: 'record', kind: cacheRecords([]) });
   */
  static async open<R>(backend: RecordBackend, opts: CollectionOptions<R>): Promise<RecordCollection<R>> {
    checkRecordKind(opts.kind);
    if (opts.mode === 'passthrough') return new RecordCollection(backend, opts, false, []);
    try {
      return await RecordCollection.opened(backend, opts);
    } catch (e) {
      // No collection, so nothing would ever close the backend: a connection it made (a Redis
      // user that may connect but not run scripts) stayed open and kept the process alive.
      await backend.close().catch(() => {});
      throw e;
    }
  }

  /** {@link open} past passthrough: the backend is opened, and closed by the caller on failure. */
  private static async opened<R>(backend: RecordBackend, opts: CollectionOptions<R>): Promise<RecordCollection<R>> {
    if (opts.mode === 'once') {
      // Decided by whether the store exists; an existing one is replayed from this very load.
      const probe = await backend.load({ create: false });
      if (!probe.exists) refuseRecording(opts);
      opts = { ...opts, mode: probe.exists ? 'replay' : 'record' };
      if (probe.exists) {
        const col = new RecordCollection(backend, opts, true, [...probe.warnings]);
        col.fileLoaded(probe, undefined);
        return col;
      }
    }
    const writes = opts.mode === 'record' || opts.mode === 'update';
    if (writes) refuseRecording(opts);
    const run = opts.run ?? newRun();
    // Registered before loading: a writer that opens later sees this one as open, so it never
    // takes what this one appends for recordings of an ended run.
    let writer: WriterHandle | undefined;
    let unwritable: TapedeckError | undefined;
    try {
      writer = writes && backend.openWriter ? await backend.openWriter(run, opts.mode as 'record' | 'update') : undefined;
    } catch (e) {
      // Update mode serves what is there and records only what is missing: a store this process
      // cannot write to (a read-only checkout) is read as it is, and a recording it would need
      // fails then, saying why. Record mode writes whatever it is asked: it fails here.
      if (opts.mode !== 'update' || !(e instanceof TapedeckError && e.code === 'E_TAPE_IO')) throw e;
      unwritable = e;
    }
    try {
      const loaded = await backend.load({ create: writes && unwritable === undefined });
      // Nothing there to serve (the tape missing, on a full disk or in a folder this process may
      // not write to): every request would need recording, so the open fails with why.
      if (unwritable !== undefined && !loaded.exists) throw unwritable;
      const col = new RecordCollection(backend, { ...opts, run }, loaded.exists, [...loaded.warnings]);
      col.writer = writer;
      col.unwritable = unwritable;
      col.live = writes ? (writer?.live ?? new Set([run])) : undefined;
      // Record mode sorts what it may replace at open (re-recordings compare with it); other
      // modes only when pruning at close.
      const live = opts.mode === 'record' ? col.live : undefined;
      col.fileLoaded(loaded, live);
      return col;
    } catch (e) {
      // Before the backend closes (open() does that): the registration goes with the connection.
      await writer?.release();
      throw e;
    }
  }

  /**
   * Files the records a load returned (with the heads index, for kinds with key parts outside
   * record mode's sorting). The arrays indexed by recording are made at their full size first
   * and cut to what was filed after: growing four arrays to 100,000 by push took ~75 ms against
   * ~20 ms (fresh processes), each growth copying into memory touched for the first time.
   */
  private fileLoaded(loaded: LoadResult, live: ReadonlySet<string> | undefined): void {
    const table = loaded.table;
    const records = table === undefined ? loaded.records : undefined;
    const n = table !== undefined ? table.length : records!.length;
    // A test's writer files each record by its key, after checking whose it is (see file()).
    if (this.kind.keyParts && !live && this.test === undefined) this.heads = new HeadIndex(n);
    if (this.test !== undefined) this.ownAt = this.ownKeys(n, (i) => (table !== undefined ? table.record(i) : records![i]!));
    this.all = new Array(n);
    this.loadedGroups = new Array(n);
    this.loadedKeys = new Array(n);
    this.loadedStored = new Array(n);
    this.table = table;
    this.filingAt = 0;
    try {
      for (let i = 0; i < n; i++) {
        if (table !== undefined) this.tableIndex = i;
        this.file(table !== undefined ? table.record(i) : records![i]!, live, true, this.ownAt?.get(i));
      }
    } finally {
      const filed = this.filingAt;
      this.filingAt = -1;
      this.tableIndex = -1;
      this.ownAt = undefined;
      this.all.length = this.loadedGroups.length = this.loadedKeys.length = this.loadedStored.length = filed;
    }
  }

  /**
   * A test's writer, before filing: the keys of the loaded recordings that name its test, by
   * load index, added to {@link owned}. A key's recordings by other tests may come before the
   * test's own in the store, so whose a key is must be known before any of them is filed.
   */
  private ownKeys(n: number, record: (i: number) => LoadedRecord): Map<number, string | readonly string[]> {
    const at = new Map<number, string | readonly string[]>();
    for (let i = 0; i < n; i++) {
      const stored = record(i);
      if (stored.head(TEST_FIELD).test !== this.test) continue;
      let keys: string | readonly string[] | undefined;
      try {
        keys = this.kind.keysOf(stored.head(this.kind.headFields, this.kind.headDeep), () => stored.value());
      } catch (e) {
        // Told when it is filed, where it is skipped as damage.
        if (!(e instanceof TapedeckError)) throw e;
        continue;
      }
      if (keys === undefined) continue;
      at.set(i, keys);
      for (const k of typeof keys === 'string' ? [keys] : keys) this.owned.add(k);
    }
    return at;
  }

  /**
   * A test's writer: whether a record of `keys` made by `test` (undefined: by no test) is left
   * out. Record mode leaves out other tests' recordings (it never replaces or compares them);
   * replay and update leave out the recordings of keys this test has its own of.
   */
  private notMine(test: HeadScalar | undefined, keys: readonly string[]): boolean {
    if (test === this.test) return false;
    if (this.mode === 'record') return typeof test === 'string';
    return keys.some((k) => this.owned.has(k));
  }

  /** The stored form of the recording loaded at `index` (made from the table when it was filed by its table index). */
  private storedAt(index: number): LoadedRecord | undefined {
    const s = this.loadedStored[index];
    return typeof s === 'number' ? this.table!.record(s) : s;
  }

  /** `at` of the recording loaded at `index`, without making its stored form. */
  private storedOffset(index: number): number {
    const s = this.loadedStored[index]!;
    return typeof s === 'number' ? this.table!.at(s) : s.at;
  }

  /** The index in {@link all} the next recording filed takes. */
  private nextIndex(): number {
    return this.filingAt >= 0 ? this.filingAt : this.all.length;
  }

  /**
   * Files a stored record under its key(s); false if it is not of this kind or not usable.
   * `live` (record mode, at open): the runs open now, whose recordings this run must keep.
   */
  private file(stored: LoadedRecord, live: ReadonlySet<string> | undefined, atOpen: boolean, known?: string | readonly string[]): boolean {
    let keys: string | readonly string[] | undefined = known;
    this.filing = stored;
    this.filingEntry = undefined;
    try {
      const head = stored.head(this.kind.headFields, this.kind.headDeep);
      const parts = atOpen && this.heads && !live && stored.expiresAt === undefined ? this.kind.keyParts?.(head) : undefined;
      if (parts !== undefined) {
        // The first recording of its key, filed by its head alone, with no string or object
        // kept for it (see heads); a later one of the same key is filed below, as usual.
        const [group, key] = parts;
        const hash = keyHash(key);
        if (this.slots.get(group)?.has(key) !== true && this.findHead(group, key, hash) < 0 && this.heads!.add(hash, this.nextIndex())) {
          this.fileUnlooked(group, undefined, stored);
          return true;
        }
      }
      keys ??= this.kind.keysOf(head, this.filingValue);
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      this.warnings.push({ code: e.code, offset: stored.at, message: `${this.backend.location}: ${this.kind.name} at ${stored.at} is skipped: ${e.message}` });
      this.lost.push({ at: stored.at });
      return false;
    } finally {
      this.filing = undefined;
    }
    // Set by filingValue when keysOf asked for the value (TypeScript cannot see the call).
    const decoded = this.filingEntry as Entry<R> | undefined;
    this.filingEntry = undefined;
    if (keys === undefined) {
      this.otherKinds++;
      // A record with no kind is ReplayCache's (docs/tape-format.md): counted apart, so a miss of
      // createFetch or the proxy on a tape of those can say what the tape holds and what serves it.
      if (stored.head(KIND_FIELD).kind === undefined) this.cacheRecords++;
      return false;
    }
    if (decoded?.bad) return false;
    const test = this.test === undefined ? undefined : stored.head(TEST_FIELD).test;
    if (this.test !== undefined && this.notMine(test, typeof keys === 'string' ? [keys] : keys)) return false;
    if (atOpen && typeof keys === 'string' && decoded === undefined && !live && stored.expiresAt === undefined && this.slotAt(keys) === undefined) {
      // The first recording of its key, filed by its head alone: no object is made for it
      // until it is looked at (see slots).
      const n = this.kind.groupLength?.(keys) ?? 0;
      this.setSlot(keys, this.nextIndex());
      this.fileUnlooked(keys.slice(0, n), keys.slice(n), stored);
      return true;
    }
    const list = typeof keys === 'string' ? [keys] : keys;
    if (list.length === 0) return false;
    const entry = decoded ?? newEntry<R>('', stored);
    entry.key = list[0]!;
    entry.mine = this.test !== undefined && test === this.test;
    if (live) entry.old = this.ended(stored, live, test);
    if (stored.expiresAt !== undefined) this.expiring = true;
    for (const k of list) {
      const s = this.fileUnder(k, entry);
      entry.slot ??= s;
      // Record mode compares re-recordings with what an ended run left, not with an open
      // writer's recordings nor with later arrivals. A test's writer compares with its own
      // only: keeping a recording that names no test would put it among the test's own.
      if (entry.old && this.mode === 'record' && (this.test === undefined || entry.mine) && !handWritten(stored)) (s.olds ??= []).push(entry);
    }
    const i = this.nextIndex();
    if (atOpen) {
      this.loadedGroups[i] = '';
      this.loadedKeys[i] = entry.key;
      this.loadedStored[i] = stored;
    }
    this.all[i] = entry;
    if (this.filingAt >= 0) this.filingAt++;
    return true;
  }

  /**
   * Files a recording loaded at open with no entry yet: its key group, its key (undefined: kept
   * in {@link heads}, read again from its head) and stored form at the next index of {@link all}.
   */
  private fileUnlooked(group: string, key: string | undefined, stored: LoadedRecord): void {
    const i = this.nextIndex();
    this.all[i] = undefined;
    this.loadedGroups[i] = group;
    this.loadedKeys[i] = key;
    // From a table, its index: the record is made again when it is looked at.
    this.loadedStored[i] = this.tableIndex >= 0 ? this.tableIndex : stored;
    if (this.filingAt >= 0) this.filingAt++;
  }

  /**
   * The slot of `key`, made now (with its entry) for a recording filed at open by its key
   * alone (see {@link slots}).
   */
  private slotOf(key: string): Slot<R> | undefined {
    const s = this.slotAt(key);
    return typeof s === 'number' ? this.upgrade(s) : s;
  }

  /**
   * Makes the entry and slot of the recording loaded at `index` that nothing looked at yet,
   * and files the slot under its key (which has no slot yet: a later recording of the same key
   * would have made this one's at open).
   */
  private upgrade(index: number): Slot<R> {
    const group = this.loadedGroups[index]!;
    const rest = this.headKey(index);
    const e = newEntry<R>(group === '' ? rest : group + rest, this.storedAt(index));
    const slot = new Slot(e);
    e.slot = slot;
    let g = this.slots.get(group);
    if (g === undefined) this.slots.set(group, (g = new Map()));
    g.set(rest, slot);
    this.all[index] = e;
    return slot;
  }

  /** What {@link slots} (or {@link heads}) holds for a (joined) key. */
  private slotAt(key: string): Slot<R> | number | undefined {
    const n = this.kind.groupLength?.(key) ?? 0;
    const group = n === 0 ? '' : key.slice(0, n);
    const rest = n === 0 ? key : key.slice(n);
    const s = this.slots.get(group)?.get(rest);
    if (s !== undefined || !this.heads) return s;
    const i = this.findHead(group, rest, keyHash(rest));
    return i < 0 ? undefined : i;
  }

  /** The index of the recording filed in {@link heads} under `group` and `key`, or -1. */
  private findHead(group: string, key: string, hash: number): number {
    this.probeGroup = group;
    this.probeKey = key;
    return this.heads!.find(hash, this.isProbed);
  }

  /** The key (without its group) of the recording loaded at `index`, read again from its head when not kept. */
  private headKey(index: number): string {
    const kept = this.loadedKeys[index];
    if (kept !== undefined) return kept;
    const stored = this.storedAt(index)!;
    return this.kind.keyParts!(stored.head(this.kind.headFields, this.kind.headDeep))![1];
  }

  private setSlot(key: string, s: Slot<R> | number): void {
    const n = this.kind.groupLength?.(key) ?? 0;
    const name = n === 0 ? '' : key.slice(0, n);
    let group = this.slots.get(name);
    if (group === undefined) this.slots.set(name, (group = new Map()));
    group.set(n === 0 ? key : key.slice(n), s);
  }

  /** The (joined) key of the recording loaded at `index`. */
  loadedKey(index: number): string {
    const g = this.loadedGroups[index]!;
    return g === '' ? this.headKey(index) : g + this.headKey(index);
  }

  /** The entry at `index` of {@link all}, made now for a recording not looked at yet. */
  private entryAt(index: number): Entry<R> | undefined {
    const e = this.all[index];
    if (e !== undefined || index >= this.loadedKeys.length) return e;
    this.upgrade(index);
    return this.all[index];
  }

  /**
   * Shared stores (Redis): files the recordings other writers made under a record `kind` and
   * `key` since this collection opened, so the next lookup of that key finds them in their turn.
   * Returns how many were added (0 for a backend that is not shared, and in modes that do not
   * serve). A store that cannot be reached rejects (E_STORE_UNAVAILABLE).
   *
   * @example
   * if (!col.next(k) && (await col.refresh({ kind: 'http', key }))) hit = col.next(k)
   */
  async refresh(head: { kind?: string; key: string }): Promise<number> {
    if (!this.serves || !this.backend.refresh || this.closing) return 0;
    let n = 0;
    for (const stored of await this.backend.refresh(head)) if (this.file(stored, undefined, false)) n++;
    return n;
  }

  /** Whether other writers may add recordings while this collection is open (see refresh). */
  get shared(): boolean {
    return typeof this.backend.refresh === 'function';
  }

  /** Whether the store had damage at open (a gap in a key's `repeat`s on a sound store was there before it was written). */
  get damagedAnywhere(): boolean {
    return this.lost.length > 0 || this.damageOffsets().length > 0;
  }

  /** Byte offsets of the damage found at open (lost records first), for a miss to point at. */
  get damageAt(): number[] {
    return [...new Set([...this.lost.map((l) => l.at), ...this.damageOffsets()])];
  }

  /** Where the damage found at open is; notes about the tape (keys of an older version, an interrupted record run) are not damage. */
  private damageOffsets(): number[] {
    // A record of a newer version is intact: not damage either.
    return this.warnings.filter((w) => !w.code.startsWith('TAPEDECK_') && w.code !== 'E_TAPE_VERSION').map((w) => w.offset);
  }

  /** Where the records live (a file path, `memory:<name>`, a Redis key). */
  get location(): string {
    return this.backend.location;
  }
  /** The command that lists this store's damage: `tapedeck verify <tape>`, or a Redis namespace's own. */
  get verifyCommand(): string {
    return this.backend.verifyCommand ?? `tapedeck verify ${this.location}`;
  }

  /** Whether this mode serves recordings (replay, update). */
  get serves(): boolean {
    return this.mode === 'replay' || this.mode === 'update';
  }

  /** Whether this mode writes (record, update). */
  get records(): boolean {
    return this.mode === 'record' || this.mode === 'update';
  }

  /**
   * Records of the store that are not of this kind (another writer's: HTTP recordings on a
   * ReplayCache tape, MCP or realtime ones): a miss on a store that has only those says so.
   */
  otherKinds = 0;

  /** Of {@link otherKinds}, the ReplayCache records (records with no `kind`). */
  cacheRecords = 0;

  /** Number of recordings of this kind (loaded and appended; bad ones not counted once found). */
  get size(): number {
    let n = 0;
    for (const e of this.all) if (e === undefined || !e.bad) n++;
    return n;
  }

  /**
   * Whether a stored record was made by a run that had ended when this writer opened, or, for a
   * retry of a test (see retryRun), by an earlier attempt of that test: that attempt failed, and
   * replay is to give the test what its last attempt got. `test` is the record's.
   */
  private ended(stored: LoadedRecord, live: ReadonlySet<string>, test?: unknown): boolean {
    const run = stored.head(RUN_FIELD).run;
    // A retry's recordings belong to the run it retries in: live while that run is.
    if (typeof run !== 'string' || (!live.has(run) && !live.has(retryOf(run)?.run ?? run))) return true;
    return this.test !== undefined && test === this.test && earlierAttempt(run, this.run);
  }

  /** Files an entry last among the recordings of `key`. */
  private fileUnder(key: string, e: Entry<R>): Slot<R> {
    const s = this.slotOf(key);
    if (s) {
      s.push(e);
      return s;
    }
    const created = new Slot(e);
    this.setSlot(key, created);
    return created;
  }

  /** The entry's value, decoded the first time; undefined (and a warning) if it is not usable. */
  private materialize(e: Entry<R>): R | undefined {
    if (e.value !== undefined || e.bad) return e.value;
    let v: unknown;
    try {
      v = e.stored!.value();
    } catch (err) {
      if (!(err instanceof TapedeckError)) throw err;
      // A value of a class this process has not registered: intact, not damage; the call it answers gets the error.
      if (err.code === 'E_TAPE_TYPE') this.newerRecords.set(e, err);
      else this.warnings.push({ code: err.code, offset: e.stored!.at, message: err.message });
      e.bad = true;
      return undefined;
    }
    if (!this.kind.is(v)) {
      // A newer tapedeck's record: intact, but not one this tapedeck can serve. Said as such
      // (the call it answers gets the error, see next()), not as damage verify cannot find.
      const at = e.stored!.at;
      const newer = this.kind.newer?.(v, `${this.backend.location}: ${this.backend.recordAt?.(at) ?? `the record at byte ${at}`}`, { file: this.backend.location, offset: at });
      if (newer) {
        this.warnings.push({ code: newer.code, offset: at, message: newer.message });
        this.newerRecords.set(e, newer);
        e.bad = true;
        return undefined;
      }
      // Keyed as one of ours by its head, but the rest is not: a malformed record (another
      // tool's record never gets here: its head has no key of this kind). It decoded, so it is
      // not damage: a call it answers is told what it holds, not to look for damage.
      const bad = new TapedeckError('E_TAPE_CORRUPT', `${this.backend.location}: the ${this.kind.name} at ${at} is malformed (${this.kind.misfit?.(v) ?? `its fields are not those of a ${this.kind.name}`}); skipped.`, {
        file: this.backend.location,
        offset: at,
        hint: 'Record the call again.',
      });
      this.warnings.push({ code: bad.code, offset: at, message: bad.message });
      this.newerRecords.set(e, bad);
      e.bad = true;
      return undefined;
    }
    e.value = v;
    if (typeof v === 'object' && v !== null) this.byValue.set(v, e);
    return v;
  }

  /**
   * The next recording of `key` in recorded order (the k-th lookup gets the k-th recording), or
   * undefined past the last one (with `repeatLast`, the last one again) and in modes that do not
   * serve. Damage never moves an answer: the k-th call gets E_TAPE_DAMAGED when the k-th
   * recording is damaged, the last one included (past the end, when damaged records that may be
   * this key's follow its last intact one, or when the last one again is damaged).
   *
   * @example
   * col.next(key) // first recording; col.next(key) // second; ...
   */
  next(key: string, opts: { repeatLast?: boolean } = {}): R | undefined {
    if (!this.serves) return undefined;
    const s = this.slotOf(key);
    if (!s) {
      // No intact recording at all: a miss, unless the backend says a lost record was this key's.
      const lost = this.lost.length > 0 ? this.lostOf(key) : undefined;
      if (lost) throw this.damaged(key, 0, undefined, { at: lost.at });
      return undefined;
    }
    if (s.served < s.length) {
      const e = s.at(s.served)!;
      // The k-th call gets the k-th recording or an error, never a neighbour: a recording whose
      // `repeat` is past k follows lost ones, each keeping its turn, unless writers that did not
      // see the same store numbered it (./turns.ts); one that does not decode is it.
      const lost = this.lostAhead(s, s, e);
      const k = s.turn(e.named);
      if (lost > 0) {
        s.pass(e.named);
        throw this.damaged(key, k, e.stored?.at, undefined, true);
      }
      s.served++;
      s.pass(e.named);
      // Expired since it was loaded (a Redis TTL): gone, as for a reader that opens now.
      if (e.stored?.expiresAt !== undefined && Date.now() >= e.stored.expiresAt) return undefined;
      const v = this.materialize(e);
      // The record itself is the damaged one: not the next intact one, as `near` would say.
      if (v === undefined) throw this.newerRecords.get(e) ?? this.damaged(key, k, undefined);
      e.used = true;
      return v;
    }
    // Past the last intact recording: this call may be the turn of a lost one, which nothing
    // after it numbers. Neither the last one again nor a miss would say so.
    const lost = this.lostAfter(key, s);
    if (lost) throw lost;
    const last = opts.repeatLast ? lastLive(s) : undefined;
    if (last) {
      const v = this.materialize(last);
      if (v !== undefined) {
        this.repeatsServed++;
        if (!last.stored) this.repeatsOfMade++;
        return v;
      }
      // The last one is damaged: the one before it would be another call's answer.
      this.repeatOf(last);
      const newer = this.newerRecords.get(last);
      if (newer) throw newer;
      throw this.damaged(key, Math.max(0, s.turn(last.named) - 1), undefined);
    }
    return undefined;
  }

  /**
   * The recording a call of `key` past its last one is served again (what {@link next} gives with
   * `repeatLast` there), read without serving it: undefined when the key has none intact and
   * unexpired. Update mode asks it before recording such a call's answer again.
   *
   * @example
   * const last = col.lastOf(key) // undefined: nothing to serve again
   */
  lastOf(key: string): R | undefined {
    const s = this.slotOf(key);
    const last = s && lastLive(s);
    // A damaged last one (undefined): served again it is an error, not the one before it.
    return last && this.materialize(last);
  }

  /**
   * For a caller that picks recordings itself (see {@link use}) and serves the last one of a key
   * again: E_TAPE_DAMAGED when damaged records that may be later recordings of its key follow
   * it in the store (this call may be one of their turns), else undefined.
   *
   * @example
   * const lost = col.lostPast(rec); if (lost) throw lost; // before serving rec a second time
   */
  lostPast(value: R): TapedeckError | undefined {
    if (this.lost.length === 0) return undefined;
    const e = typeof value === 'object' && value !== null ? this.byValue.get(value) : undefined;
    return e?.slot ? this.lostAfter(e.key, e.slot) : undefined;
  }

  /**
   * For a caller that files a key's loaded recordings itself, with stand-ins for lost ones (the
   * proxy's matcher): the turns (`first` to `first + count - 1`, among its key's, or its test's)
   * of the recordings lost before the one loaded at `index`, by the rule {@link next} serves by
   * (./turns.ts); undefined when none were. `repeat` is that recording's, read by the caller:
   * one numbered 0 (or not numbered) follows no lost one, and nothing more is read.
   *
   * @example
   * const lost = col.lostBefore(i, head.repeat)
   * if (lost) for (let k = lost.first; k < lost.first + lost.count; k++) standIns.push(k)
   */
  lostBefore(index: number, repeat: unknown): { first: number; count: number } | undefined {
    if (typeof repeat !== 'number' || !(repeat > 0)) return undefined;
    const e = this.entryAt(index);
    const s = e?.slot;
    if (!s) return undefined;
    if (s.planned !== s.length) {
      // Worked out once for the key's recordings (a key recorded in a loop is filed whole).
      const turns = new Turns();
      s.plan = undefined;
      for (let i = 0; i < s.length; i++) {
        const o = s.at(i)!;
        const lost = this.lostAhead(turns, s, o);
        if (lost > 0) (s.plan ??= new Map()).set(o, { first: turns.turn(o.named), count: lost });
        for (let k = 0; k <= lost; k++) turns.pass(o.named);
      }
      s.planned = s.length;
    }
    return s.plan?.get(e!);
  }

  /**
   * E_TAPE_DAMAGED for a call past the last stored recording of `key` when a lost record that
   * may be one of its recordings follows that one: one the backend says is this key's, or one
   * whose key is unknown (a damaged tape frame cannot say whose it was). Records of a key are
   * appended in order, so a lost one before its last intact recording is not a later one; one
   * of those is told by the `repeat` numbering instead (see {@link next}).
   */
  private lostAfter(key: string, s: Slot<R>): TapedeckError | undefined {
    if (this.lost.length === 0) return undefined;
    let last: LoadedRecord | undefined;
    for (let i = s.length - 1; i >= 0 && !last; i--) last = s.at(i)!.stored;
    if (!last) return undefined;
    const head = last.head(KIND_KEY_FIELDS);
    const kind = typeof head.kind === 'string' ? head.kind : 'cache';
    const at = last.at;
    const hit = this.lost.find((d) => d.at > at && (d.record === undefined || (d.record.kind === kind && d.record.key === head.key)));
    if (!hit) return undefined;
    const e = s.at(s.length - 1)!;
    this.repeatOf(e);
    return this.damaged(key, s.turn(e.named), undefined, { after: at, at: hit.at });
  }

  /** A lost record the backend says was filed under `key` (see RecordKind.storedKey). */
  private lostOf(key: string): { at: number } | undefined {
    const mine = this.kind.storedKey?.(key);
    return mine && this.lost.find((d) => d.record !== undefined && d.record.kind === mine.kind && d.record.key === mine.key);
  }

  /**
   * Tells the collection a recording was served by someone else's choice (the proxy's matcher
   * picks LLM recordings by signature or sequence, not by key): it counts as used, and the
   * ordered repeats of its key continue after it.
   *
   * @example
   * const m = matcher.match(request); col.use(m.recording.response)
   */
  use(value: R): void {
    const e = typeof value === 'object' && value !== null ? this.byValue.get(value) : undefined;
    if (!e) return;
    e.used = true;
    const s = e.slot;
    if (!s) return;
    for (let i = s.served; i < s.length; i++) {
      if (s.at(i) !== e) continue;
      // The recordings it was picked over pass their turns, and lost ones before it theirs.
      for (let j = s.served; j < i; j++) {
        const skipped = s.at(j)!;
        this.repeatOf(skipped);
        s.pass(skipped.named);
      }
      for (let k = this.lostAhead(s, s, e); k >= 0; k--) s.pass(e.named);
      s.served = i + 1;
      break;
    }
  }

  /**
   * Whether a recording was served already (or recorded in this run), so serving it now is a
   * repeat.
   *
   * @example
   * if (col.isUsed(rec)) { const lost = col.lostPast(rec); if (lost) throw lost }
   */
  isUsed(value: R): boolean {
    const e = typeof value === 'object' && value !== null ? this.byValue.get(value) : undefined;
    return e?.used === true;
  }

  /**
   * Whether a recording was made by this run (appended here, not loaded at open or from other
   * writers): update mode answers the same request asked again with it, unsent. Served again,
   * that is not a request asked more often than when it was recorded, as a loaded one's is.
   *
   * @example
   * if (m.repeat) { repeats++; if (col.madeHere(rec)) repeatsOfMade++ }
   */
  madeHere(value: R): boolean {
    const e = typeof value === 'object' && value !== null ? this.byValue.get(value) : undefined;
    return e !== undefined && e.stored === undefined;
  }

  /** The `repeat` of an entry: its own, or read from the stored record's head (with the test it names, into `named`). */
  private repeatOf(e: Entry<R>): number | undefined {
    if (e.repeat === undefined && e.stored) {
      const head = e.stored.head(REPEAT_FIELDS);
      e.repeat = typeof head.repeat === 'number' ? head.repeat : -1;
      e.named = typeof head.test === 'string' ? head.test : undefined;
    }
    return e.repeat === undefined || e.repeat < 0 ? undefined : e.repeat;
  }

  /**
   * How many turns of lost recordings come before the recording `e` of slot `s`, the turns of
   * `t` having passed: those its `repeat` is ahead by, when that is loss (see aheadIsLoss), else 0.
   */
  private lostAhead(t: Turns, s: Slot<R>, e: Entry<R>): number {
    const repeat = this.repeatOf(e); // reads the test it names too
    const ahead = t.ahead(e.named, repeat);
    return ahead > 0 && this.aheadIsLoss(s, e) ? ahead : 0;
  }

  /**
   * Whether the recording `e` of slot `s`, numbered ahead of its turn, follows lost recordings
   * (see ./turns.ts aheadIsLoss): damage before it on the store that may be its key's, or no
   * recording of the key by another run (which would have replaced what its writer counted).
   */
  private aheadIsLoss(s: Slot<R>, e: Entry<R>): boolean {
    const marks = function* (this: RecordCollection<R>): Generator<TurnMark> {
      for (let i = 0; i < s.length; i++) {
        const o = s.at(i)!;
        if (o !== e) yield this.markOf(o);
      }
    };
    return aheadIsLoss(this.markOf(e), marks.call(this), this.damageBefore(e));
  }

  /** What an entry says of its turn (./turns.ts): its `repeat`, test and run. */
  private markOf(e: Entry<R>): TurnMark {
    const repeat = this.repeatOf(e);
    // Appended by this writer (no stored form): its run.
    const run = e.stored ? e.stored.head(RUN_FIELD).run : this.run;
    return { repeat, test: e.named, run };
  }

  /**
   * Whether a record lost to damage lies before `e` on the store and may be of its key: one
   * whose key is unknown (a damaged tape frame), or one the backend says is its key's (Redis).
   */
  private damageBefore(e: Entry<R>): boolean {
    if (this.lost.length === 0) return false;
    const stored = e.stored;
    if (!stored) return true;
    const head = stored.head(KIND_KEY_FIELDS);
    const kind = typeof head.kind === 'string' ? head.kind : 'cache';
    return this.lost.some((d) => d.at < stored.at && (d.record === undefined || (d.record.kind === kind && d.record.key === head.key)));
  }

  /**
   * E_TAPE_DAMAGED for the k-th recording (0-based) of `key`: what was lost and how to get it
   * back. `near`: the next intact recording; `past`: the call is past the last intact one (at
   * `after`; none when absent) and lost records follow it (the first at `at`). `gap`: the next
   * recording's `repeat` says the k-th is not there (rather than there and undecodable).
   */
  private damaged(key: string, k: number, near: number | undefined, past?: { after?: number; at: number }, gap = false): TapedeckError {
    const n = k + 1;
    const nth = `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;
    const lost = this.damageOffsets();
    if (gap && lost.length === 0 && this.lost.length === 0) {
      // Nothing on this tape is damaged: the recording was gone before it was written (an
      // import of an export that left it out as damaged), so verify would list nothing.
      return new TapedeckError(
        'E_TAPE_DAMAGED',
        `The ${nth} recording of ${key.replace('\u0000', ' ')} in ${this.location} is missing (the next one${near !== undefined ? `, at ${near},` : ''} is numbered after it); nothing on this tape is damaged: it was lost before this tape was written (an import of an export that left a damaged recording out); it is not replaced by another call's recording.`,
        { file: this.location, key, repeat: k, missing: true, hint: 'Record this test or request again (TAPEDECK_MODE=record, or tapedeck serve --mode record) to replace the missing recording.' },
      );
    }
    const where = past
      ? past.after === undefined
        ? ` (none of its recordings is intact: the record at ${past.at} was lost to damage)`
        : ` (its last intact recording, at ${past.after}, is followed by a record lost to damage at ${past.at}, which may be this one)`
      : near !== undefined
        ? ` (the next intact one is at ${near}${lost.length > 0 ? `; damage found at ${lost.slice(0, 5).join(', ')}` : ''})`
        : '';
    return new TapedeckError('E_TAPE_DAMAGED', `The ${nth} recording of ${key.replace('\u0000', ' ')} in ${this.location} is damaged${where}; it is not replaced by another call's recording.`, {
      file: this.location,
      key,
      repeat: k,
      hint: `Record this test or request again (TAPEDECK_MODE=record, or tapedeck serve --mode record) to replace the damaged recording; \`${this.verifyCommand}\` lists the damage.`,
    });
  }

  /** Whether a recording served by someone else's choice (see {@link use}) has expired since it was loaded. */
  expired(value: R): boolean {
    // The replay hot path asks on every request: stores without TTLs answer at once.
    if (!this.expiring) return false;
    const e = typeof value === 'object' && value !== null ? this.byValue.get(value) : undefined;
    const at = e?.stored?.expiresAt;
    return at !== undefined && Date.now() >= at;
  }

  /**
   * The recording {@link next} would serve `key` now, without serving it: undefined when next
   * would serve none (none left, a lost or expired one ahead, which next reports). A caller that
   * must refuse a recording (the AI SDK middleware, for another provider's model) looks first,
   * so its refusal does not use up the turn of the call the recording was made for.
   */
  upcoming(key: string): R | undefined {
    if (!this.serves) return undefined;
    const s = this.slotOf(key);
    if (!s || s.served >= s.length) return undefined;
    const e = s.at(s.served)!;
    if (this.lostAhead(s, s, e) > 0) return undefined;
    if (e.stored?.expiresAt !== undefined && Date.now() >= e.stored.expiresAt) return undefined;
    return this.materialize(e);
  }

  /** How many recordings `key` has and how many were served so far. */
  count(key: string): { recorded: number; served: number } {
    const s = this.slotAt(key);
    if (typeof s === 'number') return { recorded: 1, served: 0 };
    return { recorded: s?.length ?? 0, served: s?.served ?? 0 };
  }

  /**
   * Record mode: the k-th recording `key` had when the store was opened, for comparing a
   * re-recording with it (see {@link reuse}).
   */
  previous(key: string, k: number): R | undefined {
    const e = this.slotOf(key)?.loaded(k);
    return e && this.materialize(e);
  }

  /**
   * Record mode: keeps the k-th recording `key` had at open as this run's recording of it (the
   * answer came out the same), so an unchanged re-record leaves the store byte for byte as it was.
   */
  reuse(key: string, k: number): void {
    const e = this.slotOf(key)?.loaded(k);
    if (!e) return;
    e.used = true;
    this.reused.add(e);
    this.rerecorded.add(key);
  }

  /**
   * How many indexes {@link loadedValue}, {@link loadedObjectJson} and {@link keyAt} take: the
   * recordings loaded at open, then those appended in this run, in {@link entries} order
   * (damaged ones included; they give no value).
   */
  get indexes(): number {
    return this.all.length;
  }

  /**
   * The key of the recording at `index` (see {@link indexes}), read without decoding it.
   *
   * @example
   * for (let i = 0; i < col.indexes; i++) byKey.set(col.keyAt(i), i)
   */
  keyAt(index: number): string {
    return this.all[index]?.key ?? this.loadedKey(index);
  }

  /** Every usable recording of this kind, in order: loaded, then appended in this run. */
  *entries(): IterableIterator<{ key: string; value: R; at?: number }> {
    for (let i = 0; i < this.all.length; i++) {
      const e = this.entryAt(i)!;
      const v = this.materialize(e);
      if (v !== undefined) yield e.stored ? { key: e.key, value: v, at: e.stored.at } : { key: e.key, value: v };
    }
  }

  /**
   * Calls `fn` for each recording loaded at open, in order, without decoding any: the key it is
   * filed under (as its group and the rest, see RecordKind.keyParts: the group is '' and `key`
   * the whole key for a kind without groups; `key` is undefined for a grouped recording whose
   * key is not kept, see {@link loadedKey}), where it is stored, and its index for
   * {@link loadedValue}. No object or key string is made per recording: a proxy indexes a
   * large tape from the key groups alone.
   *
   * @example
   * col.forEachLoaded((group, key, at, i) => byKey.set(group + (key ?? col.loadedKey(i)), i))
   */
  forEachLoaded(fn: (group: string, key: string | undefined, at: number, index: number) => void): void {
    const all = this.all;
    for (let i = 0; i < all.length; i++) {
      const e = all[i];
      if (e === undefined) fn(this.loadedGroups[i]!, this.loadedKeys[i]!, this.storedOffset(i), i);
      else if (e.stored && !e.bad) fn('', e.key, e.stored.at, i);
    }
  }

  /**
   * {@link forEachLoaded} by runs: consecutive recordings of one key group that nothing looked
   * at yet (indexes `from` to `to - 1`) come in one call, with `key` undefined; any other
   * recording in a call of its own (`to` is `from + 1`). A proxy counts a large tape's
   * recordings per route in a few calls.
   *
   * @example
   * col.forEachLoadedRun((group, key, from, to) => count.set(group, (count.get(group) ?? 0) + to - from))
   */
  forEachLoadedRun(fn: (group: string, key: string | undefined, from: number, to: number) => void): void {
    const all = this.all;
    const groups = this.loadedGroups;
    const keys = this.loadedKeys;
    let i = 0;
    while (i < all.length) {
      const e = all[i];
      if (e !== undefined) {
        if (e.stored && !e.bad) fn('', e.key, i, i + 1);
        i++;
        continue;
      }
      const group = groups[i]!;
      let j = i + 1;
      if (group !== '' && keys[i] === undefined) while (j < all.length && all[j] === undefined && groups[j] === group && keys[j] === undefined) j++;
      fn(group, keys[i], i, j);
      i = j;
    }
  }

  /** A scalar field of the recording at `index`, read from its stored form without decoding it. */
  loadedField(index: number, field: string): HeadScalar | undefined {
    return this.loadedHead(index, [field])[field];
  }

  /** Scalar fields of the recording at `index` (see {@link loadedField}), read in one pass. */
  loadedHead(index: number, fields: readonly string[]): Readonly<Record<string, HeadScalar>> {
    return (this.all[index]?.stored ?? this.storedAt(index))?.head(fields, true) ?? {};
  }

  /**
   * The recording at `index` (see {@link forEachLoaded}), decoded the first time; undefined, with
   * a warning, for one that does not decode (damage).
   */
  loadedValue(index: number): R | undefined {
    const e = this.entryAt(index);
    return e && this.materialize(e);
  }

  /**
   * The error of the recording at `index` when {@link loadedValue} gave undefined for it though
   * it is intact: E_TAPE_VERSION for a record version newer than this tapedeck reads (see
   * RecordKind.newer), E_TAPE_CORRUPT for fields not of its kind (see RecordKind.misfit);
   * undefined for damage and for a recording that decodes.
   *
   * @example
   * const rec = col.loadedValue(i) ?? (() => { throw col.loadedNewer(i) ?? damaged })()
   */
  loadedNewer(index: number): TapedeckError | undefined {
    const e = this.all[index];
    return e === undefined ? undefined : this.newerRecords.get(e);
  }

  /**
   * One top-level member of the recording at `index`, decoded on its own where its backend can
   * (no entry is made or changed, the rest is not decoded or checked until {@link loadedValue}
   * is asked for); the decoded recording's member where it was decoded already. undefined for a recording without it, and for damage (with the warning
   * {@link loadedValue} gives).
   *
   * @example
   * col.loadedMember(i, 'request') // the request of recording i, its response left encoded
   */
  loadedMember(index: number, name: string): unknown {
    // Not decoded yet: the member on its own.
    const stored = this.undecoded(index);
    try {
      if (stored?.member) return stored.member(name);
    } catch (err) {
      // Told and marked as damage below, the way decoding it whole tells it.
      if (!(err instanceof TapedeckError)) throw err;
    }
    return (this.loadedValue(index) as Record<string, unknown> | undefined)?.[name];
  }

  /**
   * The JSON text (UTF-8) of the object at `path` in the recording at `index`, made from its
   * stored bytes where its backend can (see LoadedRecord.json; nothing is decoded, no entry is
   * made or changed). undefined otherwise (a recording decoded already, damage, a value that is
   * not plain JSON data, a backend that cannot, and a value that is no object):
   * {@link loadedMember} then gives the value. Objects only, because the callers key the text
   * as a request: a request stored as a string is keyed as the JSON text it holds, so its own
   * text (a JSON string) would be another request.
   *
   * @example
   * col.loadedObjectJson(i, ['request', 'body']) ?? col.loadedMember(i, 'request')
   */
  loadedObjectJson(index: number, path: readonly string[]): Uint8Array | undefined {
    try {
      const text = this.undecoded(index)?.json?.(path);
      return text !== undefined && text[0] === 0x7b ? text : undefined;
    } catch (err) {
      // Damage: loadedMember() finds it again, and tells it.
      if (!(err instanceof TapedeckError)) throw err;
    }
  }

  /**
   * The stored form of the recording at `index` while it is not decoded (an entry may exist
   * without its value: recordings of a repeated key get theirs at open); undefined once it is,
   * or for damage.
   */
  private undecoded(index: number): LoadedRecord | undefined {
    const e = this.all[index];
    return e === undefined ? this.storedAt(index) : e.value === undefined && !e.bad ? e.stored : undefined;
  }

  /** Where the recording at `index` is stored (see {@link forEachLoaded}). */
  loadedAt(index: number): number | undefined {
    return this.all[index]?.stored?.at ?? (index < this.loadedStored.length ? this.storedOffset(index) : undefined);
  }

  /** Whether the recording at `index` was served (or counted as used). */
  loadedUsed(index: number): boolean {
    return this.all[index]?.used === true;
  }

  /**
   * Appends a recording under `key` and resolves once the backend has it durably (appends made
   * while one is in flight share the next write: one lock, one fsync). Then it is served: to
   * the next lookup of `key` if every earlier recording was served (a call that missed is
   * answered by what it recorded on its next repeat), else in its turn. In record mode it
   * replaces, at close, the recordings `key` had at open. A no-op in replay and passthrough.
   *
   * `forRetry`: the recording is not the answer of the request that made it but of a call an
   * injected fault stood in for (update mode records its answer behind the fault): it waits
   * for that call's retry, which takes it in its turn, as its replay will (there the fault
   * stands in for no lookup). Served to the request that made it, the retry would be a call
   * past its recordings, which the run summary takes for a loop that runs longer.
   *
   * @example
   * await col.append(key, record)
   * await col.append(key, recordedBehindFault, { forRetry: true })
   */
  async append(key: string, record: R, opts: { forRetry?: boolean } = {}): Promise<void> {
    if (this.closing) {
      throw new TapedeckError('E_CLOSED', `The recordings in ${this.location} are closed; nothing more can be recorded.`, { file: this.location, hint: 'Open them again.' });
    }
    if (!this.records) return;
    const also = this.kind.replaces?.(key);
    if (this.unwritable) {
      this.failed.add(key);
      if (also !== undefined) this.failed.add(also);
      throw this.unwritable;
    }
    // Before anything is counted as in flight or re-recorded: a record that cannot be encoded
    // fails the call with nothing changed.
    const encoded = encodeRecord(this.kind, record);
    this.rerecorded.add(key);
    if (also !== undefined) this.rerecorded.add(also);
    // Its place among the key's recordings: those this run keeps (not the ones it replaces),
    // plus appends of the key still in flight. A test's own recordings are counted apart.
    const slot = this.slotOf(key);
    const pending = this.inFlight.get(key) ?? 0;
    const test = this.testFor(key, slot);
    const repeat = (test !== undefined && this.mode === 'record' ? keptMine(slot) : slot ? slot.length - (slot.olds?.length ?? 0) : 0) + pending;
    this.inFlight.set(key, pending + 1);
    if (test !== undefined) this.owned.add(key);
    const stored = stamp(encoded, this.run, repeat, test);
    try {
      await new Promise<void>((done, fail) => {
        this.batch.push({ values: [stored], done: (e) => (e === undefined ? done() : fail(e)) });
        this.flushing ??= this.drain();
      });
    } catch (e) {
      // Nothing of this key is replaced at close: the old recording stays the good one.
      this.failed.add(key);
      if (also !== undefined) this.failed.add(also);
      throw e;
    } finally {
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.inFlight.set(key, left);
      else this.inFlight.delete(key);
    }
    const before = this.slotOf(key);
    const fills = opts.forRetry !== true && (before === undefined || before.served === before.length);
    const entry = newEntry<R>(key, undefined);
    entry.value = record;
    entry.used = true;
    entry.repeat = repeat;
    entry.named = test;
    entry.mine = test !== undefined;
    if (typeof record === 'object' && record !== null) this.byValue.set(record, entry);
    const s = this.fileUnder(key, entry);
    entry.slot = s;
    if (fills) {
      s.served++;
      s.pass(test);
    }
    this.all.push(entry);
  }

  /**
   * The test an append of `key` names: this writer's test, unless the key is served from
   * recordings that are not the test's own (update mode, a call past the last of them with
   * strictOrder). That append then continues their sequence, naming no test, so a replay serves
   * the test the same answers in the same order as this run did.
   */
  private testFor(key: string, slot: Slot<R> | undefined): string | undefined {
    if (this.test === undefined) return undefined;
    return this.mode === 'record' || this.owned.has(key) || slot === undefined ? this.test : undefined;
  }

  private async drain(): Promise<void> {
    // Let appends issued in the same tick join the first write.
    await Promise.resolve();
    while (this.batch.length > 0) {
      const batch = this.batch;
      this.batch = [];
      let err: unknown;
      try {
        await this.backend.append(
          batch.flatMap((b) => b.values),
          { durable: this.durable },
        );
        this.writes++;
      } catch (e) {
        err = e ?? new Error('append failed');
      }
      for (const b of batch) b.done(err);
    }
    this.flushing = undefined;
  }

  /**
   * Record mode: a request of this run was made for `key` (it goes to the upstream to be
   * recorded). Its old recordings are then not unused: if the new answer never gets recorded (the
   * API failed, the stream was cut, the test swallowed the error), `pruneUnused` must not take
   * the only recording of a call the tests still make. A successful re-record replaces them.
   *
   * @example
   * col.ask(key) // before sending the request upstream
   */
  ask(key: string): void {
    if (this.mode === 'record') this.askedFor.add(key);
  }

  /**
   * Record mode: the stored recordings that a request of this run asked for (see {@link ask})
   * and that stay because no new answer of their key was stored. A run summary counts them
   * as used, so pruning after the run keeps them too.
   *
   * @example
   * for (const r of col.keptAsked()) used.add(String(r.head(['trace'], true).trace))
   */
  keptAsked(): LoadedRecord[] {
    const out: LoadedRecord[] = [];
    for (const key of this.askedFor) {
      if (this.rerecorded.has(key) && !this.failed.has(key)) continue;
      const s = this.slotOf(key);
      for (let i = 0; i < (s?.length ?? 0); i++) {
        const stored = s!.at(i)!.stored;
        if (stored) out.push(stored);
      }
    }
    return out;
  }

  /** Resolves once every append made so far is durable (or failed). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /**
   * Removes records chosen from the store's current contents (every kind, other writers'
   * included), atomically: compaction by the durable replay store, `tapedeck prune`.
   *
   * @example
   * await col.rewrite((records) => records.flatMap((r, i) => (isExpired(r.value()) ? [i] : [])))
   */
  async rewrite(select: RewriteSelect): Promise<{ kept: number; removed: unknown[] }> {
    await this.flush();
    const r = await this.backend.rewrite(select);
    this.warnings.push(...r.warnings);
    return { kept: r.kept, removed: r.removed };
  }

  /**
   * Waits for pending appends, applies the mode's rule (record: replace what this run
   * re-recorded) and `pruneUnused`, and closes the backend. Idempotent: later calls return the
   * first call's promise. With `{ abandon: true }` (a failed run) nothing is removed.
   */
  close(opts: CloseOptions & { abandon?: boolean } = {}): Promise<CloseReport> {
    this.closing ??= this.finish(opts);
    return this.closing;
  }

  private async finish(opts: CloseOptions & { abandon?: boolean }): Promise<CloseReport> {
    const report: CloseReport = { replaced: [], pruned: [] };
    let unfinished = false;
    try {
      await this.flush();
      if (!this.exists || opts.abandon || this.mode === 'passthrough') return report;
      // Only record mode replaces, and only pruning removes what was not re-recorded.
      if (this.mode !== 'record' && opts.pruneUnused !== true) return report;
      // Stored identities to remove, counted (equal content may be stored twice).
      const drop = new Map<string, { key: string; at: number; why: 'replaced' | 'pruned'; attempt: boolean }[]>();
      for (let i = 0; i < this.all.length; i++) {
        // A recording nothing looked at is only a candidate for pruning.
        const e = this.all[i] ?? (opts.pruneUnused === true ? this.entryAt(i) : undefined);
        if (!e?.stored || this.reused.has(e)) continue;
        let why: 'replaced' | 'pruned' | undefined;
        // A hand-written recording is kept: the API cannot be asked for it again (an error, a cut stream).
        if (this.mode === 'record' && e.old && this.rerecorded.has(e.key) && !this.failed.has(e.key) && !handWritten(e.stored)) why = 'replaced';
        // An intact recording this tapedeck cannot serve (a newer tapedeck's record version, a
        // class not registered here) is kept: nothing here can tell whether a run used it.
        else if (opts.pruneUnused && !e.used && !this.rerecorded.has(e.key) && !this.askedFor.has(e.key) && (e.old ?? (!this.live || this.ended(e.stored, this.live))) && !(this.materialize(e) === undefined && this.newerRecords.has(e))) why = 'pruned';
        if (!why) continue;
        const id = e.stored.id();
        const list = drop.get(id);
        // Made by an earlier attempt of this test in this run: a retry's replacement, not a re-record.
        const run = why === 'replaced' && this.test !== undefined ? e.stored.head(RUN_FIELD).run : undefined;
        const attempt = typeof run === 'string' && earlierAttempt(run, this.run);
        const item = { key: e.key, at: e.stored.at, why, attempt };
        if (list) list.push(item);
        else drop.set(id, [item]);
      }
      if (drop.size === 0) return report;
      const counts = { replaced: 0, pruned: 0 };
      // The replaced recordings by key: of an ended run (`ended`), or made by an earlier attempt
      // of the test in this run (`byAttempt`).
      const ended = new Map<string, number>();
      const byAttempt = new Map<string, number>();
      for (const list of drop.values()) for (const item of list) counts[item.why]++;
      await this.rewrite((records) => {
        const out: number[] = [];
        records.forEach((r, i) => {
          const list = drop.get(r.id());
          const item = list?.shift();
          if (!item) return;
          out.push(i);
          (item.why === 'replaced' ? report.replaced : report.pruned).push({ key: item.key, at: item.at });
          if (item.why === 'replaced') {
            const by = item.attempt ? byAttempt : ended;
            by.set(item.key, (by.get(item.key) ?? 0) + 1);
          }
        });
        return out;
      }).catch((e: unknown) => {
        // The new recordings are on the store beside the ones they were to replace: the writer's
        // registration stays, so once this process is gone the store still says so, as for a
        // record run killed before it closed.
        if (counts.replaced > 0) unfinished = true;
        throw closeRemovalFailure(e, counts);
      });
      // This run's appends (after the loaded recordings), each taking a replaced recording of its
      // key, else of the key it replaces too (RecordKind.replaces), while any is left: one of an
      // ended run first (re-recorded), else one an earlier attempt made (retried).
      const take = (from: Map<string, number>, key: string): boolean => {
        const took = [key, this.kind.replaces?.(key)].find((k) => k !== undefined && from.has(k));
        if (took === undefined) return false;
        const n = from.get(took)! - 1;
        if (n > 0) from.set(took, n);
        else from.delete(took);
        return true;
      };
      let rerecorded = 0;
      let retried = 0;
      for (let i = this.loadedStored.length; i < this.all.length && (ended.size > 0 || byAttempt.size > 0); i++) {
        const key = this.all[i]!.key;
        if (take(ended, key)) rerecorded++;
        else if (take(byAttempt, key)) retried++;
      }
      if (rerecorded > 0) report.rerecorded = rerecorded;
      if (retried > 0) report.retried = retried;
      return report;
    } finally {
      if (!unfinished) await this.writer?.release();
      await this.backend.close();
    }
  }
}

/** Throws the opener's reason it cannot record, before a writer or an empty store is made. */
function refuseRecording(opts: CollectionOptions<unknown>): void {
  const why = opts.cannotRecord?.(opts.mode);
  if (why !== undefined) throw why;
}

/** An entry with every field it may get, so all entries share one shape. */
function newEntry<R>(key: string, stored: LoadedRecord | undefined): Entry<R> {
  return { key, slot: undefined, stored, old: undefined, repeat: undefined, named: undefined, mine: false, value: undefined, bad: false, used: false };
}

/**
 * Record mode, a test's writer: how many of a key's recordings are the test's and stay (made by
 * a run still open, this one included; those of ended runs are replaced).
 */
function keptMine<R>(slot: Slot<R> | undefined): number {
  let n = 0;
  for (let i = 0; i < (slot?.length ?? 0); i++) {
    const e = slot!.at(i)!;
    if (e.mine && !e.old) n++;
  }
  return n;
}

const RUN_FIELD: readonly string[] = ['run'];

/** Whether a stored recording was written by hand (see hand-written-run.ts). */
function handWritten(stored: LoadedRecord): boolean {
  return isHandWrittenRun(stored.head(RUN_FIELD).run);
}

const KIND_KEY_FIELDS: readonly string[] = ['kind', 'key'];
const REPEAT_FIELDS: readonly string[] = ['repeat', 'test'];
const TEST_FIELD: readonly string[] = ['test'];
const KIND_FIELD: readonly string[] = ['kind'];

/**
 * The run a test's n-th retry (n >= 1) writes under, in the run `run`: its record writers
 * replace what the test's earlier attempts recorded in `run` (CollectionOptions.run).
 *
 * @example
 * retryRun('run-dir:/tmp/tapedeck-run-x', 1) // 'run-dir:/tmp/tapedeck-run-x (retry 1)'
 */
export function retryRun(run: string, n: number): string {
  return `${run} (retry ${n})`;
}

const RETRY_RUN = /^([^]*) \(retry (\d+)\)$/;

/**
 * The run a retry's run (see retryRun) retries in, and its number; undefined for any other run.
 * Most runs a record writer meets are not retries: they are told by their last character, not
 * by the expression.
 */
function retryOf(run: string): { run: string; n: number } | undefined {
  if (!run.endsWith(')')) return undefined;
  const m = RETRY_RUN.exec(run);
  return m ? { run: m[1]!, n: Number(m[2]) } : undefined;
}

/** Whether `earlier` is the run of an earlier attempt of a test whose current attempt is `run`. */
function earlierAttempt(earlier: string, run: string): boolean {
  const now = retryOf(run);
  if (!now) return false;
  if (earlier === now.run) return true;
  const then = retryOf(earlier);
  return then !== undefined && then.run === now.run && then.n < now.n;
}

/** The run named by TAPEDECK_RUN_ID (processes of one run share it), else a new random one. */
function newRun(): string {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.TAPEDECK_RUN_ID?.trim();
  return env ? env : globalThis.crypto.randomUUID();
}

/**
 * The stored form of a record: the kind's encoding, else its keys sorted in the record order. A
 * record with a reference cycle overflowed the stack there, a bare RangeError: it is E_CYCLE
 * (as ReplayCache.put says), naming where it refers back. The cycle is looked for only once the
 * stack overflowed, so a record without one costs nothing more.
 */
function encodeRecord<R>(kind: RecordKind<R>, record: R): unknown {
  try {
    return kind.encode ? kind.encode(record) : inRecordOrder(sortedKeys(record));
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    assertNoCycle(record, 'record');
    throw e;
  }
}

/**
 * The stored form with this writer's run, the record's place among its key's recordings and the
 * test that made it (if any), in the one field order (forms that are not records are unchanged).
 */
function stamp(stored: unknown, run: string, repeat: number, test: string | undefined): unknown {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored) || typeof (stored as { v?: unknown }).v !== 'number') return stored;
  return inRecordOrder({ ...(stored as Record<string, unknown>), run, repeat, ...(test !== undefined ? { test } : {}) });
}
