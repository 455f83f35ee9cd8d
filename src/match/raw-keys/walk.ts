// The walk over the core's structural index of a body (assembly/tape.ts: one record per value,
// byte ranges only): records, member tables, decoded strings, and the output primitives every
// provider's walk writes its view with. A walk that meets what it does not handle declines
// (decline()): the caller leaves the body to the reference path.

import { allFinite } from '../../core/value.ts';
import { Normalizer } from '../../providers/normalize.ts';
import { COMMA, decoder, Out } from './out.ts';

// Record layout of assembly/tape.ts.
export const T_NULL = 1;
export const T_TRUE = 3;
export const T_NUMBER = 4;
export const T_STRING = 5;
export const T_ARRAY = 6;
export const T_OBJECT = 7;
const F_ESCAPED = 0x100;
export const F_KEY_ESCAPED = 0x200;
export const F_CHECK_KEYS = 0x400;

// `o[k] = v` would set the prototype for k === '__proto__' (JSON.parse makes it a member).
export function set(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/** Thrown inside the walk for anything left to the reference path. */
export const DECLINE = Symbol('decline');

export function decline(): never {
  throw DECLINE;
}

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
export function unescapedText(src: Uint8Array, s: number, e: number, hash: number): string {
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

// What writing one part gave: nothing (no part), a part, or a tool result (which splits a user
// message in the reference's splitToolResults()).
export const NONE = 0;
export const PART = 1;
export const RESULT = 2;
export const isResult = (p: unknown): boolean => p !== null && typeof p === 'object' && (p as { type?: unknown }).type === 'tool_result';
/**
 * Whether k names a member of Object.prototype (`__proto__`, `constructor`, ...). rest() copies
 * such members like any other (the reference's rest() looks at `out`'s own members only); a
 * walk that builds JavaScript objects from member names may still decline them (converse.ts).
 */
export const INHERITED = (k: string): boolean => k in Object.prototype;
export const NO_SKIP = new Set<string>();

/**
 * Members of an object record: name -> record index (a duplicate name declines). Two parallel
 * arrays searched linearly: request objects have a handful of members, and a Map per object
 * (made for every message, part, call and tool) was the walk's largest single cost in the
 * profile of the M chat body. Objects with many members get a Map index as well.
 */
export class Members {
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
export const NO_MEMBERS = new Members();

export class Walk {
  // The reference normalizer, for its call-id numbering (shared, so ids are numbered in document
  // order whichever path handled an element) and for elements this walk does not handle
  // natively: those are parsed on their own and normalized by it (see ChatWalk's referencePart()).
  readonly n = new Normalizer();
  // Members by record index (filled as objects are first looked at).
  private readonly memo: (Members | undefined)[];
  readonly out = new Out();

  constructor(
    readonly src: Uint8Array,
    readonly t: Uint32Array,
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
   * The positional name of a result's reference to a call (the reference's Ids.ref()), or
   * undefined for absent/null. A reference whose call is not in the body keeps its id as given
   * in the reference's second pass, which this walk does not make: see noDangling().
   */
  ref(i: number | undefined): string | undefined {
    if (i === undefined || this.kind(i) === T_NULL) return undefined;
    return this.n.ids.ref(this.kind(i) === T_STRING ? this.str(i) : this.value(i)) as string;
  }

  /** Declines a body with a dangling result id (Ids.dangling()): the reference keys it. */
  noDangling(): void {
    if (this.n.ids.dangling() !== undefined) decline();
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

  /**
   * The reference's rest(): the members of `obj` the output does not have yet, minus skipped
   * ones, cache_control and empty values. `have` is updated, as `out` is in the reference.
   */
  rest(obj: Members, have: string[], skip: ReadonlySet<string>): void {
    const names = obj.names;
    for (let i = 0; i < names.length; i++) {
      const k = names[i]!;
      const c = obj.recs[i]!;
      if (have.includes(k) || k === 'cache_control' || skip.has(k) || this.empty(c)) continue;
      this.sep();
      this.member(c);
      have.push(k);
    }
  }
}
