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
 * every error: a body this path cannot key is never reported from here.
 */

import { hashValue, jsonTape, pathHashes } from '../core/index.ts';
import { allFinite } from '../core/value.ts';
import { TapedeckError } from '../errors.ts';
import type { RequestDigests } from './matcher.ts';
import {
  ANTHROPIC_ARGS,
  ANTHROPIC_BLOCKS,
  MESSAGE_NOISE,
  Normalizer,
  normalizeRequest,
  OPENAI_ARGS,
  OPENAI_PARTS,
  OPENAI_ROLES,
} from './normalize.ts';
import type { NormalizeOptions, Provider } from './types.ts';

// Record layout of assembly/tape.ts.
const T_NULL = 1;
const T_NUMBER = 4;
const T_STRING = 5;
const T_ARRAY = 6;
const T_OBJECT = 7;
const F_ESCAPED = 0x100;
const F_KEY_ESCAPED = 0x200;

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
const decoder = new TextDecoder();
const hasBuffer = typeof Buffer !== 'undefined';
const lit = (s: string): Uint8Array => encoder.encode(s);

// Short strings (keys, roles, part types, call ids) repeat across bodies: decoded once, found
// again by the FNV-1a hash the index carries and a byte compare.
const shortStrings = new Map<number, { raw: Uint8Array; text: string }>();

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
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  span(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.room(n);
    if (n > 32) this.buf.set(src.subarray(start, end), this.at);
    else for (let i = 0; i < n; i++) this.buf[this.at + i] = src[start + i]!;
    this.at += n;
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

  /** A JavaScript string as UTF-8 (it is JSON text, or ASCII made here). */
  text(s: string): void {
    this.room(s.length * 3);
    this.at += encoder.encodeInto(s, this.buf.subarray(this.at)).written;
  }
}

const COMMA = 0x2c;
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
  tools: lit('],"tools":['),
  options: lit('],"options":'),
  model: lit(',"model":'),
};

const TEXT_TYPES = new Set(['text', 'input_text', 'output_text']);
// Their rules decode and hash attachment data: the reference normalizer does them (one part).
const ATTACHMENT_TYPES = new Set(['input_image', 'image', 'input_audio', 'audio', 'file', 'input_file', 'document']);
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
const SKIP_TOOL_DEF = new Set(['type', 'input_schema']);
const SKIP_ITEM = new Set(['id', 'status']);
const NO_SKIP = new Set<string>();
let skipMessage: Set<string> | undefined;

/** Members of an object record: name -> record index (a duplicate name declines). */
type Members = Map<string, number>;

class Walk {
  // The reference normalizer, for its call-id numbering (shared, so ids are numbered in document
  // order whichever path handled an element) and for elements this walk does not handle
  // natively: those are parsed on their own and normalized by it (see reference()).
  private readonly n = new Normalizer();
  private readonly memo = new Map<number, Members>();
  readonly out = new Out();

  constructor(
    private readonly src: Uint8Array,
    private readonly t: Uint32Array,
  ) {}

  kind(i: number): number {
    return this.t[i * 8]! & 0xff;
  }

  private start(i: number): number {
    return this.t[i * 8 + 1]!;
  }

  private end(i: number): number {
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
    const cached = hash !== 0 ? shortStrings.get(hash) : undefined;
    if (cached && cached.raw.length === e - s - 2) {
      let same = true;
      for (let k = 0; k < cached.raw.length; k++) {
        if (cached.raw[k] !== this.src[s + 1 + k]) {
          same = false;
          break;
        }
      }
      if (same) return cached.text;
    }
    // Non-fatal decoding, as the reference decodes the whole body (invalid UTF-8 -> U+FFFD).
    const text = decoder.decode(this.src.subarray(s + 1, e - 1));
    if (hash !== 0) {
      if (shortStrings.size > 4096) shortStrings.clear();
      shortStrings.set(hash, { raw: this.src.slice(s + 1, e - 1), text });
    }
    return text;
  }

  /** The decoded string of a string record. */
  str(i: number): string {
    const w = this.t[i * 8]!;
    return this.decodeRange(this.start(i), this.end(i), (w & F_ESCAPED) !== 0, this.t[i * 8 + 7]!);
  }

  /** The decoded key of an object member's record. */
  key(i: number): string {
    const w = this.t[i * 8]!;
    return this.decodeRange(this.t[i * 8 + 4]!, this.t[i * 8 + 5]!, (w & F_KEY_ESCAPED) !== 0, this.t[i * 8 + 6]!);
  }

  members(i: number): Members {
    let m = this.memo.get(i);
    if (m) return m;
    m = new Map();
    this.memo.set(i, m);
    const stop = this.t[i * 8 + 3]!;
    for (let c = i + 1; c < stop; c = this.t[c * 8 + 3]!) {
      const k = this.key(c);
      if (m.has(k)) decline(); // JSON.parse keeps the last; the reference path decides
      m.set(k, c);
    }
    return m;
  }

  /** The value of a JSON record as JSON.parse gives it (small values only). */
  value(i: number): unknown {
    return JSON.parse(decoder.decode(this.src.subarray(this.start(i), this.end(i))));
  }

  /** The decoded string of a string record of at most 64 bytes, else undefined. */
  shortStr(i: number): string | undefined {
    return this.end(i) - this.start(i) <= 66 ? this.str(i) : undefined;
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
  private emit(v: unknown): void {
    if (!allFinite(v, NO_SKIP)) decline();
    this.out.text(JSON.stringify(v));
  }

  /** One part through the reference: false if it is no part. */
  private referencePart(p: number): boolean {
    const parts = this.n.content(this.value(p), '$');
    if (parts.length === 0) return false;
    this.emit(parts[0]);
    return true;
  }

  /**
   * The reference's rest(): the members of `obj` the output does not have yet, minus skipped
   * ones, cache_control and empty values. `have` is updated, as `out` is in the reference.
   */
  rest(obj: Members, have: Set<string>, skip: ReadonlySet<string>): void {
    for (const [k, c] of obj) {
      if (have.has(k) || INHERITED(k) || k === 'cache_control' || skip.has(k) || this.empty(c)) continue;
      this.sep();
      this.member(c);
      have.add(k);
    }
  }

  // --- content

  /** Writes the parts of `v` (comma-separated); returns how many. */
  content(v: number | undefined): number {
    if (v === undefined || this.kind(v) === T_NULL) return 0;
    let n = 0;
    const parts = this.kind(v) === T_ARRAY ? this.children(v) : [v];
    for (const p of parts) {
      const mark = this.out.at;
      if (n > 0) this.out.byte(COMMA);
      if (this.part(p)) n++;
      else this.out.at = mark;
    }
    return n;
  }

  /** One part; false if it is no part (empty text). */
  private part(p: number): boolean {
    const k = this.kind(p);
    if (k === T_STRING) {
      if (this.end(p) - this.start(p) === 2) return false;
      this.out.bytes(L.open);
      this.out.bytes(L.type);
      this.out.bytes(L.text);
      this.out.byte(COMMA);
      this.out.bytes(L.textKey);
      this.raw(p);
      this.out.bytes(L.close);
      return true;
    }
    if (k !== T_OBJECT) {
      this.raw(p);
      return true;
    }
    const m = this.members(p);
    const typeNode = m.get('type');
    const type = this.strOf(typeNode);
    if (type !== undefined && TEXT_TYPES.has(type)) {
      const text = m.get('text');
      if (text !== undefined && this.kind(text) === T_STRING && this.end(text) - this.start(text) === 2) return false;
      this.out.bytes(L.open);
      this.out.bytes(L.type);
      this.out.bytes(L.text);
      if (text !== undefined) {
        this.out.byte(COMMA);
        this.out.bytes(L.textKey);
        this.raw(text);
      }
      this.rest(m, new Set(['type', 'text']), SKIP_TYPE);
      this.out.bytes(L.close);
      return true;
    }
    if (type !== undefined && ATTACHMENT_TYPES.has(type)) return this.referencePart(p);
    if (type === 'image_url' && !this.plainImageUrl(m)) return this.referencePart(p);
    this.out.bytes(L.open);
    switch (type) {
      case 'image_url':
        this.imageUrl(m);
        break;
      case 'tool_use':
      case 'tool_call': {
        const have = new Set(['type']);
        this.out.bytes(L.type);
        this.out.bytes(L.tool_call);
        this.putId(have, 'id', L.idKey, this.id(m.get('id')));
        this.putRaw(have, 'name', L.nameKey, m.get('name'));
        if (type === 'tool_use') {
          const input = m.get('input');
          this.setArguments(have, input === undefined || this.kind(input) === T_NULL ? undefined : input);
        } else {
          this.putRaw(have, 'arguments', L.argumentsKey, m.get('arguments'));
          this.putRaw(have, 'argumentsText', L.argumentsTextKey, m.get('argumentsText'));
        }
        this.rest(m, have, SKIP_TOOL_USE);
        break;
      }
      case 'tool_result': {
        const have = new Set(['type', 'content']);
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
          have.add('is_error');
        }
        this.rest(m, have, SKIP_RESULT);
        break;
      }
      case 'thinking': {
        this.out.bytes(L.type);
        this.out.bytes(L.thinking);
        this.putRaw(new Set(), 'thinking', L.thinkingKey, m.get('thinking'));
        this.rest(m, new Set(['type', 'thinking']), SKIP_THINKING);
        break;
      }
      case 'function_call': {
        this.out.bytes(L.type);
        this.out.bytes(L.function_call);
        this.putRaw(new Set(), 'name', L.nameKey, m.get('name'));
        this.putRaw(new Set(), 'arguments', L.argumentsKey, m.get('arguments'));
        this.rest(m, new Set(['type', 'name', 'arguments']), SKIP_TYPE);
        break;
      }
      default:
        this.other(m, type ?? '');
    }
    this.out.bytes(L.close);
    return true;
  }

  /** Writes `,"key":value` for a member the reference puts with put(out, k, copy(v)). */
  private putRaw(have: Set<string>, name: string, key: Uint8Array, v: number | undefined): void {
    if (v === undefined) return;
    this.sep();
    this.out.bytes(key);
    this.raw(v);
    have.add(name);
  }

  private putId(have: Set<string>, name: string, key: Uint8Array, id: string | undefined): void {
    if (id === undefined) return;
    this.sep();
    this.out.bytes(key);
    this.out.text(`"${id}"`);
    have.add(name);
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
    const have = new Set(['type', 'image']);
    this.out.bytes(L.type);
    this.out.bytes(L.image);
    let url: number | undefined = iu;
    let inner: Members | undefined;
    if (this.isObj(iu)) {
      inner = this.members(iu);
      url = inner.get('url');
    }
    if (url !== undefined) {
      if (this.kind(url) === T_STRING) {
        this.out.byte(COMMA);
        this.out.bytes(L.imageKey);
        this.out.bytes(URL_LIKE.test(this.str(url)) ? L.urlKey : L.pathKey);
        this.raw(url);
        this.out.bytes(L.close);
      } else {
        this.out.byte(COMMA);
        this.out.bytes(L.imageKey);
        this.raw(url);
      }
    }
    if (inner) this.rest(inner, have, SKIP_IMAGE_URL);
    this.rest(m, have, SKIP_IMAGE_PART);
  }

  /** A part or item of another type: the reference's other(). */
  private other(m: Members, type: string): void {
    const have = new Set<string>();
    const put = (name: string, id: string | undefined) => {
      if (id === undefined) return;
      this.sep();
      this.out.text(`"${name}":"${id}"`);
      have.add(name);
    };
    for (const k of OTHER_ID_KEYS) put(k, this.id(m.get(k)));
    if (CALL_TYPE.test(type)) put('id', this.id(m.get('id')));
    this.rest(m, have, NO_SKIP);
  }

  /** The reference's setArguments() for the arguments record v (absent or null: nothing). */
  private setArguments(have: Set<string>, v: number | undefined): void {
    if (v === undefined || this.kind(v) === T_NULL) return;
    if (this.kind(v) !== T_STRING) {
      this.putRaw(have, 'arguments', L.argumentsKey, v);
      return;
    }
    const text = this.str(v);
    if (!text.isWellFormed()) decline(); // no UTF-8 form to copy; the reference decides
    let ok = true;
    try {
      JSON.parse(text);
    } catch {
      ok = false;
    }
    this.sep();
    if (ok) {
      // JSON text as the value: the core parses and canonicalizes it (strictly: text that only
      // JSON.parse accepts, with duplicate names or lone surrogates, fails there and declines).
      this.out.bytes(L.argumentsKey);
      this.out.text(text);
      have.add('arguments');
    } else {
      this.out.bytes(L.argumentsTextKey);
      this.raw(v);
      have.add('argumentsText');
    }
  }

  private toolCall(c: number): void {
    if (this.kind(c) !== T_OBJECT) {
      this.raw(c);
      return;
    }
    const m = this.members(c);
    const have = new Set(['type']);
    this.out.bytes(L.open);
    this.out.bytes(L.type);
    this.out.bytes(L.tool_call);
    this.putId(have, 'id', L.idKey, this.id(m.get('id')));
    const type = m.get('type');
    if (type === undefined || this.strOf(type) === 'function') {
      const f = m.get('function');
      const fm = this.isObj(f) ? this.members(f) : new Map<string, number>();
      this.putRaw(have, 'name', L.nameKey, fm.get('name'));
      this.setArguments(have, fm.get('arguments'));
    } else {
      this.putRaw(have, 'kind', L.kindKey, type);
      this.rest(m, have, SKIP_CALL);
    }
    this.out.bytes(L.close);
  }

  /** One message (or Responses item) of the conversation. */
  message(i: number): void {
    if (this.kind(i) !== T_OBJECT) decline(); // the reference throws E_REQUEST
    const m = this.members(i);
    const type = m.get('type');
    if (!m.has('role') && type !== undefined && this.kind(type) === T_STRING && this.str(type) !== 'message') {
      const t = this.str(type);
      if (t === 'function_call' || t === 'function_call_output') this.item(m, t);
      else this.emit(this.n.message(this.value(i), '$')); // item_reference, server items
      return;
    }
    const have = new Set(['content']);
    this.out.bytes(L.open);
    const role = m.get('role');
    if (role !== undefined) {
      this.out.bytes(L.roleKey);
      this.raw(role);
      this.out.byte(COMMA);
      have.add('role');
    }
    const tc = m.get('tool_call_id');
    const resultId = tc === undefined || this.kind(tc) === T_NULL ? undefined : this.id(tc);
    this.out.bytes(L.contentKey);
    this.out.bytes(L.openArr);
    if (resultId !== undefined) {
      this.out.bytes(L.resultOpen);
      this.out.text(`"${resultId}"`);
      this.out.byte(COMMA);
      this.out.bytes(L.contentKey);
      this.out.bytes(L.openArr);
    }
    let n = this.content(m.get('content'));
    const calls = m.get('tool_calls');
    if (calls !== undefined && this.kind(calls) === T_ARRAY) {
      for (const c of this.children(calls)) {
        if (n++ > 0) this.out.byte(COMMA);
        this.toolCall(c);
      }
    }
    const fc = m.get('function_call');
    if (this.isObj(fc)) {
      const fm = this.members(fc);
      if (n++ > 0) this.out.byte(COMMA);
      this.out.bytes(L.open);
      this.out.bytes(L.type);
      this.out.bytes(L.function_call);
      const have2 = new Set(['type']);
      this.putRaw(have2, 'name', L.nameKey, fm.get('name'));
      this.setArguments(have2, fm.get('arguments'));
      this.out.bytes(L.close);
    }
    if (resultId !== undefined) this.out.bytes(L.closeArr), this.out.bytes(L.close);
    this.out.bytes(L.closeArr);
    skipMessage ??= new Set(['type', 'tool_calls', 'function_call', 'tool_call_id', ...MESSAGE_NOISE]);
    this.rest(m, have, skipMessage);
    this.out.bytes(L.close);
  }

  /** OpenAI Responses input items other than messages: the reference's item(). */
  private item(m: Members, type: 'function_call' | 'function_call_output'): void {
    switch (type) {
      case 'function_call': {
        this.out.bytes(L.assistantMessage);
        this.out.bytes(L.open);
        this.out.bytes(L.type);
        this.out.bytes(L.tool_call);
        const have = new Set(['type']);
        this.putId(have, 'id', L.idKey, this.id(m.get('call_id')));
        this.putRaw(have, 'name', L.nameKey, m.get('name'));
        this.setArguments(have, m.get('arguments'));
        this.out.bytes(L.close);
        break;
      }
      case 'function_call_output': {
        this.out.bytes(L.toolMessage);
        this.out.bytes(L.open);
        this.out.bytes(L.type);
        this.out.bytes(L.tool_result);
        this.putId(new Set(), 'id', L.idKey, this.id(m.get('call_id')));
        this.out.byte(COMMA);
        this.out.bytes(L.contentKey);
        this.out.bytes(L.openArr);
        this.content(m.get('output'));
        this.out.bytes(L.closeArr);
        this.out.bytes(L.close);
        break;
      }
    }
    this.out.bytes(L.closeArr);
    this.out.bytes(L.close);
  }

  /** One tool definition into its own chunk; returns its name as the reference sorts it. */
  tool(i: number, legacy: boolean): string | undefined {
    if (this.kind(i) !== T_OBJECT) {
      this.raw(i);
      return undefined;
    }
    const m = this.members(i);
    const type = m.get('type');
    const typeStr = this.strOf(type);
    const have = new Set<string>();
    if (legacy) have.add('legacy'); // `out.legacy = true` wins over a copied member
    this.out.bytes(L.open);
    let name: number | undefined;
    const f = m.get('function');
    if (typeStr === 'function' && this.isObj(f)) {
      name = this.toolDef(this.members(f), have);
      if (!have.has('name') && !this.empty(m.get('name'))) name = m.get('name'); // copied by rest() below
      this.rest(m, have, SKIP_TOOL);
    } else if (type === undefined || typeStr === 'function' || (typeStr === 'custom' && m.has('input_schema'))) {
      name = this.toolDef(m, have);
    } else {
      this.rest(m, have, NO_SKIP);
      name = have.has('name') ? m.get('name') : undefined;
    }
    if (legacy) {
      this.sep();
      this.out.bytes(L.legacyTrue);
    }
    this.out.bytes(L.close);
    return name !== undefined && this.kind(name) === T_STRING ? this.str(name) : undefined;
  }

  /** The reference's toolDef(); returns the record of the name it kept. */
  private toolDef(f: Members, have: Set<string>): number | undefined {
    const name = f.get('name');
    this.putRaw(have, 'name', L.nameKey, name);
    const description = f.get('description');
    if (!this.empty(description)) this.putRaw(have, 'description', L.descriptionKey, description);
    const p = f.get('parameters');
    const params = p === undefined || this.kind(p) === T_NULL ? f.get('input_schema') : p;
    if (!this.empty(params)) this.putRaw(have, 'parameters', L.parametersKey, params);
    this.rest(f, have, SKIP_TOOL_DEF);
    return have.has('name') ? name : undefined;
  }
}

const PROVIDERS: readonly Provider[] = ['openai-chat', 'openai-responses', 'anthropic', 'generic'];
// Members that hold the conversation and tools, per shape (normalize.ts LAYOUT); the rest of
// the top level is model, options and context, normalized by the reference itself.
const CONVERSATION: Record<Provider, readonly string[]> = {
  'openai-chat': ['messages', 'system', 'tools', 'functions'],
  anthropic: ['messages', 'system', 'tools', 'functions'],
  generic: ['messages', 'system', 'tools', 'functions'],
  'openai-responses': ['input', 'instructions', 'tools', 'functions'],
};

/**
 * detectProvider() of normalize.ts on the index (same rules, same order; the differential tests
 * hold the two together). Materializing what it reads as objects cost more than the rest of
 * the walk.
 */
function detect(w: Walk, root: Members): Provider {
  const messages = root.get('messages');
  if (messages === undefined) {
    if (root.has('input') || root.has('instructions') || root.has('previous_response_id')) return 'openai-responses';
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

/**
 * Request digests of a raw body (UTF-8 bytes or JSON text), identical to requestKeys()'s, or
 * undefined when this path leaves the body to requestKeys(): a backend without the structural
 * index (the TypeScript engine), volatileKeys, attachments with data, uncommon part and item
 * types, bodies with errors.
 *
 * @example
 * rawRequestDigests(bytes) ?? requestKeys(bytes) // same digests either way
 */
export function rawRequestDigests(request: Uint8Array | string, opts: NormalizeOptions = {}): RequestDigests | undefined {
  if (opts === null || typeof opts !== 'object') return undefined;
  if (opts.volatileKeys !== undefined && (!Array.isArray(opts.volatileKeys) || opts.volatileKeys.length > 0)) return undefined;
  if (opts.provider !== undefined && !PROVIDERS.includes(opts.provider)) return undefined;
  const ignoreArgs = opts.ignoreArgs ?? [];
  if (!Array.isArray(ignoreArgs) || ignoreArgs.some((k) => typeof k !== 'string')) return undefined;
  let bytes: Uint8Array;
  if (typeof request === 'string') {
    if (!request.isWellFormed()) return undefined;
    bytes = encoder.encode(request);
  } else {
    bytes = request;
  }
  const tape = jsonTape(bytes);
  if (tape === undefined || tape.length === 0 || (tape[0]! & 0xff) !== T_OBJECT) return undefined;
  try {
    return digests(new Walk(bytes, tape), opts, ignoreArgs);
  } catch (e) {
    if (e === DECLINE || e instanceof TapedeckError || e instanceof SyntaxError) return undefined;
    throw e;
  }
}

function digests(w: Walk, opts: NormalizeOptions, ignoreArgs: readonly string[]): RequestDigests {
  const root = w.members(0);
  const provider = opts.provider ?? detect(w, root);
  const layout = CONVERSATION[provider];
  const ignore = new Set(ignoreArgs);
  if (layout.some((k) => ignore.has(k)) || ignore.has('model') || ignore.has('context')) decline();

  // Model, options and context: the reference on the top level without the conversation.
  const top: Record<string, unknown> = {};
  for (const [k, c] of root) {
    if (layout.includes(k)) continue;
    set(top, k, w.value(c));
  }
  if (provider !== 'openai-responses') top.messages = [];
  const small = normalizeRequest(top, { provider, ignoreArgs });
  const view = small.view;
  if (!allFinite(view.options, new Set()) || !allFinite(view.model, new Set())) decline();

  const out = w.out;
  out.bytes(L.view);
  let count = 0;
  const responses = provider === 'openai-responses';
  const system = root.get(responses ? 'instructions' : 'system');
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
  let items: number[];
  if (list === undefined || w.kind(list) === T_NULL) {
    if (!responses) decline();
    items = [];
  } else if (w.kind(list) === T_ARRAY) {
    items = w.children(list);
  } else if (responses && w.kind(list) === T_STRING) {
    if (count > 0) out.byte(COMMA);
    out.bytes(L.userMessage);
    w.content(list);
    out.bytes(L.closeArr);
    out.bytes(L.close);
    count++;
    items = [];
  } else {
    decline();
  }
  for (const m of items) {
    if (count++ > 0) out.byte(COMMA);
    w.message(m);
  }

  // Tools: each written as a chunk, then the chunks in the reference's order (by name).
  const chunks: { name: string | undefined; start: number; end: number }[] = [];
  for (const [name, legacy] of [['tools', false], ['functions', true]] as const) {
    const t = root.get(name);
    if (t === undefined || w.kind(t) === T_NULL) continue;
    if (w.kind(t) !== T_ARRAY) decline();
    for (const c of w.children(t)) {
      const start = out.at;
      const toolName = w.tool(c, legacy);
      chunks.push({ name: toolName, start, end: out.at });
    }
  }
  const sortName = (c: (typeof chunks)[number]): string => c.name ?? '';
  const sorted = [...chunks].sort((a, b) => (sortName(a) < sortName(b) ? -1 : sortName(a) > sortName(b) ? 1 : 0));
  // Equal names sort by canonical bytes in the reference: left to it.
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
  out.bytes(L.options);
  out.text(JSON.stringify(view.options));
  if (view.model !== undefined) {
    out.bytes(L.model);
    out.text(JSON.stringify(view.model));
  }
  out.bytes(L.close);

  const paths = pathHashes(out.buf.subarray(0, out.at), { member: 'messages' });
  const toolNames = [...new Set(chunks.flatMap((c) => (c.name === undefined ? [] : [c.name])))].sort();
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
