/**
 * The record layouts: what ReplayCache, the proxy / createFetch and the durable replay store
 * write, one owner for all of them. The tree, the replay store and the proxy read them from
 * here; docs/tape-format.md and docs/proxy.md describe the bytes. Each layout comes with its
 * RecordKind: which stored records are of it and the key a collection finds them under
 * (src/store/collection.ts).
 *
 * Field order: scalar fields first (`v`, `kind`, `key`, `keyVersion`, `recordedAt`, ...), so an
 * index reads them without decoding the record (record-order.ts has the one order; an HTTP
 * record's `match`, `route` and `trace` follow its containers).
 */
import { TapedeckError } from '../errors.ts';
import { hashValue } from '../core/index.ts';
import { requestKeys, type RequestKeys, type Signature } from '../match/matcher.ts';
import { KEY_SPEC_VERSION, type NormalizeOptions } from '../providers/normalize.ts';
import { keyIsCurrent, rekey } from '../match/rekey.ts';
import type { RecordKind } from './collection.ts';
import { sortedKeys } from './record-order.ts';
import { newerRecordOf } from './record-version.ts';
import type { Redactor } from './redact.ts';
import { redactAnswerBody } from './stream-redact.ts';
import { isArrayBuffer, isBytes } from '../bytes.ts';
// A page's malformed-record error names no field (./record-misfit.browser.ts; the bundle's budget).
import { httpRecordMisfit } from './record-misfit.ts';

// ---------------------------------------------------------------------------------------------
// HTTP exchanges: the proxy and createFetch (docs/proxy.md)
// ---------------------------------------------------------------------------------------------
//
// One record per exchange, appended once the response has ended and was whole, so a record is
// always a whole answer: a stream cut short (upstream died, shutdown, a truncated event stream)
// is never written, because replaying half an answer as if it were all of it is worse than a miss.

/** HTTP header map as stored: lowercase names, values as sent (secret ones masked). */
export type StoredHeaders = Record<string, string | string[]>;

/**
 * How the request is found again:
 * - `llm`: a JSON body the matcher understands (OpenAI, Anthropic, generic); `key` is the
 *   matcher's request key of the stored (redacted) body.
 * - `json`: any other JSON body; `key` is the digest of its canonical JSON (RFC 8785), so key
 *   order and whitespace do not matter.
 * - `http`: everything else; `key` is SHA-256 of method, URL and the headers asked for.
 */
export type MatchKind = 'llm' | 'json' | 'http';

/**
 * One recorded HTTP exchange on a tape (the proxy, createFetch): the request as keyed and the
 * answer as sent, chunks and timing included.
 */
export interface HttpRecord {
  v: 1;
  kind: 'http';
  match: MatchKind;
  /** `METHOD /path?query` (query redacted): recordings are grouped and matched per route. */
  route: string;
  /**
   * Where the request went: `scheme://host[:port]` (host in lowercase, no default port, never a
   * user or password), the URL's origin for createFetch, the upstream's for the proxy. A request
   * to another origin is not served this recording (docs/matching.md, "Hosts"). Absent in
   * records written before origins were stored, and in recordings written by hand with a path
   * alone: those answer any host.
   */
  origin?: string;
  /**
   * The path prefix of the upstream the proxy forwarded the request under (`/v1/acct/gw/openai`
   * for `--upstream https://gateway.ai.cloudflare.com/v1/acct/gw/openai`): the request went to
   * origin + upstreamPath + request.url. Absent when the upstream had none, and in records written
   * before prefixes were stored. Not part of the key: compared with the origin (a recording answers
   * requests under its own prefix), and says where to re-record.
   */
  upstreamPath?: string;
  /** 64 hex characters; see MatchKind. */
  key: string;
  /** The request key spec version of an `llm` or `json` key; absent in records written before version 2. */
  keyVersion?: number;
  /** The request signature (tool names, message count, context keys), for `llm` records. */
  signature?: Signature;
  /** Trace token of this recording (see docs/proxy.md), sent back as `x-tapedeck-trace`. */
  trace: string;
  request: {
    method: string;
    /** Path and query as the client sent them (secret query parameters masked). */
    url: string;
    headers: StoredHeaders;
    /**
     * JSON bodies: the parsed value, secret fields and credential-looking strings masked.
     * Text bodies: the text, masked. Other bodies: the bytes. Absent when there was no body.
     */
    body?: unknown;
  };
  response: {
    status: number;
    statusText?: string;
    /** Without hop-by-hop headers, content-length and content-encoding (bodies are stored decoded). */
    headers: StoredHeaders;
    /** The body exactly as the client received it. */
    body: Uint8Array;
    /**
     * Streams only (server-sent events, or any body that arrived in more than one piece):
     * `[ms, end]` per chunk, where `ms` is when the chunk arrived, counted from the response
     * headers, and `end` is the byte offset in `body` where the chunk ends.
     */
    chunks?: [number, number][];
    /**
     * Hand-written recordings only (docs/hand-written.md): the connection drops after the last
     * chunk, as when a provider's stream is cut, so a client's error handling can be tested.
     */
    cut?: boolean;
  };
  /** ISO 8601 time the request was received. */
  recordedAt: string;
  /** Milliseconds from sending the request upstream to the end of the response. */
  durationMs: number;
  /** The run that recorded it (TAPEDECK_RUN_ID, else its writer's own); absent on older tapes. */
  run?: string;
  /** Its place among its key's recordings, as the writer that made it counted them; absent on older tapes. */
  repeat?: number;
  /** The test that recorded it, on tapes tests share (docs/vitest.md); absent otherwise. */
  test?: string;
}

/** Whether a tape value is a proxy record (other tools' records share tapes and are skipped). */
export function isHttpRecord(v: unknown): v is HttpRecord {
  if (v === null || typeof v !== 'object') return false;
  const r = v as Partial<HttpRecord>;
  return (
    r.kind === 'http' &&
    r.v === 1 &&
    typeof r.key === 'string' &&
    typeof r.route === 'string' &&
    (r.match === 'llm' || r.match === 'json' || r.match === 'http') &&
    r.response !== null &&
    typeof r.response === 'object' &&
    isBytes(r.response.body)
  );
}

/** The chunks of a recorded response as [delayFromStartMs, bytes], one chunk when not streamed. */
export function responseChunks(r: HttpRecord['response']): [number, Uint8Array][] {
  if (!r.chunks || r.chunks.length === 0) return [[0, r.body]];
  const out: [number, Uint8Array][] = [];
  let start = 0;
  for (const [ms, end] of r.chunks) {
    out.push([ms, r.body.subarray(start, end)]);
    start = end;
  }
  if (start < r.body.length) out.push([r.chunks[r.chunks.length - 1]![0], r.body.subarray(start)]);
  return out;
}

/**
 * HTTP exchanges in a collection, found under `route` NUL `match:key` (the route keeps two
 * endpoints with equal bodies apart).
 */
export const httpRecordKey = (route: string, match: MatchKind, key: string): string => `${route}\u0000${match}:${key}`;

/**
 * Whether a record's stored key is its key under the current spec (an HTTP-matched record's
 * always is): then currentHttpKey() gives it as it was filed, with nothing computed.
 *
 * @example
 * keyedAsFiled({ match: 'llm', keyVersion: KEY_SPEC_VERSION }) // true
 */
export function keyedAsFiled(rec: { match?: unknown; keyVersion?: unknown }): boolean {
  return rec.match === 'http' || keyIsCurrent(rec.keyVersion);
}

/**
 * An HTTP record's match kind and key under the current request key spec: one written under an
 * older version is re-keyed from its stored body (an `llm` body may now be plain JSON and the
 * other way round); a body with no canonical form keeps the key it was stored with.
 */
export function currentHttpKey(rec: HttpRecord, norm: NormalizeOptions = {}): { match: MatchKind; key: string } {
  if (keyedAsFiled(rec)) return rec;
  const body = rec.request.body;
  try {
    const keys = rekey(body, rec.keyVersion, norm);
    return keys ? { match: 'llm', key: keys.key } : { match: 'json', key: hashValue(body) };
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    return rec;
  }
}

/**
 * How HTTP records are filed under the origin (scheme, host, port) they were recorded for, so a
 * request finds the recordings of the host it goes to: httpRecords' `origins`. The proxy's
 * filing is built in; one of your own is for a store that files by another rule.
 *
 * @example
 * const byHost: OriginFiling = { name: (route, origin) => `${route} @${new URL(origin).host}`, replaces: () => undefined }
 * const kind = httpRecords({}, byHost)
 */
export interface OriginFiling {
  /** The name a route's recordings for an origin (and the upstream's path prefix there, if any) are filed under, in the route's place. */
  name(route: string, origin: string, upstreamPath?: string): string;
  /** The key a re-recording of a key replaces too (its request filed before origins were stored), if any. */
  replaces(key: string): string | undefined;
}

/** The head fields an HTTP record is filed by. */
const HTTP_HEAD: readonly string[] = ['kind', 'key', 'keyVersion', 'match', 'route'];
const HTTP_HEAD_ORIGIN: readonly string[] = [...HTTP_HEAD, 'origin', 'upstreamPath'];

/**
 * The RecordKind of proxy / createFetch records, keyed under the current request key spec
 * (`norm`: the ignored arguments and volatile keys), and with `origins` filed under the origin
 * each was recorded for too (without: under its route alone, any host's). `rekeyed` counts the
 * records whose stored key was from an older spec version.
 *
 * @example
 * const kind = httpRecords({ ignoreArgs: ['user'] }) // keyed without `user`, filed by route alone
 */
export function httpRecords(norm: NormalizeOptions = {}, origins?: OriginFiling): RecordKind<HttpRecord> & { rekeyed: number; mcp: number; realtime: number } {
  let lastRoute = '';
  let lastMatch: unknown;
  let lastOrigin: unknown;
  let lastUnder: unknown;
  let lastGroup = '';
  /** The name a record of `route` is filed under: with the origin it was recorded for (`at.origin`) and its upstream path prefix, if any. */
  const filed = (route: string, at: { origin?: unknown; upstreamPath?: unknown }): string => (origins !== undefined && typeof at.origin === 'string' ? origins.name(route, at.origin, at.upstreamPath as string | undefined) : route);
  const kind = {
    name: 'HTTP exchange record',
    rekeyed: 0,
    /** MCP exchanges met on the same tape (the proxy serves both; its lines count both). */
    mcp: 0,
    /** Realtime sessions met on the same tape: their heads (keyed by the connect; parts by `sid/n`, audio by `blob:`). */
    realtime: 0,
    // In tapes written before `match` and `route` were moved before the containers, they follow
    // the request and response: the head is read past them (see peekFrame). `origin` and
    // `upstreamPath` are read among the leading scalars only: a record written before them has
    // none, and is not stepped through to find that out.
    headFields: origins ? HTTP_HEAD_ORIGIN : HTTP_HEAD,
    headDeep: origins ? HTTP_HEAD.length : true,
    keysOf: (head: Readonly<Record<string, unknown>>, value: () => unknown) => {
      if (head.kind === MCP_RECORD_KIND) kind.mcp++;
      else if (head.kind === REALTIME_RECORD_KIND && typeof head.key === 'string' && !head.key.startsWith('blob:') && !head.key.includes('/')) kind.realtime++;
      if (head.kind !== 'http') return undefined;
      // Keyed under the current spec: filed by its head, without decoding it (a large tape
      // opens in one pass over the frames). Only a record of an older spec is decoded, to be
      // keyed again.
      const { route, match, key } = head;
      if (typeof route === 'string' && typeof key === 'string' && (match === 'http' || ((match === 'llm' || match === 'json') && keyIsCurrent(head.keyVersion)))) {
        return httpRecordKey(filed(route, head), match, key);
      }
      const v = value();
      if (!isHttpRecord(v)) return undefined;
      const cur = currentHttpKey(v, norm);
      // Counted as the line says: every recording keyed again, changed key or not (one of a
      // newer key spec, which this tapedeck cannot key, keeps its stored key: `cur` is `v`).
      if (cur !== v) kind.rekeyed++;
      return httpRecordKey(filed(v.route, v), cur.match, cur.key);
    },
    // Filed at open as the group `route NUL match:` (the route with its origin after it) and the
    // stored key, without joining them (a large tape opens without making and hashing a joined
    // key per record). One group string serves consecutive records of one route, match kind and
    // origin (their head strings are the same objects, see peekFrame).
    keyParts: (head: Readonly<Record<string, unknown>>): readonly [string, string] | undefined => {
      const { route, match, key, origin } = head;
      if (head.kind !== 'http' || typeof route !== 'string' || typeof key !== 'string' || !(match === 'http' || ((match === 'llm' || match === 'json') && keyIsCurrent(head.keyVersion)))) return undefined;
      if (route !== lastRoute || match !== lastMatch || origin !== lastOrigin || head.upstreamPath !== lastUnder) {
        // A route with a NUL would not split back where it was joined: keyed joined instead.
        if (route.includes('\u0000')) return undefined;
        lastRoute = route;
        lastMatch = match;
        lastOrigin = origin;
        lastUnder = head.upstreamPath;
        lastGroup = httpRecordKey(filed(route, head), match, '');
      }
      return [lastGroup, key];
    },
    groupLength: (k: string) => {
      const nul = k.indexOf('\u0000');
      return nul < 0 ? 0 : k.indexOf(':', nul) + 1;
    },
    // `route NUL match:key`: the record's own `key` is after the match kind.
    storedKey: (k: string) => {
      const rest = k.slice(k.indexOf('\u0000') + 1);
      return { kind: 'http', key: rest.slice(rest.indexOf(':') + 1) };
    },
    is: isHttpRecord,
    misfit: httpRecordMisfit,
    newer: newerRecordOf('http'),
    replaces: origins?.replaces,
  };
  return kind;
}

// ---------------------------------------------------------------------------------------------
// ReplayCache records (docs/tape-format.md)
// ---------------------------------------------------------------------------------------------

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
  /** The response exactly as it came off the wire (redacted), when byte-exact replay matters. */
  raw?: { body: Uint8Array; contentType?: string };
  /** The caller's own metadata (put option `meta`), redacted. */
  meta?: Record<string, unknown>;
  /** The run that recorded it (TAPEDECK_RUN_ID, else its writer's own); absent on older tapes. */
  run?: string;
  /** Its place among its key's recordings, as the writer that made it counted them; absent on older tapes. */
  repeat?: number;
  /** The test that recorded it, on tapes tests share (docs/vitest.md); absent otherwise. */
  test?: string;
}

/**
 * Per-call options of put (an array is shorthand for `{ ignoredArgs }`). Each may be given as
 * undefined (`contentType: res.headers.get('content-type') ?? undefined`), which is how it is
 * left out, also under `exactOptionalPropertyTypes`.
 */
export interface ReplayPutOptions {
  /** Request arguments left out of this call's key, in place of the cache's `ignoredArgs`. */
  ignoredArgs?: readonly string[] | undefined;
  /** How long the live call took, in milliseconds. */
  durationMs?: number | undefined;
  /** The exact response bytes (and content type) for byte-exact replay. */
  raw?: { body: Uint8Array | ArrayBuffer | ArrayBufferView | string; contentType?: string | undefined } | undefined;
  /** Anything worth keeping with the record: test name, run id, cost. */
  meta?: Record<string, unknown> | undefined;
}

/** The canonical form of an ignoredArgs list stored in records: sorted JSON, '' for none. */
export const ignoredText = (args: readonly string[] | undefined): string => (args && args.length > 0 ? JSON.stringify([...new Set(args)].sort()) : '');

const hexBytes = (hashes: readonly string[]): Uint8Array => Buffer.from(hashes.join(''), 'hex');

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

/** A ReplayCache record: anything else on the tape (other tools' records) is left alone. */
export function isCacheRecord(v: unknown): v is Partial<ReplayRecord> & { request: unknown; value: unknown } {
  return isObject(v) && 'request' in v && 'value' in v && !(typeof v.v === 'number' && v.v > 1);
}

/**
 * A record in the layout of docs/tape-format.md (field order included: scalars first). `value`
 * must already be redacted and key-sorted (put compares it with old recordings first); the
 * request and metadata are redacted here, the raw answer with `answer` (the redactor that also
 * masks the request's own secrets where the answer repeats them); `redacted`: the request as
 * `r` redacts it, when the caller has it already. Shared by ReplayCache.put and the importers.
 *
 * @example
 * const rec = buildRecord(requestKeys(req), req, sortedKeys(answer), {}, redactor(), new Date().toISOString());
 */
export function buildRecord(keys: RequestKeys, request: unknown, storedValue: unknown, opts: ReplayPutOptions, r: Redactor, recordedAt: string, answer: Redactor = r, redacted: unknown = r.value(request)): ReplayRecord {
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
  record.request = sortedKeys(redacted);
  record.value = storedValue;
  if (opts.raw !== undefined) {
    // The bytes as fetch gives them (`await res.arrayBuffer()`) or any view of them are taken as they are.
    const given: unknown = opts.raw.body;
    const body = isArrayBuffer(given) ? new Uint8Array(given) : ArrayBuffer.isView(given) && !isBytes(given) ? new Uint8Array(given.buffer, given.byteOffset, given.byteLength) : given;
    if (typeof body !== 'string' && !isBytes(body)) {
      const what = typeof Blob !== 'undefined' && body instanceof Blob ? 'a Blob' : body === null ? 'null' : typeof body === 'object' ? `a ${(body as object).constructor?.name ?? 'object'}` : `a ${typeof body}`;
      throw new TapedeckError('E_ARG', `put: raw.body is ${what}; it must be the response bytes (a Uint8Array, an ArrayBuffer or another view of bytes) or a string.`, {
        hint: what === 'a Blob' ? 'Pass its bytes: { raw: { body: new Uint8Array(await blob.arrayBuffer()) } }.' : 'Pass the response bytes exactly as received: { raw: { body: new Uint8Array(await res.arrayBuffer()) } }.',
      });
    }
    const contentType = opts.raw.contentType === undefined ? undefined : String(opts.raw.contentType);
    // Redacted like every other byte a record stores: by name when it is JSON, a stream across
    // its events (AWS event-stream frames as frames), else as text.
    const bytes = redactAnswerBody(typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength), contentType, answer).body;
    record.raw = { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    if (contentType !== undefined) record.raw.contentType = contentType;
  }
  if (opts.meta !== undefined) record.meta = sortedKeys(r.value(opts.meta));
  return record;
}

/**
 * The RecordKind of ReplayCache records, keyed by their stored `key`. With `ignoredArgs`, a record
 * keyed under other ignored arguments is found under the key it has with these too (so changing
 * the option never strands recordings); a record without a stored key gets it computed.
 */
export function cacheRecords(ignoredArgs: readonly string[] | undefined, volatileText?: readonly (RegExp | string)[]): RecordKind<ReplayRecord> & { rekeyed: number } {
  // With volatileText, every record is also found under its key with the patterns applied, so
  // recordings made before the option was set still answer.
  const volatile = volatileText !== undefined && volatileText.length > 0;
  const want = ignoredText(ignoredArgs);
  const kind = {
    name: 'ReplayCache record',
    /** Records whose stored key was from an older request key spec version. */
    rekeyed: 0,
    headFields: ['v', 'kind', 'key', 'keyVersion', 'ignored'],
    keysOf: (head: Readonly<Record<string, unknown>>, value: () => unknown): string | string[] | undefined => {
      // Another tool's record kind is not ours to serve.
      if (head.kind !== undefined) return undefined;
      const key = typeof head.key === 'string' ? head.key : undefined;
      // A newer record version is filed by its key, so the call it answers gets E_TAPE_VERSION
      // (see `newer`), never a miss or the request's next recording in its place.
      if (typeof head.v === 'number' && head.v > 1) return key;
      // A key from an older spec version is recomputed from the stored request, and only the
      // new key files the record (the old one may lump shapes the new one separates).
      const stale = key !== undefined && !keyIsCurrent(head.keyVersion);
      if (key !== undefined && !stale && !volatile && (head.ignored ?? '') === want) return key;
      const v = value();
      if (!isCacheRecord(v)) return undefined;
      let rekeyed: string;
      try {
        const keys = rekey(v.request, head.keyVersion ?? undefined, { ignoreArgs: ignoredArgs, ...(volatile ? { volatileText } : {}) });
        if (!keys) throw new TapedeckError('E_REQUEST', 'the stored request is no LLM request shape');
        rekeyed = keys.key;
        // Counted only when keyed again: one of a newer key spec keeps its stored key (below).
        if (stale) kind.rekeyed++;
      } catch (e) {
        if (key === undefined || !(e instanceof TapedeckError)) throw e;
        rekeyed = key;
      }
      if (stale) return rekeyed;
      return key !== undefined && key !== rekeyed ? [rekeyed, key] : rekeyed;
    },
    // ReplayCache records have no `kind`; a store names them `cache`.
    storedKey: (k: string) => ({ kind: 'cache', key: k }),
    is: (v: unknown): v is ReplayRecord => isCacheRecord(v),
    newer: newerRecordOf('cache'),
    // buildRecord writes the one field order already.
    encode: (r: ReplayRecord) => r,
  };
  return kind;
}

// ---------------------------------------------------------------------------------------------
// Durable replay store records (docs/replay.md)
// ---------------------------------------------------------------------------------------------

/** The `kind` of replay records on a tape. */
export const REPLAY_RECORD_KIND = 'tapedeck.replay';

/** A replay entry (trace token, query -> exact response bytes) as stored on the tape. */
export interface ReplayTapeRecord {
  v: 1;
  kind: typeof REPLAY_RECORD_KIND;
  token: string;
  query: string;
  documentId: string;
  body: Uint8Array;
  contentType: string;
  /** ms since the epoch (the store's clock). */
  createdAt: number;
  meta?: Record<string, unknown>;
}

/** Replay records in a collection: under `token` NUL `query`, the latest one wins. */
export const replayRecords: RecordKind<ReplayTapeRecord> = {
  name: 'replay record',
  headFields: ['kind'],
  keysOf: (head, value) => {
    if (head.kind !== REPLAY_RECORD_KIND) return undefined;
    // `token` and `query` sort after the binary `body`, past what a head holds.
    // A malformed one is still of this kind: its reader reports what is wrong with it.
    const v = value();
    return isObject(v) ? `${String(v.token)}\u0000${String(v.query)}` : undefined;
  },
  is: (v): v is ReplayTapeRecord => isObject(v) && v.kind === REPLAY_RECORD_KIND,
};

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;
/** A JSON type that frames a stream of JSON lines, not one document (Cohere's v1 chat stream). */
const JSON_LINES_TYPE = /^application\/stream\+json\s*(?:;|$)/i;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What is wrong with a recorded answer whose framing was fine but whose body is not what its
 * content type says: a JSON answer that is not valid UTF-8 or not valid JSON. Such an answer is
 * recorded byte for byte (the tape keeps what the provider sent) but said: a warning when it
 * is recorded, a mark in `tapedeck inspect`. Undefined for a good or a non-JSON answer.
 *
 * @example
 * answerProblem({ status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"a":') }) // 'not valid JSON'
 */
export function answerProblem(response: HttpRecord['response']): string | undefined {
  return checkedAnswer(response).problem;
}

const GOOD_ANSWER: { problem: undefined; parsed: undefined } = Object.freeze({ problem: undefined, parsed: undefined });

/**
 * {@link answerProblem}, with the body's parse when it was parsed (a good JSON answer): the
 * record path redacts the answer from that parse rather than parsing it again. `ascii`: the
 * body's text when the caller has it and every byte is ASCII (not decoded again).
 *
 * @example
 * const { problem, parsed } = checkedAnswer(response) // parsed?.value: the answer's JSON
 */
export function checkedAnswer(response: HttpRecord['response'], ascii?: string): { problem: string | undefined; parsed: { value: unknown } | undefined } {
  const ct = response.headers['content-type'];
  const type = Array.isArray(ct) ? ct[0] : ct;
  if (type === undefined || !JSON_TYPE.test(type) || JSON_LINES_TYPE.test(type) || response.body.length === 0) return GOOD_ANSWER;
  let text: string;
  if (ascii !== undefined && ascii.length === response.body.length) text = ascii;
  else {
    try {
      text = strictUtf8.decode(response.body);
    } catch {
      return { problem: 'not valid UTF-8', parsed: undefined };
    }
  }
  try {
    return { problem: undefined, parsed: { value: JSON.parse(text) } };
  } catch {
    return { problem: 'not valid JSON', parsed: undefined };
  }
}

/** A JSON array recorded in pieces, as Gemini streams one without `alt=sse`. */
function jsonArrayStream(type: string, response: HttpRecord['response']): boolean {
  if (!(type.startsWith('application/json') || /^application\/[^;]*\+json/.test(type)) || (response.chunks?.length ?? 0) < 2) return false;
  for (const b of response.body) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b === 0x5b;
  return false;
}

/**
 * How a recorded answer was framed, for listings: `sse`, `ndjson`, `eventstream` (AWS),
 * `json-array` (a JSON array recorded in pieces, as Gemini streams without `alt=sse`), or `-`
 * for a whole body; `, cut` when the stream was recorded broken off.
 *
 * @example
 * answerFraming({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: new Uint8Array() }) // 'sse'
 */
export function answerFraming(response: HttpRecord['response']): string {
  const ct = response.headers['content-type'];
  const type = (Array.isArray(ct) ? ct[0] : ct)?.toLowerCase() ?? '';
  const kind = type.startsWith('text/event-stream')
    ? 'sse'
    : /ndjson|jsonl|jsonlines|^application\/stream\+json/.test(type)
      ? 'ndjson'
      : type.startsWith('application/vnd.amazon.eventstream')
        ? 'eventstream'
        : response.cut
          ? 'stream'
          : jsonArrayStream(type, response)
            ? 'json-array'
            : '-';
  return response.cut ? `${kind}, cut` : kind;
}

// ---------------------------------------------------------------------------------------------
// MCP exchanges: JSON-RPC over stdio, Streamable HTTP or an SDK transport (docs/mcp.md)
// ---------------------------------------------------------------------------------------------

/** The `kind` of MCP exchange records on a tape. */
export const MCP_RECORD_KIND = 'mcp';

/** A JSON-RPC answer as stored: its result or its error, never its `id`. */
export type McpAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/**
 * What the server sent while an exchange was open, in the order it arrived; `ms` counts from
 * the client's message. The exchange's own answer is one of them (a request's `response`), so
 * notifications before and after it keep their place. `standalone`: sent on the server's own
 * stream (Streamable HTTP's GET stream), not on the request's; replayed there too.
 *
 * Record version 2 keeps each server message as it was sent, in `message`: the JSON-RPC message
 * as UTF-8 JSON text, in the server's member order, its recorded id included, secrets masked
 * (nested objects of a record are written with sorted keys, bytes are not: src/mcp/wire.ts).
 * `notification.method` and `request.method` name it. Version 1 kept parsed values instead
 * (`notification.params`, `request.params`, `result`, `error`), which replay with sorted keys.
 * `answer` is the client's answer to a server request, a value in both (compared canonically).
 */
export type McpEvent =
  | { ms: number; notification: { method: string; params?: unknown }; message?: Uint8Array; standalone?: true }
  | { ms: number; request: { method: string; params?: unknown }; message?: Uint8Array; answer: McpAnswer; standalone?: true }
  | { ms: number; response: true; message: Uint8Array }
  | ({ ms: number; response: true } & McpAnswer);

/**
 * One client message to an MCP server (a request or a notification) and everything the server
 * sent back during it: notifications, its own requests to the client with the client's answers,
 * and the answer. Appended only once the answer arrived (a cut exchange is never written).
 */
export interface McpRecord {
  /** 2 (server messages kept as sent); 1 from earlier releases, still read. */
  v: 1 | 2;
  kind: typeof MCP_RECORD_KIND;
  /** Digest of the method and canonical params without their volatile parts (docs/mcp.md). */
  key: string;
  /** The MCP key spec version of `key`. */
  keyVersion: number;
  recordedAt: string;
  /** Milliseconds from the client's message to the last event. */
  durationMs: number;
  method: string;
  /** The client's message without `id` and `jsonrpc`, secrets masked. */
  request: { method: string; params?: unknown };
  events: McpEvent[];
}

/**
 * Whether a tape value is an MCP exchange record.
 *
 * @example
 * (await readTape('tools.tape')).records.map((r) => r.value).filter(isMcpRecord)
 */
export function isMcpRecord(v: unknown): v is McpRecord {
  return isObject(v) && v.kind === MCP_RECORD_KIND && (v.v === 1 || v.v === 2) && typeof v.key === 'string' && typeof v.method === 'string' && isObject(v.request) && Array.isArray(v.events);
}

/** MCP exchange records in a collection, found under their stored key. */
export const mcpRecords: RecordKind<McpRecord> = {
  name: 'MCP exchange record',
  headFields: ['kind', 'key'],
  keysOf: (head) => (head.kind === MCP_RECORD_KIND && typeof head.key === 'string' ? head.key : undefined),
  storedKey: (k) => ({ kind: MCP_RECORD_KIND, key: k }),
  is: isMcpRecord,
  newer: newerRecordOf(MCP_RECORD_KIND),
};

// ---------------------------------------------------------------------------------------------
// Realtime sessions: OpenAI Realtime, Gemini Live and the like over WebSocket (docs/realtime.md)
// ---------------------------------------------------------------------------------------------
//
// A session is stored as several records, so that what the client was told is on disk before it
// was told (docs/realtime.md, "What is acknowledged"): a `session` record at connect, found under
// the key of how the session opened (replay chooses among its sessions by the client's first
// frame, in recorded order among those that start alike); then `part` records, each the
// frames up to a response that completed, found under `<sid>/<n>`; and `blob` records, the bytes
// of audio, one per distinct content, found under `blob:<sha256>`.

/** The `kind` of realtime session records on a tape. */
export const REALTIME_RECORD_KIND = 'realtime';

/**
 * One frame of a session. Client frames (`c: 1`) carry the `key` that replay compares; a run of
 * audio chunks the client appended is one frame (`audio`), keyed by the digest of its bytes.
 * Server frames keep their wire text (`text`), with each audio string written as
 * `tapedeck-blob:<sha256>` and its bytes in a blob record; `at` is how many bytes of the current
 * client audio run had arrived when it came. `ms` counts from the connect.
 */
export type RealtimeFrame =
  | { ms: number; c: 1; key: string; msg: unknown; binary?: true }
  | { ms: number; c: 1; key: string; audio: { stream: string; blob: string; bytes: number; chunks: number } }
  | { ms: number; c: 1; key: string; blob: string; bytes: number; asText?: true }
  | { ms: number; text: string; blobs?: string[]; at?: number; binary?: true }
  | { ms: number; blob: string; bytes: number; at?: number };

/** How a session ended: who closed it, with which code; `cut` when the upstream went away (1006, a reset) or the recorder died. */
export interface RealtimeEnd {
  by: 'client' | 'server' | 'proxy';
  code: number;
  reason: string;
  cut?: true;
}

interface RealtimeBase {
  v: 1;
  kind: typeof REALTIME_RECORD_KIND;
  key: string;
  keyVersion: number;
  recordedAt: string;
}

/** The head of a session: how it opened (secrets removed) and the id its parts are found by. */
export interface RealtimeSessionRecord extends RealtimeBase {
  role: 'session';
  sid: string;
  provider: string;
  /** Path and query of the connect, secret parameters left out. */
  url: string;
  /** Subprotocols the client offered, secret ones left out. */
  protocols: string[];
}

/** Frames of a session up to a completed response (or its end). */
export interface RealtimePartRecord extends RealtimeBase {
  role: 'part';
  sid: string;
  n: number;
  frames: RealtimeFrame[];
  end?: RealtimeEnd;
}

/** Audio (or any binary) bytes, stored once per distinct content. */
export interface RealtimeBlobRecord extends RealtimeBase {
  role: 'blob';
  data: Uint8Array;
}

/** A realtime tape's record: a session's head, one of its parts, or an audio blob. */
export type RealtimeRecord = RealtimeSessionRecord | RealtimePartRecord | RealtimeBlobRecord;

/**
 * Whether a tape value is a realtime session record (head, part or blob).
 *
 * @example
 * (await readTape('voice.tape')).records.map((r) => r.value).filter(isRealtimeRecord)
 */
export function isRealtimeRecord(v: unknown): v is RealtimeRecord {
  if (!isObject(v) || v.kind !== REALTIME_RECORD_KIND || v.v !== 1 || typeof v.key !== 'string') return false;
  if (v.role === 'session') return typeof v.sid === 'string' && typeof v.url === 'string';
  if (v.role === 'part') return typeof v.sid === 'string' && typeof v.n === 'number' && Array.isArray(v.frames);
  return v.role === 'blob' && isBytes(v.data);
}

/** Realtime session records in a collection, found under their stored key. */
export const realtimeRecords: RecordKind<RealtimeRecord> = {
  name: 'realtime session record',
  headFields: ['kind', 'key'],
  keysOf: (head) => (head.kind === REALTIME_RECORD_KIND && typeof head.key === 'string' ? head.key : undefined),
  storedKey: (k) => ({ kind: REALTIME_RECORD_KIND, key: k }),
  is: isRealtimeRecord,
  newer: newerRecordOf(REALTIME_RECORD_KIND),
};
