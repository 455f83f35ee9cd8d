/**
 * The Redis backend of the recording collection (src/store/backend.ts): the same records as a
 * tape, as the same bytes, in a Redis namespace shared by a fleet of proxies and test runners.
 * The layout and its atomic operations are in ./redis.ts; docs/redis.md has the whole story
 * (set-up, cluster, TTL, namespaces, failure behaviour).
 *
 * How the backend contract maps onto Redis:
 * - load:    every live record of the namespace, in the global order Redis handed out;
 *            records decode lazily, their key is peeked from the payload bytes.
 * - append:  records are encoded first (a value that cannot be stored fails the call with
 *            nothing written), get consecutive sequence numbers in one step, and each request
 *            key's records are written by one script: a reader never sees part of a record.
 * - rewrite: reads the current records, removes exactly the chosen ones by sequence number
 *            (records other writers append meanwhile have new numbers and are never touched),
 *            one atomic script per request key.
 * - durability: what the Redis server's persistence gives (docs/redis.md: appendonly yes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { TapedeckError } from '../../errors.ts';
import { describeArgument } from '../../option-names.ts';
import type { LoadedRecord, LoadResult, RecordBackend, RewriteSelect, StoreWarning, WriterHandle } from '../backend.ts';
import { decodePayload, FRAME_HEADER_SIZE, isRedactionSalt, parseHeader } from '../tape-codec.ts';
import { refuseUnregistered } from '../unregistered-type.ts';
import { peekFrame, recordBytes } from '../tape-file.ts';
import { checkRedisOptions, collectionKeyOf, namespaceOf, RedisRecords, type RedisStoreOptions, type StoredRecord } from './redis.ts';
import { parseRedisUrl } from './redis-connection.ts';
import { redisCliTarget, redisLocation, redisRecordDamage, redisRecordPlace } from './redis-damage.ts';
import { indexLost } from './redis-missing.ts';
import { interruptedRedisRuns } from './redis-interrupted.ts';
import { holderId } from '../tape-file.ts';
import { saltForNew } from '../salt-group.ts';

export type { RedisStoreOptions } from './redis.ts';

/** A payload as a frame whose 12-byte header lies before it (what peekFrame and decodeFrame read). */
const asFrame = (payload: Buffer) => ({ offset: -FRAME_HEADER_SIZE, length: payload.length + FRAME_HEADER_SIZE });

/**
 * A RecordBackend in Redis, under a namespace: one store shared by CI jobs and machines
 * (docs/redis.md).
 *
 * @example
 * const backend = await RedisBackend.open('redis://127.0.0.1:6379/0', { namespace: 'my-app' });
 * const col = await RecordCollection.open(backend, { mode: 'update', kind: cacheRecords([]) });
 */
export class RedisBackend implements RecordBackend {
  readonly location: string;
  /** The key prefix of this store's records. */
  readonly namespace: string;
  /** `tapedeck verify '<url>' --namespace NS`: what lists the records of this namespace that do not read. */
  readonly verifyCommand: string;
  readonly absent: string;
  /** The namespace as the command line takes it (the password masked), for the fixes messages name. */
  private readonly cliTarget: string;
  private readonly url: string;
  private readonly opts: RedisStoreOptions;
  private connecting: Promise<RedisRecords> | undefined;
  /**
   * The records this handle has loaded or appended, by collection key and sequence number, with
   * their bytes: refresh returns only the others. Bytes too, not the number alone: a namespace
   * that lost its keys (a Redis restart without persistence) may hold a new record under a
   * number this handle saw before it was lost, and that record is new. (Loaded records keep
   * their bytes anyway; an appended one is kept as its digest, not a second copy.)
   */
  private readonly seen = new Map<string, Buffer | string>();
  salt: string | undefined;
  /** The namespace's header as loaded (it holds `salt`): appends put it back if the namespace lost it. */
  private header: Uint8Array | undefined;
  /**
   * Where a problem found after load is told (RecordBackend.onWarning): the proxy and
   * createFetch set their own warning channel; unset, it is a process warning (TAPEDECK_STORE).
   */
  onWarning?: (message: string) => void;
  /** The ended record runs this writer took over at its open, for its load to name (see openWriter). */
  private ended: { info: Record<string, unknown> }[] | undefined;
  /** Set by an append that found the namespace emptied (see {@link tellEmptied}), until told. */
  private restored = false;
  /** An emptying was told: the recordings it read from the namespace were named then, not again. */
  private emptiedTold = false;
  private readonly onRestored = (): void => {
    this.restored = true;
  };

  /**
   * A backend on the namespace at `url`; it connects on first use (the collection's open), so
   * a Redis that is down is E_STORE_UNAVAILABLE there. {@link RedisBackend.open} connects now.
   */
  constructor(url: string, opts: RedisStoreOptions = {}) {
    // An options object in its place read as "Invalid Redis URL [object Object]".
    if (typeof url !== 'string') throw new TapedeckError('E_ARG', `RedisBackend takes a Redis URL string; got ${describeArgument(url)}.`, { hint: "new RedisBackend('redis://127.0.0.1:6379/0', { namespace: 'my-app' })" });
    const target = parseRedisUrl(url); // a bad URL fails here, masked
    checkRedisOptions(opts, target.masked);
    this.url = url;
    this.opts = opts;
    this.namespace = namespaceOf(url, opts);
    this.location = redisLocation(target.masked, this.namespace);
    this.cliTarget = redisCliTarget(target.masked, this.namespace);
    this.verifyCommand = `tapedeck verify ${this.cliTarget}`;
    this.absent = `${this.location} holds no recordings (the URL, database or namespace may be wrong)`;
  }

  /** A record's place for messages: its sequence number, as `tapedeck verify` names it (not a byte offset). */
  recordAt(at: number): string {
    return `record ${at}`;
  }

  /**
   * Connects now; a Redis that is down is E_STORE_UNAVAILABLE here, with the URL masked and the
   * fix.
   *
   * @example
   * const backend = await RedisBackend.open(process.env.TAPEDECK_STORE ?? 'redis://127.0.0.1:6379/0')
   */
  static async open(url: string, opts: RedisStoreOptions = {}): Promise<RedisBackend> {
    const b = new RedisBackend(url, opts);
    await b.records();
    return b;
  }

  /** The records layer, connected on first use (also what push and pull use). */
  records(): Promise<RedisRecords> {
    if (!this.connecting) {
      this.connecting = RedisRecords.open(this.url, this.opts);
      // A failed connect is retried by the next call, not remembered.
      this.connecting.catch(() => (this.connecting = undefined));
    }
    return this.connecting;
  }

  private view(r: StoredRecord): LoadedRecord {
    let id: string | undefined;
    return {
      at: r.seq,
      head: (fields?: readonly string[], deep?: boolean | number) => peekFrame(r.payload, asFrame(r.payload), fields, deep),
      value: () => {
        try {
          // Handed to the program: a value of a class it has not registered is E_TAPE_TYPE.
          return refuseUnregistered(() => decodePayload(r.payload), `${this.location}: ${redisRecordPlace(this.namespace, r)}`, { file: this.location, offset: r.seq });
        } catch (e) {
          if (e instanceof TapedeckError && e.code === 'E_TAPE_TYPE') throw e;
          // Said where it is in Redis: a namespace has no byte offsets and no frame checksums.
          throw new TapedeckError('E_TAPE_CORRUPT', `${this.location}: ${redisRecordPlace(this.namespace, r)} is not decodable msgpack (${e instanceof Error ? e.message : String(e)}).`, {
            file: this.location,
            offset: r.seq,
            hint: `Record that request again, or remove the record: tapedeck prune ${this.cliTarget} (${this.verifyCommand} lists every such record).`,
          });
        }
      },
      // Equal only for equal stored content (docs/store-backends.md): the number places it, the
      // digest of its bytes (which name its key) tells it from a record that took the same
      // number after the namespace lost its keys.
      id: () => (id ??= `${r.seq}:${digest(r.payload)}`),
      ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
    };
  }

  async load(opts: { create: boolean }): Promise<LoadResult> {
    const store = await this.records();
    const [records, stored] = await Promise.all([store.readAll(), store.header()]);
    let header = stored;
    let exists = header !== undefined || records.length > 0;
    if (!exists && opts.create) {
      // The header marks the namespace as created (so an empty one replays as empty, not
      // missing) and is what `tapedeck pull` writes at the top of the tape. Its salt is the
      // namespace's: a writer that lost the race to store one reads the winner's.
      // A test's namespace and its MCP namespace are made with one salt (../salt-group.ts).
      const fresh = recordBytes.header({ salt: (await saltForNew(this.location)) ?? undefined });
      header = (await store.setHeaderIfAbsent(fresh)) ? fresh : await store.header();
      exists = true;
    }
    // A namespace a newer tapedeck made (its header of a newer tape format) is refused, as a
    // tape of that format is: an older tapedeck must not read it, and above all not write to it.
    if (header !== undefined) refuseNewerFormat(header, `${this.location} (its tape header, Redis key ${store.headerKey})`);
    const warnings: StoreWarning[] = [];
    if (!exists) {
      // Nothing listed, and no header: a wrong URL or namespace, or a namespace that lost its
      // own keys (its master restarted without persistence) while its records on other masters
      // survived. Those are still served, each when its request is asked (refresh): said as
      // such, not as a missing store whose every request would be a miss. Asked only here (a
      // replay of an empty namespace): a pass over the keyspace has no place on the usual path.
      // A SCAN refused (an ACL) or failed leaves the usual message: the namespace is missing.
      const kept = (await store.storedKeys().catch(() => [])).length;
      if (kept > 0) {
        exists = true;
        warnings.push({ code: 'E_STORE_DAMAGED', offset: 0, message: indexLost(store.url, this.namespace, kept, 'each is still served when its request is asked').message });
      }
    }
    // Left empty by the records' time to live: said, or every miss reads as a namespace never
    // recorded into (the next CI run a week later, or ttlMs given in seconds).
    if (exists && records.length === 0) {
      const at = await store.expiredAt().catch(() => undefined);
      if (at !== undefined) warnings.push({ code: 'TAPEDECK_EXPIRED', offset: 0, message: expiredMessage(this.location, at) });
    }
    // Record runs that ended without closing (as a tape's `.writers/` tells them): the writer
    // that took them over at its open (openWriter) says them once; a reader, every time.
    const ended = this.ended ?? (exists ? await store.endedRecordRuns().catch(() => []) : []);
    this.ended = undefined;
    warnings.push(...interruptedRedisRuns(this.location, ended, records));
    this.salt = saltOf(header, this.location);
    this.header = header;
    for (const r of records) this.seen.set(seenKey(r), r.payload);
    // A record whose bytes do not name the key it is filed under was not written by tapedeck
    // (or was damaged in the store): skipped, and said, as a damaged tape frame is.
    const good = records.filter((r) => {
      // Only its key is read here (records decode when served): what does not decode is told then.
      const why = redisRecordDamage(r, { decode: false });
      if (why === undefined) return true;
      // Filed under `kind:key`: whose it was is known even though its bytes say nothing.
      const colon = r.key.indexOf(':');
      warnings.push({
        code: 'E_TAPE_CORRUPT',
        offset: r.seq,
        message: `${this.location}: ${redisRecordPlace(this.namespace, r)} is ${why}; skipped. Record that request again to replace it, or remove it: tapedeck prune ${this.cliTarget}.`,
        ...(colon > 0 ? { record: { kind: r.key.slice(0, colon), key: r.key.slice(colon + 1) } } : {}),
      });
      return false;
    });
    return { exists, records: good.map((r) => this.view(r)), warnings };
  }

  async append(values: readonly unknown[]): Promise<void> {
    // Encode everything first: a value that cannot be stored fails the call, nothing written.
    const items = values.map((v, i) => {
      const payload = recordBytes.payload(v, this.location, i);
      return { key: collectionKeyOf(payload), payload };
    });
    // With the header this handle keys by: a namespace emptied meanwhile (Redis restarted
    // without persistence) gets it back, so these records replay under the salt they were
    // masked with; one another writer made again with its own salt refuses them (E_TAPE_CHANGED).
    const store = await this.records();
    const seqs = await store.append(items, this.header ? { header: this.header, onRestored: this.onRestored } : {});
    // Before these records join what this handle has seen: the ones lost are the earlier ones.
    // Told at each emptying (a second restart loses the recordings acknowledged since the first).
    if (this.restored) {
      this.restored = false;
      // These records are stored: a warning that cannot be given must not fail their append.
      await this.tellEmptied(store).catch(() => {});
    }
    seqs.forEach((seq, i) => this.seen.set(seenKey({ key: items[i]!.key, seq }), digest(items[i]!.payload)));
  }

  /**
   * Warns, at each emptying, that the namespace was emptied while this handle had it open (its header was
   * gone, and an append put it back): without persistence a Redis restart empties it, and the
   * recordings this run made (acknowledged as recorded) went with it, silently, the run
   * counting them as added. How many of them are gone is read back, per request key: on a
   * cluster only the slots of the restarted master were emptied. Rare, so the reads cost
   * nothing on the usual path; a read that fails counts its records as gone.
   */
  private async tellEmptied(store: RedisRecords): Promise<void> {
    const mine = new Map<string, Map<number, string>>();
    let loaded = 0;
    for (const [k, v] of this.seen) {
      if (typeof v !== 'string') {
        loaded++;
        continue;
      }
      const space = k.indexOf(' ');
      const key = k.slice(space + 1);
      let m = mine.get(key);
      if (!m) mine.set(key, (m = new Map()));
      m.set(Number(k.slice(0, space)), v);
    }
    let gone = 0;
    const keys = [...mine.keys()];
    for (let i = 0; i < keys.length; i += 64) {
      const batch = keys.slice(i, i + 64);
      const found = await Promise.all(batch.map((k) => store.read(k).catch(() => [])));
      batch.forEach((k, j) => {
        const want = mine.get(k)!;
        const there = new Set(found[j]!.filter((r) => want.get(r.seq) === digest(r.payload)).map((r) => r.seq));
        gone += want.size - there.size;
        // Told gone now: a later emptying counts only what is lost to it.
        for (const seq of want.keys()) if (!there.has(seq)) this.seen.delete(seenKey({ key: k, seq }));
      });
    }
    const made = `${gone} recording${gone === 1 ? '' : 's'} this run made ${gone === 1 ? 'is' : 'are'} gone`;
    const before = loaded > 0 && !this.emptiedTold ? `, and the ${loaded} other recording${loaded === 1 ? '' : 's'} it read from the namespace likely went too` : '';
    this.emptiedTold = true;
    const message = `${this.location}: the namespace was emptied since this run opened (Redis restarted without persistence?): ${made}${before}; enable persistence (appendonly yes) or re-record.`;
    if (this.onWarning) this.onWarning(message);
    else if (typeof process !== 'undefined' && process.emitWarning) process.emitWarning(message, { code: 'TAPEDECK_STORE' });
    else console.warn(message);
  }

  /**
   * The records under one kind and key that other writers added since this handle loaded: one
   * read-only script on that key's slot.
   */
  async refresh(head: { kind?: string; key: string }): Promise<LoadedRecord[]> {
    const store = await this.records();
    const fresh = (await store.read(`${head.kind ?? 'cache'}:${head.key}`)).filter((r) => {
      const had = this.seen.get(seenKey(r));
      return had === undefined || (typeof had === 'string' ? had !== digest(r.payload) : !had.equals(r.payload));
    });
    for (const r of fresh) this.seen.set(seenKey(r), r.payload);
    return fresh.map((r) => this.view(r));
  }

  /** A new handle on the same namespace (see RecordBackend.another). */
  another(): RedisBackend {
    return new RedisBackend(this.url, this.opts);
  }

  async rewrite(select: RewriteSelect): Promise<{ kept: number; removed: unknown[]; warnings: StoreWarning[] }> {
    const store = await this.records();
    const current = await store.readAll();
    const views = current.map((r) => this.view(r));
    const drop = new Set(select(views));
    const byKey = new Map<string, number[]>();
    const removed: unknown[] = [];
    const warnings: StoreWarning[] = [];
    current.forEach((r, i) => {
      if (!drop.has(i)) return;
      let list = byKey.get(r.key);
      if (!list) byKey.set(r.key, (list = []));
      list.push(r.seq);
      try {
        removed.push(views[i]!.value());
      } catch (e) {
        warnings.push({ code: 'E_TAPE_CORRUPT', offset: r.seq, message: (e as Error).message });
      }
    });
    await Promise.all([...byKey].map(([key, seqs]) => store.remove(key, seqs)));
    return { kept: current.length - drop.size, removed, warnings };
  }

  /**
   * Registers an open writer of `run` in the namespace for a lease of `lifeMs` (default the
   * store's `writerLeaseMs`, else 30 s), renewed every third of it while the handle is held. A
   * writer that exits or is killed stops counting as open once its lease passes; one that is
   * only paused past it (a debugger, a frozen container, a blocked event loop) still counts
   * while its connection to Redis is open.
   */
  async openWriter(run: string, mode?: 'record' | 'update', lifeMs = this.opts.writerLeaseMs ?? 30_000): Promise<WriterHandle> {
    const store = await this.records();
    const member = `${run} ${randomBytes(6).toString('hex')}`;
    const runOf = (m: string) => m.slice(0, m.lastIndexOf(' '));
    const live = new Set((await store.writers(member, lifeMs)).map(runOf));
    live.add(run);
    // A record run is noted until it closes: one killed before its close replaced anything is
    // then named to whoever opens the namespace next. This writer takes over the notes of the
    // runs that ended (its load says them), as a tape's next writer does.
    if (mode === 'record') await store.noteRecordRun(member, JSON.stringify({ run, mode, ...holderId() }));
    const ended = (await store.endedRecordRuns()).filter((e) => e.member !== member);
    await store.forgetRecordRun(...ended.map((e) => e.member));
    this.ended = ended;
    // A run whose process is known gone (killed on this host) is ended though its lease runs
    // on: its recordings are replaced at this run's close, as on a tape.
    for (const e of ended) if (e.info.run !== run) live.delete(String(e.info.run));
    const heartbeat = setInterval(() => {
      void this.records().then((s) => s.writers(member, lifeMs)).catch(() => {});
    }, Math.max(10, Math.floor(lifeMs / 3)));
    heartbeat.unref();
    return {
      live,
      release: async () => {
        clearInterval(heartbeat);
        // Closed: not a run that ended without closing. Unreachable now: the note stays, and
        // names this run once its process is gone; the registration lapses on its own.
        if (mode === 'record') await (await this.records()).forgetRecordRun(member).catch(() => {});
        await (await this.records()).writers(member, 0).catch(() => {});
      },
    };
  }

  /** Disconnects. Like a tape path, the backend can be used again: it reconnects on next use. */
  async close(): Promise<void> {
    const pending = this.connecting;
    this.connecting = undefined;
    if (pending) await (await pending.catch(() => undefined))?.close();
  }
}

/** Where a record is in the namespace: its collection key and sequence number. */
const seenKey = (r: { key: string; seq: number }): string => `${r.seq} ${r.key}`;

/** A record's bytes as a short string: its SHA-256. */
const digest = (payload: Uint8Array): string => createHash('sha256').update(payload).digest('base64url');

/** What a reader of a namespace whose recordings all expired is told. */
function expiredMessage(location: string, at: number): string {
  const when = at > 0 && Number.isFinite(at) ? ` (the last at ${new Date(at).toISOString()})` : '';
  return `${location}: its recordings expired${when}: their time to live (?ttl= in seconds, or ttlMs in milliseconds) passed, so every request is a miss. Re-record (TAPEDECK_MODE=record), with a longer time to live or none.`;
}

/** Throws the E_TAPE_VERSION of a stored tape header of a newer format; a damaged one passes (its salt is simply unknown). */
function refuseNewerFormat(header: Uint8Array, where: string): void {
  try {
    parseHeader(header, where);
  } catch (e) {
    if (e instanceof TapedeckError && e.code === 'E_TAPE_VERSION') throw new TapedeckError('E_TAPE_VERSION', e.message.replace('read this tape', 'read this namespace'), { ...e.details, hint: (e.hint ?? '').replace('read this tape', 'read this namespace') });
  }
}

/** The redaction salt in a namespace's stored tape header (none when absent, older or damaged). */
export function saltOf(header: Uint8Array | undefined, where: string): string | undefined {
  if (header === undefined) return undefined;
  try {
    const salt = parseHeader(header, where).header.salt;
    return isRedactionSalt(salt) ? salt : undefined;
  } catch {
    return undefined;
  }
}
