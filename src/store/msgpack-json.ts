/*
 * JSON text straight from msgpack bytes: a value a record holds (a request's body) as UTF-8
 * JSON, without decoding it into JavaScript objects first.
 *
 * Why: the first miss of a proxy or createFetch on a large tape keys every recording of the
 * route (src/proxy/deck.ts, undefer()). Keying from JSON bytes is the raw path of the matcher
 * (src/match/raw-keys.ts); getting there through objects meant, per recording, msgpackr's
 * decode of the request, a check that it is JSON data, JSON.stringify and an encode of that
 * string again, and every decoded request stayed alive until the matcher was made, so the young
 * generation copied them: on a tape of 100,000 chat recordings the garbage collector's
 * scavenges alone took ~0.8 s of a ~4 s first miss.
 *
 * The text is the JSON of the value msgpackr's decode (MSGPACK_OPTIONS, src/store/tape-codec.ts)
 * gives, or there is none (undefined) and the caller decodes as before. None for what is not
 * plain JSON data there: binary, extensions (dates, maps, typed arrays), 64-bit integers (BigInt
 * there), 32-bit floats, non-finite numbers, map keys that are not strings; a key msgpackr
 * renames ("__proto__"); a map with a repeated key (msgpackr keeps one value, the text would
 * hold both); strings that are not valid UTF-8 (msgpackr would decode them leniently); nesting
 * deeper than MAX_NEST.
 */

// node:buffer's isUtf8 (native): the strings are copied as they are, so the text is valid UTF-8
// exactly when they all are. Without it, no text (the caller decodes).
const isUtf8 = ((globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:buffer') as
  | { isUtf8?: (b: Uint8Array) => boolean }
  | undefined)?.isUtf8;

/** Containers nested deeper than this are left to the decode (the keying then reports them as it always has). */
const MAX_NEST = 64;

// The transcoder's state, in module variables (it does not nest): the input, its cursor and
// end, the output and its cursor, and the key spans of the maps open now (for the repeat check).
const EMPTY = Buffer.alloc(0);
/** The output buffer's size kept between calls. */
const OUT_KEPT = 1 << 16;
let src: Buffer = EMPTY;
let p = 0;
let end = 0;
let out: Buffer = Buffer.allocUnsafe(OUT_KEPT);
let o = 0;
let keys = new Int32Array(256);
let keyTop = 0;

// Texts handed out are views of shared chunks: one small object each, no buffer of their own.
const CHUNK = 1 << 18;
let chunk: Uint8Array = new Uint8Array(0);
let chunkUsed = 0;

/**
 * The JSON text (UTF-8) of the msgpack value at `start` in `bytes` (which it must end before
 * `limit`), or undefined when it has none that equals msgpackr's decode (see the top). The
 * bytes returned are the caller's to keep.
 *
 * @example
 * jsonOfMsgpack(pack({ a: [1, 'x'] }), 0, n) // the bytes of {"a":[1,"x"]}
 */
export function jsonOfMsgpack(bytes: Buffer, start: number, limit: number): Uint8Array | undefined {
  if (isUtf8 === undefined) return undefined;
  src = bytes;
  p = start;
  end = Math.min(limit, bytes.length);
  o = 0;
  keyTop = 0;
  const done = value(0);
  const text = done ? keep(o) : undefined;
  // Neither the input (a whole tape's image, maybe) nor a large output is held past the call.
  src = EMPTY;
  if (out.length > OUT_KEPT) out = Buffer.allocUnsafe(OUT_KEPT);
  return text !== undefined && isUtf8(text) ? text : undefined;
}

/**
 * A copy of the n bytes written, in the current chunk (a large text gets a buffer of its own).
 * Views made by the constructor, not subarray(): one object less each.
 */
function keep(n: number): Uint8Array {
  const text = new Uint8Array(out.buffer, out.byteOffset, n);
  if (n > CHUNK >>> 3) return text.slice();
  if (chunkUsed + n > chunk.length) {
    chunk = new Uint8Array(CHUNK);
    chunkUsed = 0;
  }
  chunk.set(text, chunkUsed);
  const kept = new Uint8Array(chunk.buffer, chunkUsed, n);
  chunkUsed += n;
  return kept;
}

/** Makes room for n more output bytes. */
function room(n: number): void {
  if (o + n <= out.length) return;
  const grown = Buffer.allocUnsafe(Math.max(out.length * 2, o + n));
  out.copy(grown, 0, 0, o);
  out = grown;
}

/** Writes the value at p as JSON; false where it has no JSON text equal to its decode. */
function value(depth: number): boolean {
  if (p >= end) return false;
  const t = src[p]!;
  if (t <= 0x7f) return (p += 1), integer(t);
  if (t >= 0xe0) return (p += 1), integer(t - 0x100);
  if (t <= 0x8f) return (p += 1), map(t & 0x0f, depth);
  if (t <= 0x9f) return (p += 1), array(t & 0x0f, depth);
  if (t <= 0xbf || (t >= 0xd9 && t <= 0xdb)) {
    const n = stringHeader();
    return n >= 0 && string(n);
  }
  switch (t) {
    case 0xc0:
      return literal('null');
    case 0xc2:
      return literal('false');
    case 0xc3:
      return literal('true');
    case 0xcb: {
      if (p + 9 > end) return false;
      const v = src.readDoubleBE(p + 1);
      p += 9;
      if (!Number.isFinite(v)) return false;
      // Number.prototype.toString's spelling is JSON.stringify's.
      return ascii(String(v));
    }
    case 0xcc:
      return p + 2 <= end && ((p += 2), integer(src[p - 1]!));
    case 0xcd:
      return p + 3 <= end && ((p += 3), integer(src.readUInt16BE(p - 2)));
    case 0xce:
      return p + 5 <= end && ((p += 5), integer(src.readUInt32BE(p - 4)));
    case 0xd0:
      return p + 2 <= end && ((p += 2), integer(src.readInt8(p - 1)));
    case 0xd1:
      return p + 3 <= end && ((p += 3), integer(src.readInt16BE(p - 2)));
    case 0xd2:
      return p + 5 <= end && ((p += 5), integer(src.readInt32BE(p - 4)));
    case 0xdc:
      return p + 3 <= end && ((p += 3), array(src.readUInt16BE(p - 2), depth));
    case 0xdd:
      return p + 5 <= end && ((p += 5), array(src.readUInt32BE(p - 4), depth));
    case 0xde:
      return p + 3 <= end && ((p += 3), map(src.readUInt16BE(p - 2), depth));
    case 0xdf:
      return p + 5 <= end && ((p += 5), map(src.readUInt32BE(p - 4), depth));
    default:
      // Binary, extensions, 32-bit floats, 64-bit integers, 0xc1.
      return false;
  }
}

function literal(s: string): boolean {
  p += 1;
  return ascii(s);
}

function ascii(s: string): boolean {
  room(s.length);
  for (let i = 0; i < s.length; i++) out[o++] = s.charCodeAt(i);
  return true;
}

/** A 32-bit integer in decimal. */
function integer(v: number): boolean {
  room(11);
  if (v < 0) {
    out[o++] = 0x2d;
    v = -v;
  }
  if (v < 10) {
    out[o++] = 0x30 + v;
    return true;
  }
  let digits = 0;
  for (let x = v; x > 0; x = Math.floor(x / 10)) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    out[o + i] = 0x30 + (v % 10);
    v = Math.floor(v / 10);
  }
  o += digits;
  return true;
}

/** Strings of at least this many bytes are copied by Buffer.copy. */
const LONG = 128;

// JSON.stringify's escapes of the bytes below 0x20 that have a short form.
const SHORT: Record<number, number> = { 0x08: 0x62, 0x09: 0x74, 0x0a: 0x6e, 0x0c: 0x66, 0x0d: 0x72 };
const HEX = '0123456789abcdef';

/**
 * The length of the msgpack string whose header is at p (fixstr, str 8, 16 or 32), with p moved
 * to its bytes; -1 (p unmoved) when p holds no string header that fits before the end.
 */
function stringHeader(): number {
  const t = src[p]!;
  let len: number;
  let at: number;
  if (t >= 0xa0 && t <= 0xbf) (len = t & 0x1f), (at = p + 1);
  else if (t === 0xd9 && p + 2 <= end) (len = src[p + 1]!), (at = p + 2);
  else if (t === 0xda && p + 3 <= end) (len = src.readUInt16BE(p + 1)), (at = p + 3);
  else if (t === 0xdb && p + 5 <= end) (len = src.readUInt32BE(p + 1)), (at = p + 5);
  else return -1;
  p = at;
  return len;
}

/** The n bytes of a msgpack string at p, in quotes, escaped as JSON.stringify escapes them. */
function string(n: number): boolean {
  const stop = p + n;
  if (stop > end) return false;
  room(2 + 6 * n);
  out[o++] = 0x22;
  // A long string is copied whole, then checked for the bytes JSON escapes (most have none): a
  // native copy and a read-only loop cost less than copying byte by byte. A short one is copied
  // byte by byte: the native copy's call costs more than its bytes.
  if (n >= LONG) src.copy(out, o, p, stop);
  else for (let q = 0; q < n; q++) out[o + q] = src[p + q]!;
  let i = 0;
  while (i < n) {
    const b = out[o + i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) break;
    i++;
  }
  o += i;
  for (let q = p + i; q < stop; q++) {
    const b = src[q]!;
    if (b >= 0x20 && b !== 0x22 && b !== 0x5c) {
      out[o++] = b;
      continue;
    }
    out[o++] = 0x5c;
    if (b === 0x22 || b === 0x5c) out[o++] = b;
    else if (SHORT[b] !== undefined) out[o++] = SHORT[b]!;
    else {
      out[o++] = 0x75;
      out[o++] = 0x30;
      out[o++] = 0x30;
      out[o++] = HEX.charCodeAt(b >>> 4);
      out[o++] = HEX.charCodeAt(b & 15);
    }
  }
  out[o++] = 0x22;
  p = stop;
  return true;
}

function array(n: number, depth: number): boolean {
  if (depth >= MAX_NEST) return false;
  room(2);
  out[o++] = 0x5b;
  for (let i = 0; i < n; i++) {
    if (i > 0) {
      room(1);
      out[o++] = 0x2c;
    }
    if (!value(depth + 1)) return false;
  }
  room(1);
  out[o++] = 0x5d;
  return true;
}

function map(n: number, depth: number): boolean {
  if (depth >= MAX_NEST) return false;
  room(2);
  out[o++] = 0x7b;
  const base = keyTop;
  // A map of many keys checks them for repeats by a set of their bytes (as Latin-1, one
  // character a byte), a small one by comparing each with those before it.
  let seen: Set<string> | undefined;
  if (keys.length < (base + n) * 2) {
    const grown = new Int32Array(Math.max(keys.length * 2, (base + n) * 2));
    grown.set(keys);
    keys = grown;
  }
  for (let i = 0; i < n; i++) {
    if (i > 0) {
      room(1);
      out[o++] = 0x2c;
    }
    // A key is a msgpack string, neither "__proto__" nor one this map had before.
    if (p >= end) return false;
    const len = stringHeader();
    const at = p;
    if (len < 0 || at + len > end || isProto(at, len)) return false;
    if (n <= MANY_KEYS) {
      if (repeated(base, base + i, at, len)) return false;
    } else {
      const name = src.toString('latin1', at, at + len);
      if ((seen ??= new Set()).has(name)) return false;
      seen.add(name);
    }
    keys[(base + i) * 2] = at;
    keys[(base + i) * 2 + 1] = len;
    keyTop = base + i + 1;
    if (!string(len)) return false;
    room(1);
    out[o++] = 0x3a;
    if (!value(depth + 1)) return false;
  }
  keyTop = base;
  room(1);
  out[o++] = 0x7d;
  return true;
}

/** Maps of up to this many keys compare each key with the keys before it. */
const MANY_KEYS = 32;

const PROTO = '__proto__';
function isProto(at: number, len: number): boolean {
  if (len !== PROTO.length) return false;
  for (let i = 0; i < len; i++) if (src[at + i] !== PROTO.charCodeAt(i)) return false;
  return true;
}

/** Whether keys from..to-1 (of this map) include the key of `len` bytes at `at`. */
function repeated(from: number, to: number, at: number, len: number): boolean {
  for (let k = from; k < to; k++) {
    if (keys[k * 2 + 1] !== len) continue;
    const q = keys[k * 2]!;
    let i = 0;
    while (i < len && src[q + i] === src[at + i]) i++;
    if (i === len) return true;
  }
  return false;
}
