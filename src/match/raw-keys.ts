/*
 * Request digests straight from the raw bytes of a body: the same key, message hashes, path
 * hashes and signature as requestKeys(), without JSON.parse of the body or building the view
 * as JavaScript objects.
 *
 * Why this design (measured on the 36 KB, 50-message benchmark body, bench/match.mjs): the
 * general path spends ~90 us in JSON.parse, ~45 us decoding UTF-8, ~50 us normalizing and ~80 us
 * in JSON.stringify of the view before the one core call (~85 us) even starts; parsing and
 * normalizing a body with its long strings and tool schemas cut out still cost ~135 us of
 * JavaScript. What normalization needs to look at is small (roles, part types, call ids,
 * names); what it copies is large (message text, tool schemas, unknown members). So:
 *   1. the core indexes the bytes (assembly/tape.ts: one record per value, byte ranges only);
 *   2. this file walks the index where normalize.ts would look, and writes the normalized view
 *      as JSON text into a byte buffer: literals it makes, and byte ranges of the body for
 *      everything normalize.ts copies (in any key order, any spelling: the core canonicalizes);
 *   3. one core call canonicalizes that text and hashes the view and each message
 *      (pathHashes with { member: 'messages' }), exactly as requestKeys() does with its view.
 * The top-level arguments (model, options, context) are small: they go through normalize.ts
 * itself, parsed member by member, so those rules are the reference's by construction.
 *
 * normalize.ts stays the reference. This is a second implementation of its message, part and
 * tool rules, held to it by differential tests (test/match/raw-keys.test.ts: fixtures of every
 * shape, generated bodies, the request-key vectors). Anything it does not handle natively, it
 * declines (returns undefined) and the caller takes the reference path, which also produces
 * every error: a body this path cannot key is never reported from here. The index rejects
 * every fault the reference's strict reader rejects (duplicate names, lone surrogates,
 * overflowing numbers), also in the members the view drops.
 *
 * The walk here is itself the slow part once the bytes are indexed: ~70-80 us of the ~180 us an
 * M chat body took (a few hundred small calls, member tables and strings). So the core first
 * writes the view on its own (assembly/view.ts) for the constructs it knows, which are what
 * SDKs send, and this walk takes the bodies it declines. Attachment parts it leaves as holes,
 * filled here by the reference one part at a time.
 *
 * Where the time goes now (M chat body, ~130-140 us p50 on the shared 2-core machine): the index
 * ~17 us, the core's view ~12, the top level through the reference ~5, copies and the
 * signature ~6, the core call ~85 (canonicalizing the 36 KB view ~20; node:crypto SHA-256 of
 * the 50 messages ~31, of the 49 chain steps ~16, of the whole view ~18). Hashing is the floor:
 * node:crypto's SHA-NI is the fastest engine here, and ~0.3 us of each of its ~100 calls is the
 * call itself.
 */

import type { CoreView } from '../core/engine.ts';
import { coreRequestView, hashValue, jsonTape, pathHashesOfUtf8 } from '../core/index.ts';
import { allFinite } from '../core/value.ts';
import { TapedeckError } from '../errors.ts';
import type { RequestDigests } from './matcher.ts';
import { viewDigests } from './view-digests.ts';
import {
  ANTHROPIC_ARGS,
  ANTHROPIC_BLOCKS,
  MESSAGE_NOISE,
  Normalizer,
  normalizeRequest,
  OPENAI_ARGS,
  OPENAI_PARTS,
  OPENAI_ROLES,
  splitToolResults,
} from '../providers/normalize.ts';
import type { BuiltinProvider, NormalizeOptions } from '../providers/types.ts';
import { normalizeRequest as normalizeModule, rawKeysAllowed, routeOf } from '../providers/index.ts';
import { Calls, kindOfMedia } from '../providers/gemini.ts';
import { converseBlock, converseTool } from '../providers/bedrock.ts';
import { attachmentOf } from '../providers/normalize.ts';
import { ollamaAsOpenAI, ollamaSyntheticId } from '../providers/ollama.ts';

// Record layout of assembly/tape.ts.
const T_NULL = 1;
const T_TRUE = 3;
const T_NUMBER = 4;
const T_STRING = 5;
const T_ARRAY = 6;
const T_OBJECT = 7;
const F_ESCAPED = 0x100;
const F_KEY_ESCAPED = 0x200;
const F_CHECK_KEYS = 0x400;

// `o[k] = v` would set the prototype for k === '__proto__' (JSON.parse makes it a member).
function set(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** Thrown inside the walk for anything left to the reference path. */
const DECLINE = Symbol('decline');

function decline(): never {
  throw DECLINE;
}

const encoder = new TextEncoder();
// ignoreBOM: keep a leading U+FEFF. The default decoder drops it, which made "\ufeff{}" tool
// arguments parse as {} and "\ufefftext" a text part.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const hasBuffer = typeof Buffer !== 'undefined';
const lit = (s: string): Uint8Array => encoder.encode(s);

// Short strings (keys, roles, part types, call ids) repeat across bodies: decoded once, found
// again by the FNV-1a hash the index carries and a byte compare. A direct-mapped table indexed
// by the hash's low bits: a Map keyed by the hash itself cost ~70 ns per key on the M body,
// most of it hashing the many u32 values above the small-integer range as heap numbers.
const SLOTS = 4096;
const slotHash = new Int32Array(SLOTS); // hashes as int32 (`| 0`): never boxed
const slotRaw: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(SLOTS).fill(undefined);
const slotText: string[] = new Array<string>(SLOTS).fill('');

/**
 * The text of the JSON string literal at src[s, e) (quotes included) that has no escape, found
 * again in the short-string table by the index's hash of its bytes (0: not hashed).
 */
function unescapedText(src: Uint8Array, s: number, e: number, hash: number): string {
  const n = e - s - 2;
  const slot = hash & (SLOTS - 1);
  if (hash !== 0) {
    const raw = slotRaw[slot];
    if (raw !== undefined && slotHash[slot] === hash && raw.length === n) {
      let k = 0;
      while (k < n && raw[k] === src[s + 1 + k]) k++;
      if (k === n) return slotText[slot]!;
    }
  }
  // Non-fatal decoding, as the reference decodes the whole body (invalid UTF-8 -> U+FFFD).
  const text = decoder.decode(src.subarray(s + 1, e - 1));
  if (hash !== 0) {
    slotHash[slot] = hash;
    slotRaw[slot] = src.slice(s + 1, e - 1);
    slotText[slot] = text;
  }
  return text;
}

/** Growable output buffer for the view's JSON text. */
class Out {
  // One buffer for every call (grown, never shrunk): a 64 KB allocation per request showed up
  // as garbage collection in the profile.
  private static shared = new Uint8Array(1 << 16);
  buf = Out.shared;
  at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
    Out.shared = grown;
  }

  bytes(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    // A loop beats TypedArray.prototype.set for the few-byte literals written here.
    if (n > 32) this.buf.set(b, this.at);
    else for (let i = 0; i < n; i++) this.buf[this.at + i] = b[i]!;
    this.at += n;
  }

  span(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.room(n);
    if (n > 32) this.buf.set(src.subarray(start, end), this.at);
    else for (let i = 0; i < n; i++) this.buf[this.at + i] = src[start + i]!;
    this.at += n;
  }

  /** Lets go of a buffer grown for a very large body, so one such body is not held for good. */
  static release(): void {
    if (Out.shared.length > 1 << 22) Out.shared = new Uint8Array(1 << 16);
  }

  /** Appends a copy of bytes already written. */
  own(start: number, end: number): void {
    this.room(end - start);
    this.buf.copyWithin(this.at, start, end);
    this.at += end - start;
  }

  byte(c: number): void {
    this.room(1);
    this.buf[this.at++] = c;
  }

  /**
   * The content of a JSON string literal (bytes start..end, between its quotes) unescaped, as
   * the UTF-8 of the string's value; false (with some bytes written) at a \u escape, which the
   * caller then handles as a decoded string.
   */
  unescaped(src: Uint8Array, start: number, end: number): boolean {
    this.room(end - start);
    const buf = this.buf;
    let at = this.at;
    for (let k = start; k < end; k++) {
      const c = src[k]!;
      if (c !== 0x5c) {
        buf[at++] = c;
        continue;
      }
      const d = src[++k]!;
      const r = d === 0x6e ? 0x0a : d === 0x74 ? 0x09 : d === 0x72 ? 0x0d : d === 0x62 ? 0x08 : d === 0x66 ? 0x0c : d === 0x75 ? -1 : d; // '"', '\\', '/'
      if (r < 0) return false;
      buf[at++] = r;
    }
    this.at = at;
    return true;
  }

  /** A JavaScript string as UTF-8 (it is JSON text, or ASCII made here). */
  text(s: string): void {
    this.room(s.length * 3);
    this.at += encoder.encodeInto(s, this.buf.subarray(this.at)).written;
  }
}

const COMMA = 0x2c;
const JSON_SCHEMA = lit('jsonSchema');
// Positional call ids ("call_0", ...) as JSON strings, encoded once.
const idBytes = new Map<string, Uint8Array>();
function quotedId(id: string): Uint8Array {
  let b = idBytes.get(id);
  if (b === undefined) {
    if (idBytes.size > 4096) idBytes.clear();
    idBytes.set(id, (b = lit(`"${id}"`)));
  }
  return b;
}
const isJsonWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const L = {
  open: lit('{'),
  close: lit('}'),
  openArr: lit('['),
  closeArr: lit(']'),
  type: lit('"type":'),
  text: lit('"text"'),
  tool_call: lit('"tool_call"'),
  tool_result: lit('"tool_result"'),
  thinking: lit('"thinking"'),
  function_call: lit('"function_call"'),
  image: lit('"image"'),
  textKey: lit('"text":'),
  roleKey: lit('"role":'),
  contentKey: lit('"content":'),
  idKey: lit('"id":'),
  nameKey: lit('"name":'),
  argumentsKey: lit('"arguments":'),
  argumentsTextKey: lit('"argumentsText":'),
  kindKey: lit('"kind":'),
  imageKey: lit('"image":'),
  urlKey: lit('{"url":'),
  pathKey: lit('{"path":'),
  thinkingKey: lit('"thinking":'),
  isErrorTrue: lit('"is_error":true'),
  descriptionKey: lit('"description":'),
  parametersKey: lit('"parameters":'),
  legacyTrue: lit('"legacy":true'),
  systemMessage: lit('{"role":"system","content":['),
  userMessage: lit('{"role":"user","content":['),
  assistantMessage: lit('{"role":"assistant","content":['),
  toolMessage: lit('{"role":"tool","content":['),
  resultOpen: lit('{"type":"tool_result","id":'),
  view: lit('{"messages":['),
  embeddings: lit('{"input":['),
  tools: lit(',"tools":['),
  options: lit(',"options":'),
  // A text part as `{"text":...,"type":"text"}`: canonical member order, so the core need not
  // sort (and move) the part with its text.
  textOpen: lit('{"text":'),
  contentOpen: lit('{"content":['),
  contentRole: lit('],"role":'),
  textClose: lit(',"type":"text"'),
  model: lit(',"model":'),
};

const TEXT_TYPES = new Set(['text', 'input_text', 'output_text']);
// Parts the reference normalizer does (one part at a time): attachments, whose rules decode and
// hash data, and the Vercel AI SDK's tool-call / tool-result parts.
const REFERENCE_PARTS = new Set(['input_image', 'image', 'input_audio', 'audio', 'file', 'input_file', 'document', 'tool-call', 'tool-result']);
const NONE = 0;
const PART = 1;
const RESULT = 2;
const isResult = (p: unknown): boolean => p !== null && typeof p === 'object' && (p as { type?: unknown }).type === 'tool_result';
const OTHER_ID_KEYS = ['tool_use_id', 'tool_call_id', 'call_id'] as const;
const CALL_TYPE = /(tool_use|_call)$/;
const URL_LIKE = /^(data:|[a-z][a-z0-9+.-]*:\/\/)/i;
// Members the reference's rest() never copies because `k in out` holds for every plain object.
const INHERITED = (k: string): boolean => k in Object.prototype;

const SKIP_TYPE = new Set(['type']);
const SKIP_TOOL_USE = new Set(['type', 'input']);
const SKIP_RESULT = new Set(['type', 'tool_use_id', 'is_error']);
const SKIP_THINKING = new Set(['type', 'signature']);
const SKIP_CALL = new Set(['type', 'index']);
const SKIP_IMAGE_URL = new Set(['url']);
const SKIP_IMAGE_PART = new Set(['type', 'image_url']);
const SKIP_TOOL = new Set(['type', 'function']);
const SKIP_TOOL_DEF = new Set(['type', 'input_schema', 'inputSchema']);
const NO_SKIP = new Set<string>();
let skipMessage: Set<string> | undefined;
let skipOllama: Set<string> | undefined;

/**
 * Members of an object record: name -> record index (a duplicate name declines). Two parallel
 * arrays searched linearly: request objects have a handful of members, and a Map per object
 * (made for every message, part, call and tool) was the walk's largest single cost in the
 * profile of the M chat body. Objects with many members get a Map index as well.
 */
class Members {
  readonly names: string[] = [];
  readonly recs: number[] = [];
  private index: Map<string, number> | undefined;

  get(k: string): number | undefined {
    if (this.index) return this.index.get(k);
    const names = this.names;
    for (let i = 0; i < names.length; i++) if (names[i] === k) return this.recs[i];
    return undefined;
  }

  has(k: string): boolean {
    return this.get(k) !== undefined;
  }

  /** Adds a member; false if the name is there already. */
  add(k: string, rec: number): boolean {
    if (this.get(k) !== undefined) return false;
    this.names.push(k);
    this.recs.push(rec);
    if (this.index) this.index.set(k, rec);
    else if (this.names.length > 12) this.index = new Map(this.names.map((n, i) => [n, this.recs[i]!]));
    return true;
  }
}
const NO_MEMBERS = new Members();

class Walk {
  // The reference normalizer, for its call-id numbering (shared, so ids are numbered in document
  // order whichever path handled an element) and for elements this walk does not handle
  // natively: those are parsed on their own and normalized by it (see reference()).
  readonly n = new Normalizer();
  /**
   * An Ollama /api/chat body (providers/ollama.ts rewrites it as the chat body it stands for):
   * its calls without ids get positional ids, and a tool message answers the first open call
   * its `tool_name` names. `open` holds the last assistant turn's unanswered calls (id, name).
   */
  ollama: { calls: number; open: { id: unknown; name: unknown }[] } | undefined;
  // Members by record index (filled as objects are first looked at).
  private readonly memo: (Members | undefined)[];
  readonly out = new Out();

  constructor(
    private readonly src: Uint8Array,
    private readonly t: Uint32Array,
  ) {
    this.memo = new Array<Members | undefined>(t.length >>> 3).fill(undefined);
  }

  kind(i: number): number {
    return this.t[i * 8]! & 0xff;
  }

  start(i: number): number {
    return this.t[i * 8 + 1]!;
  }

  end(i: number): number {
    return this.t[i * 8 + 2]!;
  }

  /** Children of an array or object record. */
  children(i: number): number[] {
    const out: number[] = [];
    const stop = this.t[i * 8 + 3]!;
    for (let c = i + 1; c < stop; c = this.t[c * 8 + 3]!) out.push(c);
    return out;
  }

  private decodeRange(s: number, e: number, escaped: boolean, hash: number): string {
    if (escaped) return JSON.parse(decoder.decode(this.src.subarray(s, e))) as string;
    return unescapedText(this.src, s, e, hash);
  }

  /** The decoded string of a string record. */
  str(i: number): string {
    const w = this.t[i * 8]!;
    return this.decodeRange(this.start(i), this.end(i), (w & F_ESCAPED) !== 0, this.t[i * 8 + 7]! | 0);
  }

  /** The decoded key of an object member's record. */
  key(i: number): string {
    const w = this.t[i * 8]!;
    return this.decodeRange(this.t[i * 8 + 4]!, this.t[i * 8 + 5]!, (w & F_KEY_ESCAPED) !== 0, this.t[i * 8 + 6]! | 0);
  }

  members(i: number): Members {
    let m = this.memo[i];
    if (m) return m;
    m = new Members();
    this.memo[i] = m;
    const stop = this.t[i * 8 + 3]!;
    for (let c = i + 1; c < stop; c = this.t[c * 8 + 3]!) {
      if (!m.add(this.key(c), c)) decline(); // JSON.parse keeps the last; the reference path decides
    }
    return m;
  }

  /**
   * The value of a JSON record as JSON.parse gives it (small values only). JSON.parse keeps the
   * last of duplicate names, which the reference rejects: attempt() has made sure that the
   * body has none (the index compares names, the flagged objects are compared there).
   */
  value(i: number): unknown {
    return JSON.parse(decoder.decode(this.src.subarray(this.start(i), this.end(i))));
  }

  /** A string record's value if it is one, else undefined (`str(v)` of the reference). */
  strOf(i: number | undefined): string | undefined {
    return i !== undefined && this.kind(i) === T_STRING ? this.str(i) : undefined;
  }

  /** null, absent or []: the reference's empty(). */
  empty(i: number | undefined): boolean {
    if (i === undefined) return true;
    const k = this.kind(i);
    return k === T_NULL || (k === T_ARRAY && this.t[i * 8 + 3] === i + 1);
  }

  isObj(i: number | undefined): i is number {
    return i !== undefined && this.kind(i) === T_OBJECT;
  }

  // --- output

  raw(i: number): void {
    this.out.span(this.src, this.start(i), this.end(i));
  }

  /** A comma, unless the object being written has no member yet. */
  sep(): void {
    if (this.out.buf[this.out.at - 1] !== 0x7b) this.out.byte(COMMA);
  }

  /** `"key":value` of an object member, both as written in the body. */
  member(i: number): void {
    this.out.span(this.src, this.t[i * 8 + 4]!, this.t[i * 8 + 5]!);
    this.out.byte(0x3a);
    this.raw(i);
  }

  /** The positional call id of the reference's Ids.of(), or undefined for absent/null. */
  id(i: number | undefined): string | undefined {
    if (i === undefined || this.kind(i) === T_NULL) return undefined;
    return this.n.ids.of(this.kind(i) === T_STRING ? this.str(i) : this.value(i));
  }

  /**
   * Writes the JSON text of a value the reference normalizer made (for the elements it handles
   * here: attachments, uncommon part and item types). JSON.stringify writes NaN and Infinity as
   * null, which the reference rejects: such values decline.
   */
  emit(v: unknown): void {
    if (!allFinite(v, NO_SKIP)) decline();
    this.out.text(JSON.stringify(v));
  }

  /** One part through the reference (see part()'s return value). */
  private referencePart(p: number): number {
    const parts = this.n.content(this.value(p), '$');
    if (parts.length === 0) return NONE;
    this.emit(parts[0]);
    return isResult(parts[0]) ? RESULT : PART;
  }

  /**
   * The reference's rest(): the members of `obj` the output does not have yet, minus skipped
   * ones, cache_control and empty values. `have` is updated, as `out` is in the reference.
   */
  rest(obj: Members, have: string[], skip: ReadonlySet<string>): void {
    const names = obj.names;
    for (let i = 0; i < names.length; i++) {
      const k = names[i]!;
      const c = obj.recs[i]!;
      if (have.includes(k) || INHERITED(k) || k === 'cache_control' || skip.has(k) || this.empty(c)) continue;
      this.sep();
      this.member(c);
      have.push(k);
    }
  }

  // --- content

  /**
   * Writes the parts of `v` (comma-separated, and after a comma when `after`: parts were
   * written before them); returns how many. With `ranges`, records each part as
   * [start, end, kind] (kind RESULT for tool results, which split user messages).
   */
  content(v: number | undefined, ranges?: number[], after = false): number {
    if (v === undefined || this.kind(v) === T_NULL) return 0;
    let n = 0;
    const parts = this.kind(v) === T_ARRAY ? this.children(v) : [v];
    for (const p of parts) {
      const mark = this.out.at;
      if (n > 0 || after) this.out.byte(COMMA);
      const start = this.out.at;
      const kind = this.part(p);
      if (kind === NONE) {
        this.out.at = mark;
        continue;
      }
      n++;
      ranges?.push(start, this.out.at, kind);
    }
    return n;
  }

  /** One part: NONE if it is no part (no text), PART, or RESULT for a tool result. */
  private part(p: number): number {
    const k = this.kind(p);
    if (k === T_STRING) {
      if (this.end(p) - this.start(p) === 2) return NONE;
      this.out.bytes(L.textOpen);
      this.raw(p);
      this.out.bytes(L.textClose);
      this.out.bytes(L.close);
      return PART;
    }
    if (k !== T_OBJECT) {
      this.raw(p);
      return PART;
    }
    const m = this.members(p);
    const type = this.strOf(m.get('type'));
    if (type !== undefined && TEXT_TYPES.has(type)) {
      // No text (absent, null or "") is no part.
      const text = m.get('text');
      if (text === undefined || this.kind(text) === T_NULL || (this.kind(text) === T_STRING && this.end(text) - this.start(text) === 2)) return NONE;
      this.out.bytes(L.textOpen);
      this.raw(text);
      this.out.bytes(L.textClose);
      this.rest(m, ['type', 'text'], SKIP_TYPE);
      this.out.bytes(L.close);
      return PART;
    }
    if (type !== undefined && REFERENCE_PARTS.has(type)) return this.referencePart(p);
    if (type === 'image_url' && !this.plainImageUrl(m)) return this.referencePart(p);
    this.out.bytes(L.open);
    let kind = PART;
    switch (type) {
      case 'image_url':
        this.imageUrl(m);
        break;
      case 'tool_use':
      case 'tool_call': {
        const have = ['type'];
        this.out.bytes(L.type);
        this.out.bytes(L.tool_call);
        this.putId(have, 'id', L.idKey, this.id(m.get('id')));
        this.keep(have, 'name', L.nameKey, m.get('name'));
        if (type === 'tool_use') {
          const input = m.get('input');
          this.setArguments(have, input === undefined || this.kind(input) === T_NULL ? undefined : input);
        } else {
          // Arguments are data: [] is a value here, only null is no arguments.
          this.putNotNull(have, 'arguments', L.argumentsKey, m.get('arguments'));
          this.putNotNull(have, 'argumentsText', L.argumentsTextKey, m.get('argumentsText'));
        }
        this.rest(m, have, SKIP_TOOL_USE);
        break;
      }
      case 'tool_result': {
        const have = ['type', 'content'];
        this.out.bytes(L.type);
        this.out.bytes(L.tool_result);
        const tu = m.get('tool_use_id');
        this.putId(have, 'id', L.idKey, this.id(tu === undefined || this.kind(tu) === T_NULL ? m.get('id') : tu));
        this.out.byte(COMMA);
        this.out.bytes(L.contentKey);
        this.out.bytes(L.openArr);
        this.content(m.get('content'));
        this.out.bytes(L.closeArr);
        const err = m.get('is_error');
        if (err !== undefined && this.src[this.start(err)] === 0x74 /* true */) {
          this.out.byte(COMMA);
          this.out.bytes(L.isErrorTrue);
          have.push('is_error');
        }
        this.rest(m, have, SKIP_RESULT);
        kind = RESULT;
        break;
      }
      case 'thinking': {
        const have = ['type'];
        this.out.bytes(L.type);
        this.out.bytes(L.thinking);
        this.keep(have, 'thinking', L.thinkingKey, m.get('thinking'));
        this.rest(m, have, SKIP_THINKING);
        break;
      }
      case 'function_call': {
        const have = ['type'];
        this.out.bytes(L.type);
        this.out.bytes(L.function_call);
        this.keep(have, 'name', L.nameKey, m.get('name'));
        this.putNotNull(have, 'arguments', L.argumentsKey, m.get('arguments'));
        this.rest(m, have, SKIP_TYPE);
        break;
      }
      default:
        this.other(m, type ?? '');
    }
    this.out.bytes(L.close);
    return kind;
  }

  /** Writes `,"key":value` for a member the reference puts with put(out, k, copy(v)). */
  private putRaw(have: string[], name: string, key: Uint8Array, v: number | undefined): void {
    if (v === undefined) return;
    this.sep();
    this.out.bytes(key);
    this.raw(v);
    have.push(name);
  }

  /** The reference's keep(): null and [] are absent. */
  private keep(have: string[], name: string, key: Uint8Array, v: number | undefined): void {
    if (!this.empty(v)) this.putRaw(have, name, key, v);
  }

  /** `if (v !== null) put(out, k, copy(v))`. */
  private putNotNull(have: string[], name: string, key: Uint8Array, v: number | undefined): void {
    if (v !== undefined && this.kind(v) !== T_NULL) this.putRaw(have, name, key, v);
  }

  private putId(have: string[], name: string, key: Uint8Array, id: string | undefined): void {
    if (id === undefined) return;
    this.sep();
    this.out.bytes(key);
    this.out.bytes(quotedId(id));
    have.push(name);
  }

  /** Whether imageUrl() handles the part: no data: URL, no image_url object without a url. */
  private plainImageUrl(m: Members): boolean {
    let url = m.get('image_url');
    if (this.isObj(url)) {
      url = this.members(url).get('url');
      if (url === undefined || this.kind(url) !== T_STRING) return false;
    }
    return url === undefined || this.kind(url) !== T_STRING || !/^data:/i.test(this.str(url));
  }

  /** OpenAI chat image_url parts with a URL or path (plainImageUrl()). */
  private imageUrl(m: Members): void {
    const iu = m.get('image_url');
    const have = ['type', 'image'];
    this.out.bytes(L.type);
    this.out.bytes(L.image);
    let url: number | undefined = iu;
    let inner: Members | undefined;
    if (this.isObj(iu)) {
      inner = this.members(iu);
      url = inner.get('url');
    }
    if (url !== undefined && !this.empty(url)) {
      this.out.byte(COMMA);
      this.out.bytes(L.imageKey);
      if (this.kind(url) === T_STRING) {
        this.out.bytes(URL_LIKE.test(this.str(url)) ? L.urlKey : L.pathKey);
        this.raw(url);
        this.out.bytes(L.close);
      } else {
        this.raw(url);
      }
    }
    if (inner) this.rest(inner, have, SKIP_IMAGE_URL);
    this.rest(m, have, SKIP_IMAGE_PART);
  }

  /** A part or item of another type: the reference's other(). */
  private other(m: Members, type: string, skip: ReadonlySet<string> = NO_SKIP): void {
    const have: string[] = [];
    const put = (name: string, id: string | undefined) => {
      if (id === undefined) return;
      this.sep();
      this.out.text(`"${name}":"${id}"`);
      have.push(name);
    };
    for (const k of OTHER_ID_KEYS) put(k, this.id(m.get(k)));
    if (CALL_TYPE.test(type) && !skip.has('id')) put('id', this.id(m.get('id')));
    this.rest(m, have, skip);
  }

  /** The reference's setArguments() for the arguments record v (absent or null: nothing). */
  private setArguments(have: string[], v: number | undefined): void {
    if (v === undefined || this.kind(v) === T_NULL) return;
    if (this.kind(v) !== T_STRING) {
      this.putRaw(have, 'arguments', L.argumentsKey, v);
      return;
    }
    if (this.argumentsBytes(have, v)) return;
    const text = this.str(v);
    if (!text.isWellFormed()) decline(); // no UTF-8 form to copy; the reference decides
    // Text that opens an object or array (what SDKs send) is written as the value without
    // parsing it here: the core parses it with the rest of the view, and if it is not I-JSON
    // (the reference then keys it as argumentsText) the core's error makes the whole body
    // decline to the reference. Parsing every call's arguments here cost ~1 us each.
    let i = 0;
    while (i < text.length && isJsonWs(text.charCodeAt(i))) i++;
    const c0 = text.charCodeAt(i);
    if (c0 === 0x7b || c0 === 0x5b) {
      this.sep();
      this.out.bytes(L.argumentsKey);
      this.out.text(text);
      have.push('arguments');
      return;
    }
    let value: unknown;
    let ok = true;
    try {
      value = JSON.parse(text);
    } catch {
      ok = false;
    }
    if (ok && value === null) return; // "null" is no arguments, as null is
    this.sep();
    if (ok) {
      // The JSON text itself is the value: the core parses and canonicalizes it. Text that is
      // JSON but not I-JSON (duplicate names, lone surrogates, 1e400), which the reference keys
      // as argumentsText, fails there, and the body goes to the reference.
      this.out.bytes(L.argumentsKey);
      this.out.text(text);
      have.push('arguments');
    } else {
      this.out.bytes(L.argumentsTextKey);
      this.raw(v);
      have.push('argumentsText');
    }
  }

  /**
   * setArguments() for arguments text that opens an object or array, unescaped from the body's
   * bytes straight into the view (see setArguments for why it need not be parsed here). False,
   * with nothing written, for any other text and for text with \u escapes.
   */
  private argumentsBytes(have: string[], v: number): boolean {
    const src = this.src;
    const s = this.start(v) + 1;
    const e = this.end(v) - 1;
    // JSON whitespace before the value; inside the string literal it can only be escaped.
    let i = s;
    while (i < e) {
      if (src[i] === 0x20) i++;
      else if (src[i] === 0x5c && (src[i + 1] === 0x6e || src[i + 1] === 0x74 || src[i + 1] === 0x72)) i += 2;
      else break;
    }
    if (i >= e || (src[i] !== 0x7b && src[i] !== 0x5b)) return false;
    const mark = this.out.at;
    this.sep();
    this.out.bytes(L.argumentsKey);
    if (!this.out.unescaped(src, s, e)) {
      this.out.at = mark;
      return false;
    }
    have.push('arguments');
    return true;
  }

  private toolCall(c: number): void {
    if (this.kind(c) !== T_OBJECT) {
      this.raw(c);
      return;
    }
    const m = this.members(c);
    const have = ['type'];
    this.out.bytes(L.open);
    this.out.bytes(L.type);
    this.out.bytes(L.tool_call);
    const type = m.get('type');
    if (this.ollama) {
      // Rewritten as { id, type: 'function', function: { name, arguments } }.
      const idRec = m.get('id');
      const id = idRec === undefined || this.kind(idRec) === T_NULL ? ollamaSyntheticId(this.ollama.calls++) : this.kind(idRec) === T_STRING ? this.str(idRec) : this.value(idRec);
      const f = m.get('function');
      const fm = this.isObj(f) ? this.members(f) : NO_MEMBERS;
      const name = fm.get('name');
      this.ollama.open.push({ id, name: name === undefined ? undefined : this.value(name) });
      this.putId(have, 'id', L.idKey, this.n.ids.of(id));
      this.keep(have, 'name', L.nameKey, name);
      this.setArguments(have, fm.get('arguments'));
      this.out.bytes(L.close);
      return;
    }
    this.putId(have, 'id', L.idKey, this.id(m.get('id')));
    if (type === undefined || this.kind(type) === T_NULL || this.strOf(type) === 'function') {
      const f = m.get('function');
      const fm = this.isObj(f) ? this.members(f) : NO_MEMBERS;
      this.keep(have, 'name', L.nameKey, fm.get('name'));
      this.setArguments(have, fm.get('arguments'));
    } else {
      this.putRaw(have, 'kind', L.kindKey, type);
      this.rest(m, have, SKIP_CALL);
    }
    this.out.bytes(L.close);
  }

  /** What the last message written was, for joinCalls() (Responses function_call items). */
  private last: { assistant: boolean; joinable: boolean; empty: boolean } | undefined;

  /** Messages the reference made (LangChain messages, server items), split as it splits them. */
  private emitMessages(list: unknown[], comma: boolean): number {
    const split = splitToolResults(list);
    split.forEach((m, k) => {
      if (comma || k > 0) this.out.byte(COMMA);
      this.emit(m);
    });
    const m = split[split.length - 1] as Record<string, unknown> | undefined;
    this.last = { assistant: m !== undefined && m.role === 'assistant' && Array.isArray(m.content), joinable: false, empty: false };
    return split.length;
  }

  /**
   * One message (or Responses item) of the conversation; returns how many messages it became
   * (a user message carrying tool results is split: normalize.ts splitToolResults()), or 0 if
   * it joined the assistant message before it (normalize.ts joinCalls()). Every message this
   * writes has `content` last, so a joining call goes in before its closing `]}`. `comma`:
   * whether a message was written before (a separator is due unless this one joins it).
   */
  message(i: number, responses: boolean, comma: boolean): number {
    if (this.kind(i) !== T_OBJECT) decline(); // the reference throws E_REQUEST
    const m = this.members(i);
    if (m.has('lc') || m.has('lc_namespace')) return this.emitMessages([this.n.message(this.value(i), '$')], comma);
    const type = m.get('type');
    if (!m.has('role') && type !== undefined && this.kind(type) === T_STRING && this.str(type) !== 'message') {
      const t = this.str(type);
      if (t === 'function_call') return this.call(m, responses, comma);
      if (comma) this.out.byte(COMMA);
      if (t === 'function_call_output') return this.callOutput(m);
      return this.emitMessages([this.n.message(this.value(i), '$')], false); // item_reference, server items
    }
    const out = this.out;
    const ollamaResult = this.ollama ? this.ollamaMessage(m) : undefined;
    if (!responses && ollamaResult === undefined && this.plainMessage(m, comma)) return 1;
    if (comma) out.byte(COMMA);
    const start = out.at;
    // Written as `{members,"content":[parts]}` (the members need no call ids, so they can come
    // first); only a user message with tool results is then reassembled, split.
    out.byte(0x7b);
    const have = ['content'];
    const role = m.get('role');
    let roleName: string | undefined;
    if (!this.empty(role)) {
      out.bytes(L.roleKey);
      this.raw(role!);
      have.push('role');
      roleName = this.strOf(role);
    }
    skipMessage ??= new Set(['type', 'tool_calls', 'function_call', 'tool_call_id', ...MESSAGE_NOISE]);
    skipOllama ??= new Set([...skipMessage, 'images', 'thinking', 'tool_name']);
    this.rest(m, have, this.ollama ? skipOllama : skipMessage);
    const membersEnd = out.at;
    if (membersEnd > start + 1) out.byte(COMMA);
    out.bytes(L.contentKey);
    out.bytes(L.openArr);
    const partsStart = out.at;
    const ranges: number[] = [];
    const tc = m.get('tool_call_id');
    const resultId = ollamaResult ? this.n.ids.of(ollamaResult.id) : tc === undefined || this.kind(tc) === T_NULL ? undefined : this.id(tc);
    if (resultId !== undefined) {
      out.bytes(L.resultOpen);
      out.text(`"${resultId}"`);
      out.byte(COMMA);
      out.bytes(L.contentKey);
      out.bytes(L.openArr);
    }
    let n = 0;
    const thinking = this.ollama ? m.get('thinking') : undefined;
    if (thinking !== undefined && this.kind(thinking) === T_STRING && this.end(thinking) - this.start(thinking) > 2) {
      // Ollama: `thinking` text is a thinking part before the text (providers/ollama.ts).
      const s = out.at;
      out.bytes(L.open);
      out.bytes(L.type);
      out.bytes(L.thinking);
      out.byte(COMMA);
      out.bytes(L.thinkingKey);
      this.raw(thinking);
      out.bytes(L.close);
      ranges.push(s, out.at, PART);
      n++;
    }
    n += this.content(m.get('content'), ranges, n > 0);
    const calls = m.get('tool_calls');
    if (calls !== undefined && this.kind(calls) === T_ARRAY) {
      if (this.ollama) this.ollama.open = [];
      for (const c of this.children(calls)) {
        if (n++ > 0) out.byte(COMMA);
        const s = out.at;
        this.toolCall(c);
        ranges.push(s, out.at, PART);
      }
    }
    const fc = m.get('function_call');
    if (this.isObj(fc)) {
      const fm = this.members(fc);
      if (n++ > 0) out.byte(COMMA);
      const s = out.at;
      out.bytes(L.open);
      out.bytes(L.type);
      out.bytes(L.function_call);
      const have2 = ['type'];
      this.keep(have2, 'name', L.nameKey, fm.get('name'));
      this.setArguments(have2, fm.get('arguments'));
      out.bytes(L.close);
      ranges.push(s, out.at, PART);
    }
    if (resultId !== undefined) {
      out.bytes(L.closeArr);
      out.bytes(L.close);
      ranges.length = 0;
      ranges.push(partsStart, out.at, RESULT);
    }
    const partsEnd = out.at;
    out.bytes(L.closeArr);
    out.bytes(L.close);

    const members = (): void => {
      out.byte(0x7b);
      out.own(start + 1, membersEnd);
      if (membersEnd > start + 1) out.byte(COMMA);
      out.bytes(L.contentKey);
      out.bytes(L.openArr);
    };
    const asm = out.at;
    let count = 1;
    let split = false;
    if (roleName === 'user') for (let r = 2; r < ranges.length; r += 3) if (ranges[r] === RESULT) split = true;
    if (!split) {
      this.last = { assistant: roleName === 'assistant', joinable: true, empty: ranges.length === 0 };
      return 1;
    }
    {
      count = 0;
      let run = -1; // first range of the pending run of other parts
      const flush = (upTo: number) => {
        if (run < 0) return;
        if (count++ > 0) out.byte(COMMA);
        members();
        for (let r = run; r < upTo; r += 3) {
          if (r > run) out.byte(COMMA);
          out.own(ranges[r]!, ranges[r + 1]!);
        }
        out.bytes(L.closeArr);
        out.bytes(L.close);
        run = -1;
      };
      for (let r = 0; r < ranges.length; r += 3) {
        if (ranges[r + 2] !== RESULT) {
          if (run < 0) run = r;
          continue;
        }
        flush(r);
        if (count++ > 0) out.byte(COMMA);
        out.bytes(L.toolMessage);
        out.own(ranges[r]!, ranges[r + 1]!);
        out.bytes(L.closeArr);
        out.bytes(L.close);
      }
      flush(ranges.length);
    }
    out.buf.copyWithin(start, asm, out.at);
    out.at = start + (out.at - asm);
    this.last = { assistant: false, joinable: true, empty: false };
    return count;
  }

  /**
   * The commonest message, `{"role": "<string>", "content": "<string>"}` and nothing else, in
   * canonical member order (`{"content":[text part],"role":...}`): what message() would write,
   * without its general machinery. Not for Responses input, whose function_call items join
   * the message before them by reopening its content, which message() writes last.
   */
  private plainMessage(m: Members, comma: boolean): boolean {
    if (m.names.length !== 2) return false;
    const role = m.get('role');
    const content = m.get('content');
    if (role === undefined || content === undefined || this.kind(role) !== T_STRING || this.kind(content) !== T_STRING) return false;
    const out = this.out;
    if (comma) out.byte(COMMA);
    out.bytes(L.contentOpen);
    const empty = this.end(content) - this.start(content) === 2;
    if (!empty) {
      out.bytes(L.textOpen);
      this.raw(content);
      out.bytes(L.textClose);
      out.bytes(L.close);
    }
    out.bytes(L.contentRole);
    this.raw(role);
    out.bytes(L.close);
    // Never joined (see above), but kept as message() would set it.
    this.last = { assistant: this.str(role) === 'assistant', joinable: false, empty };
    return true;
  }

  /**
   * The Ollama rules for a message that the chat walk does not know: the open call a tool
   * message answers (undefined: none, or not a tool message without tool_call_id); a message
   * whose images or kept tool_name (or a thinking value that is not text) would make parts or
   * members of their own declines to the reference.
   */
  private ollamaMessage(m: Members): { id: unknown } | undefined {
    const images = m.get('images');
    if (images !== undefined && this.kind(images) === T_ARRAY && !this.empty(images)) decline();
    // Thinking text becomes the first part (message() writes it); another value would stay a member.
    const thinking = m.get('thinking');
    if (thinking !== undefined && this.kind(thinking) !== T_NULL && this.kind(thinking) !== T_STRING) decline();
    const role = this.strOf(m.get('role'));
    const name = m.get('tool_name');
    const tc = m.get('tool_call_id');
    if (role !== 'tool') {
      if (name !== undefined) decline(); // kept as a member
      return undefined;
    }
    if (tc !== undefined && this.kind(tc) !== T_NULL) return undefined; // linked by its own id; tool_name dropped
    const open = this.ollama!.open;
    const wanted = name === undefined || this.kind(name) === T_NULL ? undefined : this.kind(name) === T_STRING ? this.str(name) : decline();
    const i = open.findIndex((c) => wanted === undefined || c.name === wanted);
    if (i < 0) {
      if (name !== undefined) decline(); // kept as a member
      return undefined; // a tool message answering nothing: the chat rules
    }
    return { id: open.splice(i, 1)[0]!.id };
  }

  /** A Responses function_call item: an assistant message, or joined to the one before. */
  private call(m: Members, responses: boolean, comma: boolean): number {
    const out = this.out;
    const join = responses && comma && this.last?.assistant === true;
    if (join && !this.last!.joinable) decline();
    if (join) {
      out.at -= 2; // the previous message's closing `]}`
      if (!this.last!.empty) out.byte(COMMA);
    } else {
      if (comma) out.byte(COMMA);
      out.bytes(L.assistantMessage);
    }
    out.bytes(L.open);
    out.bytes(L.type);
    out.bytes(L.tool_call);
    const have = ['type'];
    this.putId(have, 'id', L.idKey, this.id(m.get('call_id')));
    this.keep(have, 'name', L.nameKey, m.get('name'));
    this.setArguments(have, m.get('arguments'));
    out.bytes(L.close);
    out.bytes(L.closeArr);
    out.bytes(L.close);
    this.last = { assistant: true, joinable: true, empty: false };
    return join ? 0 : 1;
  }

  private callOutput(m: Members): number {
    const out = this.out;
    out.bytes(L.toolMessage);
    out.bytes(L.open);
    out.bytes(L.type);
    out.bytes(L.tool_result);
    this.putId([], 'id', L.idKey, this.id(m.get('call_id')));
    out.byte(COMMA);
    out.bytes(L.contentKey);
    out.bytes(L.openArr);
    this.content(m.get('output'));
    out.bytes(L.closeArr);
    out.bytes(L.close);
    out.bytes(L.closeArr);
    out.bytes(L.close);
    this.last = { assistant: false, joinable: true, empty: false };
    return 1;
  }

  /** A prompt string (Responses `input`, generic `prompt`) as a user message. */
  userText(i: number): number {
    this.out.bytes(L.userMessage);
    this.content(i);
    this.out.bytes(L.closeArr);
    this.out.bytes(L.close);
    this.last = { assistant: false, joinable: true, empty: false };
    return 1;
  }

  /** One tool definition; returns its name as the reference sorts it (undefined: none). */
  tool(i: number, legacy: boolean): string | undefined {
    if (this.kind(i) !== T_OBJECT) {
      this.raw(i);
      return undefined;
    }
    const m = this.members(i);
    const type = m.get('type');
    const typeStr = this.strOf(type);
    const f = m.get('function');
    const fnTool = typeStr === 'function' && this.isObj(f);
    const defTool = !fnTool && (type === undefined || this.kind(type) === T_NULL || typeStr === 'function' || (typeStr === 'custom' && m.has('input_schema')));
    if ((fnTool && this.wrappedSchema(this.members(f!))) || (defTool && this.wrappedSchema(m))) {
      // The Vercel AI SDK's jsonSchema() wrapper: the reference unwraps it.
      const t = this.n.tool(this.value(i), legacy) as Record<string, unknown>;
      this.emit(t);
      return typeof t.name === 'string' ? t.name : undefined;
    }
    const have: string[] = [];
    if (legacy) have.push('legacy'); // `out.legacy = true` wins over a copied member
    this.out.bytes(L.open);
    let name: number | undefined;
    if (fnTool) {
      name = this.toolDef(this.members(f!), have);
      if (!have.includes('name') && !this.empty(m.get('name'))) name = m.get('name'); // copied by rest() below
      this.rest(m, have, SKIP_TOOL);
    } else if (defTool) {
      name = this.toolDef(m, have);
    } else {
      this.rest(m, have, NO_SKIP);
      name = have.includes('name') ? m.get('name') : undefined;
    }
    if (legacy) {
      this.sep();
      this.out.bytes(L.legacyTrue);
    }
    this.out.bytes(L.close);
    return name !== undefined && this.kind(name) === T_STRING ? this.str(name) : undefined;
  }

  /** The schema toolDef() picks: parameters ?? input_schema ?? inputSchema. */
  private params(f: Members): number | undefined {
    for (const k of ['parameters', 'input_schema', 'inputSchema']) {
      const v = f.get(k);
      if (v !== undefined && this.kind(v) !== T_NULL) return v;
    }
    return undefined;
  }

  private wrappedSchema(f: Members): boolean {
    const p = this.params(f);
    if (!this.isObj(p)) return false;
    // A plain schema (the common case) is looked at for one member only: its key bytes are
    // compared rather than every key decoded into members(). A schema that has the member goes
    // through members() after all: it declines on a duplicate name, which the unwrapping
    // (JSON.parse, last one wins) would otherwise hide from the core.
    const stop = this.t[p * 8 + 3]!;
    for (let c = p + 1; c < stop; c = this.t[c * 8 + 3]!) {
      const ks = this.t[c * 8 + 4]!;
      const escaped = (this.t[c * 8]! & F_KEY_ESCAPED) !== 0;
      const named = escaped ? this.key(c) === 'jsonSchema' : this.t[c * 8 + 5]! - ks === JSON_SCHEMA.length + 2 && JSON_SCHEMA.every((b, k) => this.src[ks + 1 + k] === b);
      if (named) return this.isObj(this.members(p).get('jsonSchema'));
    }
    return false;
  }

  /** The reference's toolDef(); returns the record of the name it kept. */
  private toolDef(f: Members, have: string[]): number | undefined {
    const name = f.get('name');
    this.keep(have, 'name', L.nameKey, name);
    this.keep(have, 'description', L.descriptionKey, f.get('description'));
    this.keep(have, 'parameters', L.parametersKey, this.params(f));
    this.rest(f, have, SKIP_TOOL_DEF);
    return have.includes('name') ? name : undefined;
  }
}

const PROVIDERS: readonly string[] = ['openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic'];
// Members that hold the conversation and tools, per shape (normalize.ts LAYOUT); the rest of
// the top level is model, options and context, normalized by the reference itself.
const CONVERSATION: Record<BuiltinProvider, readonly string[]> = {
  'openai-chat': ['messages', 'system', 'tools', 'functions'],
  anthropic: ['messages', 'system', 'tools', 'functions'],
  generic: ['messages', 'prompt', 'system', 'tools', 'functions'],
  'openai-responses': ['input', 'instructions', 'tools', 'functions'],
  'openai-embeddings': ['input'],
};

/** Whether an array record holds only numbers (normalize.ts isTokens(): a token list). */
function isTokens(w: Walk, i: number): boolean {
  return w.kind(i) === T_ARRAY && w.children(i).every((c) => w.kind(c) === T_NUMBER);
}

/**
 * detectProvider() of normalize.ts on the index (same rules, same order; the differential tests
 * hold the two together). Materializing what it reads as objects cost more than the rest of
 * the walk.
 */
function detect(w: Walk, root: Members): BuiltinProvider {
  const messages = root.get('messages');
  if (messages === undefined) {
    if (root.has('instructions') || root.has('previous_response_id')) return 'openai-responses';
    const input = root.get('input');
    if (input !== undefined) {
      // looksEmbeddings()
      if (root.has('encoding_format') || root.has('dimensions') || w.isObj(root.get('options'))) return 'openai-embeddings';
      if (w.kind(input) === T_ARRAY) {
        const items = w.children(input);
        if (items.length > 0 && items.every((x) => w.kind(x) === T_STRING || w.kind(x) === T_NUMBER || isTokens(w, x))) return 'openai-embeddings';
      }
      const model = root.get('model');
      if (model !== undefined && w.kind(model) === T_STRING && /embed/i.test(w.str(model))) return 'openai-embeddings';
      return 'openai-responses';
    }
    if (root.has('prompt')) return 'generic';
    decline();
  }
  if (w.kind(messages) !== T_ARRAY) decline();
  if (w.isObj(root.get('context')) || w.isObj(root.get('options'))) return 'generic';
  const toolList = root.get('tools');
  const tools = toolList !== undefined && w.kind(toolList) === T_ARRAY ? w.children(toolList).filter((t) => w.isObj(t)).map((t) => w.members(t)) : [];
  const msgs = w.children(messages);
  const objs = msgs.filter((m) => w.isObj(m)).map((m) => w.members(m));
  const blocks = objs.flatMap((m) => {
    const c = m.get('content');
    return c !== undefined && w.kind(c) === T_ARRAY ? w.children(c).filter((b) => w.isObj(b)).map((b) => w.members(b)) : [];
  });
  const typeOf = (b: Members): string | undefined => w.strOf(b.get('type'));
  // looksAnthropic
  if (ANTHROPIC_ARGS.some((k) => root.has(k))) return 'anthropic';
  if (tools.some((t) => t.has('input_schema'))) return 'anthropic';
  if (
    blocks.some((b) => {
      const type = typeOf(b);
      return (type !== undefined && ANTHROPIC_BLOCKS.has(type)) || ((type === 'image' || type === 'document') && w.isObj(b.get('source')));
    })
  ) {
    return 'anthropic';
  }
  // looksOpenAI
  if (OPENAI_ARGS.some((k) => root.has(k))) return 'openai-chat';
  if (tools.some((t) => typeOf(t) === 'function' && w.isObj(t.get('function')))) return 'openai-chat';
  if (objs.some((m) => m.has('tool_calls') || m.has('tool_call_id') || m.has('function_call'))) return 'openai-chat';
  if (blocks.some((b) => OPENAI_PARTS.has(typeOf(b) as string))) return 'openai-chat';
  if (objs.length === msgs.length && objs.every((m) => OPENAI_ROLES.has(w.strOf(m.get('role')) as string))) return 'openai-chat';
  return 'generic';
}

// node:buffer's isUtf8 (native, GB/s) where there is one; a fatal TextDecoder elsewhere.
const nodeIsUtf8 = ((globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:buffer') as
  | { isUtf8?: (b: Uint8Array) => boolean }
  | undefined)?.isUtf8;
const fatal = new TextDecoder('utf-8', { fatal: true });
function isUtf8(b: Uint8Array): boolean {
  if (nodeIsUtf8) return nodeIsUtf8(b);
  try {
    fatal.decode(b);
    return true;
  } catch {
    return false;
  }
}

/**
 * How often this path answered and declined in this process. Internal (not exported from the
 * package entries): the tests read it to prove that the public entry points (requestDigests,
 * the matcher) really take this path for the common request shapes, which equal digests alone
 * cannot show.
 */
export const rawPathCounts = { answered: 0, declined: 0, core: 0, gemini: 0, converse: 0, ollama: 0 };

/**
 * Request digests of a raw body (UTF-8 bytes or JSON text), identical to requestKeys()'s, or
 * undefined when this path leaves the body to requestKeys(): a backend without the structural
 * index (the TypeScript engine), volatileKeys, volatileText, a body with an error, and the few constructs
 * listed where they are met below.
 *
 * @example
 * rawRequestDigests(bytes) ?? requestKeys(bytes) // same digests either way
 */
export function rawRequestDigests(request: Uint8Array | string, opts: NormalizeOptions = {}): RequestDigests | undefined {
  const r = attempt(request, opts);
  if (r === undefined) rawPathCounts.declined++;
  else rawPathCounts.answered++;
  return r;
}

function attempt(request: Uint8Array | string, opts: NormalizeOptions): RequestDigests | undefined {
  if (opts === null || typeof opts !== 'object') return undefined;
  if (opts.volatileKeys !== undefined && (!Array.isArray(opts.volatileKeys) || opts.volatileKeys.length > 0)) return undefined;
  // Volatile text is replaced in the normalized messages: the object path keys it (the core's
  // view and this walk hash message text as it is).
  if (opts.volatileText !== undefined && (!Array.isArray(opts.volatileText) || opts.volatileText.length > 0)) return undefined;
  if (opts.provider !== undefined && !PROVIDERS.includes(opts.provider)) return undefined;
  // A shape of another provider module (by the endpoint's route): the walk knows the chat
  // family only, so that module's normalize reads the parsed body.
  if (opts.endpoint !== undefined && !rawKeysAllowed(opts)) return moduleDigests(request, opts);
  // Only an absent option takes its default; null is the reference's E_ARG.
  if (opts.ignoreArgs === null) return undefined;
  const ignoreArgs = opts.ignoreArgs ?? [];
  if (!Array.isArray(ignoreArgs) || ignoreArgs.some((k) => typeof k !== 'string')) return undefined;
  const bytes = utf8Of(request);
  if (bytes === undefined) return undefined;
  try {
    const cv = coreRequestView(bytes, opts.provider === undefined ? 0 : PROVIDER_CODE[opts.provider as BuiltinProvider]);
    if (cv === undefined) return undefined;
    if (cv !== null && !(cv instanceof Uint32Array)) {
      const fromCore = coreDigests(bytes, cv, ignoreArgs);
      if (fromCore !== null) return fromCore;
    }
    // The index the core declined from, else made here (a backend or build without the view).
    const tape = cv instanceof Uint32Array ? cv : jsonTape(bytes);
    if (tape === undefined || tape.length === 0 || (tape[0]! & 0xff) !== T_OBJECT) return undefined;
    const w = new Walk(bytes, tape);
    // Objects whose member names the index did not compare (escaped names, many members): a
    // duplicate is an error for the reference wherever it is, kept or dropped.
    for (let i = 0; i < tape.length; i += 8) if ((tape[i]! & F_CHECK_KEYS) !== 0) w.members(i >>> 3);
    return digests(w, opts, ignoreArgs);
  } catch (e) {
    if (e === DECLINE || e instanceof TapedeckError || e instanceof SyntaxError) return undefined;
    throw e;
  } finally {
    Out.release();
  }
}

/**
 * A body's UTF-8 bytes, or undefined when it has none: a body given as bytes must be UTF-8
 * (docs/hash-spec.md, "Errors": E_UTF8); the reference rejects it, so the raw paths decline
 * rather than key bytes they would decode leniently.
 */
function utf8Of(request: Uint8Array | string): Uint8Array | undefined {
  if (typeof request === 'string') return request.isWellFormed() ? encoder.encode(request) : undefined;
  return isUtf8(request) ? request : undefined;
}

/**
 * Digests of a body of a provider module's own shape (Gemini, ...): the body checked by the
 * core's index instead of the strict reader's canonical pass (the same faults, a fifth of the
 * time), parsed, normalized by its module, and the view hashed from its JSON text in one core
 * call (the view of parsed JSON is JSON data, so its text is the same canonical value, without
 * walking it as JavaScript objects). Any error leaves the body to the reference path, which
 * reports it.
 */
function moduleDigests(request: Uint8Array | string, opts: NormalizeOptions): RequestDigests | undefined {
  const bytes = utf8Of(request);
  if (bytes === undefined) return undefined;
  let w: Walk;
  try {
    const tape = jsonTape(bytes);
    if (tape === undefined || tape.length === 0) return undefined;
    w = new Walk(bytes, tape);
    for (let i = 0; i < tape.length; i += 8) if ((tape[i]! & F_CHECK_KEYS) !== 0) w.members(i >>> 3);
    const shape = (tape[0]! & 0xff) === T_OBJECT ? routeOf(opts.endpoint)?.route.shape : undefined;
    const ignoreArgs = opts.ignoreArgs ?? [];
    if (shape === 'ollama-chat' && opts.provider === undefined && Array.isArray(ignoreArgs) && ignoreArgs.every((k) => typeof k === 'string')) {
      // A chat body with Ollama's rules for its calls: the chat walk in its Ollama mode.
      try {
        w.ollama = { calls: 0, open: [] };
        const d = { ...digests(w, { provider: 'openai-chat' }, ignoreArgs), provider: 'ollama-chat' };
        rawPathCounts.ollama++;
        return d;
      } catch (e) {
        if (e !== DECLINE) throw e;
      } finally {
        Out.release();
      }
    }
    if (shape === 'gemini' || shape === 'bedrock-converse') {
      try {
        const d = shape === 'gemini' ? geminiDigests(w, opts, opts.ignoreArgs ?? []) : converseDigests(w, opts, opts.ignoreArgs ?? []);
        rawPathCounts[shape === 'gemini' ? 'gemini' : 'converse']++;
        return d;
      } catch (e) {
        if (e !== DECLINE) throw e;
      } finally {
        Out.release();
      }
    }
    const n = normalizeModule(JSON.parse(typeof request === 'string' ? request : decoder.decode(bytes)), opts);
    return viewDigests(n, JSON.stringify(n.view));
  } catch (e) {
    if (e === DECLINE || e instanceof TapedeckError || e instanceof SyntaxError) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Gemini bodies (src/providers/gemini.ts is the reference): the same walk over the index for
// what Gemini SDKs send (camelCase names; text, thought, functionCall, functionResponse,
// fileData and inlineData parts; function declarations), the rest declined to the parse path.

const GEMINI_LAYOUT = new Set(['contents', 'systemInstruction', 'tools']);
const GEMINI_PART_KNOWN = new Set(['text', 'thought', 'thoughtSignature', 'inlineData', 'fileData', 'functionCall', 'functionResponse']);
const G = {
  thinkingOpen: lit('{"type":"thinking"'),
  callOpen: lit('{"type":"tool_call","id":'),
  jsonOpen: lit('{"type":"json","json":'),
  jsonEmpty: lit('{"type":"json"}'),
  typeKey: lit('{"type":'),
  quote: lit('"'),
};

/**
 * Writes `,"tools":[...]` from the tool chunks written at the end of `out` (in body order), in
 * the reference's order (by name), over the chunks themselves. Equal names sort by canonical
 * bytes in the reference: left to it (decline).
 */
function sortedTools(out: Out, chunks: readonly { name: string | undefined; start: number; end: number }[]): void {
  const sortName = (c: (typeof chunks)[number]): string => c.name ?? '';
  const sorted = [...chunks].sort((a, b) => (sortName(a) < sortName(b) ? -1 : sortName(a) > sortName(b) ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) if (sortName(sorted[i]!) === sortName(sorted[i - 1]!)) decline();
  const toolsAt = out.at;
  out.bytes(L.tools);
  sorted.forEach((c, i) => {
    if (i > 0) out.byte(COMMA);
    out.own(c.start, c.end);
  });
  // Move the sorted tools over the unsorted chunks.
  const firstChunk = chunks.length > 0 ? chunks[0]!.start : toolsAt;
  out.buf.copyWithin(firstChunk, toolsAt, out.at);
  out.at = firstChunk + (out.at - toolsAt);
  out.bytes(L.closeArr);
}

/** Every member name of an object, or decline when one is snake_case (the reference camelCases it). */
function camelOnly(w: Walk, i: number): Members {
  const m = w.members(i);
  for (const k of m.names) if (k.includes('_')) decline();
  return m;
}

/**
 * The view's message list as the Gemini and Converse walks write it in place: a separator before
 * every message but the first, the end of a message, and one message of all the parts a turn
 * keeps. `count` is the number of messages written (a walk that takes a message back lowers it).
 */
class MessageList {
  count = 0;

  constructor(private readonly out: Out) {
    out.bytes(L.view);
  }

  next(): void {
    if (this.count++ > 0) this.out.byte(COMMA);
  }

  close(): void {
    this.out.bytes(L.closeArr);
    this.out.bytes(L.close);
  }

  /** One message of the parts `write` keeps (NONE: nothing kept); none for no parts when `dropEmpty`. */
  whole(head: Uint8Array, parts: readonly number[], write: (p: number) => number, dropEmpty: boolean): void {
    const out = this.out;
    const mark = out.at;
    this.next();
    out.bytes(head);
    let n = 0;
    for (const p of parts) {
      const at = out.at;
      if (n > 0) out.byte(COMMA);
      if (write(p) === NONE) out.at = at;
      else n++;
    }
    if (n === 0 && dropEmpty) {
      out.at = mark;
      this.count--;
      return;
    }
    this.close();
  }
}

function geminiDigests(w: Walk, opts: NormalizeOptions, ignoreArgs: readonly string[]): RequestDigests {
  if (!Array.isArray(ignoreArgs) || ignoreArgs.some((k) => typeof k !== 'string')) decline();
  const root = camelOnly(w, 0);
  if (root.has('generateContentRequest') || ignoreArgs.some((k) => GEMINI_LAYOUT.has(k) || k.includes('_'))) decline();
  const top: Record<string, unknown> = { contents: [] };
  for (let i = 0; i < root.names.length; i++) {
    const k = root.names[i]!;
    if (!GEMINI_LAYOUT.has(k)) set(top, k, w.value(root.recs[i]!));
  }
  const small = normalizeModule(top, opts);
  if (small.provider !== 'gemini' || !allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP)) decline();
  const out = w.out;
  const calls = new Calls(w.n);
  const list = new MessageList(out);
  const next = () => list.next();
  const close = () => list.close();
  // One message of all the parts (the system prompt, a model turn); none for no parts when
  // `dropEmpty` (an empty system prompt is no message).
  const part = (p: number) => geminiPart(w, p, calls);
  const whole = (head: Uint8Array, v: number | undefined, dropEmpty: boolean) => list.whole(head, partsOf(v), part, dropEmpty);
  // A user turn: function results are tool messages of their own, the other parts user
  // messages between them (splitToolResults), written in place.
  const user = (v: number | undefined) => {
    let open = false;
    let n = 0;
    let any = false;
    for (const p of partsOf(v)) {
      if (w.isObj(p) && w.members(p).has('functionResponse')) {
        if (open) close();
        open = false;
        any = true;
        next();
        out.bytes(L.toolMessage);
        if (geminiPart(w, p, calls) !== RESULT) decline();
        close();
        continue;
      }
      const mark = out.at;
      if (open) out.byte(COMMA);
      else {
        next();
        out.bytes(L.userMessage);
      }
      if (geminiPart(w, p, calls) === NONE) {
        out.at = mark;
        if (!open) list.count--;
        continue;
      }
      open = true;
      n++;
      any = true;
    }
    if (open) close();
    else if (!any) {
      next();
      out.bytes(L.userMessage);
      close();
    }
    return n;
  };
  const partsOf = (v: number | undefined): number[] => (v === undefined || w.kind(v) === T_NULL ? [] : w.kind(v) === T_ARRAY ? w.children(v) : [v]);
  const system = root.get('systemInstruction');
  if (system !== undefined && w.kind(system) !== T_NULL) {
    if (!w.isObj(system)) decline();
    whole(L.systemMessage, camelOnly(w, system).get('parts'), true);
  }
  const contents = root.get('contents');
  if (contents !== undefined && w.kind(contents) !== T_NULL) {
    if (w.kind(contents) !== T_ARRAY) decline();
    for (const c of w.children(contents)) {
      if (!w.isObj(c)) decline();
      const cm = camelOnly(w, c);
      for (const k of cm.names) if (k !== 'role' && k !== 'parts') decline();
      const role = cm.get('role');
      const r = role === undefined || w.kind(role) === T_NULL ? 'user' : w.strOf(role);
      if (r === 'model') whole(L.assistantMessage, cm.get('parts'), false);
      else if (r === 'user') user(cm.get('parts'));
      else decline();
    }
  }
  out.bytes(L.closeArr);
  modelAndOptions(out, small);
  // Tools: function declarations through the chat walk's tool writer (D(f)); built-in tools
  // and anything unusual to the parse path.
  const chunks: { name: string | undefined; start: number; end: number }[] = [];
  const tools = root.get('tools');
  if (tools !== undefined && w.kind(tools) !== T_NULL) {
    if (w.kind(tools) !== T_ARRAY) decline();
    for (const t of w.children(tools)) {
      if (!w.isObj(t)) decline();
      const tm = camelOnly(w, t);
      if (tm.names.length !== 1 || tm.names[0] !== 'functionDeclarations') decline();
      const fns = tm.get('functionDeclarations')!;
      if (w.kind(fns) !== T_ARRAY) decline();
      for (const f of w.children(fns)) {
        if (!w.isObj(f)) decline();
        const fm = camelOnly(w, f);
        if (fm.has('parametersJsonSchema') || fm.has('type')) decline();
        const start = out.at;
        const name = w.tool(f, false);
        chunks.push({ name, start, end: out.at });
      }
    }
  }
  const names = chunks.map((c) => c.name);
  sortedTools(out, chunks);
  out.bytes(L.close);
  return finish(out, 'gemini' as BuiltinProvider, list.count, names, small);
}

/** One Gemini part, written in the shared form: NONE, PART, or RESULT for a function result. */
function geminiPart(w: Walk, p: number, calls: Calls): number {
  const out = w.out;
  const kind = w.kind(p);
  if (kind === T_STRING) {
    if (w.end(p) - w.start(p) === 2) return NONE;
    out.bytes(L.textOpen);
    w.raw(p);
    out.bytes(L.textClose);
    out.bytes(L.close);
    return PART;
  }
  if (kind !== T_OBJECT) {
    w.raw(p);
    return PART;
  }
  const m = camelOnly(w, p);
  // One of text, inlineData, fileData, functionCall, functionResponse (the reference copies any
  // second one as a member), beside thought (with text) and thoughtSignature.
  let held = 0;
  for (const k of m.names) {
    if (!GEMINI_PART_KNOWN.has(k)) decline();
    if (k !== 'thought' && k !== 'thoughtSignature') held++;
  }
  if (held !== 1) decline();
  const text = m.get('text');
  if (text !== undefined) {
    if (w.kind(text) !== T_STRING) decline();
    const thought = m.get('thought');
    const empty = w.end(text) - w.start(text) === 2;
    if (thought !== undefined && w.kind(thought) === T_TRUE) {
      out.bytes(G.thinkingOpen);
      if (!empty) {
        out.byte(COMMA);
        out.bytes(L.thinkingKey);
        w.raw(text);
      }
      out.bytes(L.close);
      return PART;
    }
    if (empty) return NONE;
    out.bytes(L.textOpen);
    w.raw(text);
    out.bytes(L.textClose);
    out.bytes(L.close);
    return PART;
  }
  if (m.has('thought')) decline();
  const call = m.get('functionCall');
  if (call !== undefined && w.isObj(call)) {
    const cm = camelOnly(w, call);
    for (const k of cm.names) if (k !== 'name' && k !== 'args' && k !== 'id') decline();
    const name = cm.get('name');
    const id = cm.get('id');
    if (name === undefined || w.kind(name) !== T_STRING || (id !== undefined && w.kind(id) !== T_STRING)) decline();
    out.bytes(G.callOpen);
    out.bytes(quotedId(calls.call(w.str(name), id === undefined ? undefined : w.str(id))!));
    out.byte(COMMA);
    out.bytes(L.nameKey);
    w.raw(name);
    const args = cm.get('args');
    if (args !== undefined && w.kind(args) !== T_NULL) {
      out.byte(COMMA);
      out.bytes(L.argumentsKey);
      w.raw(args);
    }
    out.bytes(L.close);
    return PART;
  }
  const result = m.get('functionResponse');
  if (result !== undefined && w.isObj(result)) {
    const rm = camelOnly(w, result);
    for (const k of rm.names) if (k !== 'name' && k !== 'response' && k !== 'id') decline();
    const name = rm.get('name');
    const id = rm.get('id');
    if (name === undefined || w.kind(name) !== T_STRING || (id !== undefined && w.kind(id) !== T_STRING)) decline();
    const paired = calls.response(w.str(name), id === undefined ? undefined : w.str(id));
    out.bytes(L.resultOpen);
    out.bytes(quotedId(paired.id!));
    if (!paired.paired) {
      out.byte(COMMA);
      out.bytes(L.nameKey);
      w.raw(name);
    }
    out.byte(COMMA);
    out.bytes(L.contentKey);
    out.bytes(L.openArr);
    // resultValue(): `{ output }`, `{ result }` or `{ content }` alone (beside a `name`) is that value.
    let value = rm.get('response');
    if (value !== undefined && w.isObj(value)) {
      const vm = w.members(value);
      const own = vm.names.filter((k) => k !== 'name');
      if (own.length === 1 && (own[0] === 'output' || own[0] === 'result' || own[0] === 'content')) value = vm.get(own[0]!);
    }
    if (value !== undefined && w.kind(value) !== T_NULL) {
      if (w.kind(value) === T_STRING) {
        if (w.end(value) - w.start(value) > 2) {
          out.bytes(L.textOpen);
          w.raw(value);
          out.bytes(L.textClose);
          out.bytes(L.close);
        }
      } else if (w.empty(value)) {
        out.bytes(G.jsonEmpty);
      } else {
        out.bytes(G.jsonOpen);
        w.raw(value);
        out.bytes(L.close);
      }
    }
    out.bytes(L.closeArr);
    out.bytes(L.close);
    return RESULT;
  }
  const media = m.get('inlineData') ?? m.get('fileData');
  if (media !== undefined && w.isObj(media)) {
    const inline = m.has('inlineData');
    const dm = camelOnly(w, media);
    for (const k of dm.names) if (k !== 'mimeType' && k !== (inline ? 'data' : 'fileUri')) decline();
    const mime = dm.get('mimeType');
    const media_ = kindOfMedia(mime === undefined ? undefined : w.strOf(mime));
    out.bytes(G.typeKey);
    out.bytes(G.quote);
    out.text(media_);
    out.bytes(G.quote);
    out.byte(COMMA);
    out.bytes(G.quote);
    out.text(media_);
    out.bytes(G.quote);
    out.byte(0x3a);
    const given: Record<string, unknown> = {};
    for (let j = 0; j < dm.names.length; j++) set(given, dm.names[j]!, w.value(dm.recs[j]!));
    w.emit(inline ? attachmentOf(given) : typeof given.fileUri === 'string' ? attachmentOf(given.fileUri) : attachmentOf(given));
    out.bytes(L.close);
    return PART;
  }
  decline();
}

type Normalized = ReturnType<typeof normalizeRequest>;

/**
 * Model, options and context: the reference on the top level without the conversation (its
 * members are small), given as `top`.
 */
function topLevel(provider: BuiltinProvider, top: Record<string, unknown>, ignoreArgs: readonly string[]): Normalized {
  const ignore = new Set(ignoreArgs);
  if (CONVERSATION[provider].some((k) => ignore.has(k))) decline();
  if (provider !== 'openai-responses' && provider !== 'openai-embeddings') top.messages = [];
  const small = normalizeRequest(top, { provider, ignoreArgs });
  if (!allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP)) decline();
  return small;
}

/**
 * Writes `,"model":...,"options":...`: the root's members in canonical order (input or
 * messages, model, options, tools), so the core need not sort the root object, which would
 * move the whole view twice.
 */
function modelAndOptions(out: Out, small: Normalized): void {
  const view = small.view;
  if (view.model !== undefined) {
    out.bytes(L.model);
    out.text(JSON.stringify(view.model));
  }
  out.bytes(L.options);
  out.text(JSON.stringify(view.options));
}

/** One core call over the view written to `out`, and the signature. */
function finish(out: Out, provider: BuiltinProvider, count: number, names: readonly (string | undefined)[], small: Normalized): RequestDigests {
  const member = provider === 'openai-embeddings' ? 'input' : 'messages';
  // The view is valid UTF-8: ranges of a body checked above (cut at ASCII delimiters) and text
  // encoded from well-formed strings.
  const paths = pathHashesOfUtf8(out.buf.subarray(0, out.at), member);
  const toolNames = [...new Set(names.filter((n): n is string => n !== undefined))].sort();
  const signature = { toolNames, messageCount: count, contextKeys: small.contextKeys };
  return {
    provider,
    key: paths.digest,
    signature,
    signatureDigest: hashValue(signature),
    messageHashes: paths.messageHashes,
    pathHashes: paths.pathHashes,
  };
}

const PROVIDER_CODE: Record<BuiltinProvider, number> = { 'openai-chat': 1, 'openai-responses': 2, 'openai-embeddings': 3, anthropic: 4, generic: 5 };
const PROVIDER_OF: readonly (BuiltinProvider | undefined)[] = [undefined, 'openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic'];

/**
 * The digests from the view the core wrote itself (assembly/view.ts): the common request
 * shapes with no JavaScript walk at all; null where an attachment hole leaves the body to the
 * walk here after all.
 */
function coreDigests(bytes: Uint8Array, cv: CoreView, ignoreArgs: readonly string[]): RequestDigests | null {
  const out = new Out();
  // Copied first: the core's memory is reused by the next call into it.
  const tools = cv.tools.slice();
  const head = cv.head;
  const holes = cv.holes;
  if (holes.length === 0) {
    out.bytes(head);
  } else {
    // Attachment parts, whose rules decode and hash data: the reference, one part at a time.
    const texts: string[] = [];
    const n = new Normalizer();
    for (let k = 0; k < holes.length; k += 2) {
      const parts = n.content(JSON.parse(decoder.decode(bytes.subarray(holes[k]!, holes[k + 1]!))), '$');
      if (parts.length !== 1 || isResult(parts[0]) || !allFinite(parts[0], NO_SKIP)) return null;
      texts.push(JSON.stringify(parts[0]));
    }
    // Call ids inside an attachment (a document's own content blocks) are numbered in document
    // order with the core's: a fresh numbering here would give them the wrong positions.
    if (n.ids.size > 0) return null;
    let at = 0;
    for (const text of texts) {
      const z = head.indexOf(0, at);
      out.span(head, at, z);
      out.text(text);
      at = z + 1;
    }
    out.span(head, at, head.length);
  }
  const provider = PROVIDER_OF[cv.provider]!;
  // The top level without the conversation, as one JSON text for one JSON.parse: the members'
  // own bytes, `"name": value`. The index has compared their names (no duplicates) and the core
  // declines escaped names, so a name is its bytes.
  const r = cv.roots;
  const layout = CONVERSATION[provider];
  let text = '{';
  for (let i = 0; i < r.length; i += 5) {
    if (layout.includes(unescapedText(bytes, r[i]!, r[i + 1]!, r[i + 2]! | 0))) continue;
    if (text.length > 1) text += ',';
    text += decoder.decode(bytes.subarray(r[i]!, r[i + 4]!));
  }
  const small = topLevel(provider, JSON.parse(`${text}}`) as Record<string, unknown>, ignoreArgs);
  modelAndOptions(out, small);
  out.bytes(tools);
  out.bytes(L.close);
  const toolNames: (string | undefined)[] = [];
  const tn = cv.toolNames;
  for (let k = 0; k < tn.length; k += 3) toolNames.push(tn[k + 1] === 0 ? undefined : unescapedText(bytes, tn[k]!, tn[k + 1]!, tn[k + 2]! | 0));
  rawPathCounts.core++;
  return finish(out, provider, cv.messageCount, toolNames, small);
}

function digests(w: Walk, opts: NormalizeOptions, ignoreArgs: readonly string[]): RequestDigests {
  const root = w.members(0);
  const provider = (opts.provider as BuiltinProvider | undefined) ?? detect(w, root);
  let top: Record<string, unknown> = {};
  for (let i = 0; i < root.names.length; i++) {
    const k = root.names[i]!;
    // Ollama: `system` and `functions` are options the rewrite moves under `ollama`.
    if (!CONVERSATION[provider].includes(k) || (w.ollama && k !== 'messages' && k !== 'tools')) set(top, k, w.value(root.recs[i]!));
  }
  if (w.ollama) top = ollamaAsOpenAI('chat', top) as Record<string, unknown>;
  const small = topLevel(provider, top, ignoreArgs);

  const out = w.out;
  let count = 0;
  const names: (string | undefined)[] = [];
  if (provider === 'openai-embeddings') {
    // One input (a string or one token list) is a batch of one.
    out.bytes(L.embeddings);
    const input = root.get('input');
    if (input !== undefined && w.kind(input) !== T_NULL) {
      const items = w.kind(input) === T_ARRAY && !isTokens(w, input) ? w.children(input) : [input];
      for (const x of items) {
        if (count++ > 0) out.byte(COMMA);
        w.raw(x);
      }
    }
    out.bytes(L.closeArr);
    modelAndOptions(out, small);
  } else {
    out.bytes(L.view);
    const responses = provider === 'openai-responses';
    const system = w.ollama ? undefined : root.get(responses ? 'instructions' : 'system');
    if (system !== undefined) {
      const mark = out.at;
      out.bytes(L.systemMessage);
      if (w.content(system) > 0) {
        out.bytes(L.closeArr);
        out.bytes(L.close);
        count++;
      } else {
        out.at = mark;
      }
    }
    const list = root.get(responses ? 'input' : 'messages');
    const add = (n: number) => {
      count += n;
    };
    const next = () => {
      if (count > 0) out.byte(COMMA);
    };
    // joinCalls() never joins onto the system prompt: `last` is only set by messages.
    const message = (m: number) => add(w.message(m, responses, count > 0));
    if (list === undefined) {
      if (!responses && provider !== 'generic') decline(); // the reference throws E_REQUEST
    } else if (w.kind(list) === T_NULL) {
      if (!responses) decline();
    } else if (w.kind(list) === T_ARRAY) {
      for (const m of w.children(list)) message(m);
    } else if (responses && w.kind(list) === T_STRING) {
      next();
      add(w.userText(list));
    } else {
      decline();
    }
    if (provider === 'generic') {
      // Vercel AI SDK call options: `prompt` (a string or messages) follows `messages`.
      const prompt = root.get('prompt');
      if (prompt !== undefined && w.kind(prompt) !== T_NULL) {
        if (w.kind(prompt) === T_STRING) {
          next();
          add(w.userText(prompt));
        } else if (w.kind(prompt) === T_ARRAY) {
          for (const m of w.children(prompt)) message(m);
        } else {
          decline();
        }
      }
    }

    out.bytes(L.closeArr);
    modelAndOptions(out, small);

    // Tools: each written as a chunk, then the chunks in the reference's order (by name).
    const chunks: { name: string | undefined; start: number; end: number }[] = [];
    for (const [name, legacy] of [['tools', false], ['functions', true]] as const) {
      const t = w.ollama && legacy ? undefined : root.get(name);
      if (t === undefined || w.kind(t) === T_NULL) continue;
      if (w.kind(t) !== T_ARRAY) decline(); // the AI SDK's tools map, or an error
      for (const c of w.children(t)) {
        const start = out.at;
        const toolName = w.tool(c, legacy);
        chunks.push({ name: toolName, start, end: out.at });
      }
    }
    sortedTools(out, chunks);
    for (const c of chunks) names.push(c.name);
  }
  out.bytes(L.close);
  return finish(out, provider, count, names, small);
}

// ---------------------------------------------------------------------------------------------
// Bedrock Converse bodies on their route (docs/hash-spec.md, "AWS Bedrock Runtime"): text,
// toolUse and toolResult blocks written from the body's bytes in the shared form; every other
// block and every tool through the Bedrock module's translation and the reference normalizer,
// one at a time (with the walk's own call ids, so numbering stays in order); anything unusual
// (ignoreArgs, extra message members, roles other than user and assistant) to the parse path.

function converseDigests(w: Walk, opts: NormalizeOptions, ignoreArgs: readonly string[]): RequestDigests {
  if (!Array.isArray(ignoreArgs) || ignoreArgs.length > 0) decline();
  const root = w.members(0);
  const messages = root.get('messages');
  if (messages === undefined || w.kind(messages) !== T_ARRAY) decline();
  // Model and options: the module on the body without its conversation, system and tools.
  const top: Record<string, unknown> = { messages: [] };
  let tools: number | undefined;
  for (let i = 0; i < root.names.length; i++) {
    const k = root.names[i]!;
    const rec = root.recs[i]!;
    if (k === 'messages' || k === 'system') continue;
    if (k === 'toolConfig' && w.isObj(rec)) {
      const tc: Record<string, unknown> = {};
      const tm = w.members(rec);
      for (let j = 0; j < tm.names.length; j++) {
        if (tm.names[j] === 'tools') tools = tm.recs[j];
        else set(tc, tm.names[j]!, w.value(tm.recs[j]!));
      }
      set(top, k, tc);
    } else set(top, k, w.value(rec));
  }
  if (tools !== undefined && w.kind(tools) !== T_ARRAY) decline();
  const small = normalizeModule(top, opts);
  if (small.provider !== 'bedrock-converse' || !allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP)) decline();
  const out = w.out;
  const list = new MessageList(out);
  const next = () => list.next();
  const close = () => list.close();
  const blocksOf = (v: number): number[] => {
    if (w.kind(v) !== T_ARRAY) decline();
    return w.children(v);
  };
  // One message of all its parts (the system prompt, an assistant turn; the reference splits
  // only user messages); none for no parts when `dropEmpty`.
  const part = (b: number) => conversePart(w, b);
  const whole = (head: Uint8Array, v: number, dropEmpty: boolean) => list.whole(head, blocksOf(v), part, dropEmpty);
  // A user turn: tool results are tool messages of their own, the other parts user messages
  // between them (splitToolResults), written in place.
  const user = (v: number) => {
    let open = false;
    let any = false;
    for (const b of blocksOf(v)) {
      const mark = out.at;
      const count0 = list.count;
      if (open) out.byte(COMMA);
      else {
        next();
        out.bytes(L.userMessage);
      }
      const at = out.at;
      const kind = conversePart(w, b);
      if (kind === NONE) {
        out.at = mark;
        list.count = count0;
        continue;
      }
      any = true;
      if (kind === RESULT) {
        // Rewrite: close the user message before it (if one is open), the result in its own.
        const part = out.buf.slice(at, out.at);
        out.at = mark;
        list.count = count0;
        if (open) close();
        open = false;
        next();
        out.bytes(L.toolMessage);
        out.bytes(part);
        close();
        continue;
      }
      open = true;
    }
    if (open) close();
    else if (!any) {
      next();
      out.bytes(L.userMessage);
      close();
    }
  };
  const system = root.get('system');
  if (system !== undefined && w.kind(system) !== T_NULL) whole(L.systemMessage, system, true);
  for (const m of w.children(messages)) {
    if (!w.isObj(m)) decline();
    const mm = w.members(m);
    for (const k of mm.names) if (k !== 'role' && k !== 'content') decline();
    const content = mm.get('content');
    if (content === undefined) decline();
    const role = w.strOf(mm.get('role'));
    if (role === 'assistant') whole(L.assistantMessage, content, false);
    else if (role === 'user') user(content);
    else decline();
  }
  out.bytes(L.closeArr);
  modelAndOptions(out, small);
  const chunks: { name: string | undefined; start: number; end: number }[] = [];
  for (const t of tools === undefined ? [] : w.children(tools)) {
    const start = out.at;
    const name = converseToolSpec(w, t);
    if (name !== DECLINE) {
      chunks.push({ name, start, end: out.at });
      continue;
    }
    const translated = converseTool(w.value(t));
    if (translated === undefined) continue;
    const norm = w.n.tool(translated, false);
    w.emit(norm);
    chunks.push({ name: norm !== null && typeof norm === 'object' && typeof (norm as { name?: unknown }).name === 'string' ? (norm as { name: string }).name : undefined, start, end: out.at });
  }
  const names = chunks.map((c) => c.name);
  sortedTools(out, chunks);
  out.bytes(L.close);
  return finish(out, 'bedrock-converse' as BuiltinProvider, list.count, names, small);
}

const DESCRIPTION_OPEN = lit('{"description":');
const NAME_AFTER = lit(',"name":');
const NAME_OPEN = lit('{"name":');

/**
 * A plain `{ toolSpec: { name, description?, inputSchema: { json } } }` written as D(f) in
 * canonical member order (description, name, parameters); returns its name, or DECLINE (nothing
 * written) for any other tool, which the reference then normalizes.
 */
function converseToolSpec(w: Walk, t: number): string | typeof DECLINE {
  if (!w.isObj(t)) return DECLINE;
  const tm = w.members(t);
  const spec = tm.names.length === 1 && tm.names[0] === 'toolSpec' ? tm.recs[0] : undefined;
  if (!w.isObj(spec)) return DECLINE;
  const sm = w.members(spec);
  if (!sm.names.every((n) => n === 'name' || n === 'description' || n === 'inputSchema')) return DECLINE;
  const name = sm.get('name');
  const description = sm.get('description');
  const schema = sm.get('inputSchema');
  if (name === undefined || w.kind(name) !== T_STRING || (description !== undefined && w.kind(description) !== T_STRING && w.kind(description) !== T_NULL)) return DECLINE;
  if (!w.isObj(schema)) return DECLINE;
  const im = w.members(schema);
  const json = im.names.length === 1 && im.names[0] === 'json' ? im.recs[0]! : undefined;
  // A schema of null (or []) is no parameters to the reference; objects only here.
  if (!w.isObj(json)) return DECLINE;
  const out = w.out;
  if (description !== undefined && w.kind(description) === T_STRING) {
    out.bytes(DESCRIPTION_OPEN);
    w.raw(description);
    out.bytes(NAME_AFTER);
  } else out.bytes(NAME_OPEN);
  w.raw(name);
  out.byte(COMMA);
  out.bytes(L.parametersKey);
  w.raw(json);
  out.bytes(L.close);
  return w.str(name);
}

/** A text part `{"text":...,"type":"text"}` from a string record; false (nothing written) for "". */
function textPart(w: Walk, i: number): boolean {
  if (w.end(i) - w.start(i) === 2) return false;
  w.out.bytes(L.textOpen);
  w.raw(i);
  w.out.bytes(L.textClose);
  w.out.bytes(L.close);
  return true;
}

/** One Converse block, written in the shared form: NONE, PART, or RESULT for a tool result. */
function conversePart(w: Walk, b: number): number {
  const out = w.out;
  if (!w.isObj(b)) decline();
  const m = w.members(b);
  const k = m.names.length === 1 ? m.names[0]! : '';
  const v = m.recs[0]!;
  if (k === 'cachePoint') return NONE;
  if (k === 'text' && w.kind(v) === T_STRING) return textPart(w, v) ? PART : NONE;
  if (k === 'toolUse' && w.isObj(v)) {
    const tm = w.members(v);
    const id = tm.get('toolUseId');
    const name = tm.get('name');
    const input = tm.get('input');
    const plain = tm.names.every((n) => n === 'toolUseId' || n === 'name' || n === 'input');
    // An input given as a string is JSON text to the reference: left to it.
    if (plain && id !== undefined && w.kind(id) === T_STRING && name !== undefined && w.kind(name) === T_STRING && (input === undefined || w.isObj(input))) {
      out.bytes(G.callOpen);
      out.bytes(quotedId(w.id(id)!));
      out.byte(COMMA);
      out.bytes(L.nameKey);
      w.raw(name);
      if (input !== undefined) {
        out.byte(COMMA);
        out.bytes(L.argumentsKey);
        w.raw(input);
      }
      out.bytes(L.close);
      return PART;
    }
  }
  if (k === 'toolResult' && w.isObj(v)) {
    const rm = w.members(v);
    const id = rm.get('toolUseId');
    const content = rm.get('content');
    const status = rm.get('status');
    const plain = rm.names.every((n) => n === 'toolUseId' || n === 'content' || n === 'status');
    const texts = content !== undefined && w.kind(content) === T_ARRAY ? w.children(content) : undefined;
    const textOnly = texts?.every((c) => w.isObj(c) && w.members(c).names.length === 1 && w.kind(w.members(c).recs[0]!) === T_STRING && w.members(c).names[0] === 'text');
    if (plain && textOnly && id !== undefined && w.kind(id) === T_STRING && (status === undefined || w.kind(status) === T_STRING)) {
      out.bytes(L.resultOpen);
      out.bytes(quotedId(w.id(id)!));
      out.byte(COMMA);
      out.bytes(L.contentKey);
      out.bytes(L.openArr);
      let n = 0;
      for (const c of texts!) {
        const at = out.at;
        if (n > 0) out.byte(COMMA);
        if (textPart(w, w.members(c).recs[0]!)) n++;
        else out.at = at;
      }
      out.bytes(L.closeArr);
      if (w.strOf(status) === 'error') {
        out.byte(COMMA);
        out.bytes(L.isErrorTrue);
      }
      out.bytes(L.close);
      return RESULT;
    }
  }
  // Anything else: the module's translation and the reference normalizer, this block alone.
  const parts = w.n.content([converseBlock(w.value(b))], '$');
  if (parts.length === 0) return NONE;
  if (parts.length > 1) decline();
  w.emit(parts[0]);
  return isResult(parts[0]) ? RESULT : PART;
}

