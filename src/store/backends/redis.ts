/**
 * Recordings in Redis: the key layout and the atomic operations on it (docs/redis.md, "Layout").
 *
 * A record is stored as the exact msgpack payload a tape frame holds (the same record layout,
 * redacted before this module sees a byte), so `push` and `pull` move tapes byte for byte.
 * Records are filed by their collection key (`<kind>:<request key>`), and everything one request
 * key needs lives in one hash slot (hash tag `{<ns>:<collection key>}`), so every read and every
 * write of a request's recordings is one Lua script: atomic on a single node and on a cluster.
 *
 *   <ns>:{<ns>}:seq            INCR counter: the global record order (tape order for pull);
 *                              made at the server time in microseconds, so a counter lost
 *                              with its slot never hands out a number again
 *   <ns>:{<ns>}:index          ZSET collection key -> when its last record expires (ms,
 *                              server clock; +inf while one has no TTL)
 *   <ns>:{<ns>}:header         the tape header bytes a push brought (pull writes them back)
 *   <ns>:{<ns>}:writers        ZSET `<run> <writer id>` -> until when that open writer's lease
 *                              runs (ms, server clock; renewed while it lives)
 *   <ns>:{<ns>}:writer-conns   HASH `<run> <writer id>` -> the CLIENT ID of its connection: a
 *                              writer past its lease counts as open while that connection is
 *   <ns>:{<ns>}:expired        when the last recordings a reader found expired were to expire
 *                              (ms): a namespace left empty by its TTL says so
 *   <ns>:{<ns>}:record-runs    HASH `<run> <writer id>` -> {run, pid, host, start} of a record-mode
 *                              writer, removed when it closes: one left behind by a writer that
 *                              ended is a run killed before close (docs/redis.md, "Writers")
 *   <ns>:{<ns>:<ckey>}:r       HASH seq -> record payload
 *   <ns>:{<ns>:<ckey>}:x       ZSET seq by expiry time (ms), for records written with a TTL
 *
 * Order and concurrency: a writer first reserves sequence numbers (and registers the collection
 * key) in the namespace's slot, then writes the records in the request key's slot. Several
 * proxies recording the same request at once all keep their records, ordered by the sequence
 * numbers Redis handed out; a reader sees a record whole or not at all. A writer that dies
 * between the two steps leaves a gap in the numbers or a key with no records, never half a
 * record.
 *
 * The index forgets a collection key once every record of it has expired: its score is the
 * latest expiry any writer gave it, and a full read drops keys whose score has passed and whose
 * records are gone (conditionally on the score, so a writer that registered the key again
 * meanwhile keeps it listed).
 */
import { createHash } from 'node:crypto';
import { TapedeckError } from '../../errors.ts';
import { checkOptionNames, optionNames } from '../../option-names.ts';
import { FRAME_HEADER_SIZE, holderGone, peekFrame } from '../tape-file.ts';
import { connectRedis, NAMESPACE_HINT, NAMESPACE_RE, parseRedisUrl, type ConnectOptions, type RedisConnection, type RedisTarget } from './redis-connection.ts';

/** Options of {@link RedisRecords.open}. */
export interface RedisStoreOptions {
  /**
   * Key prefix, so several projects share one Redis (default `tapedeck`, or the URL's
   * `?namespace=`). Letters, digits, `.`, `_`, `-` and `/`.
   */
  namespace?: string;
  /**
   * Default time to live of new records in milliseconds (default: none, or the URL's `?ttl=` in
   * seconds). 0 keeps records forever, as leaving it out does.
   */
  ttlMs?: number;
  /** Connection timing and TLS options. */
  connect?: ConnectOptions;
  /**
   * How long an open writer's registration lasts between renewals (default 30 000 ms; renewed
   * every third of it). A writer past it (paused, frozen, its event loop blocked) still counts
   * as open while its connection to Redis is (docs/redis.md, "Writers").
   */
  writerLeaseMs?: number;
}

const REDIS_OPTIONS = optionNames<RedisStoreOptions>()(['namespace', 'ttlMs', 'connect', 'writerLeaseMs']);
const CONNECT_OPTIONS = optionNames<ConnectOptions>()(['connectTimeoutMs', 'commandTimeoutMs', 'tls']);

/**
 * Refuses, with E_ARG where the store is made, Redis options it does not take (`{ namspace }`
 * used the shared default namespace, `{ ttl }` kept records forever) and a `ttlMs` or
 * `writerLeaseMs` that is not a number of milliseconds (it failed at the first call, as a 500).
 *
 * @example
 * checkRedisOptions({ namespace: 'my-app', ttlMs: 86_400_000 }, 'redis://cache:6379/0') // passes
 */
export function checkRedisOptions(opts: RedisStoreOptions, masked: string): void {
  checkOptionNames(opts, REDIS_OPTIONS, 'RedisBackend', 'docs/redis.md');
  if (opts === null || typeof opts !== 'object') return;
  checkOptionNames(opts.connect, CONNECT_OPTIONS, 'RedisBackend connect', 'docs/redis.md');
  if (opts.ttlMs !== undefined) checkTtl(opts.ttlMs, masked);
  const lease = opts.writerLeaseMs;
  if (lease !== undefined && !(typeof lease === 'number' && Number.isFinite(lease) && lease > 0)) {
    throw new TapedeckError('E_ARG', `Invalid writer lease for ${masked}: the writerLeaseMs option is ${typeof lease === 'number' ? String(lease) : JSON.stringify(lease)}.`, {
      url: masked,
      hint: 'Give writerLeaseMs as milliseconds above 0 (default 30000), or leave it out.',
    });
  }
}

/** E_ARG for a `ttlMs` that is not milliseconds, 0 or more. */
function checkTtl(ttlMs: unknown, masked: string): void {
  if (typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs >= 0) return;
  throw new TapedeckError('E_ARG', `Invalid record TTL for ${masked}: the ttlMs option is ${typeof ttlMs === 'number' ? String(ttlMs) : JSON.stringify(ttlMs)}.`, {
    url: masked,
    hint: 'Give ttlMs as milliseconds, 0 or more (0 keeps records forever), or ?ttl=SECONDS in the URL.',
  });
}

/** One record as stored: its collection key, its place in the global order, its payload bytes. */
export interface StoredRecord {
  key: string;
  seq: number;
  payload: Buffer;
  /** When a record with a TTL expires, on this process's clock (ms since the epoch). */
  expiresAt?: number;
  /** The same on the server's clock: what the index scores a key by. */
  expiry?: number;
}


// Scripts. Each touches only the keys it is given (one hash slot), as Redis Cluster requires.

/** Milliseconds on the server clock (TIME), so writers on hosts with skewed clocks agree. */
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS: seq, index, header. ARGV: count, ttlMs (0 = none), the writer's header ('' = none),
 * floor (0 = none), collection keys... Registers the keys with the expiry of the new records
 * (GT: a key's score only grows, +inf once a record has no TTL) and returns { first reserved
 * number, that expiry (0 = none) }: the record writes use the same absolute expiry, so the index
 * never forgets a key before its records are gone.
 *
 * The header holds the namespace's redaction salt, under which the writer masked the records'
 * secrets. A namespace emptied while the writer is open (a restart without persistence, a
 * FLUSHDB) gets the writer's header back, so what it records next is keyed as its readers will
 * key it, and the reply's third element is 1 (the writer warns: what it recorded before is
 * gone); a namespace made again by another writer, with another header, returns { -1, 0 } and
 * nothing is reserved.
 *
 * A number is never handed out twice in a namespace, even once its counter is lost: on a
 * cluster the master of the namespace's own slot may restart empty (no persistence) while the
 * records it numbered live on healthy masters, and counting again from 1 made record writes
 * land on fields that held acknowledged recordings. A missing counter therefore starts at the
 * server time in microseconds (the TIME reply's seconds and microseconds as digits, no float),
 * above every number handed out before unless a million were handed out per second since the
 * namespace was made. `floor` is the retry of a write that found its number taken (a counter
 * behind its records, as after a failover to a lagging replica): the counter jumps past it.
 */
const RESERVE = `${NOW}
local restored = 0
if ARGV[3] ~= '' then
  local h = redis.call('GET', KEYS[3])
  if not h then redis.call('SET', KEYS[3], ARGV[3]) restored = 1
  elseif h ~= ARGV[3] then return { -1, 0 } end
end
local cur = redis.call('GET', KEYS[1])
if not cur then
  cur = t[1] .. string.format('%06d', tonumber(t[2]))
  redis.call('SET', KEYS[1], cur)
end
if tonumber(ARGV[4]) > tonumber(cur) then redis.call('SET', KEYS[1], ARGV[4]) end
local ttl = tonumber(ARGV[2])
local exp = 0
local score = '+inf'
if ttl > 0 then exp = now + ttl score = exp end
for i = 5, #ARGV do redis.call('ZADD', KEYS[2], 'GT', score, ARGV[i]) end
return { redis.call('INCRBY', KEYS[1], tonumber(ARGV[1])) - tonumber(ARGV[1]) + 1, exp, restored }`;

/**
 * KEYS: index, legacy key set. Returns { now, member, score, member, score... }: the listed keys
 * and the server time. A namespace written before the index existed listed its keys in a plain
 * set (same slot): they move into the index first, with no expiry known (+inf: kept listed).
 */
const LIST = `${NOW}
if redis.call('EXISTS', KEYS[2]) == 1 then
  for _, k in ipairs(redis.call('SMEMBERS', KEYS[2])) do redis.call('ZADD', KEYS[1], 'GT', '+inf', k) end
  redis.call('DEL', KEYS[2])
end
local out = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(out, 1, tostring(now))
return out`;

/**
 * KEYS: index. ARGV: collection key, score pairs. Unlists each key whose score is still the one
 * given (the expiry a reader found passed, with no live records left); a key some writer
 * registered again since has a higher score and stays.
 */
const UNLIST = `
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[i + 1] then n = n + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return n`;

/**
 * KEYS: records hash, expiry zset. ARGV: expiry time in ms (0 = none), then seq, payload pairs.
 * Drops expired records of this key, writes the new ones, and gives both keys the expiry of the
 * last record plus a grace second when every record has one (so Redis frees an abandoned key on
 * its own).
 *
 * Records die by their score (READ filters on it); the keys' own expiry only frees memory, and
 * it must never fall due while a script touches them. PEXPIREAT at a time that is passing
 * deletes a key at once (Redis 7.0 compares it with the wall clock) while lazy expiry compares
 * with the script's start, so with the record's own expiry as the keys' expiry a 1 ms TTL could
 * delete the zset and keep the hash: the record lost its expiry and lived forever. Hence the
 * grace, and a record whose expiry passed before it was written (a writer that stalled between
 * reserving and writing) is not written at all.
 *
 * A record never replaces another: when a number given is already a field of the hash (a
 * counter that lost numbers it had handed out), nothing is written and the script returns
 * { -1, the highest field }, so the writer reserves numbers above it and writes again. Without
 * this, HSET overwrote acknowledged recordings.
 */
const APPEND = `${NOW}
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    local top = 0
    for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
      local n = tonumber(f)
      if n and n > top then top = n end
    end
    return { -1, string.format('%d', top) }
  end
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, s in ipairs(dead) do redis.call('HDEL', KEYS[1], s) redis.call('ZREM', KEYS[2], s) end
local exp = tonumber(ARGV[1])
if exp == 0 or exp > now then
  for i = 2, #ARGV, 2 do
    redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
    if exp > 0 then redis.call('ZADD', KEYS[2], exp, ARGV[i]) end
  end
end
if redis.call('ZCARD', KEYS[2]) > 0 and redis.call('ZCARD', KEYS[2]) == redis.call('HLEN', KEYS[1]) then
  local last = tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]) + 1000
  redis.call('PEXPIREAT', KEYS[1], last) redis.call('PEXPIREAT', KEYS[2], last)
else
  redis.call('PERSIST', KEYS[1]) redis.call('PERSIST', KEYS[2])
end
return { redis.call('HLEN', KEYS[1]) }`;

/**
 * KEYS: records hash, expiry zset. Returns the server time, then seq, payload, expiry (ms, 0 =
 * none) triples of the live records.
 */
const READ = `${NOW}
local exp = {}
local dead = {}
local scored = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #scored, 2 do
  exp[scored[i]] = scored[i + 1]
  if tonumber(scored[i + 1]) <= now then dead[scored[i]] = true end
end
local all = redis.call('HGETALL', KEYS[1])
local out = { tostring(now) }
for i = 1, #all, 2 do
  if not dead[all[i]] then out[#out + 1] = all[i] out[#out + 1] = all[i + 1] out[#out + 1] = exp[all[i]] or '0' end
end
return out`;

/** KEYS: records hash, expiry zset. ARGV: seqs. Removes those records; returns how many. */
const REMOVE = `
local n = 0
for i = 1, #ARGV do
  n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return n`;

/**
 * KEYS: writers zset, writer-conns hash. ARGV: member, lease in ms (0: the writer closes), the
 * CLIENT ID of its connection. Registers or renews (or removes) this writer; forgets writers a
 * day past their lease; returns member, '' pairs for writers within their lease, then member,
 * connection id pairs for those past it (the caller asks Redis whether those connections are
 * open: CLIENT is not allowed in scripts).
 */
const WRITERS = `${NOW}
local day = 86400000
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - day)) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('HDEL', KEYS[2], m)
end
local life = tonumber(ARGV[2])
if life > 0 then
  redis.call('ZADD', KEYS[1], now + life, ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], day)
redis.call('PEXPIRE', KEYS[2], day)
local out = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')) do
  out[#out + 1] = m
  out[#out + 1] = ''
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)) do
  out[#out + 1] = m
  out[#out + 1] = redis.call('HGET', KEYS[2], m) or '-'
end
return out`;

/**
 * KEYS: writers zset, writer-conns hash, record-runs hash. For each record run registered in
 * record-runs: member, what it registered, and its state: '' within its lease, the CLIENT ID of
 * its connection past it, '-' no longer among the writers (or no connection known).
 */
const RUNS = `${NOW}
local out = {}
local all = redis.call('HGETALL', KEYS[3])
for i = 1, #all, 2 do
  local m = all[i]
  local lease = redis.call('ZSCORE', KEYS[1], m)
  local state = '-'
  if lease and tonumber(lease) >= now then state = '' elseif lease then state = redis.call('HGET', KEYS[2], m) or '-' end
  out[#out + 1] = m
  out[#out + 1] = all[i + 1]
  out[#out + 1] = state
end
return out`;

/**
 * KEYS: index. ARGV: collection key, score pairs. Lists keys that hold records (GT: a score only
 * grows, as RESERVE registers them): what puts back the keys of a namespace that lost its index.
 */
const RELIST = `
for i = 1, #ARGV, 2 do redis.call('ZADD', KEYS[1], 'GT', ARGV[i + 1], ARGV[i]) end
return 0`;

const SCRIPTS = { RESERVE, LIST, UNLIST, APPEND, READ, REMOVE, WRITERS, RUNS, RELIST };
type ScriptName = keyof typeof SCRIPTS;

/** Sequence numbers grouped by collection key. */
function groupSeqs(pairs: readonly [string, number][]): [string, number[]][] {
  const by = new Map<string, number[]>();
  for (const [k, seq] of pairs) {
    const list = by.get(k);
    if (list) list.push(seq);
    else by.set(k, [seq]);
  }
  return [...by];
}

/**
 * The collection key a record payload is filed under: `<kind>:<key>` from the record's leading
 * scalar fields (ReplayCache records have no kind: `cache`); a record without a key is filed
 * under `<kind>:` and still kept and moved by push and pull.
 *
 * @example
 * collectionKeyOf(payload) // 'http:9f86d0…' or 'cache:9f86d0…'
 */
export function collectionKeyOf(payload: Uint8Array): string {
  const buf = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  // peekFrame reads a framed payload; a payload alone is a frame whose header lies before it.
  const head = peekFrame(buf, { offset: -FRAME_HEADER_SIZE, length: buf.length + FRAME_HEADER_SIZE });
  const kind = typeof head.kind === 'string' ? head.kind : 'cache';
  return `${kind}:${typeof head.key === 'string' ? head.key : ''}`;
}

/**
 * The two keys that hold one collection key's records: the hash of payloads by sequence number,
 * and the zset of their expiry times. Both carry the hash tag `{<ns>:<collection key>}`.
 *
 * @example
 * recordKeys('my-app', 'http:9f86…') // ['my-app:{my-app:http:9f86…}:r', 'my-app:{my-app:http:9f86…}:x']
 */
export function recordKeys(namespace: string, ckey: string): [records: string, expiry: string] {
  const tag = `${namespace}:{${namespace}:${ckey}}`;
  return [`${tag}:r`, `${tag}:x`];
}

/** The namespace and TTL given in a Redis URL's query (`?namespace=proj&ttl=86400`). */
function urlOptions(url: string): { namespace?: string; ttlMs?: number } {
  const out: { namespace?: string; ttlMs?: number } = {};
  const q = new URL(url).searchParams;
  const ns = q.get('namespace');
  if (ns !== null) out.namespace = ns;
  const ttl = q.get('ttl');
  if (ttl !== null) out.ttlMs = Number(ttl) * 1000;
  return out;
}

/**
 * The namespace a store URL and options name: the option, else `?namespace=`, else `tapedeck`.
 * Throws E_ARG for a name that cannot be a key prefix.
 *
 * @example
 * namespaceOf('redis://cache:6379/0?namespace=ci', {}) // 'ci'
 */
export function namespaceOf(url: string, opts: { namespace?: string } = {}): string {
  const namespace = opts.namespace ?? urlOptions(url).namespace ?? 'tapedeck';
  if (!NAMESPACE_RE.test(namespace)) {
    throw new TapedeckError('E_ARG', `Invalid Redis namespace ${JSON.stringify(namespace)}.`, { hint: NAMESPACE_HINT });
  }
  return namespace;
}

/**
 * The recordings of one namespace in one Redis (single node or cluster). All methods are
 * atomic per request key; failures are `E_STORE_UNAVAILABLE` with the URL masked.
 *
 * @example
 * const store = await RedisRecords.open('redis://127.0.0.1:6379/0', { namespace: 'my-app' })
 * try { await store.append([{ key: collectionKeyOf(p), payload: p }]) } finally { await store.close() }
 */
export class RedisRecords {
  readonly target: RedisTarget;
  readonly namespace: string;
  readonly ttlMs: number;
  private readonly conn: RedisConnection;
  private readonly shas = new Map<ScriptName, string>();

  private constructor(conn: RedisConnection, namespace: string, ttlMs: number) {
    this.conn = conn;
    this.target = conn.target;
    this.namespace = namespace;
    this.ttlMs = ttlMs;
  }

  /** The URL with its password masked: what messages and stats may show. */
  get url(): string {
    return this.target.masked;
  }

  /** Whether the store is on a Redis Cluster. */
  get cluster(): boolean {
    return this.conn.cluster;
  }

  /**
   * Connects (failing fast with E_STORE_UNAVAILABLE when Redis is down) and checks the options.
   *
   * @example
   * const store = await RedisRecords.open('rediss://app:secret@cache:6380/0?namespace=ci')
   */
  static async open(url: string, opts: RedisStoreOptions = {}): Promise<RedisRecords> {
    const target = parseRedisUrl(url);
    const fromUrl = urlOptions(url);
    const namespace = namespaceOf(url, opts);
    // The URL's ?ttl= was checked by parseRedisUrl; the option is checked here, named as given.
    const ttlMs = opts.ttlMs ?? fromUrl.ttlMs ?? 0;
    checkTtl(ttlMs, target.masked);
    const conn = await connectRedis(target, opts.connect);
    return new RedisRecords(conn, namespace, Math.round(ttlMs));
  }

  private nsKey(suffix: string): string {
    return `${this.namespace}:{${this.namespace}}:${suffix}`;
  }

  private recKeys(ckey: string): [string, string] {
    return recordKeys(this.namespace, ckey);
  }

  /** The key that holds the namespace's tape header (for messages about it). */
  get headerKey(): string {
    return this.nsKey('header');
  }

  private async script(name: ScriptName, keys: string[], args: (string | Buffer)[]): Promise<unknown> {
    const sha = this.shas.get(name);
    const tail = [String(keys.length), ...keys, ...args];
    if (sha) {
      try {
        return await this.conn.send(keys[0], ['EVALSHA', sha, ...tail]);
      } catch (e) {
        if (!(e instanceof TapedeckError && /NOSCRIPT/.test(e.message))) throw e;
      }
    }
    // EVAL caches the script on the node that runs it; later calls there use EVALSHA.
    const result = await this.conn.send(keys[0], ['EVAL', SCRIPTS[name], ...tail]);
    if (!sha) this.shas.set(name, createHash('sha1').update(SCRIPTS[name]).digest('hex'));
    return result;
  }

  /**
   * Appends records, each filed under its collection key, keeping their order: numbers are
   * reserved for the whole batch first, then each request key's records are written in one
   * atomic script. Returns each record's sequence number. `ttlMs` overrides the store default.
   *
   * `header`: the tape header the writer keys by, put back if the namespace lost it (then
   * `onRestored` is called, before the records are written: the namespace was emptied).
   *
   * A write never replaces a stored record: a request key whose hash already holds one of the
   * numbers reserved (a counter that lost numbers it had handed out) gets numbers above its
   * highest and is written again; its records stay in their order.
   *
   * @example
   * const [seq] = await store.append([{ key: collectionKeyOf(payload), payload }])
   */
  async append(items: readonly { key: string; payload: Uint8Array }[], opts: { ttlMs?: number; header?: Uint8Array; onRestored?: () => void } = {}): Promise<number[]> {
    if (items.length === 0) return [];
    const ttl = Math.round(opts.ttlMs ?? this.ttlMs);
    const header = opts.header ? Buffer.from(opts.header.buffer, opts.header.byteOffset, opts.header.byteLength) : '';
    const seqs = new Array<number>(items.length);
    // The indexes of the items still to write, and the number the counter must pass.
    let pending = items.map((_, i) => i);
    let floor = 0;
    // The records written so far (by collection key and number): removed again if a later script fails.
    const written: [string, number][] = [];
    for (let attempt = 1; pending.length > 0; attempt++) {
      const distinct = [...new Set(pending.map((i) => items[i]!.key))];
      const [first, expiry, restored] = ((await this.script('RESERVE', [this.nsKey('seq'), this.nsKey('index'), this.nsKey('header')], [String(pending.length), String(ttl), header, String(floor), ...distinct])) as unknown[]).map(Number) as [number, number, number?];
      if (restored === 1) opts.onRestored?.();
      if (first < 0) {
        throw new TapedeckError('E_TAPE_CHANGED', `Redis store ${this.target.masked} (namespace ${this.namespace}) was emptied and made again by another writer while this one was open: its redaction salt is not the one this writer masked secrets with, so nothing was recorded.`, {
          url: this.target.masked,
          hint: 'Start the recording again (a new createFetch or tapedeck serve reads the namespace as it is now); keep Redis persistent (appendonly yes) if it may restart.',
        });
      }
      const byKey = new Map<string, { at: number[]; args: (string | Buffer)[] }>();
      pending.forEach((i, n) => {
        const item = items[i]!;
        let k = byKey.get(item.key);
        if (!k) byKey.set(item.key, (k = { at: [], args: [String(expiry)] }));
        seqs[i] = first + n;
        k.at.push(i);
        k.args.push(String(first + n), Buffer.from(item.payload.buffer, item.payload.byteOffset, item.payload.byteLength));
      });
      const settled = await Promise.allSettled([...byKey].map(([ckey, k]) => this.script('APPEND', this.recKeys(ckey), k.args)));
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        // Some keys' scripts ran (their masters answer), another's did not (a lost cluster
        // master): what was written is removed again, so a rejected append wrote nothing and a
        // caller's retry does not add second recordings. Best effort: a removal that fails too
        // leaves its records.
        const done = [...byKey].filter((_, j) => settled[j]!.status === 'fulfilled' && Number((settled[j] as PromiseFulfilledResult<unknown[]>).value[0]) >= 0);
        for (const [ckey, k] of done) for (const i of k.at) written.push([ckey, seqs[i]!]);
        await Promise.allSettled(groupSeqs(written).map(([ckey, list]) => this.remove(ckey, list)));
        throw failed.reason;
      }
      const results = settled.map((r) => (r as PromiseFulfilledResult<unknown>).value);
      pending = [];
      [...byKey].forEach(([ckey, k], j) => {
        const r = results[j] as unknown[];
        if (Number(r[0]) >= 0) {
          for (const i of k.at) written.push([ckey, seqs[i]!]);
          return;
        }
        pending.push(...k.at);
        floor = Math.max(floor, Number(String(r[1])));
      });
      // Each retry starts above the highest number found taken, so only writers racing on the
      // same request key can take it again: a few rounds settle it.
      if (pending.length > 0 && attempt >= 8) {
        throw new TapedeckError('E_STORE', `Redis store ${this.target.masked} (namespace ${this.namespace}): the sequence numbers reserved for ${pending.length} record(s) were taken ${attempt} times in a row; nothing of them was written (no stored record was replaced).`, {
          url: this.target.masked,
          hint: 'Record them again; if it keeps happening, check that nothing else writes the namespace\'s keys (tapedeck verify lists what it holds).',
        });
      }
      pending.sort((a, b) => a - b);
    }
    return seqs;
  }

  /** The live records of one collection key, in recorded order. */
  async read(ckey: string): Promise<StoredRecord[]> {
    const flat = (await this.script('READ', this.recKeys(ckey), [])) as Buffer[];
    // Expiry on this process's clock: the server's time to live from its own now, so a skewed
    // local clock does not matter.
    const skew = Date.now() - Number(String(flat[0]));
    const out: StoredRecord[] = [];
    for (let i = 1; i < flat.length; i += 3) {
      const exp = Number(String(flat[i + 2]));
      out.push({ key: ckey, seq: Number(String(flat[i])), payload: flat[i + 1]!, ...(exp > 0 ? { expiresAt: exp + skew, expiry: exp } : {}) });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /**
   * The index: every listed collection key with its score (the expiry of its last record in ms
   * on the server clock, `inf` while a record has no TTL), and the server time.
   */
  private async listed(): Promise<{ now: number; keys: { key: string; score: string }[] }> {
    const flat = ((await this.script('LIST', [this.nsKey('index'), this.nsKey('keys')], [])) as Buffer[]).map(String);
    const keys: { key: string; score: string }[] = [];
    for (let i = 1; i < flat.length; i += 2) keys.push({ key: flat[i]!, score: flat[i + 1]! });
    return { now: Number(flat[0]), keys };
  }

  /** Every collection key the namespace lists: keys that have records (and, until a full read trims them, keys whose records all expired). */
  async keys(): Promise<string[]> {
    return (await this.listed()).keys.map((k) => k.key).sort();
  }

  /**
   * The collection keys whose record hashes exist in Redis, listed by the index or not: found by
   * SCAN on every master, so it costs a pass over the keyspace. What tells a namespace whose
   * index was lost (its master restarted without persistence) from one that never existed.
   *
   * @example
   * (await store.storedKeys()).length // 4: request keys that still hold records
   */
  async storedKeys(): Promise<string[]> {
    // Namespaces hold no glob characters (NAMESPACE_RE), so only the `*` matches freely.
    const head = `${this.namespace}:{${this.namespace}:`;
    const found = await this.conn.scan(`${head}*}:r`);
    return found.filter((k) => k.startsWith(head) && k.endsWith('}:r')).map((k) => k.slice(head.length, -3)).sort();
  }

  /**
   * Every live record of the namespace in the global order (the order push wrote them in).
   * Keys whose every record has expired are dropped from the index on the way, unless `unlist`
   * is false (`tapedeck verify` checks a namespace; it does not tidy it).
   */
  async readAll(opts: { unlist?: boolean } = {}): Promise<StoredRecord[]> {
    const { now, keys } = await this.listed();
    const out: StoredRecord[] = [];
    const gone: string[] = [];
    // A few dozen reads in flight: pipelined on each connection, without one huge burst.
    for (let i = 0; i < keys.length; i += 64) {
      const batch = keys.slice(i, i + 64);
      const parts = await Promise.all(batch.map((k) => this.read(k.key)));
      parts.forEach((p, j) => {
        out.push(...p);
        // Expired by the index's clock and nothing live left on the records' node (which may
        // run a skewed clock in a cluster): unlist it, unless a writer has bumped its score.
        const k = batch[j]!;
        if (p.length === 0 && k.score !== 'inf' && Number(k.score) <= now) gone.push(k.key, k.score);
      });
    }
    if (gone.length > 0 && opts.unlist !== false) {
      await this.script('UNLIST', [this.nsKey('index')], gone);
      // Noted: once none is left, a reader is told its recordings expired, not that it holds none.
      let last = 0;
      for (let i = 1; i < gone.length; i += 2) last = Math.max(last, Number(gone[i]));
      await this.conn.send(this.nsKey('expired'), ['SET', this.nsKey('expired'), String(last)]);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /**
   * Lists collection keys in the index by the records they hold (scored by the last expiry,
   * `+inf` when one has no TTL), as appending them would have: `tapedeck push` of a tape whose
   * records are all still there lists their keys again after the index was lost.
   *
   * @example
   * await store.relist(await store.read('http:9f86…'))
   */
  async relist(records: readonly StoredRecord[]): Promise<void> {
    const score = new Map<string, number>();
    for (const r of records) score.set(r.key, Math.max(score.get(r.key) ?? 0, r.expiry ?? Infinity));
    const args = [...score].flatMap(([k, v]) => [k, v === Infinity ? '+inf' : String(v)]);
    for (let i = 0; i < args.length; i += 1000) await this.script('RELIST', [this.nsKey('index')], args.slice(i, i + 1000));
  }

  /** Removes the given records of one collection key atomically; returns how many existed. */
  async remove(ckey: string, seqs: readonly number[]): Promise<number> {
    if (seqs.length === 0) return 0;
    return Number(await this.script('REMOVE', this.recKeys(ckey), seqs.map(String)));
  }

  /**
   * Registers (lifeMs > 0: until then, renew before it passes) or removes (0) an open writer,
   * `<run> <writer id>`, with the connection it renews on, and returns the members of the
   * writers open now: within their lease, or past it with their connection still open (a
   * process paused, frozen or blocked keeps its socket; one that exited or was killed does not).
   * Writers found closed are forgotten.
   */
  async writers(member: string, lifeMs: number): Promise<string[]> {
    const keys = [this.nsKey('writers'), this.nsKey('writer-conns')];
    // The connection this writer's commands to the namespace travel on ('-': not known).
    const conn = lifeMs > 0 ? String(await this.conn.sendOnNode(keys[0]!, ['CLIENT', 'ID']).catch(() => '-')) : '-';
    const flat = ((await this.script('WRITERS', keys, [member, String(Math.round(lifeMs)), conn])) as Buffer[]).map(String);
    const open: string[] = [];
    const lapsed = new Map<string, string>();
    for (let i = 0; i < flat.length; i += 2) {
      if (flat[i + 1] === '') open.push(flat[i]!);
      else lapsed.set(flat[i]!, flat[i + 1]!);
    }
    if (lapsed.size === 0) return open;
    const connected = await this.connectedClients(keys[0]!, [...lapsed.values()]);
    const gone: string[] = [];
    for (const [m, id] of lapsed) (connected.has(id) ? open : gone).push(m);
    if (gone.length > 0) {
      await this.conn.send(keys[0], ['ZREM', keys[0]!, ...gone]).catch(() => {});
      await this.conn.send(keys[1], ['HDEL', keys[1]!, ...gone]).catch(() => {});
    }
    return open;
  }

  /**
   * Notes a record-mode writer (`info`: its run and process, JSON) until it closes
   * ({@link forgetRecordRun}): one left behind by a writer that ended was killed before close.
   */
  async noteRecordRun(member: string, info: string): Promise<void> {
    await this.conn.send(this.nsKey('record-runs'), ['HSET', this.nsKey('record-runs'), member, info]);
  }

  /** Removes record-run notes: a writer that closed, or ended ones another writer takes over. */
  async forgetRecordRun(...members: string[]): Promise<void> {
    if (members.length > 0) await this.conn.send(this.nsKey('record-runs'), ['HDEL', this.nsKey('record-runs'), ...members]);
  }

  /**
   * The record-mode writers noted in the namespace that ended without closing: on this host,
   * their process is gone (as a tape's writers are judged); elsewhere, they are no longer among
   * the writers, or are past their lease with their connection closed. Read only.
   */
  async endedRecordRuns(): Promise<{ member: string; info: Record<string, unknown> }[]> {
    const keys = [this.nsKey('writers'), this.nsKey('writer-conns'), this.nsKey('record-runs')];
    const flat = ((await this.script('RUNS', keys, [])) as Buffer[]).map(String);
    const runs: { member: string; info: Record<string, unknown>; state: string }[] = [];
    for (let i = 0; i + 2 < flat.length; i += 3) {
      let info: Record<string, unknown> = {};
      try {
        info = JSON.parse(flat[i + 1]!) as Record<string, unknown>;
      } catch {
        // Not one tapedeck wrote: its run is unknown, its state still tells.
      }
      runs.push({ member: flat[i]!, info, state: flat[i + 2]! });
    }
    const lapsed = runs.filter((r) => r.state !== '' && r.state !== '-').map((r) => r.state);
    const connected = lapsed.length > 0 ? await this.connectedClients(keys[0]!, lapsed) : new Set<string>();
    return runs.filter((r) => holderGone(r.info) ?? (r.state === '-' || (r.state !== '' && !connected.has(r.state)))).map(({ member, info }) => ({ member, info }));
  }

  /**
   * Which of these CLIENT IDs are connected to the node that holds `key`. None when CLIENT LIST
   * is refused (an ACL without it): writers are then judged by their lease alone.
   */
  private async connectedClients(key: string, ids: string[]): Promise<Set<string>> {
    const wanted = ids.filter((id) => /^\d+$/.test(id));
    if (wanted.length === 0) return new Set();
    try {
      const list = String(await this.conn.sendOnNode(key, ['CLIENT', 'LIST', 'ID', ...wanted]));
      return new Set([...list.matchAll(/(?:^|\n)id=(\d+) /g)].map((m) => m[1]!));
    } catch {
      return new Set();
    }
  }

  /**
   * When the last recordings a reader found expired were to expire (ms since the epoch, server
   * clock), if any ever did.
   */
  async expiredAt(): Promise<number | undefined> {
    const v = (await this.conn.send(this.nsKey('expired'), ['GET', this.nsKey('expired')])) as Buffer | null;
    return v === null ? undefined : Number(String(v));
  }

  /** The tape header bytes stored by the first push, if any. */
  async header(): Promise<Buffer | undefined> {
    const v = (await this.conn.send(this.nsKey('header'), ['GET', this.nsKey('header')])) as Buffer | null;
    return v ?? undefined;
  }

  /** Stores tape header bytes unless the namespace has some; returns whether these were stored. */
  async setHeaderIfAbsent(bytes: Uint8Array): Promise<boolean> {
    const r = await this.conn.send(this.nsKey('header'), ['SET', this.nsKey('header'), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 'NX']);
    return r !== null && String(r) === 'OK';
  }

  /** Deletes every record, the counter and the header of this namespace (other namespaces stay). */
  async clear(): Promise<void> {
    for (const k of await this.keys()) {
      const [r, x] = this.recKeys(k);
      await this.conn.send(r, ['DEL', r, x]);
    }
    await this.conn.send(this.nsKey('seq'), ['DEL', this.nsKey('seq'), this.nsKey('index'), this.nsKey('keys'), this.nsKey('header'), this.nsKey('writers'), this.nsKey('record-runs'), this.nsKey('expired')]);
  }

  /** True while the connection is up (it reconnects on its own after a loss). */
  get ready(): boolean {
    return this.conn.ready;
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}
