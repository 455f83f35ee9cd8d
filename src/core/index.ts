// The public hashing API. Picks a backend once, converts inputs to what engines take (UTF-8 JSON
// text), and formats digests. Every function here is a thin shell over a single engine call.

import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { hex, type BackendName, type CoreView, type ElementHashes, type Engine, type IgnoreSpec, type JsonText, type RequestViewSkip, type Sha256Stream } from './engine.ts';
import { JsEngine } from './js.ts';
import { ArrayText, stringifyPieces } from './pieces.ts';
import { tooLarge } from './status.ts';
import { allFinite, canonicalText, loneSurrogateIndex, type IgnoreSet } from './value.ts';
import { DECLINED, ValueText } from './walk.ts';
import { byteLength, simdSupported, WasmEngine } from './wasm.ts';
import { nodeHash } from './node-crypto.ts';
import { isArrayBuffer, isBytes } from '../bytes.ts';

export type { BackendName } from './engine.ts';

/** Options of canonicalize and the hashing functions: members left out before the bytes are made. */
export interface CanonicalOptions {
  /** Object member names to drop, at any depth, before canonicalizing (e.g. `["timestamp"]`). */
  ignoreKeys?: readonly string[];
  /**
   * Apply ignoreKeys to the members of the root object only (a request's top-level arguments),
   * keeping members of the same name deeper down (a tool schema property called "user").
   */
  rootOnly?: boolean;
}

const BACKENDS: readonly BackendName[] = ['wasm-simd', 'wasm', 'js'];
/** JSON.stringify text of at least this many UTF-16 units is marked as such (see onValue). */
const STRINGIFIED_MIN = 1024;
const encoder = new TextEncoder();

let engine: Engine | undefined;
// One instance per backend for the life of the process: switching back and forth (tests,
// benchmarks) must not pay for instantiation each time.
const engines = new Map<BackendName, Engine>();

function create(name: BackendName): Engine {
  let e = engines.get(name);
  if (!e) {
    e = instantiate(name);
    engines.set(name, e);
  }
  return e;
}

function instantiate(name: BackendName): Engine {
  if (name === 'js') return new JsEngine();
  if (name === 'wasm-simd' && !simdSupported()) {
    throw new TapedeckError('E_BACKEND', 'The wasm-simd backend needs WebAssembly SIMD, which this runtime lacks.', {
      hint: "Use TAPEDECK_BACKEND=wasm (or setBackend('wasm')).",
    });
  }
  return new WasmEngine(name);
}

function pick(): Engine {
  const forced = typeof process !== 'undefined' ? process.env?.TAPEDECK_BACKEND : undefined;
  if (forced) {
    if (!(BACKENDS as readonly string[]).includes(forced)) {
      throw new TapedeckError('E_BACKEND', `TAPEDECK_BACKEND=${JSON.stringify(forced)} is not a backend.`, {
        hint: `Valid values: ${BACKENDS.join(', ')}; unset it to pick the fastest automatically.`,
      });
    }
    return create(forced as BackendName);
  }
  if (typeof WebAssembly !== 'object') return create('js');
  try {
    return create(simdSupported() ? 'wasm-simd' : 'wasm');
  } catch {
    return create('js');
  }
}

function current(): Engine {
  return (engine ??= pick());
}

/**
 * The active backend: `'wasm-simd'`, `'wasm'` or `'js'`. Chosen on first use: the
 * `TAPEDECK_BACKEND` environment variable if set, else the fastest this runtime supports.
 *
 * @example
 * backend() // 'wasm-simd'
 */
export function backend(): BackendName {
  return current().name;
}

/**
 * Switches the backend for this process (tests and benchmarks compare them). All backends give
 * identical results; only speed differs.
 *
 * @example
 * setBackend('js'); hashJSON('[1]') // same digest as with 'wasm-simd'
 */
export function setBackend(name: BackendName): void {
  if (!(BACKENDS as readonly string[]).includes(name)) {
    throw new TapedeckError('E_BACKEND', `${JSON.stringify(name)} is not a backend.`, {
      hint: `Valid values: ${BACKENDS.join(', ')}.`,
    });
  }
  engine = create(name);
}

// Ignore lists are usually the same array on every call (a matcher's config), so their encoded
// and Set forms are cached per array.
interface Ignore {
  /** What engines take, for ignoreKeys at any depth and at the root only. */
  any: IgnoreSpec;
  root: IgnoreSpec;
  set: IgnoreSet;
}
const NO_IGNORE: Ignore = { any: { keys: [], rootOnly: false }, root: { keys: [], rootOnly: true }, set: new Set() };
const ignoreCache = new WeakMap<readonly string[], Ignore>();

function ignoreOf(opts: CanonicalOptions | undefined): Ignore {
  const keys = opts?.ignoreKeys;
  if (keys === undefined || keys === null || (keys.length === 0 && Array.isArray(keys))) return NO_IGNORE;
  let ig = ignoreCache.get(keys);
  if (!ig) {
    // Checked only on a cache miss (the cache holds arrays alone): a string here once reached
    // the WeakMap, which threw a bare TypeError, or was read as a list of its characters.
    if (!Array.isArray(keys)) {
      throw new TapedeckError('E_ARG', `ignoreKeys must be an array of member names; got ${describeArg(keys)}${typeof keys === 'string' ? ` (${JSON.stringify(keys)})` : ''}.`, {
        hint: `Pass a list, even of one name: { ignoreKeys: [${typeof keys === 'string' ? JSON.stringify(keys) : '"timestamp"'}] }.`,
      });
    }
    for (const k of keys) {
      if (typeof k !== 'string' || !k.isWellFormed()) {
        throw new TapedeckError('E_ARG', `ignoreKeys must be well-formed strings; got ${JSON.stringify(String(k))}.`, {
          hint: 'Pass member names as plain strings, e.g. { ignoreKeys: ["timestamp", "request_id"] }.',
        });
      }
    }
    const unique = [...new Set(keys)];
    const bytes = unique.map((k) => encoder.encode(k));
    ig = { any: { keys: bytes, rootOnly: false }, root: { keys: bytes, rootOnly: true }, set: new Set(unique) };
    ignoreCache.set(keys, ig);
  }
  return ig;
}

function specOf(ig: Ignore, opts: CanonicalOptions | undefined): IgnoreSpec {
  return opts?.rootOnly === true ? ig.root : ig.any;
}

/** Validates raw JSON input and returns it in a form engines take. */
function jsonInput(json: string | Uint8Array): string | Uint8Array {
  if (typeof json === 'string') {
    // The UTF-8 length is at most 3 bytes per UTF-16 unit; check cheaply before measuring.
    if (json.length * 3 > MAX_INPUT_BYTES && byteLength(json) > MAX_INPUT_BYTES) throw tooLarge(byteLength(json));
    if (!json.isWellFormed()) {
      const i = loneSurrogateIndex(json);
      const offset = byteLength(json.slice(0, i));
      throw new TapedeckError('E_LONE_SURROGATE', `JSON text has a lone UTF-16 surrogate at byte ${offset} (string index ${i}).`, {
        offset,
        hint: 'A JavaScript string with an unpaired surrogate has no UTF-8 form; fix the source or use s.toWellFormed().',
      });
    }
    return json;
  }
  if (!isBytes(json)) {
    throw notJsonText(json);
  }
  if (json.length > MAX_INPUT_BYTES) throw tooLarge(json.length);
  return json;
}

/**
 * E_ARG for JSON text given as neither a string nor a Uint8Array, naming what it was: bytes in
 * an ArrayBuffer (what `await res.arrayBuffer()` gives) or another view get the wrapping that
 * makes them JSON text. Internal; src/match refuses request bodies with it too.
 *
 * @example
 * throw notJsonText(new ArrayBuffer(2)) // E_ARG: … got an ArrayBuffer … new Uint8Array(buffer)
 */
export function notJsonText(json: unknown): TapedeckError {
  const bytes = isArrayBuffer(json) || ArrayBuffer.isView(json);
  return new TapedeckError('E_ARG', `Expected JSON text as a string or a Uint8Array of its UTF-8, got ${describeArg(json)}.`, {
    hint: bytes
      ? 'Wrap the bytes in a Uint8Array: new Uint8Array(await res.arrayBuffer()), or new Uint8Array(view.buffer, view.byteOffset, view.byteLength) for another view.'
      : 'For JavaScript values use canonicalize()/hashValue() instead.',
  });
}

// The engine calls of canonicalize() and hashValue(), made once rather than as a closure per call.
const canonicalOf = (e: Engine, text: JsonText, spec: IgnoreSpec): Uint8Array => e.canonical(text, spec);
const digestOf = (e: Engine, text: JsonText, spec: IgnoreSpec): string => e.digestHex(text, spec);

/**
 * Runs `f` (one engine call) on a JavaScript value. The wasm engines on Node write the value's
 * JSON text into their memory themselves (walk.ts), for the values that walk takes; they get
 * the text of any other from JSON.stringify, which is native (an array's in pieces: see
 * pieces.ts). What JSON.stringify gets wrong is handled around it: NaN and Infinity become
 * `null` silently, so when the engine read any `null` the value is checked for them (the walk
 * leaves such values to JSON.stringify); BigInt and cycles throw without a location, and the
 * engine rejects lone surrogates and depth by byte offset, so in all those cases the
 * TypeScript serializer re-runs to report (or, for members under ignoreKeys, to resolve) them
 * with a JSON path.
 */
function onValue<T>(
  value: unknown,
  ig: Ignore,
  opts: CanonicalOptions | undefined,
  f: (e: Engine, text: JsonText, spec: IgnoreSpec) => T,
): T {
  const e = current();
  const rootOnly = opts?.rootOnly === true;
  const spec = rootOnly ? ig.root : ig.any;
  // The TypeScript serializer's text is made only where it is needed, with no closure made per
  // call for it: with the engine calls made once (canonicalOf, digestOf) and the memory check
  // in wasm.ts, 10,000 hashValue() calls of ~200-byte messages took 3.8% less CPU time.
  if (e.name === 'js') {
    // The wasm engines refuse a value's text over MAX_INPUT_BYTES as they read it; the
    // TypeScript engine is held to the same limit here (it once hashed any size).
    const canonical = canonicalText(value, ig.set, rootOnly);
    if (canonical.length * 3 > MAX_INPUT_BYTES && byteLength(canonical) > MAX_INPUT_BYTES) throw tooLarge(byteLength(canonical));
    return f(e, canonical, spec);
  }
  if (e.writesValues) {
    try {
      return f(e, new ValueText(value), spec);
    } catch (err) {
      if (err !== DECLINED) return failed(e, err, value, ig, rootOnly, spec, f);
    }
  }
  let text: string | ArrayText | undefined;
  try {
    if (Array.isArray(value)) text = stringifyPieces(value);
    if (text === undefined) {
      const whole: string | undefined = JSON.stringify(value);
      // Marked as JSON.stringify's text, whose strings and numbers the core copies as they are;
      // short text goes as a plain string, for which the mark cost more than it saved (the S
      // row: 4-5% slower).
      text = whole !== undefined && whole.length >= STRINGIFIED_MIN ? new ArrayText([whole]) : whole;
    }
  } catch {
    return f(e, canonicalText(value, ig.set, rootOnly), spec);
  }
  if (text === undefined) canonicalText(value, ig.set, rootOnly); // throws E_TYPE
  // A list made piece by piece as it is written is measured by the engine as it goes.
  if (typeof text === 'string') {
    if (text.length * 3 > MAX_INPUT_BYTES && byteLength(text) > MAX_INPUT_BYTES) throw tooLarge(byteLength(text));
  } else if (text!.exact && text!.units * 3 > MAX_INPUT_BYTES && textBytes(text!) > MAX_INPUT_BYTES) throw tooLarge(textBytes(text!));
  let result: T;
  try {
    result = f(e, text!, spec);
  } catch (err) {
    return failed(e, err, value, ig, rootOnly, spec, f);
  }
  if (e.nulls!() > 0 && !allFinite(value, ig.set, rootOnly)) canonicalText(value, ig.set, rootOnly); // throws E_NON_FINITE
  return result;
}

/**
 * An engine call on a value's text failed with `err`. What JSON.stringify (or a getter) throws
 * on a later piece (a cycle, a BigInt) arrives here: the TypeScript serializer reports it with a
 * path, as it does for the first piece; so does the engine's error on the text (a lone
 * surrogate, depth), unless the input was too large.
 */
function failed<T>(
  e: Engine,
  err: unknown,
  value: unknown,
  ig: Ignore,
  rootOnly: boolean,
  spec: IgnoreSpec,
  f: (e: Engine, text: JsonText, spec: IgnoreSpec) => T,
): T {
  if (!(err instanceof TapedeckError)) return f(e, canonicalText(value, ig.set, rootOnly), spec);
  if (err.code !== 'E_TOO_LARGE') canonicalText(value, ig.set, rootOnly);
  throw err;
}

/** UTF-8 length of a value's JSON text (each boundary of two pieces, "][", is one ","). */
function textBytes(text: ArrayText): number {
  let n = 1;
  text.each((p) => (n += byteLength(p) - 1));
  return n;
}

/**
 * RFC 8785 canonical bytes of a JavaScript value (JSON.stringify's data model: toJSON honoured,
 * undefined members dropped). Throws TapedeckError for NaN, Infinity, BigInt, cycles, lone
 * surrogates and nesting deeper than MAX_DEPTH.
 *
 * @example
 * new TextDecoder().decode(canonicalize({ b: 1, a: [1.0, 'x'] })) // '{"a":[1,"x"],"b":1}'
 */
export function canonicalize(value: unknown, opts?: CanonicalOptions): Uint8Array {
  const ig = ignoreOf(opts);
  return onValue(value, ig, opts, canonicalOf);
}

/**
 * RFC 8785 canonical bytes of JSON text (a string or UTF-8 bytes), validated strictly: invalid
 * JSON, invalid UTF-8, duplicate keys, lone surrogates and out-of-range numbers are errors
 * with a byte offset.
 *
 * @example
 * new TextDecoder().decode(canonicalizeJSON('{ "b": 1E2, "a": 0.70 }')) // '{"a":0.7,"b":100}'
 */
export function canonicalizeJSON(json: string | Uint8Array, opts?: CanonicalOptions): Uint8Array {
  return current().canonical(jsonInput(json), specOf(ignoreOf(opts), opts));
}

/**
 * Hex SHA-256 of a value's canonical bytes: `digest(v)` of the hash spec.
 *
 * @example
 * hashValue({ role: 'user', content: 'hi' }) === hashJSON('{"content":"hi","role":"user"}') // true
 */
export function hashValue(value: unknown, opts?: CanonicalOptions): string {
  const ig = ignoreOf(opts);
  return onValue(value, ig, opts, digestOf);
}

/**
 * Hex SHA-256 of the canonical bytes of JSON text.
 *
 * @example
 * hashJSON('{"a": 1}') === hashJSON('{ "a" : 1.0 }') // true
 */
export function hashJSON(json: string | Uint8Array, opts?: CanonicalOptions): string {
  return current().digestHex(jsonInput(json), specOf(ignoreOf(opts), opts));
}

/**
 * The structural index of JSON bytes (assembly/tape.ts: 8 x u32 per value, in document order),
 * or undefined when the text is not JSON or the active engine has no index (the TypeScript
 * engine); with `skip`, a kept root `tools` value as one record (see coreRequestView). Internal:
 * src/match builds request views from raw bytes with it.
 */
export function jsonTape(json: Uint8Array, skip?: RequestViewSkip): Uint32Array | undefined {
  if (json.length > MAX_INPUT_BYTES) return undefined;
  return current().tape?.(json, skip);
}

/**
 * The request view of a body written by the core (assembly/view.ts): undefined if the body is
 * not JSON; where the core leaves it to the caller, the body's index (as jsonTape() gives it),
 * or null without one. Internal, for src/match/raw-keys.ts.
 */
export function coreRequestView(json: Uint8Array, provider: number, skip?: RequestViewSkip): CoreView | Uint32Array | null | undefined {
  if (json.length > MAX_INPUT_BYTES) return null;
  const e = current();
  return e.requestView ? e.requestView(json, provider, skip) : null;
}

/**
 * canonicalizeJSON(json) without options, where the engine can as a view of its memory, valid
 * until the next core call: for a caller that copies it or reads it at once, with no buffer
 * made for each text (src/match/request-texts.ts keeps 100,000 of them). Internal.
 */
export function canonicalJSONView(json: string | Uint8Array): Uint8Array {
  return current().canonical(jsonInput(json), NO_IGNORE.any, false, true);
}

/**
 * canonicalizeJSON(bytes) for bytes the caller knows to be valid UTF-8 (a view written from a
 * checked body): the core validates the JSON, not the UTF-8 again. Internal (raw-keys/tools-cache.ts).
 */
export function canonicalOfUtf8(bytes: Uint8Array): Uint8Array {
  return current().canonical(jsonInput(bytes), NO_IGNORE.any, true);
}

/**
 * pathHashes(bytes, { member }) for bytes the caller knows to be valid UTF-8, so the core need
 * not validate them again (it still validates the JSON). Internal: src/match/raw-keys.ts builds
 * request views from a body it has already checked (isUtf8) and from literals it writes. With
 * `tail`, the digest is of the canonical text with its closing `}` replaced by `tail` (a last
 * member already canonical, e.g. `,"tools":[...]}` from src/match/raw-keys/tools-cache.ts).
 */
export function pathHashesOfUtf8(bytes: Uint8Array, member: string, tail?: Uint8Array): PathHashes {
  return current().elementsHex(jsonInput(bytes), NO_IGNORE.any, true, true, memberOf({ member }), true, tail);
}

/** Options of pathHashes: the canonical options, and the member holding the message list. */
export interface PathHashOptions extends CanonicalOptions {
  /**
   * Hash the array held by this member of a root object instead of a root array: message and
   * path hashes are of `value[member]`'s elements and `digest` is of the whole object, all from
   * one pass (how the matcher gets a request key and its path hashes together).
   */
  member?: string;
}

const memberCache = new Map<string, Uint8Array>();
function memberOf(opts: PathHashOptions | undefined): Uint8Array | undefined {
  const m = opts?.member;
  if (m === undefined) return undefined;
  if (typeof m !== 'string' || !m.isWellFormed()) {
    throw new TapedeckError('E_ARG', 'pathHashes: `member` must be a well-formed string.', { hint: 'e.g. { member: "messages" }' });
  }
  let b = memberCache.get(m);
  if (!b) memberCache.set(m, (b = encoder.encode(m)));
  return b;
}

/**
 * What pathHashes returns: a digest per message, the chained path hashes, and the digest of the
 * whole input.
 */
export interface PathHashes {
  /** m_i = digest(messages[i]). */
  messageHashes: string[];
  /** p_0 = m_0, p_i = SHA-256(hex(p_{i-1}) + ":" + hex(m_i)). */
  pathHashes: string[];
  /** digest(messages): SHA-256 of the whole canonical array. */
  digest: string;
}

/** Element digests of an array given as a JavaScript value or as JSON text: one engine call. */
function elementsOf(input: unknown, what: string, opts: PathHashOptions | undefined, chain: boolean, whole = chain): ElementHashes {
  const ig = ignoreOf(opts);
  const member = memberOf(opts);
  if (typeof input === 'string' || isBytes(input)) {
    return current().elementsHex(jsonInput(input), specOf(ig, opts), chain, whole, member);
  }
  if (isArrayBuffer(input) || ArrayBuffer.isView(input)) throw notJsonText(input);
  if (member) {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw new TapedeckError('E_NOT_ARRAY', `${what} with { member } expects an object; got ${input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input}.`, {
        path: '$',
        hint: 'Pass the whole request view, e.g. pathHashes(view, { member: "messages" }).',
      });
    }
    return onValue(input, ig, opts, (e, text, spec) => e.elementsHex(text, spec, chain, whole, member));
  }
  if (!Array.isArray(input)) {
    throw new TapedeckError('E_NOT_ARRAY', `${what} expects an array (or JSON text of one); got ${input === null ? 'null' : typeof input}.`, {
      path: '$',
      hint: 'Pass the message list itself, e.g. request.messages.',
    });
  }
  return onValue(input, ig, opts, (e, text, spec) => e.elementsHex(text, spec, chain, whole));
}

/**
 * Message hashes, chained path hashes and the whole-array digest of a message list, in one core
 * call. Raw JSON text (a string or the bytes of a request body) skips JSON.parse entirely.
 * With `{ member: 'messages' }` the input is an object and the list is its `messages` member;
 * `digest` is then the digest of the whole object.
 *
 * @example
 * const h = pathHashes([{ role: 'user', content: 'hi' }])
 * h.pathHashes[0] === h.messageHashes[0] // true: the chain starts at the first message
 */
export function pathHashes(messages: unknown[] | object | string | Uint8Array, opts?: PathHashOptions): PathHashes {
  return elementsOf(messages, 'pathHashes', opts, true);
}

/**
 * pathHashes() without the whole list's digest (`digest` is ''), for callers that keep only the
 * message and path hashes (the conversation tree places every record of a tape by them): one
 * SHA-256 of the canonical list fewer a call. Internal to the package.
 *
 * @example
 * chainHashes(messages).pathHashes // pathHashes(messages).pathHashes
 */
export function chainHashes(messages: unknown[]): PathHashes {
  return elementsOf(messages, 'pathHashes', undefined, true, false);
}

/**
 * digest() of every element of an array, without the chain: the batch form of hashValue for
 * many small values (one core call, hashed four at a time in SIMD lanes).
 *
 * @example
 * hashMany([{ a: 1 }, 'x'])[1] === hashValue('x') // true
 */
export function hashMany(values: unknown[] | string | Uint8Array, opts?: CanonicalOptions): string[] {
  if (opts?.rootOnly === true && ignoreOf(opts) !== NO_IGNORE) return eachItsOwnRoot(values, opts);
  return elementsOf(values, 'hashMany', opts, false).messageHashes;
}

const decoder = new TextDecoder();

/**
 * hashMany() with `rootOnly`: each element is hashed as hashValue(element, opts) hashes it, as
 * its own root, so ignoreKeys drops that element's top-level members. The engines' one pass
 * takes the array as the root (as pathHashes() does, where the root is the list or the request
 * object), which dropped nothing; this option pair is rare enough to be hashed one by one.
 */
function eachItsOwnRoot(values: unknown, opts: CanonicalOptions): string[] {
  if (typeof values === 'string' || isBytes(values)) {
    // The text is checked as always (errors with the byte offset, E_NOT_ARRAY), then read as
    // values: RFC 8785 text is a function of the values JSON.parse gives for checked JSON.
    current().elementsHex(jsonInput(values), NO_IGNORE.any, false, false);
    return eachItsOwnRoot(JSON.parse(typeof values === 'string' ? values : decoder.decode(values)), opts);
  }
  if (!Array.isArray(values)) return elementsOf(values, 'hashMany', opts, false).messageHashes; // throws E_NOT_ARRAY
  const out = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v: unknown = values[i];
    // An array writes undefined, a function or a symbol as null, as the one-pass form does.
    const item = v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v;
    try {
      out[i] = hashValue(item, opts);
    } catch (e) {
      throw e instanceof TapedeckError && e.path !== undefined ? atElement(e, i) : e;
    }
  }
  return out;
}

/** An error from hashValue() of element i, with its path in the whole list ($.a becomes $[i].a). */
function atElement(e: TapedeckError, i: number): TapedeckError {
  const path = `$[${i}]${e.path!.slice(1)}`;
  const tail = e.hint ? ` ${e.hint}` : '';
  const message = tail && e.message.endsWith(tail) ? e.message.slice(0, -tail.length) : e.message;
  return new TapedeckError(e.code, message.replace(` at ${e.path}`, () => ` at ${path}`), { ...e.details, path });
}

/** The parts a trace token is made of (traceToken): what decides which recorded answer it names. */
export interface TraceTokenInput {
  documentId: string;
  documentVersion: string;
  model: string;
  systemPromptVersion: string;
  selectedIds: readonly string[];
}

/**
 * The trace token of the hash spec: hex SHA-256 of documentId, documentVersion, model,
 * systemPromptVersion and the selected ids sorted by code point, all joined by NUL. Components
 * containing NUL are rejected (they would make two different inputs collide).
 *
 * @example
 * traceToken({ documentId: 'doc-1', documentVersion: '1', model: 'gpt-4o',
 *              systemPromptVersion: 'v1', selectedIds: ['b', 'a'] }) // 64 hex chars
 */
export function traceToken(t: TraceTokenInput): string {
  if (t === null || typeof t !== 'object') {
    throw new TapedeckError('E_ARG', 'traceToken expects an object.', { hint: 'See TraceTokenInput.' });
  }
  const parts = [tokenPart(t.documentId, 'documentId'), tokenPart(t.documentVersion, 'documentVersion'), tokenPart(t.model, 'model'), tokenPart(t.systemPromptVersion, 'systemPromptVersion')];
  if (!Array.isArray(t.selectedIds)) {
    throw new TapedeckError('E_ARG', 'traceToken: selectedIds must be an array of strings.', {
      path: '$.selectedIds',
      hint: 'Pass [] when nothing was selected.',
    });
  }
  const ids = t.selectedIds.map(tokenPart);
  const e = current();
  return e.traceTokenHex?.(parts, ids) ?? hex(e.traceToken(parts, ids));
}

/**
 * A trace token component, checked: a string without NUL, well-formed. `name` is the field's,
 * or the index of a selected id (its name is made only for the error: tokens are taken per record).
 */
function tokenPart(v: unknown, name: string | number): string {
  if (typeof v === 'string' && !v.includes('\0') && v.isWellFormed()) return v;
  const field = typeof name === 'number' ? `selectedIds[${name}]` : name;
  if (typeof v !== 'string') {
    throw new TapedeckError('E_ARG', `traceToken: ${field} must be a string, got ${typeof v}.`, {
      path: `$.${field}`,
      hint: 'Pass every component as a string (use "1" for a numeric version).',
    });
  }
  if (v.includes('\0')) {
    throw new TapedeckError('E_ARG', `traceToken: ${field} contains a NUL character, the token's separator.`, {
      path: `$.${field}`,
      hint: 'Remove NUL (U+0000) from identifiers; it would let two different inputs produce the same token.',
    });
  }
  throw new TapedeckError('E_LONE_SURROGATE', `traceToken: ${field} has a lone UTF-16 surrogate.`, {
    path: `$.${field}`,
    hint: 'Use s.toWellFormed() or fix the identifier.',
  });
}

/**
 * What sha256() hashes: a string (its UTF-8) or bytes. Bytes are a Uint8Array (a Buffer), an
 * ArrayBuffer (what `await res.arrayBuffer()` gives) or any other ArrayBufferView, whose bytes
 * are hashed as they lie in memory (as crypto.subtle.digest reads a BufferSource).
 */
export type Sha256Input = string | Uint8Array | ArrayBuffer | ArrayBufferView;

/** Incremental SHA-256 (`sha256.create()`), for data that arrives in pieces. */
export interface Sha256Hasher {
  update(data: Sha256Input): Sha256Hasher;
  digest(): Uint8Array;
}

/** What a value is, for an error that names what was given instead of bytes or text. */
function describeArg(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') {
    const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' && name !== 'Object' ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}` : 'an object';
  }
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return `a ${typeof v} (${String(v)}${typeof v === 'bigint' ? 'n' : ''})`;
  return typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`;
}

/**
 * The bytes of sha256() input other than a string, or E_ARG naming what was given: the wasm
 * engines once read a number or an ArrayBuffer as no bytes at all, a plain array as bytes and a
 * Uint16Array as its low bytes, and the TypeScript engine threw a bare TypeError.
 */
function sha256Bytes(data: unknown, where: string): Uint8Array {
  if (isBytes(data)) return data;
  if (isArrayBuffer(data) || Object.prototype.toString.call(data) === '[object SharedArrayBuffer]') {
    return new Uint8Array(data as ArrayBuffer);
  }
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TapedeckError('E_ARG', `${where} takes a string or bytes (a Uint8Array, an ArrayBuffer or another ArrayBufferView); got ${describeArg(data)}.`, {
    hint: 'Pass text as a string and bytes as a Uint8Array, e.g. sha256(new Uint8Array(await res.arrayBuffer())); for a JavaScript value use hashValue().',
  });
}

/** A string's UTF-8 for sha256(), or E_LONE_SURROGATE: it has no UTF-8, and U+FFFD in its place would collide. */
function sha256Text(s: string, where: string): Uint8Array {
  if (!s.isWellFormed()) throw loneSurrogate(s, loneSurrogateIndex(s), where);
  return encoder.encode(s);
}

function loneSurrogate(s: string, i: number, where: string): TapedeckError {
  return new TapedeckError('E_LONE_SURROGATE', `${where}: the string has a lone UTF-16 surrogate (U+${s.charCodeAt(i).toString(16).toUpperCase()} at index ${i}), which has no UTF-8 form.`, {
    hint: 'Hashing it as U+FFFD would give it the digest of another string: fix the source, or use s.toWellFormed() to hash that string on purpose.',
  });
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/** A high surrogate that ended a string piece was not followed by its low half. */
function unpairedHigh(high: string, what: string): TapedeckError {
  return new TapedeckError('E_LONE_SURROGATE', `sha256 hasher: the last string piece ended in a high surrogate (U+${high.charCodeAt(0).toString(16).toUpperCase()}) and ${what}: a lone surrogate has no UTF-8 form.`, {
    hint: 'Pass the low half (U+DC00-U+DFFF) as the start of the next string piece, or fix the source (s.toWellFormed()).',
  });
}

class StreamingSha256 implements Sha256Hasher {
  // Bound to the backend active at create(), so a later setBackend() cannot split one hash.
  private readonly stream: Sha256Stream = current().sha256Stream();
  private done = false;
  // A high surrogate that ended the last string piece: the pair may be split across update()
  // calls, and the digest must be that of the whole string, so it waits for its low half.
  private high = '';

  update(data: Sha256Input): this {
    if (this.done) {
      throw new TapedeckError('E_ARG', 'sha256 hasher: update() after digest().', { hint: 'Create a new hasher with sha256.create().' });
    }
    if (typeof data !== 'string') {
      const bytes = sha256Bytes(data, 'sha256 hasher: update()');
      if (this.high !== '') throw unpairedHigh(this.high, 'the next piece is bytes, not its low half');
      this.stream.update(bytes);
      return this;
    }
    let s = this.high === '' ? data : this.high + data;
    let high = '';
    if (s.length > 0 && isHigh(s.charCodeAt(s.length - 1))) {
      high = s.slice(-1);
      s = s.slice(0, -1);
    }
    const bytes = sha256Text(s, 'sha256 hasher: update()');
    this.high = high;
    this.stream.update(bytes);
    return this;
  }

  digest(): Uint8Array {
    if (this.done) {
      throw new TapedeckError('E_ARG', 'sha256 hasher: digest() called twice.', { hint: 'Create a new hasher with sha256.create().' });
    }
    if (this.high !== '') throw unpairedHigh(this.high, 'digest() came before its low half');
    this.done = true;
    return this.stream.digest();
  }
}

/**
 * SHA-256 of bytes or of a string's UTF-8, on the active backend; the same digest on every
 * backend. Bytes may be a Uint8Array, an ArrayBuffer or any ArrayBufferView (hashed as they lie
 * in memory). Anything else is E_ARG, and a string with a lone surrogate E_LONE_SURROGATE. A
 * surrogate pair split across update() calls hashes as the whole string does.
 *
 * @example
 * Buffer.from(sha256('abc')).toString('hex') // 'ba7816bf...f20015ad'
 * sha256.create().update('a').update('bc').digest() // same bytes
 * sha256(await (await fetch(url)).arrayBuffer()) // the body's bytes
 */
export const sha256: ((data: Sha256Input) => Uint8Array) & { create(): Sha256Hasher } = Object.assign(
  (data: Sha256Input): Uint8Array => current().sha256(typeof data === 'string' ? sha256Text(data, 'sha256()') : sha256Bytes(data, 'sha256()')),
  { create: (): Sha256Hasher => new StreamingSha256() },
);

/**
 * Lowercase hex of `sha256(data)`: in one node:crypto call where the runtime has it (~1 us for
 * a few hundred bytes, against ~4 us through the engine and a hex string), else the engine's.
 * Internal (the package entries do not export it): the matcher's memo ids and the raw path's
 * signature digest. Unlike sha256() it does not check a string for lone surrogates (the scan
 * costs about half the hash of non-Latin-1 text): node:crypto hashes one as U+FFFD, so a caller
 * whose strings may hold one, and who keys by the digest, refuses them first (the matcher's memo does).
 *
 * @example
 * sha256Hex('abc') // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
export function sha256Hex(data: Uint8Array | string): string {
  return nodeHash !== undefined ? nodeHash('sha256', data, 'hex') : hex(current().sha256(typeof data === 'string' ? encoder.encode(data) : data));
}
