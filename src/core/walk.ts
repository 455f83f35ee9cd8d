// A JavaScript value's JSON text written straight into the core's memory by a walk of the value,
// instead of JSON.stringify followed by a copy of its string into memory.
//
// JSON.stringify spends most of its time on strings: it scans each for characters to escape and
// copies it into a result that is then copied again, and transcoded to UTF-8, on its way into
// memory. This walk copies each string once, as its UTF-16 units (a memcpy for V8's strings), in
// a frame the core reads (F_STRINGIFIED in assembly/json.ts): the core escapes and encodes it in
// the pass over the text that copies it anyway. Measured on the 1,000-message list of the L
// workload: JSON.stringify 1.4-1.6 ms and the write of its text into memory 0.25 ms, this walk
// 0.45-0.6 ms.
//
// The walk writes what JSON.stringify writes, for the values it takes: plain objects and arrays
// of strings, finite numbers, booleans and null, members whose value is undefined, a function or
// a symbol left out and array items of those written as null. Anything else (toJSON, other
// prototypes such as Date, Map or class instances, boxed primitives, BigInt, NaN and Infinity,
// nesting deeper than MAX_DEPTH, which includes cycles) makes it give up (DECLINED), and the
// caller takes the JSON.stringify path, which handles and reports those as it always has. A
// value it gave up on has had its getters called once already; JSON.stringify calls them again.

import { MAX_DEPTH } from '../errors.ts';

/**
 * What of Node's Buffer the walk writes with, spelt out: a Buffer is one, and these declarations
 * reach a page's build, whose project may have no Node types.
 */
export interface NodeBytes extends Uint8Array {
  write(s: string, at: number, encoding: 'utf8' | 'utf16le'): number;
}

/**
 * The engine's memory as the walk writes into it. `end` is how far the input may reach now;
 * grow(end) makes room for an input reaching `end` (re-making `buf` and `u8`, which memory growth
 * detaches) and returns the new limit, or -1 when the input would be too large for this path.
 */
export interface Room {
  buf: NodeBytes;
  u8: Uint8Array;
  end: number;
  grow(end: number): number;
}

/** Thrown (and caught by the caller) when the value needs the JSON.stringify path. */
export const DECLINED: unique symbol = Symbol('declined');

/**
 * A JavaScript value whose JSON text an engine writes itself (see writeValueText), or declines
 * to. Internal to src/core.
 */
export class ValueText {
  constructor(readonly value: unknown) {}

  /** JSON.stringify's text of the value (for engines that read text only). */
  text(): string {
    return JSON.stringify(this.value) ?? '';
  }
}

/** Strings up to this many units are tried as printable ASCII, written byte by byte here. */
const SHORT = 24;
/**
 * Room made before each value for what it writes without a check of its own: "false", a number,
 * a short string in quotes (SHORT + 2), an opening bracket.
 */
const SLACK = 32;
const FRAME = 0x01;

// plain() reads units through the function itself, not s.charCodeAt(i): that reads charCodeAt
// from each string, and member names and values, one byte or two a unit, flat or made by +, are
// strings of different shapes to V8; once the read has seen too many it is probably compiled as
// a generic lookup. Measured on L-intl: the walk took ~1.5x its time in about half of the
// processes (pathHashes 2.22-2.26x the floor there, 2.06-2.10x in the others); through the
// function, 2.02-2.09x in all of them.
const charCodeAt = String.prototype.charCodeAt;

const isRawJSON = (JSON as { isRawJSON?: (v: unknown) => boolean }).isRawJSON;

// Buffer's own UTF-16 writer, under write(s, at, 'utf16le'), where the runtime has it: the
// wrapper's argument handling cost 8-20% of the walk (L 0.59 -> 0.54 ms, SMALL10K-path 2.9 ->
// 2.4 ms).
type Ucs2Buffer = NodeBytes & { ucs2Write(s: string, at: number): number };
const UCS2 = typeof Buffer !== 'undefined' && typeof (Buffer.prototype as Partial<Ucs2Buffer>).ucs2Write === 'function';

// The walk's state, in module variables: cheaper to reach than fields of an object. `var`, not
// `let`: a function reaching a module's `let` checks on each use that it was initialised
// (SMALL10K's walk 5-10% faster with var).
var room: Room | undefined;
var buf: NodeBytes;
var u8: Uint8Array;
var pos = 0;
var end = 0;

/**
 * Writes the JSON text of `value` at `at` in the room; returns its length in bytes. Throws
 * DECLINED for values that take the JSON.stringify path (see the top), and whatever the value's
 * getters throw.
 */
export function writeValueText(value: unknown, r: Room, at: number): number {
  // Walks do not nest (a getter hashing a value on another engine): the state is one.
  if (room !== undefined) throw DECLINED;
  room = r;
  buf = r.buf;
  u8 = r.u8;
  end = r.end;
  pos = at;
  try {
    // Objects' members are read with for-in (15-20% faster than Object.keys: no array of names
    // per object), which also yields enumerable members inherited from Object.prototype, the
    // only prototype an object the walk takes may have: so there must be none.
    for (const _ in Object.prototype) throw DECLINED;
    switch (typeof value) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'object':
        need(SLACK);
        item(value, 0);
        return pos - at;
      default:
        throw DECLINED;
    }
  } finally {
    room = undefined;
  }
}

/** Makes room for n more bytes. */
function need(n: number): void {
  if (pos + n <= end) return;
  end = room!.grow(pos + n);
  if (end < 0) throw DECLINED;
  buf = room!.buf;
  u8 = room!.u8;
}

/**
 * A value that is not undefined, a function or a symbol; `depth` containers are open. The caller
 * made SLACK bytes of room.
 */
function item(v: unknown, depth: number): void {
  switch (typeof v) {
    case 'string':
      string(v);
      return;
    case 'number':
      if (!Number.isFinite(v)) throw DECLINED; // JSON.stringify writes null; the other path reports it
      // Number.prototype.toString's spelling, which is JSON.stringify's and RFC 8785's.
      ascii(String(v));
      return;
    case 'boolean':
      ascii(v ? 'true' : 'false');
      return;
    case 'object':
      if (v === null) {
        ascii('null');
        return;
      }
      if (depth >= MAX_DEPTH) throw DECLINED;
      if (Array.isArray(v)) array(v, depth + 1);
      else object(v, depth + 1);
      return;
    default:
      throw DECLINED; // bigint
  }
}

/** A literal or a number's text, ASCII. */
function ascii(s: string): void {
  for (let i = 0; i < s.length; i++) u8[pos + i] = s.charCodeAt(i);
  pos += s.length;
}

/** Values JSON.stringify leaves out of an object and writes as null in an array. */
const dropped = (x: unknown): boolean => x === undefined || typeof x === 'function' || typeof x === 'symbol';

/**
 * A string value: short printable ASCII with nothing to escape as itself in quotes, anything
 * else in a frame of UTF-16 units (see F_STRINGIFIED in assembly/json.ts).
 */
function string(s: string): void {
  const n = s.length;
  if (n <= SHORT && plain(s, n)) return; // in the caller's SLACK
  need(6 + 2 * n);
  // The units go at an even address: Node writes UTF-16 to an odd one by writing it one unit
  // aside and moving it back (SMALL10K's 10,000 strings: 1.0 -> 0.67 ms). A space before the
  // frame, which the core skips as it skips any whitespace before a value, makes it even.
  if ((pos & 1) === 0) u8[pos++] = 0x20;
  u8[pos] = FRAME;
  u8[pos + 1] = n;
  u8[pos + 2] = n >>> 8;
  u8[pos + 3] = n >>> 16;
  u8[pos + 4] = n >>> 24;
  if (UCS2) (buf as Ucs2Buffer).ucs2Write(s, pos + 5);
  else buf.write(s, pos + 5, 'utf16le');
  pos += 5 + 2 * n;
}

/**
 * Writes s in quotes if it is printable ASCII without '"' or '\'; else writes nothing. The caller
 * made room for n + 2 bytes.
 */
function plain(s: string, n: number): boolean {
  // The memory in a local and one range test for the unprintable: SMALL10K's walk 2-3% faster.
  const a = u8;
  const p = pos + 1;
  for (let i = 0; i < n; i++) {
    const c = charCodeAt.call(s, i);
    if ((c - 0x20) >>> 0 >= 0x5f || c === 0x22 || c === 0x5c) return false;
    a[p + i] = c;
  }
  a[p - 1] = 0x22;
  a[p + n] = 0x22;
  pos = p + n + 1;
  return true;
}

/** A member name, always in JSON's own spelling (the core sorts names by their decoded bytes). */
function key(k: string): void {
  const n = k.length;
  if (plain(k, n)) return; // in the caller's room
  // Escaped as JSON.stringify escapes it: a lone surrogate becomes \udXXX, which the core rejects
  // as it rejects it in JSON.stringify's text, for the caller to report with a path.
  const j = JSON.stringify(k);
  need(3 * j.length + 1 + SLACK); // and the colon and the value's SLACK after it
  pos += buf.write(j, pos, 'utf8');
}

function array(a: readonly unknown[], depth: number): void {
  if (typeof (a as { toJSON?: unknown }).toJSON === 'function') throw DECLINED;
  u8[pos++] = 0x5b;
  const n = a.length;
  for (let i = 0; i < n; i++) {
    need(1 + SLACK);
    if (i > 0) u8[pos++] = 0x2c;
    const x = a[i];
    if (dropped(x)) ascii('null');
    else item(x, depth);
  }
  need(1);
  u8[pos++] = 0x5d;
}

function object(o: object, depth: number): void {
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && (proto !== null || isRawJSON?.(o) === true)) throw DECLINED;
  if (typeof (o as { toJSON?: unknown }).toJSON === 'function') throw DECLINED;
  u8[pos++] = 0x7b;
  let first = true;
  for (const k in o) {
    const x = (o as Record<string, unknown>)[k];
    if (dropped(x)) continue;
    // One check for the comma, the name in quotes, the colon and the value's SLACK (a check per
    // piece: L-intl's walk ~5% slower).
    need(k.length + 4 + SLACK);
    if (!first) u8[pos++] = 0x2c;
    first = false;
    key(k);
    u8[pos++] = 0x3a;
    // A string straight to string(), not through item()'s switch: SMALL10K's walk ~4% faster.
    if (typeof x === 'string') string(x);
    else item(x, depth);
  }
  need(1);
  u8[pos++] = 0x7d;
}
