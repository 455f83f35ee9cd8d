// The matcher: given a request and a set of recordings, pick the right recording or fail loudly
// and say why. Every recording is hashed once when the matcher is built; a lookup is then a
// couple of Map probes (never a scan), whatever the number of recordings.

import { canonicalizeJSON, hashJSON, hashValue, notJsonText, pathHashes, sha256Hex } from '../core/index.ts';
import { TapedeckError, withContext } from '../errors.ts';
import { explainMiss, type MissContext, type MissEntry } from './diagnose.ts';
import { normalizeRequest } from '../providers/index.ts';
import { fingerprintIgnoreKeys, type NormalizeOptions, type Provider } from '../providers/normalize.ts';
import { rawRequestDigests } from './raw-keys.ts';
import { viewDigests } from './view-digests.ts';
// Browser bundles get volatile-advice.browser.ts (package.json "browser"): the spans line alone.
import { withVolatileSpans } from './volatile-advice.ts';
import { RequestTexts } from './request-texts.ts';
import { recordingKeys } from './recording-keys.ts';
import { isArrayBuffer, isBytes } from '../bytes.ts';

/**
 * How createMatcher picks a recording: the exact request key, the signature, recorded order, or
 * all three in turn (hybrid, the default).
 */
export type MatchMode = 'exact' | 'signature' | 'sequential' | 'hybrid';
/** Every MatchMode, for validating one read from a setting. */
export const MATCH_MODES: readonly MatchMode[] = ['exact', 'signature', 'sequential', 'hybrid'];

/** A request signature: what a request offers, not what it says. */
export interface Signature {
  toolNames: string[];
  messageCount: number;
  contextKeys: string[];
}

/**
 * A recording as the matcher takes it: tapedeck's own records and the recording objects of a JSON recordings directory
 * (`{ request: { messages, tools, context }, response, recordedAt, signature? }`) alike.
 */
export interface Recording {
  request: unknown;
  response: unknown;
  recordedAt?: string;
  signature?: Signature;
  /** Where it came from (file name), for diagnostics. */
  source?: string;
  [extra: string]: unknown;
}

/** The digests the matcher looks a request up by. */
export interface RequestDigests {
  provider: Provider;
  /** digest of the normalized request view. */
  key: string;
  signature: Signature;
  signatureDigest: string;
  /**
   * The shape of the answer asked for: the canonical JSON of the view's shape-deciding options
   * (`{"stream":true}`), '' for a plain answer (src/match/answer-shape.ts). Fallbacks never cross
   * it.
   */
  shape: string;
  messageHashes: string[];
  pathHashes: string[];
}

/** Everything the matcher derives from a request: computed once per request or recording. */
export interface RequestKeys extends RequestDigests {
  /** Normalized messages and view, kept for miss diagnostics. */
  messages: unknown[];
  view: Record<string, unknown>;
}

/** Options of createMatcher: the recordings, the matching mode, and how requests are normalized. */
export interface MatcherOptions extends NormalizeOptions {
  /** Default 'hybrid': exact, then signature, then sequential, each fallback with a warning. */
  mode?: MatchMode;
  /** The recordings to match against, each `{ request, response }` (loadRecordingsDir reads a folder of them). */
  recordings: readonly Recording[];
  /**
   * Let a recording answer more than once (default false: each answers its own request once, at
   * its turn, and at most one fallback; a fallback takes no turn of its own request).
   */
  allowRepeats?: boolean;
  /** Same as NormalizeOptions.ignoreArgs; the name DSPy-style caches use. */
  ignoreArgs?: readonly string[];
  /** Shown in miss messages: where the recordings live (a directory or tape path). */
  source?: string;
  /** Shown in miss messages: the command that re-records them. */
  recordCommand?: string;
  /**
   * The API the matcher serves (createFetch, the proxy, ...), so a miss names only the options
   * and commands that exist there (default: the matcher's own options).
   */
  entry?: MissEntry;
  /**
   * Request bodies given as bytes or text are remembered by the SHA-256 of their bytes, this
   * many (least recently used first out; default 1024, 0 turns it off). A proxy sees the same
   * body again and again; a repeat then skips parsing, normalization and hashing of the view.
   * The recordings' own requests count as seen, as the JSON text JSON.stringify makes of them:
   * the text the JavaScript SDKs send, so a replayed call from one of them is found by the
   * hash of its bytes alone.
   */
  memo?: number;
  /**
   * Recordings already used when the matcher is made (a proxy that served them by their stored
   * keys before it needed a matcher): they count as used, as if this matcher had served them.
   */
  used?: (index: number) => boolean;
  /**
   * Whether each recording's fingerprint is kept (default true): the digest of its request
   * itself, apart from the root arguments normalization always drops, so that a body equal to a
   * recording's in that sense takes the recording's digests from one core call. ~5 us per
   * recording when the matcher is made (half a second on 100,000). A proxy that serves exact
   * matches by the stored keys and makes a matcher only at its first miss turns it off: the
   * answers are the same either way, only the cost of keying a request moves.
   */
  fingerprints?: boolean;
}

/** What Matcher.match returns: the recording, how it matched, and the warnings of a fallback. */
export interface MatchResult {
  recording: Recording;
  /** Position of the recording in the matcher's list. */
  index: number;
  matchedBy: 'exact' | 'signature' | 'sequential';
  warnings: string[];
  request: RequestDigests;
  /**
   * Served again past the last of its candidates (repeats): the recording had already taken this
   * turn of its key (exact) or answered something (a fallback). A recording a fallback served
   * and its own request now asks for at its turn is no repeat.
   */
  repeat: boolean;
}

/**
 * Computes the request key, signature, message and path hashes of a request.
 *
 * @example
 * requestKeys({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).key // 64 hex chars
 */
export function requestKeys(request: unknown, opts: NormalizeOptions = {}): RequestKeys {
  const n = normalized(request, opts);
  return { ...viewDigests(n), messages: n.messages, view: n.view };
}

/**
 * The request key and signature alone, with the normalized view: requestKeys() without the
 * message and path hashes, which only the matcher's fallbacks and miss diagnostics read. A
 * writer that stores a recording needs just these (the digest of the whole view is one core
 * call, where the hashes of every message prefix took twice its time). Same key and same
 * errors as requestKeys().
 *
 * @example
 * requestKey({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).key
 *   === requestKeys({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).key // true
 */
export function requestKey(request: unknown, opts: NormalizeOptions = {}): { key: string; signature: Signature; view: Record<string, unknown> } {
  const n = normalized(request, opts);
  return { key: hashValue(n.view), signature: { toolNames: n.toolNames, messageCount: n.messages.length, contextKeys: n.contextKeys }, view: n.view };
}

/**
 * The digests of a request: requestKeys() without the normalized view, so that a raw body
 * (UTF-8 bytes or JSON text) can be keyed straight from its bytes (src/match/raw-keys.ts: no
 * JSON.parse of the body, no view built as objects), which is what a proxy or a cache meeting a
 * new request needs. Same digests and same errors as requestKeys() for every input.
 *
 * @example
 * requestDigests(Buffer.from('{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}')).key
 *   === requestKeys({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).key // true
 */
export function requestDigests(request: unknown, opts: NormalizeOptions = {}): RequestDigests {
  if (isBytes(request) || typeof request === 'string') {
    const raw = rawRequestDigests(request, opts);
    if (raw) return raw;
  }
  return slim(requestKeys(request, opts));
}

/**
 * The normalized request. The normalizer's copy refuses nesting past MAX_DEPTH with no location
 * (it keeps no path, to cost nothing per value); the core's serializer, run only then, finds
 * the place in the request as given, as hashValue() reports it ($.messages[1].content...).
 */
function normalized(request: unknown, opts: NormalizeOptions): ReturnType<typeof normalizeRequest> {
  try {
    return normalizeRequest(parseBody(request), opts);
  } catch (e) {
    if (e instanceof TapedeckError && e.code === 'E_DEPTH' && e.path === undefined && e.offset === undefined && typeof request === 'object' && request !== null && !isBytes(request)) {
      try {
        hashValue(request);
      } catch (located) {
        if (located instanceof TapedeckError && located.code === 'E_DEPTH') throw located;
      }
    }
    throw e;
  }
}

/** RequestKeys without the messages and view: the digests alone. */
function slim({ messages: _m, view: _v, ...digests }: RequestKeys): RequestDigests {
  return digests;
}

const decoder = new TextDecoder();

/**
 * A request given as raw body bytes or JSON text is parsed here; malformed JSON is reported
 * by the strict core reader, with the byte offset.
 */
function parseBody(request: unknown): unknown {
  if (!isBytes(request) && typeof request !== 'string') {
    // Bytes in another form (an ArrayBuffer from `await req.arrayBuffer()`) would be read as an
    // object with no members and refused as no LLM request shape: say what to pass instead.
    if (isArrayBuffer(request) || ArrayBuffer.isView(request)) throw notJsonText(request);
    return request;
  }
  // The strict reader first: a body that is not I-JSON (duplicate names, lone surrogate
  // escapes, 1e400) has no key, whichever way it is given (docs/hash-spec.md, "Errors").
  canonicalizeJSON(request);
  const text = typeof request === 'string' ? request : decoder.decode(request);
  try {
    return JSON.parse(text);
  } catch {
    canonicalizeJSON(request); // throws the precise TapedeckError
    throw new TapedeckError('E_JSON', 'The request body is not valid JSON.', { hint: 'Send a JSON body.' });
  }
}

/** Queue of recording indexes in recorded order, with a cursor past the taken ones. */
class Bucket {
  readonly items: number[] = [];
  cursor = 0;
}

// A recording's state in MatchIndex.flags: SERVED once it answered anything, TURN once it
// answered its own request (a turn of its key).
const SERVED = 1;
const TURN = 2;

/**
 * The lookup structure behind a matcher: recordings by request key, by signature digest and
 * answer shape, and by answer shape alone, each a queue in recorded order, plus what each
 * recording has answered. Every operation is O(1) amortized in the number of recordings
 * (cursors only move forward past taken entries).
 *
 * Two rules keep a fallback from ever changing what a request of its own gets
 * (docs/matching.md, "Fallbacks"):
 * - a key's turns are its own: the k-th exact ask of a key gets its k-th recording, whatever
 *   fallbacks served before (a fallback marks a recording served, not its turn taken);
 * - fallbacks (by signature, in sequence) only take recordings of the request's answer shape,
 *   and only ones nothing has served yet (with repeats, the bucket's last one again after that).
 */
export class MatchIndex {
  // A key of one recording holds its index, a queue only once a second one comes: most keys of
  // a tape have one recording, and a queue is three objects (on 100,000 recordings, ~0.1 s of
  // a first miss went to making and collecting them).
  private readonly byKey = new Map<string, number | Bucket>();
  // Keyed by signature digest and answer shape: a fallback never crosses shapes.
  private readonly bySignature = new Map<string, number | Bucket>();
  // Recordings in recorded order, one queue per answer shape (sequential matching).
  private readonly byShape = new Map<string, Bucket>();
  private flags = new Uint8Array(16);
  private count = 0;

  constructor(private readonly allowRepeats = false) {}

  get size(): number {
    return this.count;
  }

  /**
   * Adds recording number `size` with its request key, signature digest and answer shape
   * (RequestDigests.shape; '' for a plain answer).
   */
  add(key: string, signatureDigest: string, shape = ''): number {
    const i = this.count++;
    if (i >= this.flags.length) {
      const grown = new Uint8Array(this.flags.length * 2);
      grown.set(this.flags);
      this.flags = grown;
    }
    MatchIndex.push(this.byKey, key, i);
    MatchIndex.push(this.bySignature, MatchIndex.shaped(signatureDigest, shape), i);
    let seq = this.byShape.get(shape);
    if (seq === undefined) this.byShape.set(shape, (seq = new Bucket()));
    seq.items.push(i);
    return i;
  }

  private static shaped(signatureDigest: string, shape: string): string {
    return shape === '' ? signatureDigest : `${signatureDigest}\u0000${shape}`;
  }

  private static push(map: Map<string, number | Bucket>, key: string, index: number): void {
    const b = map.get(key);
    if (b === undefined) map.set(key, index);
    else if (typeof b === 'number') {
      const queue = new Bucket();
      queue.items.push(b, index);
      map.set(key, queue);
    } else b.items.push(index);
  }

  /**
   * The first recording of a bucket, in recorded order, without the flag `taken` (TURN for a
   * key's turns, SERVED for fallbacks); with repeats, its last one after.
   */
  private take(b: number | Bucket | undefined, taken: number): number {
    if (b === undefined) return -1;
    if (typeof b === 'number') return (this.flags[b]! & taken) === 0 || this.allowRepeats ? b : -1;
    while (b.cursor < b.items.length && (this.flags[b.items[b.cursor]!]! & taken) !== 0) b.cursor++;
    if (b.cursor < b.items.length) return b.items[b.cursor]!;
    return this.allowRepeats ? b.items[b.items.length - 1]! : -1;
  }

  /** The recording the next ask of a key gets: its recordings in recorded order, one a turn (mark it with markUsed). */
  byRequestKey(key: string): number {
    return this.take(this.byKey.get(key), TURN);
  }

  /** A fallback by signature: the first recording of the signature and answer shape nothing has served (mark it with markFallback). */
  bySignatureDigest(digest: string, shape = ''): number {
    return this.take(this.bySignature.get(MatchIndex.shaped(digest, shape)), SERVED);
  }

  /** The first recording of an answer shape, in recorded order, that nothing has served (the legacy sequential mode of JSON recordings directories). */
  next(shape = ''): number {
    return this.take(this.byShape.get(shape), SERVED);
  }

  /** Recording i answered its own request: served, and that turn of its key taken. */
  markUsed(i: number): void {
    this.flags[i] = SERVED | TURN;
  }

  /** Recording i answered another request (a fallback): served, its key's turn left to its own request. */
  markFallback(i: number): void {
    this.flags[i]! |= SERVED;
  }

  /** Whether recording i answered anything. */
  isUsed(i: number): boolean {
    return (this.flags[i]! & SERVED) !== 0;
  }

  /** Whether recording i answered its own request (its turn is taken). */
  turnTaken(i: number): boolean {
    return (this.flags[i]! & TURN) !== 0;
  }

  hasKey(key: string): boolean {
    return this.byKey.has(key);
  }

  hasSignature(digest: string, shape?: string): boolean {
    if (shape !== undefined) return this.bySignature.has(MatchIndex.shaped(digest, shape));
    for (const s of this.byShape.keys()) if (this.bySignature.has(MatchIndex.shaped(digest, s))) return true;
    return false;
  }

  /** Used flags of every recording (1: it answered something), for diagnostics. */
  usedFlags(): Uint8Array {
    return this.flags.slice(0, this.count).map((f) => f & SERVED);
  }
}

/** Consecutive fingerprint misses after which fingerprints are only probed (see compute()). */
const FP_PROBE = 32;
/** The longest gap between two probes while the misses run on. */
const FP_PROBE_MAX = 512;

/**
 * Whether the request after `misses` consecutive fingerprint misses computes a fingerprint: each
 * of the first FP_PROBE, then at the 32nd, 64th, 128th, 256th and 512th miss, and every 512th
 * after that. A probe every 32nd request still cost a full body's core call in 32 (~2 us a
 * request on a 36 KB chat body, whose full path takes ~90 us); the growing gap makes a run of
 * misses nearly free and still finds fingerprints that hit again within 512 requests.
 */
function probes(misses: number): boolean {
  return misses < FP_PROBE || (misses & (misses - 1)) === 0 || misses % FP_PROBE_MAX === 0;
}

/**
 * Whether v is a JSON value that JSON.stringify writes as itself: plain objects and arrays,
 * strings, booleans, null and finite numbers. Anything else (undefined, NaN, a Date, a class
 * instance) is written as something else, so its text would not stand for the recording.
 */
function isJsonValue(v: unknown, depth: number): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v !== 'object' || depth > 200) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!(i in v) || !isJsonValue(v[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  if (Object.getOwnPropertySymbols(v).length > 0) return false;
  for (const k in v) if (!isJsonValue((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

/**
 * The text a recorded request is keyed from: the request itself when it is a raw body (bytes or
 * JSON text, as requestKeys() takes one; a proxy's first miss on a large tape gives each
 * recording's body so, made from the tape's bytes by src/store/msgpack-json.ts), else the JSON
 * text of JSON data, else none.
 */
function recordedText(request: unknown): string | Uint8Array | undefined {
  return isBytes(request) || typeof request === 'string' ? request : isJsonValue(request, 0) ? JSON.stringify(request) : undefined;
}

/**
 * The digests of a recorded request, as requestDigests() gives them: keyed from its JSON text by
 * the raw path (one core call, no normalizing as objects; the same digests, differential-tested),
 * which is half the cost of requestKeys() on a chat body; where the raw path declines (a
 * construct it leaves to the reference) or there is no text, requestKeys() decides, and throws
 * what it throws. `text`: recordedText(request), when the caller has it.
 *
 * @example
 * recordingDigests({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, {}).key === requestKeys(same).key // true
 */
export function recordingDigests(request: unknown, norm: NormalizeOptions, text: string | Uint8Array | undefined = recordedText(request)): RequestDigests {
  return (text === undefined ? undefined : rawRequestDigests(text, norm)) ?? slim(requestKeys(request, norm));
}

/** How {@link Matcher.match} answers a miss. */
export interface MatchOptions {
  /**
   * `false`: a miss is a short E_MISS (the request's `key` in its details, no diagnosis), for a
   * caller that only needs to know it missed: update mode sends the request upstream and records
   * it. On a large tape the diagnosis (the closest recordings, what differs) is most of a miss's
   * time. {@link Matcher.explain} gives it later, should the miss be shown. Default `true`.
   */
  diagnose?: boolean;
}

/**
 * A matcher over a set of recordings (createMatcher): match, explain misses, list what went
 * unused.
 */
export interface Matcher {
  /**
   * Picks the recording for a request, or throws TapedeckError E_MISS with diagnostics (without
   * them when `{ diagnose: false }`).
   *
   * @example
   * m.match(body)                        // the recording, or E_MISS saying what differs
   * m.match(body, { diagnose: false })   // the recording, or a short E_MISS (details.key)
   */
  match(request: unknown, opts?: MatchOptions): MatchResult;
  /**
   * The diagnosed E_MISS for a request, as match() throws it, for a miss first taken without
   * diagnosis. Read-only: nothing is marked used.
   *
   * @example
   * try { m.match(body, { diagnose: false }) } catch { show(m.explain(body)) }
   */
  explain(request: unknown): TapedeckError;
  /** Recordings never matched: stale ones to prune, or calls the test no longer makes. */
  unused(): Recording[];
  /** Keys of every recording, in order (for tools that index or prune). */
  keys(): readonly RequestDigests[];
  /** How requests were keyed so far: memo hits, fingerprint hits, full computations. */
  stats(): MatcherStats;
  readonly mode: MatchMode;
}

/**
 * How the matcher keyed the requests it was given (Matcher.stats): from its memo, by fingerprint,
 * or computed.
 */
export interface MatcherStats {
  /** Body bytes seen before, or equal to a recording's request as JSON.stringify writes it (SHA-256 of the bytes). */
  memoHits: number;
  /** Bodies canonically equal to a recording's, apart from always-dropped root arguments. */
  fingerprintHits: number;
  /** Requests parsed, normalized and hashed in full. */
  computed: number;
}

/**
 * Builds a matcher over recordings. Each recording is normalized and hashed once here.
 *
 * @example
 * const m = createMatcher({ mode: 'hybrid', recordings })
 * const { recording, matchedBy, warnings } = m.match(request)
 */
export function createMatcher(opts: MatcherOptions): Matcher {
  // First, and not the shared options check (option-names.ts): the browser bundle makes matchers
  // too, and its size budget has room for this `?.`, not for that check. Without an options
  // object there are no recordings: said so, rather than a TypeError reading `mode` of undefined.
  if (!Array.isArray(opts?.recordings)) {
    throw new TapedeckError('E_ARG', 'createMatcher takes `recordings`, an array.', {
      hint: 'Load them with loadRecordingsDir(dir) or pass [] to start empty.',
    });
  }
  const mode = opts.mode ?? 'hybrid';
  if (!MATCH_MODES.includes(mode)) {
    throw new TapedeckError('E_ARG', `Unknown matching mode ${JSON.stringify(mode)}.`, {
      hint: `Valid modes: ${MATCH_MODES.join(', ')} (default hybrid).`,
    });
  }
  const norm: NormalizeOptions = {
    provider: opts.provider,
    ignoreArgs: opts.ignoreArgs,
    volatileKeys: opts.volatileKeys,
    volatileText: opts.volatileText,
    ...(opts.endpoint !== undefined ? { endpoint: opts.endpoint } : {}),
  };
  const recordings = opts.recordings;
  // Digests only: the normalized views are rebuilt on a miss, for the few closest recordings,
  // rather than kept for every recording (a big tape would otherwise hold every request twice).
  const keys: RequestDigests[] = [];
  const index = new MatchIndex(opts.allowRepeats === true);
  // Fingerprint: the digest of the body itself, minus the root arguments normalization always
  // drops. Equal fingerprints mean equal normalized views (see fingerprintIgnoreKeys), so a
  // request whose fingerprint a recording has takes that recording's digests from one core
  // call over its raw bytes: no JSON.parse, no normalization.
  const fpOptions = { ignoreKeys: fingerprintIgnoreKeys(opts.ignoreArgs ?? []), rootOnly: true };
  const byFingerprint = new Map<string, number>();
  const keepFingerprints = opts.fingerprints !== false;
  const memoLimit = opts.memo ?? 1024;
  // SHA-256 of each recording's request as JSON.stringify writes it -> recording: the bytes a
  // JavaScript SDK sends for that request (see MatcherOptions.memo).
  const recordedBytes = new Map<string, number>();
  function fingerprint(request: unknown): string | undefined {
    try {
      return isBytes(request) || typeof request === 'string' ? hashJSON(request, fpOptions) : hashValue(request, fpOptions);
    } catch (e) {
      // Stricter than JSON.parse (duplicate keys, lone surrogates): the full path decides.
      if (e instanceof TapedeckError) return undefined;
      throw e;
    }
  }
  recordings.forEach((rec, i) => {
    if (rec === null || typeof rec !== 'object' || !('request' in rec)) {
      throw new TapedeckError('E_RECORDING', `Recording #${i} has no \`request\`.`, {
        hint: 'Each recording needs { request, response }; see docs/matching.md.',
        index: i,
      });
    }
    const text = recordedText(rec.request);
    let k: RequestDigests | undefined;
    try {
      k = recordingDigests(rec.request, norm, text);
    } catch (e) {
      if (e instanceof TapedeckError) {
        throw withContext(e, `Recording #${i}${rec.source ? ` (${rec.source})` : ''}: `, { index: i });
      }
      throw e;
    }
    keys.push(k);
    index.add(ownKey(k), k.signatureDigest, k.shape);
    const fp = keepFingerprints ? fingerprint(rec.request) : undefined;
    if (fp !== undefined && !byFingerprint.has(fp)) byFingerprint.set(fp, i);
    if (memoLimit > 0 && text !== undefined) {
      const id = sha256Hex(text);
      if (!recordedBytes.has(id)) recordedBytes.set(id, i);
    }
  });

  if (opts.used) for (let i = 0; i < recordings.length; i++) if (opts.used(i)) index.markUsed(i);

  const memo = new Map<string, RequestDigests>();
  const stats: MatcherStats = { memoHits: 0, fingerprintHits: 0, computed: 0 };
  // Fingerprints cost a core call over the whole body (~60 us for a 36 KB one), which is only
  // worth it while they find recordings. A matcher whose fingerprints keep missing (recording
  // new calls, or a client whose bodies change in ways normalization removes, such as new
  // tool-call ids) computes one only at growing intervals (probes()) until one hits again.
  // Either way the digests are the same: this changes the cost, never the answer.
  let fpMisses = 0;

  /** Digests without the memo: a recording's, by fingerprint, or computed in full. */
  function compute(request: unknown): { digests: RequestDigests; full?: RequestKeys } {
    const tryFp = byFingerprint.size > 0 && probes(fpMisses);
    const fp = tryFp ? fingerprint(request) : undefined;
    const same = fp === undefined ? undefined : byFingerprint.get(fp);
    if (same !== undefined) {
      fpMisses = 0;
      stats.fingerprintHits++;
      return { digests: keys[same]! };
    }
    if (byFingerprint.size > 0) fpMisses++;
    stats.computed++;
    // A raw body is keyed from its bytes; the normalized view is then only rebuilt on a miss,
    // for the diagnostics.
    const raw = isBytes(request) || typeof request === 'string' ? rawRequestDigests(request, norm) : undefined;
    if (raw) return { digests: raw };
    const full = requestKeys(request, norm);
    return { digests: full, full };
  }

  /** The digests of a request: from the memo when its exact bytes were seen before. */
  function digestsOf(request: unknown): { digests: RequestDigests; full?: RequestKeys } {
    if (memoLimit <= 0 || (typeof request !== 'string' && !isBytes(request))) return compute(request);
    // The id is the digest of the text's UTF-8, which a lone surrogate lacks (node:crypto hashes
    // it as U+FFFD, the id of another text): such a request is refused as it is without the memo.
    // isWellFormed() is O(1) for Latin-1 strings; it scans others (about half a hash's time).
    if (typeof request === 'string' && !request.isWellFormed()) return compute(request);
    const id = sha256Hex(request);
    const hit = memo.get(id) ?? (recordedBytes.size > 0 ? keys[recordedBytes.get(id) ?? -1] : undefined);
    if (hit) {
      stats.memoHits++;
      memo.delete(id); // re-insert: Map order is the LRU order
      memo.set(id, hit);
      return { digests: hit };
    }
    const r = compute(request);
    memo.set(id, r.full ? slim(r.full) : r.digests);
    if (memo.size > memoLimit) memo.delete(memo.keys().next().value!);
    return r;
  }

  // The recordings that are a request's own, which answer it in turn: those of its key; in
  // signature mode, of its key and signature (context keys are in the signature, not the key:
  // a recording with other context keys is not this request's in the strict mode).
  function ownKey(d: RequestDigests): string {
    return mode === 'signature' ? `${d.key}\u0000${d.signatureDigest}` : d.key;
  }

  function result(i: number, matchedBy: MatchResult['matchedBy'], warnings: string[], request: RequestDigests): MatchResult {
    // A fallback takes no turn of the recording's own request: asked later, that request still
    // gets its k-th recording at its k-th ask (docs/modes.md rule 1).
    const repeat = matchedBy === 'exact' ? index.turnTaken(i) : index.isUsed(i);
    if (matchedBy === 'exact') index.markUsed(i);
    else index.markFallback(i);
    return { recording: recordings[i]!, index: i, matchedBy, warnings, request, repeat };
  }

  const label = (i: number) => `#${i}${recordings[i]!.source ? ` (${recordings[i]!.source})` : ''}`;
  // Recordings' requests as canonical JSON, made at the first miss that ranks them and kept for
  // the next misses.
  let texts: RequestTexts | undefined;
  // And their full keys, which the ranking compares (./recording-keys.ts).
  const fulls = recordingKeys(recordings, (r) => requestKeys(r, norm));

  /** The E_MISS for a request no recording answers: what differs from the closest recordings. */
  function diagnosedMiss(request: unknown, full: RequestKeys | undefined): TapedeckError {
    const ctx: MissContext = {
      mode,
      request: full ?? requestKeys(request, norm),
      recordings,
      keys,
      full: fulls,
      requestBody: request,
      requestText: (i) => (texts ??= new RequestTexts(recordings)).get(i),
      used: index.usedFlags(),
      allowRepeats: opts.allowRepeats === true,
      source: opts.source,
      recordCommand: opts.recordCommand,
      entry: opts.entry,
      hasKey: (k) => index.hasKey(k),
      hasSignature: (d) => index.hasSignature(d),
    };
    return withVolatileSpans(request, norm, explainMiss(ctx), ctx);
  }

  return {
    mode,
    keys: () => keys,
    stats: () => ({ ...stats }),
    unused: () => recordings.filter((_, i) => !index.isUsed(i)),
    explain(request: unknown): TapedeckError {
      const { full } = digestsOf(request);
      return diagnosedMiss(request, full);
    },
    match(request: unknown, how?: MatchOptions): MatchResult {
      const { digests: req, full } = digestsOf(request);
      const warnings: string[] = [];
      const own = ownKey(req);
      if (mode !== 'sequential' && index.hasKey(own)) {
        // The request's own recordings answer it, in turn; past the last (without repeats) it
        // misses as used up. Another request's recording never stands in for its own.
        const i = index.byRequestKey(own);
        if (i >= 0) return result(i, 'exact', warnings, req);
      } else {
        // Fallbacks: only recordings of the answer shape the request asks for (a stream for a
        // stream, a plain body for a plain request, the same n and format).
        const shapeNote = req.shape === '' ? '' : `, answer shape ${req.shape}`;
        if (mode === 'signature' || mode === 'hybrid') {
          const i = index.bySignatureDigest(req.signatureDigest, req.shape);
          if (i >= 0) {
            if (mode === 'hybrid') {
              warnings.push(
                `No recording has this exact request (key ${req.key.slice(0, 12)}); matched recording ${label(i)} by signature ` +
                  `(tools [${req.signature.toolNames.join(', ')}], ${req.signature.messageCount} messages, context [${req.signature.contextKeys.join(', ')}]${shapeNote}). ` +
                  'Its content differs: re-record if the prompt changed on purpose.',
              );
            }
            return result(i, 'signature', warnings, req);
          }
        }
        if (mode === 'sequential' || mode === 'hybrid') {
          const i = index.next(req.shape);
          if (i >= 0) {
            if (mode === 'hybrid') {
              warnings.push(
                `No recording matches this request exactly or by signature; fell back to the next recording in order${req.shape === '' ? '' : ` of its answer shape (${req.shape})`}, ${label(i)}. ` +
                  'It was recorded for a different request: this replay is probably wrong. Re-record, or use mode "signature" to fail instead.',
              );
            }
            return result(i, 'sequential', warnings, req);
          }
        }
      }
      // Update mode's misses go upstream: the diagnosis is made only if one is shown (explain()).
      if (how?.diagnose === false) {
        throw new TapedeckError('E_MISS', `No recording answers this request (key ${req.key.slice(0, 12)}); not diagnosed.`, {
          key: req.key,
          diagnosed: false,
          hint: 'Ask match() without { diagnose: false }, or explain(request), for what differs from the closest recording.',
        });
      }
      throw diagnosedMiss(request, full);
    },
  };
}
