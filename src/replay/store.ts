/*
 * The replay store for byte-exact replay by trace token: the exact bytes of served responses,
 * by trace token and query, bounded by max entries (least recently used out first) and by age (TTL).
 *
 * Why not key by the trace token alone: the token covers the document, its version,
 * the model, the system prompt version and the selected ids, but not the query, so two different
 * queries that select the same ids get the same token and the second response would overwrite the
 * first: the first query's replay would then fail with "query differs". Here the token keeps the
 * spec's formula (other implementations recompute it from docs/hash-spec.md alone) and the store
 * keys entries by (token, query): both queries stay replayable, each with its own bytes, and a
 * replay whose token is known but whose query was never stored under it is still a 409 naming the
 * query. docs/replay.md has the whole story.
 *
 * Each slot sits on two doubly linked lists beside a Map from (token, query) to slot: by recency
 * (least recently used first: eviction takes the head) and by age (oldest stored first: as every
 * entry has the same TTL, the expired ones are exactly a prefix of it). Every operation first
 * drops that expired prefix, so expired entries never hold capacity or count in `size`, and all
 * operations are O(1) amortized. A Map's own insertion order is not used as the LRU list: deleting
 * from its front leaves holes that `keys().next()` walks over until the table is rehashed, which
 * measured 15 µs per eviction at 100,000 entries.
 */

import { traceToken } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import { resolveReplayConfig, type ReplayConfig, type ResolvedReplayConfig } from './config.ts';
import { isBytes } from '../bytes.ts';

/** What a trace token was computed from, kept with the entry for inspection. */
export interface ReplayMeta {
  documentVersion?: string;
  model?: string;
  systemPromptVersion?: string;
  selectedIds?: readonly string[];
}

/** One stored response. */
export interface ReplayEntry {
  readonly token: string;
  readonly query: string;
  readonly documentId: string;
  /** The bytes that went on the wire, exactly (a trailing newline included). */
  readonly body: Uint8Array;
  readonly contentType: string;
  /** When it was stored (ms, the store's clock); the TTL counts from here. */
  readonly createdAt: number;
  readonly meta: ReplayMeta | undefined;
}

/** What every ReplayPut gives: the response and the document and query it answers. */
export interface ReplayPutAnswer {
  documentId: string;
  query: string;
  /** The response body as sent: bytes, or text (stored as its UTF-8 bytes). */
  body: Uint8Array | string;
  /** Default `application/json`. */
  contentType?: string;
}

/** The fields a trace token is computed from (traceToken, with documentId). */
export interface ReplayTraceParts {
  documentVersion: string;
  model: string;
  systemPromptVersion: string;
  selectedIds: readonly string[];
}

/**
 * A response to store. Give the trace token, or the fields it is computed from (documentVersion,
 * model, systemPromptVersion, selectedIds); with both, they must agree. The type says so: one
 * without either does not compile (at run time it is an E_ARG).
 */
export type ReplayPut = ReplayPutAnswer & (({ token: string } & Partial<ReplayTraceParts>) | ({ token?: undefined } & ReplayTraceParts));

/** Outcome of a replay lookup, in the order they are checked: token, document id, query. */
export type ReplayLookup =
  | { status: 'found'; entry: ReplayEntry }
  | { status: 'unknown-token' }
  | { status: 'document-mismatch' }
  | { status: 'query-mismatch' };

/**
 * Options of ReplayStore: its ReplayConfig, the clock it ages entries by, and the environment its
 * defaults come from.
 */
export interface ReplayStoreOptions extends Partial<ReplayConfig> {
  /** Clock in ms (default Date.now); tests pass a fake one. */
  now?: () => number;
  /** Environment to read TAPEDECK_REPLAY_* from (default process.env). */
  env?: Record<string, string | undefined>;
}

/** ReplayStore's option names, for the check that refuses a misspelt one. */
const REPLAY_STORE_OPTIONS = optionNames<ReplayStoreOptions>()(['enabled', 'maxEntries', 'ttlMs', 'now', 'env']);

/** Counters of a replay store (ReplayStore.stats): size, puts, hits, misses, evictions and expiries. */
export interface ReplayStoreStats {
  size: number;
  puts: number;
  hits: number;
  misses: number;
  /** Entries pushed out by maxEntries. */
  evictions: number;
  /** Entries dropped because their TTL passed. */
  expired: number;
}

const HEX64 = /^[0-9a-f]{64}$/;
const encoder = new TextEncoder();

interface Slot {
  id: string;
  entry: ReplayEntry;
  expiresAt: number;
  /** Recency list (least recently used first). */
  prev: Slot;
  next: Slot;
  /** Age list (oldest stored first, hence first to expire: every entry has the same TTL). */
  older: Slot;
  newer: Slot;
}

function argError(message: string, path: string, hint: string): TapedeckError {
  return new TapedeckError('E_ARG', message, { path, hint });
}

function text(v: unknown, name: string, hint: string): string {
  if (typeof v !== 'string' || v === '') throw argError(`ReplayStore.put: ${name} must be a non-empty string; got ${typeof v === 'string' ? 'an empty string' : typeof v}.`, `$.${name}`, hint);
  if (!v.isWellFormed()) throw argError(`ReplayStore.put: ${name} has a lone UTF-16 surrogate.`, `$.${name}`, 'Use s.toWellFormed() or fix the value.');
  return v;
}

/** The stored token of a put: the given one, the computed one, or an error when they disagree. */
function tokenOf(p: ReplayPut): string {
  const fields = p.documentVersion !== undefined || p.model !== undefined || p.systemPromptVersion !== undefined || p.selectedIds !== undefined;
  let computed: string | undefined;
  if (fields) {
    computed = traceToken({
      documentId: p.documentId,
      documentVersion: p.documentVersion as string,
      model: p.model as string,
      systemPromptVersion: p.systemPromptVersion as string,
      selectedIds: p.selectedIds as readonly string[],
    });
  }
  if (p.token === undefined) {
    if (computed === undefined) {
      throw argError('ReplayStore.put needs a token, or documentVersion, model, systemPromptVersion and selectedIds to compute it.', '$.token', 'e.g. put({ documentId, query, documentVersion: "1", model, systemPromptVersion: "v1", selectedIds, body }).');
    }
    return computed;
  }
  if (typeof p.token !== 'string' || !HEX64.test(p.token)) {
    throw argError('ReplayStore.put: token must be 64 lowercase hex characters (a traceToken()).', '$.token', 'Compute it with traceToken(), or leave it out and pass its fields.');
  }
  if (computed !== undefined && computed !== p.token) {
    throw new TapedeckError('E_REPLAY_CONFLICT', 'ReplayStore.put: the token does not match the trace fields given with it.', {
      path: '$.token',
      hint: 'Pass the token traceToken() gives for these fields, or only one of the two.',
    });
  }
  return p.token;
}

/**
 * Builds a validated entry from a put (shared by the memory store and the durable one).
 * @internal
 */
export function entryOf(p: ReplayPut, createdAt: number): ReplayEntry {
  if (p === null || typeof p !== 'object') throw argError('ReplayStore.put expects an object.', '$', '{ token | trace fields, documentId, query, body, contentType? }');
  const documentId = text(p.documentId, 'documentId', 'The document the response answered about.');
  const query = text(p.query, 'query', 'The query the response answered.');
  const token = tokenOf(p);
  let body: Uint8Array;
  if (typeof p.body === 'string') {
    if (!p.body.isWellFormed()) throw argError('ReplayStore.put: body text has a lone UTF-16 surrogate, so it has no exact bytes.', '$.body', 'Pass the bytes that were sent.');
    body = encoder.encode(p.body);
  } else if (isBytes(p.body)) {
    body = new Uint8Array(p.body); // a copy (Buffer's slice() is a view): the caller's buffer may be reused; the store keeps what was sent
  } else {
    throw argError(`ReplayStore.put: body must be a Uint8Array or a string; got ${p.body === null ? 'null' : typeof p.body}.`, '$.body', 'Pass the exact response bytes.');
  }
  const contentType = p.contentType === undefined ? 'application/json' : text(p.contentType, 'contentType', 'e.g. "application/json".');
  let meta: ReplayMeta | undefined;
  if (p.documentVersion !== undefined || p.model !== undefined || p.systemPromptVersion !== undefined || p.selectedIds !== undefined) {
    meta = {};
    if (p.documentVersion !== undefined) meta.documentVersion = p.documentVersion;
    if (p.model !== undefined) meta.model = p.model;
    if (p.systemPromptVersion !== undefined) meta.systemPromptVersion = p.systemPromptVersion;
    if (p.selectedIds !== undefined) meta.selectedIds = [...p.selectedIds];
  }
  return { token, query, documentId, body, contentType, createdAt, meta };
}

/**
 * In-memory replay store: LRU by max entries, TTL, keyed by (trace token, query). Synchronous and
 * free of I/O; `openReplayStore` in `llm-tapedeck/store` adds a tape behind it so entries survive
 * restarts.
 *
 * @example
 * const store = new ReplayStore({ maxEntries: 10_000, ttlMs: 3_600_000 })
 * const { token } = store.put({ documentId: 'doc-1', query: 'q', documentVersion: '1', model: 'gpt-4o',
 *                               systemPromptVersion: 'v1', selectedIds: ['b', 'a'], body: '{"answer":42}\n' })
 * store.get(token, 'q')?.body   // the exact bytes, trailing newline included
 */
export class ReplayStore {
  readonly config: ResolvedReplayConfig;
  private readonly now: () => number;
  private readonly slots = new Map<string, Slot>();
  /** Live entries per token, and the document every one of them is about. */
  private readonly tokens = new Map<string, { documentId: string; count: number }>();
  /** Sentinel of both lists: head.next is the least recently used, head.newer the oldest stored. */
  private readonly head: Slot;
  private counts = { puts: 0, hits: 0, misses: 0, evictions: 0, expired: 0 };

  constructor(opts: ReplayStoreOptions = {}) {
    checkOptionsObject(opts, 'ReplayStore', 'new ReplayStore({ maxEntries: 10_000 }) (or leave the options out)');
    checkOptionNames(opts, REPLAY_STORE_OPTIONS, 'ReplayStore', 'docs/replay.md');
    const { now, env, ...config } = opts;
    if (now !== undefined && typeof now !== 'function') {
      throw new TapedeckError('E_ARG', 'ReplayStore: `now` must be a function returning milliseconds.', { hint: 'e.g. { now: () => fake.ms }' });
    }
    this.config = resolveReplayConfig(config, env);
    this.now = now ?? Date.now;
    const head = { id: '', entry: undefined as unknown as ReplayEntry, expiresAt: Infinity } as Slot;
    head.prev = head.next = head.older = head.newer = head;
    this.head = head;
  }

  /** Moves a slot to the most recently used end. */
  private touch(s: Slot): void {
    s.prev.next = s.next;
    s.next.prev = s.prev;
    this.linkRecent(s);
  }

  private linkRecent(s: Slot): void {
    const last = this.head.prev;
    s.prev = last;
    s.next = this.head;
    last.next = s;
    this.head.prev = s;
  }

  private linkNewest(s: Slot): void {
    const last = this.head.older;
    s.older = last;
    s.newer = this.head;
    last.newer = s;
    this.head.older = s;
  }

  /** False when replay is turned off: puts are not kept and every replay is a 501. */
  get enabled(): boolean {
    return this.config.enabled;
  }

  /** Live entries. */
  get size(): number {
    this.expire(this.now());
    return this.slots.size;
  }

  /**
   * The clock the store stamps entries with (ms).
   *
   * @example
   * const age = store.clock() - entry.createdAt
   */
  clock(): number {
    return this.now();
  }

  /**
   * Stores a response under its trace token and query (replacing what that pair held) and
   * returns the entry, whose `token` the response should carry. When replay is disabled the
   * token is still computed and returned, and nothing is kept.
   *
   * @example
   * const e = store.put({ token, documentId: 'doc-1', query: 'q', body: bytes, contentType: 'application/json' })
   */
  put(p: ReplayPut): ReplayEntry {
    return this.insert(entryOf(p, this.now()));
  }

  /**
   * Adds a ready-made entry (keeping its createdAt): how the durable store reloads a tape.
   * Entries already past their TTL are not added. Returns the entry.
   * @internal
   */
  insert(entry: ReplayEntry): ReplayEntry {
    if (!this.config.enabled) return entry;
    const id = entry.token + entry.query; // tokens are 64 characters, so this is unambiguous
    const now = this.now();
    this.expire(now);
    const expiresAt = this.config.ttlMs === 0 ? Infinity : entry.createdAt + this.config.ttlMs;
    const tok = this.tokens.get(entry.token);
    if (tok && tok.documentId !== entry.documentId) {
      // The token covers the document id, so this is a token computed from other fields.
      throw new TapedeckError('E_REPLAY_CONFLICT', `Trace token ${entry.token.slice(0, 12)}… is already stored for another document id.`, {
        path: '$.documentId',
        hint: 'A trace token is computed from its document id; compute it with traceToken() for this document.',
      });
    }
    this.counts.puts++;
    const old = this.slots.get(id);
    if (old) this.remove(old);
    if (expiresAt <= now) return entry;
    const t = this.tokens.get(entry.token);
    if (t) t.count++;
    else this.tokens.set(entry.token, { documentId: entry.documentId, count: 1 });
    const slot = { id, entry, expiresAt } as Slot;
    this.slots.set(id, slot);
    this.linkRecent(slot);
    // Entries reloaded from a tape may arrive out of age order; keep the age list sorted.
    let after = this.head.older;
    while (after !== this.head && after.expiresAt > expiresAt) after = after.older;
    slot.older = after;
    slot.newer = after.newer;
    after.newer.older = slot;
    after.newer = slot;
    while (this.slots.size > this.config.maxEntries) {
      this.remove(this.head.next);
      this.counts.evictions++;
    }
    return entry;
  }

  /**
   * The entry (token, query) holds, without counting a hit or changing recency: what a put that
   * may yet be undone replaces.
   * @internal
   */
  peek(token: string, query: string): ReplayEntry | undefined {
    return this.slotOf(token, query, this.now())?.entry;
  }

  /**
   * Takes back `entry` (put, then not stored after all): the pair holds `previous` again, or
   * nothing. A later put to the pair is left alone.
   * @internal
   */
  undo(entry: ReplayEntry, previous: ReplayEntry | undefined): void {
    const slot = this.slots.get(entry.token + entry.query);
    if (slot === undefined || slot.entry !== entry) return;
    this.remove(slot);
    this.counts.puts--;
    if (previous !== undefined) {
      this.insert(previous);
      this.counts.puts--;
    }
  }

  private remove(slot: Slot): void {
    this.slots.delete(slot.id);
    slot.prev.next = slot.next;
    slot.next.prev = slot.prev;
    slot.older.newer = slot.newer;
    slot.newer.older = slot.older;
    const tok = this.tokens.get(slot.entry.token)!;
    if (--tok.count === 0) this.tokens.delete(slot.entry.token);
  }

  /** Drops the expired prefix of the age list. */
  private expire(now: number): void {
    for (let s = this.head.newer; s !== this.head && s.expiresAt <= now; s = this.head.newer) {
      this.remove(s);
      this.counts.expired++;
    }
  }

  /** The live slot for (token, query). */
  private live(id: string, now: number): Slot | undefined {
    this.expire(now);
    return this.slots.get(id);
  }

  /**
   * The live slot for (token, query), or undefined when either is not what put() issues: slots
   * are keyed by token + query, so only a token of exactly 64 characters keeps the pair
   * unambiguous (a 66-character "token" and a shorter query would name another entry).
   */
  private slotOf(token: string, query: string, now: number): Slot | undefined {
    if (typeof token !== 'string' || token.length !== 64 || typeof query !== 'string') {
      this.expire(now);
      return undefined;
    }
    return this.live(token + query, now);
  }

  /**
   * The entry stored for (token, query), or undefined (also when expired). A hit makes it the
   * most recently used. The body returned is a copy: nothing a caller does changes what is
   * replayed next.
   *
   * @example
   * const e = store.get(token, 'what is 2+2?'); if (e) res.end(e.body)
   */
  get(token: string, query: string): ReplayEntry | undefined {
    const slot = this.slotOf(token, query, this.now());
    if (!slot) {
      this.counts.misses++;
      return undefined;
    }
    this.touch(slot);
    this.counts.hits++;
    return { ...slot.entry, body: new Uint8Array(slot.entry.body) };
  }

  /**
   * Whether (token, query) is stored and live; does not change recency.
   *
   * @example
   * if (!store.has(token, query)) console.warn('replay for this query is gone')
   */
  has(token: string, query: string): boolean {
    return this.slotOf(token, query, this.now()) !== undefined;
  }

  /**
   * The replay decision for a request: found, unknown token (404), document id differs (409) or
   * query differs (409). The document id is checked first: pointing at the
   * wrong document is the more useful thing to hear.
   *
   * @example
   * const r = store.lookup(token, query, documentId); if (r.status === 'found') send(r.entry.body)
   */
  lookup(token: string, query: string, documentId: string): ReplayLookup {
    const slot = this.slotOf(token, query, this.now());
    const tok = this.tokens.get(token);
    if (tok === undefined) {
      this.counts.misses++;
      return { status: 'unknown-token' };
    }
    if (tok.documentId !== documentId) {
      this.counts.misses++;
      return { status: 'document-mismatch' };
    }
    if (slot === undefined) {
      this.counts.misses++;
      return { status: 'query-mismatch' };
    }
    this.touch(slot);
    this.counts.hits++;
    return { status: 'found', entry: { ...slot.entry, body: new Uint8Array(slot.entry.body) } };
  }

  /**
   * Removes (token, query); true if it was there.
   *
   * @example
   * store.delete(token, 'q')
   */
  delete(token: string, query: string): boolean {
    const slot = this.slotOf(token, query, this.now());
    if (!slot) return false;
    this.remove(slot);
    return true;
  }

  /**
   * Drops every expired entry now; returns how many. Every other operation does this first
   * anyway; call it to free memory in a store that sits idle.
   *
   * @example
   * setInterval(() => store.prune(), 60_000).unref()
   */
  prune(): number {
    const before = this.counts.expired;
    this.expire(this.now());
    return this.counts.expired - before;
  }

  /**
   * Removes everything (counters are kept).
   *
   * @example
   * store.clear()
   */
  clear(): void {
    this.slots.clear();
    this.tokens.clear();
    this.head.prev = this.head.next = this.head.older = this.head.newer = this.head;
  }

  /**
   * Live entries, least recently used first (bodies are the stored bytes: do not modify).
   *
   * @example
   * for (const e of store.entries()) console.log(e.token, e.query)
   */
  *entries(): Generator<ReplayEntry> {
    this.expire(this.now());
    for (let s = this.head.next; s !== this.head; s = s.next) yield s.entry;
  }

  /**
   * Counters since the store was made.
   *
   * @example
   * const { hits, misses, evictions } = store.stats()
   */
  stats(): ReplayStoreStats {
    return { size: this.slots.size, ...this.counts };
  }
}
