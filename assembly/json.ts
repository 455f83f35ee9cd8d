// A validating JSON reader (RFC 8259) that writes RFC 8785 (JCS) canonical bytes in one pass.
//
// Why one pass and no tree: the writer emits each value as soon as it is read, so the only extra
// work is for objects whose members arrive out of order. Their member chunks are already
// canonical in the output; we sort small member records and move the chunks once. Memory is a
// few flat regions laid out by `layout()`, never an allocation per value.
//
// The reader is iterative with an explicit container stack, so nesting depth is a checked limit
// (MAX_DEPTH) rather than a wasm stack overflow.

import { escapedBytes, escapeLetters } from "./escape";
import { writeCanonicalNumber } from "./number";
import { encode16, encodeEscaped16, encodePairsEscaped16, encodeWide, ensurePack, stepBytes, wholeStep } from "./utf16";

// Status codes, mirrored by src/core/errors.ts. Stable: they reach users as TapedeckError codes.
export const ERR_JSON: i32 = 1;
export const ERR_UTF8: i32 = 2;
export const ERR_SURROGATE: i32 = 3;
export const ERR_DUPLICATE: i32 = 4;
export const ERR_NON_FINITE: i32 = 5;
export const ERR_DEPTH: i32 = 6;
export const ERR_NOT_ARRAY: i32 = 7;
export const ERR_MEMORY: i32 = 8;

// Details for ERR_JSON, so the message can say what was expected.
export const D_END: i32 = 1; // input ended inside a value
export const D_VALUE: i32 = 2; // expected a value
export const D_ARRAY_SEP: i32 = 3; // expected ',' or ']'
export const D_OBJECT_SEP: i32 = 4; // expected ',' or '}'
export const D_COLON: i32 = 5; // expected ':'
export const D_KEY: i32 = 6; // expected a string key
export const D_ESCAPE: i32 = 7; // invalid escape sequence
export const D_CONTROL: i32 = 8; // raw control character in a string
export const D_NUMBER: i32 = 9; // malformed number
export const D_LITERAL: i32 = 10; // malformed true/false/null
export const D_TRAILING: i32 = 11; // data after the top-level value

export const MAX_DEPTH: i32 = 512;

// Flags for run().
export const F_ELEMENTS: i32 = 1; // top level must be an array; record each element's canonical span
// Top level must be an object; record the element spans of the array that is the value of the
// member named by the entry after the ignore keys (e.g. a request view's "messages"), so one
// call yields the whole digest and the per-message digests.
export const F_MEMBER: i32 = 2;
// Ignore keys drop members of the root object only (a request's top-level arguments), not
// members of the same name deeper down (a tool schema property called "user").
export const F_ROOT_IGNORE: i32 = 4;
// The input is known to be valid UTF-8 (the loader wrote it from a well-formed JavaScript
// string), so the string scanner need not stop at bytes >= 0x80 to validate them: non-ASCII
// text then moves 16 (SIMD) or 8 (SWAR) bytes at a time like ASCII.
export const F_TRUSTED_UTF8: i32 = 8;
// The input is JSON.stringify's output (the JavaScript-value path). RFC 8785 writes strings and
// numbers exactly as ECMAScript's JSON.stringify does, so such text already has canonical
// escapes and number spellings: they are copied as they are instead of decoded and re-encoded
// (only member order can differ). The one escape JSON.stringify writes that I-JSON forbids is a
// lone surrogate (`\udXXX`), which is still rejected. Implies F_TRUSTED_UTF8. Raw bytes from a
// client never get this flag.
//
// Such text may also hold string values in the loader's own frame (src/core/walk.ts writes
// them so): byte 0x01, the string's length in UTF-16 units (u32, little-endian), then its units
// as they are in memory (UTF-16LE), unescaped. A JavaScript string is copied into memory that
// way at memcpy speed, with no escaping or UTF-8 encoding in JavaScript; writeFramed() escapes
// and encodes it here, in the one pass over the text that copies it anyway. 0x01 cannot start
// a JSON value, so frames and JSON strings are told apart by their first byte. Only the builds
// for Node read frames (assembly/node.ts defines VALUE_FRAMES): the loader writes them with
// Buffer, which a page has not.
export const F_STRINGIFIED: i32 = 16;
const FRAME: u32 = 0x01;

const FRAME_SIZE: usize = 16; // kind u32, recStart u32, contentStart u32, curRec u32
const REC_SIZE: usize = 20; // keyPtr, keyLen, chunkStart, chunkLen (IGNORED = ignored), keyOffset
const IGNORED: u32 = 0xffffffff;
const KIND_ARRAY: u32 = 0;
const KIND_OBJECT: u32 = 1;
// Zeroed bytes after the input: the SIMD string scanner reads 16 bytes at a time and the zero
// byte (a control character) stops it, so no bounds check is needed in the inner loop.
export const INPUT_PAD: usize = 64;
const OUT_SLACK: usize = 64;
// The builds for Node read strings 32 bytes a step (two vectors; escape-heavy text in 0.84-0.88x
// the time of 16); the browser's 16, which keeps its bundle within its budget.
const WIDE: bool = isDefined(UTF8_STEPS);
const STEP: usize = WIDE ? 32 : 16;

const STACK: usize = memory.data(<i32>(MAX_DEPTH as usize * FRAME_SIZE + 16));
// Result block read by the TypeScript loader after each call.
export const RESULT: usize = memory.data(128);
// RESULT layout (u32 each): 0 status, 4 errOffset, 8 errDetail, 12 outPtr, 16 outLen,
// 20 count (elements), 24 spansPtr (count x {ptr u32, len u32}), 28/32/36 digest addresses
// (assembly/index.ts), 40 number of `null` literals read (the JavaScript-value path uses it to
// skip its NaN check when JSON.stringify wrote no null at all), 48 the records of index()
// (assembly/tape.ts), 52-92 what view() wrote (assembly/view.ts), 96 the detection verdict on
// the tools view() wrote, 100/104/108 a root `tools` value index() may skip and its verdict
// (set by the loader, read once), 112 the record of the skipped value + 1 (0: none), 116 where
// that value is (0: a root member, 1: in the root's `toolConfig`; set by the loader, read once),
// 120/124 whether view() wrote its messages as canonical text (bit 1; bit 2: those with holes
// canonical but for them) and where their starts are.

// Region layout, set by layout() for an input of n bytes. Everything after heap base is ours.
let inBase: usize = 0;
let inEnd: usize = 0;
let ignBase: usize = 0; // ignore-key list: count entries of {len u32, bytes, padded to 4}
let ignCount: i32 = 0;
let spansBase: usize = 0;
let recBase: usize = 0;
let arenaBase: usize = 0;
let outBase: usize = 0;
let outEnd: usize = 0;

// Error state.
let errCode: i32 = 0;
let errOffset: usize = 0;
let errDetail: i32 = 0;

// Scratch outputs of helpers (AssemblyScript has no multiple returns).
let gO: usize = 0; // output cursor after a helper wrote
let gEscaped: bool = false; // the last string contained a backslash escape
let trusted: bool = false; // F_TRUSTED_UTF8 of the current run
let stringified: bool = false; // F_STRINGIFIED of the current run

@inline function align8(x: usize): usize {
  return (x + 7) & ~(<usize>7);
}

/** Grows memory so that [0, end) is addressable. Returns false if the engine refuses. */
export function ensureMemory(end: usize): bool {
  const have = (<usize>memory.size()) << 16;
  if (end <= have) return true;
  const need = <i32>((end - have + 0xffff) >> 16);
  // Grow by at least a quarter of the current size so a long run of growing inputs
  // does not pay for many small grow calls.
  const cur = memory.size();
  let pages = need;
  if (pages < (cur >> 2)) pages = cur >> 2;
  if (memory.grow(pages) < 0) {
    if (memory.grow(need) < 0) return false;
  }
  return true;
}

/**
 * Makes room for an ignore-key list of `ignLen` bytes followed by up to `maxInput` input bytes
 * and returns the address where the caller writes them. The input starts at the next 8-byte
 * boundary after the list. Split from layout() so the caller can encode a string straight into
 * memory and learn its UTF-8 length from the encoder. Returns 0 if memory cannot grow.
 */
export function prepare(ignLen: u32, maxInput: u32, stage: u32): usize {
  const base = align8(__heap_base);
  ignBase = base;
  inBase = align8(base + ignLen);
  // `stage` extra bytes after the input's maximum extent hold UTF-16 text waiting to be
  // transcoded into the input region (see utf16.ts); layout() may reuse them afterwards.
  if (!ensureMemory(align8(inBase + maxInput + INPUT_PAD) + stage)) return 0;
  return base;
}

/** Lays out the work regions after an input of n bytes (written at prepare()'s address). */
export function layout(n: u32): bool {
  inEnd = inBase + n;
  // Bounds, each derived from the smallest input that produces one more item:
  // an array element takes >= 2 bytes ("0,"), an object member >= 5 ('"":0,').
  spansBase = align8(inEnd + INPUT_PAD);
  const spanCap = (<usize>n / 2 + 2) * 8;
  recBase = align8(spansBase + spanCap);
  const recCap = (<usize>n / 5 + 2) * REC_SIZE;
  arenaBase = align8(recBase + recCap);
  // Decoded keys are never longer than their JSON spelling.
  outBase = align8(arenaBase + n + 16);
  // Strings, literals and punctuation never grow in canonical form; numbers can ("1e20" becomes
  // 21 digits), and sorting needs room to copy an object. The writer grows memory when needed.
  if (!ensureMemory(outBase + (<usize>n) * 2 + 4096)) return false;
  outEnd = (<usize>memory.size()) << 16;
  return true;
}

@inline function fail(code: i32, offset: usize, detail: i32): i32 {
  errCode = code;
  errOffset = offset - inBase;
  errDetail = detail;
  return code;
}

/** A syntax error at p: "input ended" if p is past the end, else `detail` (expected ...). */
@inline function failAt(p: usize, detail: i32): i32 {
  return p >= inEnd ? fail(ERR_JSON, inEnd, D_END) : fail(ERR_JSON, p, detail);
}

/** Makes sure the output has `extra` bytes free after `o`, growing memory if needed. */
function reserveOut(o: usize, extra: usize): bool {
  if (o + extra + OUT_SLACK <= outEnd) return true;
  if (!ensureMemory(o + extra + OUT_SLACK)) return false;
  outEnd = (<usize>memory.size()) << 16;
  return true;
}

@inline export function isWs(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

@inline export function skipWs(p: usize): usize {
  while (isWs(<u32>load<u8>(p))) p++;
  return p;
}

@inline function hexDigit(c: u32): i32 {
  if (c - 0x30 < 10) return <i32>(c - 0x30);
  const l = c | 0x20;
  if (l - 0x61 < 6) return <i32>(l - 0x61 + 10);
  return -1;
}

@inline function read4Hex(p: usize): i32 {
  const a = hexDigit(load<u8>(p));
  const b = hexDigit(load<u8>(p + 1));
  const c = hexDigit(load<u8>(p + 2));
  const d = hexDigit(load<u8>(p + 3));
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

const HEX: usize = memory.data<u8>([0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66]);

/** Writes a code unit < 0x20, '"' or '\' in RFC 8785's escaped form; returns the new cursor. */
@inline function writeEscaped(o: usize, c: u32): usize {
  store<u8>(o, 0x5c);
  if (c == 0x22 || c == 0x5c) { store<u8>(o + 1, <u8>c); return o + 2; }
  if (c == 0x08) { store<u8>(o + 1, 0x62); return o + 2; }
  if (c == 0x09) { store<u8>(o + 1, 0x74); return o + 2; }
  if (c == 0x0a) { store<u8>(o + 1, 0x6e); return o + 2; }
  if (c == 0x0c) { store<u8>(o + 1, 0x66); return o + 2; }
  if (c == 0x0d) { store<u8>(o + 1, 0x72); return o + 2; }
  store<u32>(o + 1, 0x30303075); // "u00"
  store<u8>(o + 4, load<u8>(HEX + (c >> 4)));
  store<u8>(o + 5, load<u8>(HEX + (c & 15)));
  return o + 6;
}

@inline function writeUtf8(o: usize, cp: u32): usize {
  if (cp < 0x80) { store<u8>(o, <u8>cp); return o + 1; }
  if (cp < 0x800) {
    store<u8>(o, <u8>(0xc0 | (cp >> 6)));
    store<u8>(o + 1, <u8>(0x80 | (cp & 0x3f)));
    return o + 2;
  }
  if (cp < 0x10000) {
    store<u8>(o, <u8>(0xe0 | (cp >> 12)));
    store<u8>(o + 1, <u8>(0x80 | ((cp >> 6) & 0x3f)));
    store<u8>(o + 2, <u8>(0x80 | (cp & 0x3f)));
    return o + 3;
  }
  store<u8>(o, <u8>(0xf0 | (cp >> 18)));
  store<u8>(o + 1, <u8>(0x80 | ((cp >> 12) & 0x3f)));
  store<u8>(o + 2, <u8>(0x80 | ((cp >> 6) & 0x3f)));
  store<u8>(o + 3, <u8>(0x80 | (cp & 0x3f)));
  return o + 4;
}

/**
 * Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80), or 0 if invalid.
 * RFC 3629 table: no overlongs, no encoded surrogates, nothing above U+10FFFF.
 */
@inline function utf8Len(p: usize): i32 {
  const c = <u32>load<u8>(p);
  const c1 = <u32>load<u8>(p + 1);
  if (c < 0xc2) return 0;
  if (c < 0xe0) return (c1 & 0xc0) == 0x80 ? 2 : 0;
  const c2 = <u32>load<u8>(p + 2);
  if (c < 0xf0) {
    let lo: u32 = 0x80, hi: u32 = 0xbf;
    if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f;
    return c1 >= lo && c1 <= hi && (c2 & 0xc0) == 0x80 ? 3 : 0;
  }
  if (c > 0xf4) return 0;
  const c3 = <u32>load<u8>(p + 3);
  let lo: u32 = 0x80, hi: u32 = 0xbf;
  if (c == 0xf0) lo = 0x90;
  else if (c == 0xf4) hi = 0x8f;
  return c1 >= lo && c1 <= hi && (c2 & 0xc0) == 0x80 && (c3 & 0xc0) == 0x80 ? 4 : 0;
}

// Lookup tables of the vectorized UTF-8 check (utf8Errors): bits of the error classes a byte
// can belong to, by the high and low nibble of the byte before it and the high nibble of the
// byte itself; a byte is in error when all three share a class. The classification is Keiser
// and Lemire's ("Validating UTF-8 in less than one instruction per byte", 2021).
const TOO_SHORT: u8 = 1; // a lead byte, then no continuation
const TOO_LONG: u8 = 2; // ASCII, then a continuation
const OVERLONG_3: u8 = 4; // E0 80..9F
const TOO_LARGE: u8 = 8; // F4 90.., F5..
const SURROGATE: u8 = 16; // ED A0..BF
const OVERLONG_2: u8 = 32; // C0, C1
const TOO_LARGE_1000: u8 = 64; // F5.. 80..8F
const OVERLONG_4: u8 = 64; // F0 80..8F
const TWO_CONTS: u8 = 128; // a continuation after a continuation (fine where a 3- or 4-byte lead came before)
const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;
/**
 * Per byte of the 16 at p (v): non-zero where the byte breaks UTF-8 given the three bytes before
 * it, which are read from memory (inside a string they are its own bytes or its opening quote;
 * before the input they may be anything, which can only flag more errors, never hide one: a
 * string's first byte follows its ASCII quote). A sequence cut short by the end of the block is
 * flagged in the next block, or at the stop byte that ends the string.
 */
@inline function utf8Errors(v: v128, p: usize): v128 {
  // Static data declared here, so that builds without UTF8_STEPS leave it out.
  const BYTE1_HIGH: usize = memory.data<u8>([
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS,
    TOO_SHORT | OVERLONG_2, TOO_SHORT, TOO_SHORT | OVERLONG_3 | SURROGATE, TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
  ], 16);
  const BYTE1_LOW: usize = memory.data<u8>([
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, CARRY | OVERLONG_2, CARRY, CARRY,
    CARRY | TOO_LARGE, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
  ], 16);
  const BYTE2_HIGH: usize = memory.data<u8>([
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
  ], 16);
  const nib = i8x16.splat(0x0f);
  const prev1 = v128.load(p - 1);
  const hi1 = i8x16.swizzle(v128.load(BYTE1_HIGH), i8x16.shr_u(prev1, 4));
  const lo1 = i8x16.swizzle(v128.load(BYTE1_LOW), v128.and(prev1, nib));
  const hi2 = i8x16.swizzle(v128.load(BYTE2_HIGH), i8x16.shr_u(v, 4));
  const special = v128.and(v128.and(hi1, lo1), hi2);
  // A third byte of a 3- or 4-byte sequence, or the fourth of a 4-byte one, must be a continuation.
  const third = i8x16.sub_sat_u(v128.load(p - 2), i8x16.splat(<i8>0x60));
  const fourth = i8x16.sub_sat_u(v128.load(p - 3), i8x16.splat(<i8>0x70));
  const must23 = v128.and(v128.or(third, fourth), i8x16.splat(<i8>0x80));
  return v128.xor(must23, special);
}

/**
 * Reads the string whose opening quote is at p and writes its canonical form at o.
 * Returns the input position after the closing quote (0 on error); the new output cursor is gO.
 */
function writeString(p: usize, o: usize): usize {
  gEscaped = false;
  store<u8>(o, 0x22);
  o++;
  p++;
  while (true) {
    // Copy runs of plain bytes. The stop set is '"', '\', every byte < 0x20 and, unless the
    // text is trusted UTF-8, every byte >= 0x80 (SWAR) or the bytes of a step that fails the
    // vectorized UTF-8 check (SIMD), so most text moves 16 (SIMD) or 8 (SWAR) bytes at a time.
    if (ASC_FEATURE_SIMD) {
      const quote = i8x16.splat(0x22);
      const bslash = i8x16.splat(0x5c);
      const space = i8x16.splat(0x20);
      // 1 when the step's first byte is escaped by a backslash that ended the step before.
      let carry: u32 = 0;
      while (true) {
        // A step is v, then w in the wide builds (WIDE).
        const v = v128.load(p);
        const w = WIDE ? v128.load(p + 16) : v;
        v128.store(o, v);
        if (WIDE) v128.store(o + 16, w);
        // Signed: bytes < 0x20 and >= 0x80 stop; unsigned (trusted UTF-8, or validated below
        // in the builds for Node: see UTF8_STEPS in node.ts): only < 0x20.
        const unsigned = trusted || isDefined(UTF8_STEPS);
        const stopV = v128.or(i8x16.eq(v, quote), unsigned ? i8x16.lt_u(v, space) : i8x16.lt_s(v, space));
        const stopW = v128.or(i8x16.eq(w, quote), unsigned ? i8x16.lt_u(w, space) : i8x16.lt_s(w, space));
        const slashV = i8x16.eq(v, bslash);
        const slashW = i8x16.eq(w, bslash);
        let stepErrors: u32 = 0; // bytes of the step that break UTF-8 (validated builds, untrusted text)
        // ASCII after three ASCII bytes cannot break UTF-8: most steps skip the check.
        if (isDefined(UTF8_STEPS) && !trusted && (<u32>i8x16.bitmask(WIDE ? v128.or(v, w) : v) | (load<u32>(p - 4) & 0x80808000)) != 0) {
          stepErrors = i8x16.bitmask(i8x16.ne(utf8Errors(v, p), i8x16.splat(0)));
          if (WIDE) stepErrors |= <u32>i8x16.bitmask(i8x16.ne(utf8Errors(w, p + 16), i8x16.splat(0))) << 16;
        }
        const any = WIDE ? v128.or(v128.or(stopV, slashV), v128.or(stopW, slashW)) : v128.or(stopV, slashV);
        if ((<u32>i8x16.bitmask(any) | carry | stepErrors) == 0) { p += STEP; o += STEP; continue; }
        let stops = <u32>i8x16.bitmask(stopV);
        let slashes = <u32>i8x16.bitmask(slashV);
        if (WIDE) {
          stops |= <u32>i8x16.bitmask(stopW) << 16;
          slashes |= <u32>i8x16.bitmask(slashW) << 16;
        }
        // Escape-heavy text (newlines, quotes, JSON in JSON: a backslash every few bytes): an
        // escape already in RFC 8785's form (\\ \" \b \f \n \r \t) was copied with the step, so
        // the step passes over all of them at once; any other (\/, \u, a fault) stops the step
        // at its backslash and is read below.
        let letters: u64 = 0;
        if ((slashes | carry) != 0) {
          letters = WIDE ? escapedBytes<u64>(slashes, carry, 0x55555555) : <u64>escapedBytes<u32>(slashes, carry, 0x5555);
          let other = <u32>i8x16.bitmask(i8x16.eq(escapeLetters(v, false), i8x16.splat(0)));
          if (WIDE) other |= <u32>i8x16.bitmask(i8x16.eq(escapeLetters(w, false), i8x16.splat(0))) << 16;
          const bad = <u32>letters & other;
          if ((bad & carry) != 0) { p--; o--; break; } // the escape the last step's end cut
          stops = (stops & ~<u32>letters) | (bad >> 1);
        }
        if (isDefined(UTF8_STEPS) && stepErrors != 0) {
          // Validated 16 bytes at a time (utf8Errors); a step with an error up to its first
          // stop stops at its first byte >= 0x80 instead, where utf8Len below finds the error's
          // exact offset: at the lead byte of a sequence the last step cut, if the step starts
          // inside one (its bytes are written again).
          const first = stops == 0 ? <u32>STEP : ctz(stops);
          if ((<u64>stepErrors & ((<u64>2 << first) - 1)) != 0) {
            let q = p - 1;
            while (q + 3 > p && (load<u8>(q) & 0xc0) == 0x80) q--;
            const lead = <u32>load<u8>(q);
            const len: usize = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
            if (q + len > p) {
              o -= p - q;
              p = q;
              break;
            }
            stops |= i8x16.bitmask(i8x16.lt_s(v, i8x16.splat(0)));
            if (WIDE) stops |= <u32>i8x16.bitmask(i8x16.lt_s(w, i8x16.splat(0))) << 16;
          }
        }
        if ((slashes & (stops == 0 ? <u32>(WIDE ? 0xffffffff : 0xffff) : (<u32>1 << ctz(stops)) - 1)) != 0) gEscaped = true;
        if (stops == 0) {
          carry = <u32>(letters >> STEP);
          p += STEP;
          o += STEP;
          continue;
        }
        const k = <usize>ctz(stops);
        p += k;
        o += k;
        break;
      }
    } else {
      while (true) {
        const w = load<u64>(p);
        // SWAR: a lane is "interesting" if its high bit is set, it is < 0x20, or equals '"' / '\'.
        const lo: u64 = 0x0101010101010101;
        const hi: u64 = 0x8080808080808080;
        const ctl = (w - lo * 0x20) & ~w;
        const xq = w ^ (lo * 0x22);
        const q = (xq - lo) & ~xq;
        const xb = w ^ (lo * 0x5c);
        const b = (xb - lo) & ~xb;
        const m = (ctl | q | b | (trusted ? 0 : w)) & hi;
        if (m == 0) { store<u64>(o, w); p += 8; o += 8; continue; }
        break;
      }
      // Finish byte by byte up to the first interesting byte (SWAR can flag false positives
      // only after a true one, so this loop is short).
      while (true) {
        const c = <u32>load<u8>(p);
        if (c == 0x22 || c == 0x5c || c < 0x20 || (c >= 0x80 && !trusted)) break;
        store<u8>(o, <u8>c);
        p++;
        o++;
      }
    }
    const c = <u32>load<u8>(p);
    if (c == 0x22) {
      store<u8>(o, 0x22);
      gO = o + 1;
      return p + 1;
    }
    if (c == 0x5c) {
      gEscaped = true;
      const e = <u32>load<u8>(p + 1);
      if (stringified) {
        // JSON.stringify's escapes are RFC 8785's: copy them. Its only \u escapes are \u00XX
        // for control characters and \udXXX for a lone surrogate (a pair is written as is).
        if (e == 0x75) {
          if ((<u32>load<u8>(p + 2) | 0x20) == 0x64) { fail(ERR_SURROGATE, p, 0); return 0; }
          store<u32>(o, load<u32>(p));
          store<u16>(o + 4, load<u16>(p + 4));
          p += 6;
          o += 6;
          continue;
        }
        store<u16>(o, load<u16>(p));
        p += 2;
        o += 2;
        continue;
      }
      if (e == 0x75) {
        let cu = read4Hex(p + 2);
        if (cu < 0) { fail(ERR_JSON, p, D_ESCAPE); return 0; }
        let cp = <u32>cu;
        const at = p;
        p += 6;
        if (cp >= 0xd800 && cp <= 0xdfff) {
          // A high surrogate must be followed by an escaped low surrogate; anything else is a
          // lone surrogate, which has no UTF-8 form and no canonical spelling.
          if (cp >= 0xdc00 || load<u8>(p) != 0x5c || load<u8>(p + 1) != 0x75) {
            fail(ERR_SURROGATE, at, 0);
            return 0;
          }
          const lo = read4Hex(p + 2);
          if (lo < 0) { fail(ERR_JSON, p, D_ESCAPE); return 0; }
          if (lo < 0xdc00 || lo > 0xdfff) { fail(ERR_SURROGATE, at, 0); return 0; }
          cp = 0x10000 + ((cp - 0xd800) << 10) + (<u32>lo - 0xdc00);
          p += 6;
        }
        if (cp < 0x20 || cp == 0x22 || cp == 0x5c) o = writeEscaped(o, cp);
        else o = writeUtf8(o, cp);
        continue;
      }
      let r: u32 = 0;
      if (e == 0x22 || e == 0x5c) r = e;
      else if (e == 0x2f) { store<u8>(o, 0x2f); o++; p += 2; continue; }
      else if (e == 0x62) r = 0x08;
      else if (e == 0x66) r = 0x0c;
      else if (e == 0x6e) r = 0x0a;
      else if (e == 0x72) r = 0x0d;
      else if (e == 0x74) r = 0x09;
      else { fail(ERR_JSON, p, D_ESCAPE); return 0; }
      o = writeEscaped(o, r);
      p += 2;
      continue;
    }
    if (c < 0x20) {
      failAt(p, D_CONTROL);
      return 0;
    }
    // c >= 0x80: validate one UTF-8 sequence, copy it as is.
    if (p >= inEnd) { fail(ERR_JSON, inEnd, D_END); return 0; }
    const n = utf8Len(p);
    if (n == 0 || p + <usize>n > inEnd) { fail(ERR_UTF8, p, 0); return 0; }
    store<u32>(o, load<u32>(p)); // copies up to 4 bytes; o advances by n only
    p += n;
    o += n;
  }
}

/** Per 16-bit lane: the unit takes 3 UTF-8 bytes (>= 0x800 and not a surrogate). */
@inline function wider16(c: v128): v128 {
  return v128.andnot(i16x8.ge_u(c, i16x8.splat(0x800)), i16x8.eq(v128.and(c, i16x8.splat(<i16>0xf800)), i16x8.splat(<i16>0xd800)));
}

// For 8 units as pairs [first, second] (16 bytes), entry m (16 bytes) keeps unit i's first byte,
// and its second too where bit i of m is set (a unit to escape): the swizzle that widens them.
const ESC_WIDEN: usize = memory.data(256 * 16, 16);
let escWidenReady = false;
// Per unit < 0x10, the letter of its two-character escape (0: it has none, \u00XX).
const ESC_LETTERS: usize = memory.data<u8>([0, 0, 0, 0, 0, 0, 0, 0, 0x62, 0x74, 0x6e, 0, 0x66, 0x72, 0, 0], 16);

function initEscWiden(): void {
  for (let m = 0; m < 256; m++) {
    const at = ESC_WIDEN + (<usize>m << 4);
    let n: usize = 0;
    for (let i = 0; i < 8; i++) {
      store<u8>(at + n++, <u8>(2 * i));
      if ((m >> i) & 1) store<u8>(at + n++, <u8>(2 * i + 1));
    }
    while (n < 16) store<u8>(at + n++, 0x80);
  }
  escWidenReady = true;
}

/**
 * Per byte lane of x (16 units narrowed) marked in escX (a unit to escape, always ASCII): the
 * second character of its two-character escape, its letter (\b \f \n \r \t) or itself (\" \\),
 * or 0 where it has none and is written \u00XX; x's own byte in the other lanes (where a
 * non-ASCII unit may narrow to 0, so callers test the escaped lanes only).
 */
// @ts-ignore: decorator
@inline function escapeSeconds(x: v128, escX: v128): v128 {
  const ctl = v128.and(escX, i8x16.lt_u(x, i8x16.splat(0x20)));
  return v128.bitselect(i8x16.swizzle(v128.load(ESC_LETTERS), x), x, ctl);
}

/**
 * The canonical UTF-8 of 16 units a, b holding units to escape (escA / escB: their lanes) as one
 * step, at o; returns the new cursor and sets stepBytes (utf16.ts: 30 when a high surrogate in
 * the last lane is left for the next step), or returns 0 when the step cannot go whole: a unit
 * escaped as \u00XX, or a lone surrogate. Every unit to escape is ASCII: its own lane of x
 * (narrowing sends non-ASCII units to 0 or 0xff, so only the lanes to escape are read as such:
 * escapeSeconds). When
 * every escape takes two characters (\" \\ \b \f \n \r \t), each unit to escape is written as a
 * backslash and `second`, its letter or itself. Writes up to 52 bytes past o (OUT_SLACK).
 */
// @ts-ignore: decorator
@inline function escapedStep(a: v128, b: v128, escA: v128, escB: v128, o: usize): usize {
  return v128.any_true(v128.and(v128.or(a, b), i16x8.splat(<i16>0xff80))) ? mixedStep(a, b, escA, escB, o) : asciiEscapedStep(a, b, escA, escB, o);
}

/**
 * escapedStep for 16 ASCII units: each half of the step is widened by table, a backslash
 * inserted before each unit to escape.
 */
// @ts-ignore: decorator
@inline function asciiEscapedStep(a: v128, b: v128, escA: v128, escB: v128, o: usize): usize {
  const x = i8x16.narrow_i16x8_u(a, b);
  const escX = i8x16.narrow_i16x8_s(escA, escB);
  const second = escapeSeconds(x, escX);
  if (v128.any_true(v128.and(escX, i8x16.eq(second, i8x16.splat(0))))) return 0;
  wholeStep();
  const first = v128.bitselect(i8x16.splat(0x5c), x, escX);
  const m = <u32>i8x16.bitmask(escX);
  const lo = i8x16.shuffle(first, second, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const hi = i8x16.shuffle(first, second, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  v128.store(o, i8x16.swizzle(lo, v128.load(ESC_WIDEN + (<usize>(m & 0xff) << 4))));
  o += 8 + <usize>popcnt(m & 0xff);
  v128.store(o, i8x16.swizzle(hi, v128.load(ESC_WIDEN + (<usize>(m >> 8) << 4))));
  return o + 8 + <usize>popcnt(m >> 8);
}

/**
 * The canonical UTF-8 of 16 units a, b holding non-ASCII ones, and units to escape or not
 * (escA / escB: their lanes), as one step at o; returns the new cursor and sets stepBytes, or
 * returns 0 when the step cannot go whole (a \u00XX escape, a lone surrogate). Each unit to
 * escape is written as a 2-byte unit whose bytes are the backslash and its letter (see
 * escapedStep), so escapes do not cut the step: cutting a step at each escape cost the L-esc
 * objects' wasm call 0.90 ms against 0.85. Surrogate pairs go with them (STR10K's emoji next to
 * quotes and line breaks).
 */
// @ts-ignore: decorator
@inline function mixedStep(a: v128, b: v128, escA: v128, escB: v128, o: usize): usize {
  const escX = i8x16.narrow_i16x8_s(escA, escB);
  const second = escapeSeconds(i8x16.narrow_i16x8_u(a, b), escX);
  if (v128.any_true(v128.and(escX, i8x16.eq(second, i8x16.splat(0))))) return 0;
  const headA = v128.or(i16x8.shl(i16x8.extend_low_i8x16_u(second), 8), i16x8.splat(0x5c));
  const headB = v128.or(i16x8.shl(i16x8.extend_high_i8x16_u(second), 8), i16x8.splat(0x5c));
  const surrMask = i16x8.splat(<i16>0xf800);
  const surrBits = i16x8.splat(<i16>0xd800);
  const sa = i16x8.eq(v128.and(a, surrMask), surrBits);
  const sb = i16x8.eq(v128.and(b, surrMask), surrBits);
  if (v128.any_true(v128.or(sa, sb))) return encodePairsEscaped16(a, b, sa, sb, escA, escB, headA, headB, o);
  wholeStep();
  return encodeEscaped16(a, b, escA, escB, headA, headB, o);
}

// Whether the last string of 64 units or more was mixed text: a quarter of its steps or more
// held units to escape, and a quarter or more non-ASCII units without any. In such text which
// kind the next step is, is a coin toss (STR10K's 110,000 steps change kind 89,000 times), so a
// test for escapes first mispredicts half the time; the next string's steps that hold non-ASCII
// units then all go to mixedStep, escapes or not, without that test (STR10K's strings canonical
// in 0.86-0.88x the time, its object pathHashes 0.97x). In other text the test predicts well and
// steps without escapes take encode16, which is cheaper: with every such step through
// mixedStep, XL's and L-intl's strings took 1.03-1.07x the time. Both write the same bytes.
let mixedText = false;

/**
 * Writes the canonical form of the string framed at p (see F_STRINGIFIED): its units escaped
 * where RFC 8785 escapes them and encoded as UTF-8. Returns the input position after the frame
 * (0 on error: a lone surrogate, or a frame past the input); the new output cursor is gO.
 */
function writeFramed(p: usize, o: usize): usize {
  const units = <usize>load<u32>(p + 1);
  let nEsc: i32 = 0;
  let nWide: i32 = 0;
  let s = p + 5;
  const end = s + (units << 1);
  if (end > inEnd) { fail(ERR_JSON, p, D_END); return 0; }
  // A unit takes at most 6 bytes canonical (\u00XX), and the output keeps as much room as the
  // input has bytes left (see the number writer in parse()).
  if (!reserveOut(o, 6 * units + 2 + (inEnd - end))) { fail(ERR_MEMORY, p, 0); return 0; }
  store<u8>(o++, 0x22);
  while (s < end) {
    if (ASC_FEATURE_SIMD) {
      // 16 units a step: ASCII ones with nothing to escape narrowed to bytes, non-ASCII ones
      // encoded as utf16.ts does, units to escape written in the same step (escapedStep()); a
      // step stops at a \u00XX escape, and one holding a lone surrogate goes to the unit-by-unit
      // loop below.
      ensurePack();
      if (!escWidenReady) initEscWiden();
      const hiMask = i16x8.splat(<i16>0xff80);
      const space = i16x8.splat(0x20);
      const quote = i16x8.splat(0x22);
      const bslash = i16x8.splat(0x5c);
      while (s + 32 <= end) {
        const a = v128.load(s);
        const b = v128.load(s + 16);
        const escA = v128.or(v128.or(i16x8.lt_u(a, space), i16x8.eq(a, quote)), i16x8.eq(a, bslash));
        const escB = v128.or(v128.or(i16x8.lt_u(b, space), i16x8.eq(b, quote)), i16x8.eq(b, bslash));
        const anyEsc = v128.or(escA, escB);
        let w: usize;
        const escaping = v128.any_true(anyEsc);
        // The plain ASCII step is written out in each mode, not once before the mode's test:
        // tested first for every step, it made L-intl's pass 1.06x the time. In mixed mode the
        // test for non-ASCII units is written twice too: computed once in a local, the wasm came
        // out 2.6 KB larger (other inlining) and no faster (0.97-1.07x across workloads).
        if (mixedText) {
          if (!v128.any_true(v128.or(anyEsc, v128.and(v128.or(a, b), hiMask)))) {
            v128.store(o, i8x16.narrow_i16x8_u(a, b));
            s += 32;
            o += 16;
            continue;
          }
          nEsc += <i32>escaping;
          nWide += <i32>!escaping;
          w = v128.any_true(v128.and(v128.or(a, b), hiMask)) ? mixedStep(a, b, escA, escB, o) : asciiEscapedStep(a, b, escA, escB, o);
        } else {
          if (!escaping) {
            if (!v128.any_true(v128.and(v128.or(a, b), hiMask))) {
              v128.store(o, i8x16.narrow_i16x8_u(a, b));
              s += 32;
              o += 16;
              continue;
            }
            nWide++;
            w = encode16(a, b, o);
            if (w == 0) break;
            o = w;
            s += stepBytes;
            continue;
          }
          nEsc++;
          w = escapedStep(a, b, escA, escB, o);
        }
        if (w != 0) {
          o = w;
          s += stepBytes;
          continue;
        }
        if (!escaping) break; // a lone surrogate: the unit-by-unit loop finds it
        // Else (a surrogate, a \u00XX escape) the step stops at its first unit to escape: the
        // units before it are written (narrowed when ASCII, else encoded as a whole step and
        // cut after them), it is escaped, and the steps go on from the unit after it. Only a
        // lone surrogate in the step sends it unit by unit.
        const esc = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(escA, escB));
        const k = ctz(esc);
        const before = (<u32>1 << k) - 1;
        const wide = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(i16x8.ne(v128.and(a, hiMask), i16x8.splat(0)), i16x8.ne(v128.and(b, hiMask), i16x8.splat(0)))) & before;
        if (wide == 0) {
          v128.store(o, i8x16.narrow_i16x8_u(a, b));
          o += <usize>k;
        } else {
          // encode16 writes all 16 units; the first k take k bytes, one more for each unit
          // >= 0x80 and one more again for each >= 0x800 that is not a surrogate (a pair's
          // units take two bytes each). A high surrogate just before the escaped unit is lone:
          // encode16 finds it and the step goes unit by unit.
          if (encode16(a, b, o) == 0) break;
          const wider = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(wider16(a), wider16(b))) & before;
          o += <usize>(k + popcnt(wide) + popcnt(wider));
        }
        o = writeEscaped(o, <u32>load<u16>(s + (<usize>k << 1)));
        s += (<usize>k + 1) << 1;
      }
      // The last 1-15 units as one step too (the 64 bytes of padding after the input keep the
      // read in bounds; the lanes past the string are read but not counted), unless the last is
      // a high surrogate (which the lane after it would complete) or the step cannot go whole:
      // the units one at a time cost ~20 ns a string.
      if (s < end && s + 32 > end) {
        const r = <u32>((end - s) >> 1);
        const live = (<u32>1 << r) - 1;
        const a = v128.load(s);
        const b = v128.load(s + 16);
        const escA = v128.or(v128.or(i16x8.lt_u(a, space), i16x8.eq(a, quote)), i16x8.eq(a, bslash));
        const escB = v128.or(v128.or(i16x8.lt_u(b, space), i16x8.eq(b, quote)), i16x8.eq(b, bslash));
        if ((<u32>i8x16.bitmask(i8x16.narrow_i16x8_s(escA, escB)) & live) == 0) {
          const wide = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(i16x8.ne(v128.and(a, hiMask), i16x8.splat(0)), i16x8.ne(v128.and(b, hiMask), i16x8.splat(0)))) & live;
          if (wide == 0) {
            v128.store(o, i8x16.narrow_i16x8_u(a, b));
            o += <usize>r;
            s = end;
          } else if ((<u32>load<u16>(end - 2) & 0xfc00) != 0xd800 && encode16(a, b, o) != 0) {
            // As for an escape after non-ASCII units above: the live units take one byte each,
            // one more for each >= 0x80 and one more again for each >= 0x800 not a surrogate.
            const wider = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(wider16(a), wider16(b))) & live;
            o += <usize>(r + popcnt(wide) + popcnt(wider));
            s = end;
          }
        } else {
          // Units to escape among them (a string ending in a quote or a line break; 6,690 of
          // STR10K's 9,469 last steps): the step goes whole too, its lanes past the string
          // taken as "a". Each of those is one byte at the end of what the step writes, so the
          // cursor goes back by their number.
          const liveA = i16x8.lt_u(i16x8(0, 1, 2, 3, 4, 5, 6, 7), i16x8.splat(<i16>r));
          const liveB = i16x8.lt_u(i16x8(8, 9, 10, 11, 12, 13, 14, 15), i16x8.splat(<i16>r));
          const w = escapedStep(v128.bitselect(a, i16x8.splat(0x61), liveA), v128.bitselect(b, i16x8.splat(0x61), liveB), v128.and(escA, liveA), v128.and(escB, liveB), o);
          if (w != 0) {
            o = w - (16 - <usize>r);
            s = end;
          }
        }
      }
    } else {
      // 4 ASCII units a step when none is escaped: per 16-bit lane (each < 0x80 here), bit 7 of
      // unit + 0x60 is set iff unit >= 0x20, and bit 7 of (unit ^ x) + 0x7f iff unit != x.
      while (s + 8 <= end) {
        const w = load<u64>(s);
        if ((w & 0xff80ff80ff80ff80) != 0) break;
        const lanes: u64 = 0x0001000100010001;
        const ok = (w + lanes * 0x60) & ((w ^ (lanes * 0x22)) + lanes * 0x7f) & ((w ^ (lanes * 0x5c)) + lanes * 0x7f);
        if ((ok & (lanes * 0x80)) != lanes * 0x80) break;
        store<u8>(o, <u8>w);
        store<u8>(o + 1, <u8>(w >> 16));
        store<u8>(o + 2, <u8>(w >> 32));
        store<u8>(o + 3, <u8>(w >> 48));
        s += 8;
        o += 4;
      }
    }
    // Up to 16 units one at a time (to the end when fewer are left), then the fast steps again.
    let stop = s + 32;
    if (stop > end) stop = end;
    while (s < stop) {
      const c = <u32>load<u16>(s);
      s += 2;
      if (c < 0x80) {
        if (c < 0x20 || c == 0x22 || c == 0x5c) o = writeEscaped(o, c);
        else store<u8>(o++, <u8>c);
        continue;
      }
      const n = encodeWide(c, s, end, o);
      if (n < 0) { fail(ERR_SURROGATE, p, 0); return 0; }
      if (n == 4) s += 2;
      o += n;
    }
  }
  if (units >= 64) {
    // nEsc and nWide count the steps by kind (plain ASCII ones are not counted: their path is
    // the hot one).
    const steps = <i32>(units >> 4);
    mixedText = nEsc * 4 >= steps && nWide * 4 >= steps;
  }
  store<u8>(o, 0x22);
  gO = o + 1;
  return end;
}

/** Decodes an already validated JSON string body [p, end) to UTF-8 at o; returns the new cursor. */
function decodeString(p: usize, end: usize, o: usize): usize {
  while (p < end) {
    const c = <u32>load<u8>(p);
    if (c != 0x5c) { store<u8>(o++, <u8>c); p++; continue; }
    const e = <u32>load<u8>(p + 1);
    if (e == 0x75) {
      let cp = <u32>read4Hex(p + 2);
      p += 6;
      if (cp >= 0xd800 && cp < 0xdc00) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (<u32>read4Hex(p + 2) - 0xdc00);
        p += 6;
      }
      o = writeUtf8(o, cp);
      continue;
    }
    let r: u32 = e; // '"', '\', '/'
    if (e == 0x62) r = 0x08;
    else if (e == 0x66) r = 0x0c;
    else if (e == 0x6e) r = 0x0a;
    else if (e == 0x72) r = 0x0d;
    else if (e == 0x74) r = 0x09;
    store<u8>(o++, <u8>r);
    p += 2;
  }
  return o;
}

/**
 * Orders two UTF-8 keys by their UTF-16 code units, as RFC 8785 section 3.2.3 requires.
 * UTF-8 byte order equals code point order, which differs from UTF-16 order only between an
 * astral character (a surrogate pair, 0xD800..) and one in U+E000..U+FFFF, so a byte compare
 * with that single correction at the first difference is exact.
 */
export function compareKeys(a: usize, aLen: u32, b: usize, bLen: u32): i32 {
  const n = aLen < bLen ? aLen : bLen;
  let i: u32 = 0;
  while (i + 4 <= n && load<u32>(a + i) == load<u32>(b + i)) i += 4;
  while (i < n && load<u8>(a + i) == load<u8>(b + i)) i++;
  if (i == n) return <i32>aLen - <i32>bLen;
  let s = i;
  while (s > 0 && (load<u8>(a + s) & 0xc0) == 0x80) s--;
  const la = <u32>load<u8>(a + s);
  const lb = <u32>load<u8>(b + s);
  if (la >= 0xf0 && (lb == 0xee || lb == 0xef)) return -1;
  if (lb >= 0xf0 && (la == 0xee || la == 0xef)) return 1;
  return <i32>load<u8>(a + i) - <i32>load<u8>(b + i);
}

@inline function recCompare(x: usize, y: usize): i32 {
  return compareKeys(load<u32>(x), load<u32>(x + 4), load<u32>(y), load<u32>(y + 4));
}

@inline function recSwap(x: usize, y: usize): void {
  const a0 = load<u64>(x), a1 = load<u64>(x + 8), a2 = load<u32>(x + 16);
  store<u64>(x, load<u64>(y));
  store<u64>(x + 8, load<u64>(y + 8));
  store<u32>(x + 16, load<u32>(y + 16));
  store<u64>(y, a0);
  store<u64>(y + 8, a1);
  store<u32>(y + 16, a2);
}

function siftDown(base: usize, start: u32, n: u32): void {
  let root = start;
  while (true) {
    let child = root * 2 + 1;
    if (child >= n) return;
    if (child + 1 < n && recCompare(base + <usize>child * REC_SIZE, base + <usize>(child + 1) * REC_SIZE) < 0) child++;
    const r = base + <usize>root * REC_SIZE;
    const c = base + <usize>child * REC_SIZE;
    if (recCompare(r, c) >= 0) return;
    recSwap(r, c);
    root = child;
  }
}

/** Sorts n member records. Keys are unique after the duplicate check, so stability is moot. */
function sortRecords(base: usize, n: u32): void {
  if (n <= 24) {
    // Insertion sort: objects are small and often nearly sorted.
    for (let i: u32 = 1; i < n; i++) {
      let j = i;
      while (j > 0) {
        const x = base + <usize>(j - 1) * REC_SIZE;
        const y = x + REC_SIZE;
        if (recCompare(x, y) <= 0) break;
        recSwap(x, y);
        j--;
      }
    }
    return;
  }
  // Heapsort: O(n log n) with no extra memory, so a huge object cannot go quadratic.
  for (let i = <i32>(n / 2) - 1; i >= 0; i--) siftDown(base, <u32>i, n);
  for (let end = n - 1; end > 0; end--) {
    recSwap(base, base + <usize>end * REC_SIZE);
    siftDown(base, 0, end);
  }
}

@inline function isIgnored(k: usize, kLen: u32): bool {
  let q = ignBase;
  for (let i = 0; i < ignCount; i++) {
    const len = load<u32>(q);
    if (len == kLen && compareKeys(q + 4, len, k, kLen) == 0) return true;
    q = align8(q + 4 + len);
  }
  return false;
}

/**
 * memory.copy for the short chunks sorting moves: V8 compiles a variable-length memory.copy to
 * a call into the runtime, which costs more than the copy itself for a few dozen bytes.
 */
@inline function copyBytes(dst: usize, src: usize, n: usize): void {
  if (n > 64) {
    memory.copy(dst, src, n);
    return;
  }
  // Forward copy in 8-byte words; callers never overlap source and destination here.
  let i: usize = 0;
  for (; i + 8 <= n; i += 8) store<u64>(dst + i, load<u64>(src + i));
  for (; i < n; i++) store<u8>(dst + i, load<u8>(src + i));
}

/**
 * The builds for Node sort small objects (n <= 24 records) straight away, without first checking
 * whether they are in order: insertion sort compares every pair that ends up adjacent (each
 * record meets its final left neighbour as it settles), so it finds a duplicate key too, and
 * records already in order cost the same n - 1 compares as that check. A message object arrives
 * as {role, content}: 1 compare instead of 3 (the check, the sort, the second check).
 * Returns 1 when the records moved, 0 when they were in order, -1 on a duplicate key, with the
 * records back in input order (for closeObject's check to report the duplicate it reports).
 */
function sortSmall(recStart: usize, recEnd: usize): i32 {
  let moved = 0;
  for (let y = recStart + REC_SIZE; y < recEnd; y += REC_SIZE) {
    for (let x = y; x > recStart; x -= REC_SIZE) {
      const c = recCompare(x - REC_SIZE, x);
      if (c < 0) break;
      if (c == 0) {
        // Rare: input order is where each record's key offset is above the one before.
        for (let v = recStart + REC_SIZE; v < recEnd; v += REC_SIZE) {
          for (let u = v; u > recStart && load<u32>(u - REC_SIZE + 16) > load<u32>(u + 16); u -= REC_SIZE) recSwap(u - REC_SIZE, u);
        }
        return -1;
      }
      recSwap(x - REC_SIZE, x);
      moved = 1;
    }
  }
  return moved;
}

/**
 * Closes an object: checks keys for duplicates and, if members arrived out of order, rewrites
 * their chunks in sorted order. Returns the new output cursor, or 0 on error.
 */
function closeObject(recStart: usize, recEnd: usize, contentStart: usize, o: usize): usize {
  const n = <u32>((recEnd - recStart) / REC_SIZE);
  if (n < 2) return o;
  const small = isDefined(VALUE_FRAMES) && n <= 24 ? sortSmall(recStart, recEnd) : -1;
  if (small == 0) return o;
  if (small > 0 && n == 2) {
    // Two members the other way round ({role, content}): the shorter chunk is set aside past the
    // output and the longer moved once, instead of both chunks copied aside and back.
    const y = recStart + REC_SIZE; // the first in input order
    const la = load<u32>(y + 12), lb = load<u32>(recStart + 12);
    if (la != IGNORED && lb != IGNORED) {
      const a = <usize>load<u32>(y + 8), b = <usize>load<u32>(recStart + 8);
      const short = la < lb ? la : lb;
      if (!reserveOut(o, short)) { fail(ERR_MEMORY, inBase, 0); return 0; }
      if (la <= lb) {
        copyBytes(o, a, la);
        memory.copy(a, b, lb);
        store<u8>(a + lb, 0x2c);
        copyBytes(a + lb + 1, o, la);
      } else {
        copyBytes(o, b, lb);
        memory.copy(a + lb + 1, a, la);
        store<u8>(a + lb, 0x2c);
        copyBytes(a, o, lb);
      }
      store<u32>(recStart + 8, <u32>a);
      store<u32>(y + 8, <u32>(a + lb + 1));
      return o;
    }
  }
  if (small < 0) {
    let sorted = true;
    for (let x = recStart + REC_SIZE; x < recEnd; x += REC_SIZE) {
      const c = recCompare(x - REC_SIZE, x);
      if (c == 0) { fail(ERR_DUPLICATE, inBase + load<u32>(x + 16), 0); return 0; }
      if (c > 0) sorted = false;
    }
    if (sorted) return o;
    sortRecords(recStart, n);
    for (let x = recStart + REC_SIZE; x < recEnd; x += REC_SIZE) {
      if (recCompare(x - REC_SIZE, x) == 0) {
        let a = load<u32>(x - REC_SIZE + 16), b = load<u32>(x + 16);
        if (isDefined(VALUE_FRAMES)) {
          // A name given three times or more: heapsort (over 24 members) leaves its records in
          // any order, so the one reported is the second in input order, the later of the
          // first two, as a stable sort (the js backend's) reports it.
          if (a > b) { const t = a; a = b; b = t; }
          for (let y = x + REC_SIZE; y < recEnd && recCompare(x, y) == 0; y += REC_SIZE) {
            const k = load<u32>(y + 16);
            if (k < a) { b = a; a = k; } else if (k < b) b = k;
          }
        }
        fail(ERR_DUPLICATE, inBase + (a > b ? a : b), 0);
        return 0;
      }
    }
  }
  // Move the unsorted chunks just past the output, then copy them back in order.
  const len = o - contentStart;
  if (!reserveOut(o, len)) { fail(ERR_MEMORY, inBase, 0); return 0; }
  memory.copy(o, contentStart, len);
  const delta = o - contentStart;
  let w = contentStart;
  let first = true;
  for (let x = recStart; x < recEnd; x += REC_SIZE) {
    const clen = load<u32>(x + 12);
    if (clen == IGNORED) continue;
    if (!first) store<u8>(w++, 0x2c);
    first = false;
    const cs = <usize>load<u32>(x + 8);
    copyBytes(w, cs + delta, clen);
    store<u32>(x + 8, <u32>w); // where the chunk lives now (F_MEMBER locates its array by it)
    w += clen;
  }
  return w;
}

/**
 * Canonicalizes the input laid out by layout(). `ignoreCount` keys were written at the layout
 * address. Returns 0 on success, else an error code; details are in RESULT.
 */
export function run(n: u32, ignoreCount: i32, flags: i32): i32 {
  ignCount = ignoreCount;
  stringified = (flags & F_STRINGIFIED) != 0;
  trusted = stringified || (flags & F_TRUSTED_UTF8) != 0;
  errCode = 0;
  errOffset = 0;
  errDetail = 0;
  if (!layout(n)) {
    store<u32>(RESULT, <u32>ERR_MEMORY);
    store<u32>(RESULT + 4, 0);
    return ERR_MEMORY;
  }
  memory.fill(inEnd, 0, INPUT_PAD);
  const status = parse(flags);
  store<u32>(RESULT, <u32>status);
  store<u32>(RESULT + 4, <u32>errOffset);
  store<u32>(RESULT + 8, <u32>errDetail);
  return status;
}

/**
 * Canonicalizes the n bytes of valid UTF-8 JSON text at `at` (anywhere in memory: the work
 * regions follow it) into the output run() reports (RESULT + 12/16); 0 or an error code. For
 * the request view (view.ts), which canonicalizes a value it wrote at the end of its output.
 */
export function canonicalAt(at: usize, n: u32): i32 {
  inBase = at;
  return run(n, 0, F_TRUSTED_UTF8);
}

function parse(flags: i32): i32 {
  let p = skipWs(inBase);
  let o = outBase;
  let depth: i32 = 0;
  let sp = STACK; // top frame (valid when depth > 0)
  let recTop = recBase;
  const elements = (flags & F_ELEMENTS) != 0;
  const member = (flags & F_MEMBER) != 0;
  const rootIgnore = (flags & F_ROOT_IGNORE) != 0;
  let spanTop = spansBase;
  let elemStart: usize = 0;
  let nulls: u32 = 0;
  // Element spans are taken from one array: the top-level one (F_ELEMENTS, depth 1) or the
  // target member's value (F_MEMBER, depth 2). In F_MEMBER mode spans are first stored relative
  // to the member's chunk, because sorting the root object may still move that chunk.
  const elemDepth: i32 = member ? 2 : 1;
  let elemActive = false;
  let pendingRec: usize = 0; // a root member with the target name whose value comes next
  // The target member is known by its key's input offset: sorting permutes the records, so a
  // record address would not survive the root object's close.
  let targetKey: u32 = 0;
  let found = false;
  let rootRecEnd: usize = 0;
  let elemBase: usize = 0;
  let targetPtr: usize = 0;
  let targetLen: u32 = 0;
  if (member) {
    let q = ignBase;
    for (let i = 0; i < ignCount; i++) q = align8(q + 4 + load<u32>(q));
    targetLen = load<u32>(q);
    targetPtr = q + 4;
  }

  if ((elements || member) && load<u8>(p) != (elements ? 0x5b : 0x7b)) {
    if (p >= inEnd) return fail(ERR_JSON, inEnd, D_END);
    return fail(ERR_NOT_ARRAY, p, member ? 1 : 0);
  }

  // Each turn reads one value at p; afterwards control falls to the "after value" section.
  while (true) {
    let c = <u32>load<u8>(p);
    let opened = false;
    const isTarget = pendingRec;
    pendingRec = 0;
    if (isTarget != 0 && c != 0x5b) return fail(ERR_NOT_ARRAY, p, 2);
    if (c == 0x22) {
      p = writeString(p, o);
      if (p == 0) return errCode;
      o = gO;
    } else if (isDefined(VALUE_FRAMES) && c == FRAME && stringified) {
      p = writeFramed(p, o);
      if (p == 0) return errCode;
      o = gO;
    } else if (c == 0x7b || c == 0x5b) {
      if (depth == MAX_DEPTH) return fail(ERR_DEPTH, p, 0);
      depth++;
      sp = STACK + <usize>(depth - 1) * FRAME_SIZE;
      store<u8>(o++, <u8>c);
      p = skipWs(p + 1);
      if (c == 0x5b) {
        store<u32>(sp, KIND_ARRAY);
        if (load<u8>(p) == 0x5d) {
          p++;
          store<u8>(o++, 0x5d);
          depth--;
          sp -= FRAME_SIZE;
          if (isTarget != 0) found = true;
        } else {
          if (elements && depth == 1) {
            elemActive = true;
            elemStart = o;
          } else if (isTarget != 0) {
            elemActive = true;
            elemStart = o;
            found = true;
            targetKey = load<u32>(isTarget + 16);
            elemBase = <usize>load<u32>(isTarget + 8);
          }
          opened = true;
        }
      } else {
        store<u32>(sp, KIND_OBJECT);
        store<u32>(sp + 4, <u32>recTop);
        store<u32>(sp + 8, <u32>o);
        if (load<u8>(p) == 0x7d) {
          p++;
          store<u8>(o++, 0x7d);
          depth--;
          sp -= FRAME_SIZE;
        } else {
          // First member key.
          const r = beginMember(p, o, recTop, false, !rootIgnore || depth == 1);
          if (r == 0) return errCode;
          p = r;
          o = gO;
          if (member && depth == 1 && isTargetKey(recTop, targetPtr, targetLen)) pendingRec = recTop;
          store<u32>(sp + 12, <u32>recTop);
          recTop += REC_SIZE;
          opened = true;
        }
      }
    } else if (c - 0x30 < 10 || c == 0x2d) {
      const start = p;
      if (c == 0x2d) p++;
      let d = <u32>load<u8>(p);
      if (d == 0x30) {
        p++;
        if (<u32>load<u8>(p) - 0x30 < 10) return fail(ERR_JSON, p, D_NUMBER);
      } else if (d - 0x31 < 9) {
        p++;
        while (<u32>load<u8>(p) - 0x30 < 10) p++;
      } else {
        return failAt(p, D_NUMBER);
      }
      if (load<u8>(p) == 0x2e) {
        p++;
        if (<u32>load<u8>(p) - 0x30 >= 10) return failAt(p, D_NUMBER);
        while (<u32>load<u8>(p) - 0x30 < 10) p++;
      }
      if ((load<u8>(p) | 0x20) == 0x65) {
        p++;
        const s = load<u8>(p);
        if (s == 0x2b || s == 0x2d) p++;
        if (<u32>load<u8>(p) - 0x30 >= 10) return failAt(p, D_NUMBER);
        while (<u32>load<u8>(p) - 0x30 < 10) p++;
      }
      if (stringified) {
        // Number.prototype.toString's spelling, which RFC 8785 prescribes: copy it.
        copyBytes(o, start, p - start);
        o += p - start;
      } else {
        // A number can outgrow its spelling ("1e20" is 21 digits), so keep the invariant that
        // the output has at least as much room left as the input has bytes left.
        if (!reserveOut(o, 32 + (inEnd - p))) return fail(ERR_MEMORY, start, 0);
        const w = writeCanonicalNumber(start, <i32>(p - start), o);
        if (w < 0) return fail(ERR_NON_FINITE, start, 0);
        o += w;
      }
    } else if (c == 0x74) {
      if (load<u32>(p) != 0x65757274) return fail(ERR_JSON, p, D_LITERAL); // "true"
      store<u32>(o, 0x65757274);
      p += 4;
      o += 4;
    } else if (c == 0x66) {
      if (load<u32>(p + 1) != 0x65736c61) return fail(ERR_JSON, p, D_LITERAL); // "alse"
      store<u8>(o, 0x66);
      store<u32>(o + 1, 0x65736c61);
      p += 5;
      o += 5;
    } else if (c == 0x6e) {
      if (load<u32>(p) != 0x6c6c756e) return fail(ERR_JSON, p, D_LITERAL); // "null"
      store<u32>(o, 0x6c6c756e);
      p += 4;
      o += 4;
      nulls++;
    } else {
      return failAt(p, D_VALUE);
    }
    if (opened) continue;

    // After a complete value: close containers until one expects another item.
    while (true) {
      if (depth == 0) {
        p = skipWs(p);
        if (p != inEnd) return fail(ERR_JSON, p, D_TRAILING);
        if (member) {
          if (!found) return fail(ERR_NOT_ARRAY, inBase, 3);
          // The member's chunk may have moved when the root object was sorted: rebase spans.
          let base: u32 = 0;
          for (let x = recBase; x < rootRecEnd; x += REC_SIZE) {
            if (load<u32>(x + 16) == targetKey) base = load<u32>(x + 8);
          }
          for (let q = spansBase; q < spanTop; q += 8) store<u32>(q, load<u32>(q) + base);
        }
        store<u32>(RESULT + 12, <u32>outBase);
        store<u32>(RESULT + 16, <u32>(o - outBase));
        store<u32>(RESULT + 20, <u32>((spanTop - spansBase) >> 3));
        store<u32>(RESULT + 24, <u32>spansBase);
        store<u32>(RESULT + 40, nulls);
        return 0;
      }
      p = skipWs(p);
      c = <u32>load<u8>(p);
      if (load<u32>(sp) == KIND_ARRAY) {
        const spanning = elemActive && depth == elemDepth;
        if (spanning) {
          store<u32>(spanTop, <u32>(elemStart - elemBase));
          store<u32>(spanTop + 4, <u32>(o - elemStart));
          spanTop += 8;
        }
        if (c == 0x2c) {
          store<u8>(o++, 0x2c);
          p = skipWs(p + 1);
          if (spanning) elemStart = o;
          break;
        }
        if (c == 0x5d) {
          store<u8>(o++, 0x5d);
          p++;
          if (spanning) elemActive = false;
          depth--;
          sp -= FRAME_SIZE;
          continue;
        }
        return failAt(p, D_ARRAY_SEP);
      }
      // Object: finish the member whose value just ended.
      const rec = <usize>load<u32>(sp + 12);
      if (load<u32>(rec + 12) == IGNORED) {
        // Drop the member's bytes (and its leading comma) but keep its record for the
        // duplicate-key check.
        o = <usize>load<u32>(rec + 8);
      } else {
        store<u32>(rec + 12, <u32>(o - <usize>load<u32>(rec + 8)));
      }
      if (c == 0x2c) {
        p = skipWs(p + 1);
        const r = beginMember(p, o, recTop, true, !rootIgnore || depth == 1);
        if (r == 0) return errCode;
        p = r;
        o = gO;
        if (member && depth == 1 && isTargetKey(recTop, targetPtr, targetLen)) pendingRec = recTop;
        store<u32>(sp + 12, <u32>recTop);
        recTop += REC_SIZE;
        break;
      }
      if (c == 0x7d) {
        const rs = <usize>load<u32>(sp + 4);
        const cs = <usize>load<u32>(sp + 8);
        // A leading ignored member leaves a comma before the first kept one; strip it.
        o = closeObject(rs, recTop, cs, o);
        if (o == 0) return errCode;
        if (o > cs && load<u8>(cs) == 0x2c) {
          memory.copy(cs, cs + 1, o - cs - 1);
          o--;
          for (let x = rs; x < recTop; x += REC_SIZE) store<u32>(x + 8, load<u32>(x + 8) - 1);
        }
        store<u8>(o++, 0x7d);
        p++;
        if (depth == 1) rootRecEnd = recTop;
        recTop = rs;
        depth--;
        sp -= FRAME_SIZE;
        continue;
      }
      return failAt(p, D_OBJECT_SEP);
    }
    p = skipWs(p);
  }
}

@inline function isTargetKey(rec: usize, name: usize, len: u32): bool {
  return load<u32>(rec + 4) == len && load<u32>(rec + 12) != IGNORED && compareKeys(load<u32>(rec), len, name, len) == 0;
}

/**
 * Reads `"key":` at p (after whitespace), writes the member prefix (with a separating comma if
 * `comma`) and fills the record at rec; `ignorable` says whether ignore keys apply at this depth. Returns the position of the value (0 on error); the
 * output cursor is left in gO.
 */
function beginMember(p: usize, o: usize, rec: usize, comma: bool, ignorable: bool): usize {
  if (load<u8>(p) != 0x22) {
    failAt(p, D_KEY);
    return 0;
  }
  const keyAt = p;
  const chunk = o;
  if (comma) store<u8>(o++, 0x2c);
  const keyOut = o;
  const q = writeString(p, o);
  if (q == 0) return 0;
  let kPtr = keyAt + 1;
  let kLen = <u32>(q - 1 - kPtr);
  if (gEscaped) {
    // Escapes make the spelling differ from the key, so compare the decoded form instead. The
    // arena is reused per call; keys are never longer decoded than spelled.
    const a = arenaBase + (keyAt - inBase);
    kLen = <u32>(decodeString(kPtr, q - 1, a) - a);
    kPtr = a;
  }
  o = gO;
  store<u8>(o++, 0x3a);
  p = skipWs(q);
  if (load<u8>(p) != 0x3a) {
    failAt(p, D_COLON);
    return 0;
  }
  p = skipWs(p + 1);
  store<u32>(rec, <u32>kPtr);
  store<u32>(rec + 4, kLen);
  // The chunk excludes the separating comma: sorting re-inserts commas.
  store<u32>(rec + 8, <u32>(comma ? chunk + 1 : chunk));
  store<u32>(rec + 12, ignorable && ignCount > 0 && isIgnored(kPtr, kLen) ? IGNORED : 0);
  store<u32>(rec + 16, <u32>(keyAt - inBase));
  if (load<u32>(rec + 12) == IGNORED) store<u32>(rec + 8, <u32>chunk);
  gO = o;
  return p;
}
