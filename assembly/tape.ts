// A structural index ("tape") of JSON text: one fixed-size record per value, in document order,
// with the value's byte range in the input, where its subtree ends, and for object members the
// key's byte range. No output text, no sorting, no decoding.
//
// Why: a caller that needs to look at a few members of a large document (a request body: its
// roles, types and call ids, but not the 30 KB of message text) can then read just those bytes
// and copy every other value as a byte range, without JSON.parse building every string and
// object first. src/match/raw-keys.ts builds a request's normalized view that way and hands it
// back to the canonical writer (json.ts), which validates and canonicalizes whatever is copied.
//
// Strictness: the grammar is RFC 8259's, exactly what JSON.parse accepts (numbers, literals,
// escapes, no raw control characters), narrowed to I-JSON as the canonical writer (json.ts)
// narrows it: a lone-surrogate escape, a number that overflows a double, or a duplicate member
// name fails here too. The caller copies only some values to the canonical writer and drops
// the rest (a request's cache_control, stream, ...), so a fault in a dropped value would
// otherwise go unseen, and a body the strict reader rejects would get a key. Duplicate names
// are compared by their raw bytes; an object with an escaped name (or more than DUP_MAX
// members) is flagged F_CHECK_KEYS for the caller to compare decoded names. UTF-8 is not
// validated here (the caller checks the whole input first).

import { ensureMemory, INPUT_PAD, MAX_DEPTH, RESULT, skipWs } from "./json";
import { escapedBytes, escapeLetters } from "./escape";
import { parseNumber } from "./number";

// Record layout, 8 x u32: kind | flags, start, end (input offsets, end exclusive), next (index of
// the first record after this value's subtree), keyStart, keyEnd (the member's key including
// its quotes; 0xffffffff when the value is no object member), keyHash, valueHash (hashBytes() of
// the raw bytes between the quotes, for keys and for strings up to HASHED_MAX bytes; else 0).
const NODE: usize = 32;
const T_NULL: u32 = 1;
const T_FALSE: u32 = 2;
const T_TRUE: u32 = 3;
const T_NUMBER: u32 = 4;
const T_STRING: u32 = 5;
const T_ARRAY: u32 = 6;
const T_OBJECT: u32 = 7;
const F_ESCAPED: u32 = 0x100; // the string value has a backslash escape
const F_KEY_ESCAPED: u32 = 0x200; // the member's key has a backslash escape
const F_CHECK_KEYS: u32 = 0x400; // an object whose member names the caller must check for duplicates
// The string value has an escape RFC 8785 spells otherwise (`\/`, any `\u`; some `\u00xx` are
// canonical, but JSON.stringify never writes them but for control characters): the view
// (view.ts) then leaves canonicalizing to the canonical writer.
const F_ODD_ESCAPE: u32 = 0x800;
const DUP_MAX: u32 = 32;
const NO_KEY: u32 = 0xffffffff;
const HASHED_MAX: usize = 64;

const TSTACK: usize = memory.data(<i32>(MAX_DEPTH as usize * 4 + 16));

let gEsc: bool = false;
let gOdd: bool = false; // the string scanned last has an escape that is not RFC 8785's (F_ODD_ESCAPE)
let gHash: u32 = 0;

@inline function isHex(c: u32): bool {
  return c - 0x30 < 10 || (c | 0x20) - 0x61 < 6;
}

/** The code unit of the four hex digits at p, or -1. */
function hex4(p: usize): i32 {
  let v: i32 = 0;
  for (let i: usize = 0; i < 4; i++) {
    const c = <u32>load<u8>(p + i);
    let d: i32;
    if (c - 0x30 < 10) d = <i32>(c - 0x30);
    else if ((c | 0x20) - 0x61 < 6) d = <i32>((c | 0x20) - 0x61 + 10);
    else return -1;
    v = (v << 4) | d;
  }
  return v;
}

/**
 * Whether the members of the object record at o (whose subtree ends before record `end`) have
 * distinct names, comparing raw bytes; escaped names or many members set F_CHECK_KEYS instead.
 */
function distinctKeys(base: usize, at: usize, o: u32, end: u32): bool {
  let n: u32 = 0;
  let escaped = false;
  for (let c = o + 1; c < end; c = load<u32>(base + <usize>c * NODE + 12)) {
    n++;
    if ((load<u32>(base + <usize>c * NODE) & F_KEY_ESCAPED) != 0) escaped = true;
  }
  if (n < 2) return true;
  if (escaped || n > DUP_MAX) {
    const q = base + <usize>o * NODE;
    store<u32>(q, load<u32>(q) | F_CHECK_KEYS);
    return true;
  }
  for (let a = o + 1; a < end; a = load<u32>(base + <usize>a * NODE + 12)) {
    const ra = base + <usize>a * NODE;
    const as = <usize>load<u32>(ra + 16);
    const al = <usize>load<u32>(ra + 20) - as;
    const ah = load<u32>(ra + 24);
    for (let b = load<u32>(ra + 12); b < end; b = load<u32>(base + <usize>b * NODE + 12)) {
      const rb = base + <usize>b * NODE;
      const bs = <usize>load<u32>(rb + 16);
      if (load<u32>(rb + 24) != ah || <usize>load<u32>(rb + 20) - bs != al) continue;
      if (memory.compare(at + as, at + bs, al) == 0) return false;
    }
  }
  return true;
}

/**
 * Whether the object record at o (whose subtree ends before record `end`, and which has a
 * member) has one member, or two with unescaped names that differ: most objects of a request
 * (a message's role and content, a part's type and text), decided here without distinctKeys()'s
 * loops. False: distinctKeys() decides.
 */
// @ts-ignore: decorator
@inline function smallDistinct(base: usize, at: usize, o: u32, end: u32): bool {
  const ra = base + <usize>(o + 1) * NODE;
  const b = load<u32>(ra + 12);
  if (b >= end) return true;
  const rb = base + <usize>b * NODE;
  if (load<u32>(rb + 12) < end || ((load<u32>(ra) | load<u32>(rb)) & F_KEY_ESCAPED) != 0) return false;
  // Distinct when the hashes or the lengths differ (names past HASHED_MAX bytes have hash 0).
  const as = <usize>load<u32>(ra + 16);
  const bs = <usize>load<u32>(rb + 16);
  const al = <usize>load<u32>(ra + 20) - as;
  if (load<u32>(ra + 24) != load<u32>(rb + 24) || <usize>load<u32>(rb + 20) - bs != al) return true;
  return memory.compare(at + as, at + bs, al) != 0;
}

/** Whether the member key at [keyStart, keyEnd) of the input at `at` is exactly `"tools"`. */
function isToolsKey(at: usize, keyStart: u32, keyEnd: u32): bool {
  if (keyStart == NO_KEY || keyEnd - keyStart != 7) return false;
  const k = at + <usize>keyStart;
  // "too (as one u32, little-endian) and ls" (as one u16, then the quote).
  return load<u32>(k) == 0x6f6f7422 && load<u16>(k + 4) == 0x736c && load<u8>(k + 6) == 0x22;
}

/**
 * Whether a value at `depth` is where the loader asked for the skip (RESULT + 116): 0, a member
 * of the root; 1, a member of the root's `toolConfig` object (Bedrock Converse's tools).
 */
function skipPlace(depth: i32, base: usize, at: usize, place: u32): bool {
  if (place == 0) return depth == 1;
  if (place != 1 || depth != 2) return false;
  const o = base + <usize>load<u32>(TSTACK + 4) * NODE;
  const ks = load<u32>(o + 16);
  if ((load<u32>(o) & 0xff) != T_OBJECT || ks == NO_KEY || load<u32>(o + 20) - ks != 12) return false;
  const k = at + <usize>ks;
  // "toolConfig" with its quotes: "too, lCon, fig" as u32, u32 and u32, little-endian.
  return load<u32>(k) == 0x6f6f7422 && load<u32>(k + 4) == 0x6e6f436c && load<u32>(k + 8) == 0x22676966;
}

/** Scans the string whose quote is at p; returns the position after its closing quote, or 0. */
function scanString(p: usize, end: usize): usize {
  const start = p + 1;
  gEsc = false;
  gOdd = false;
  p = start;
  while (true) {
    if (ASC_FEATURE_SIMD) {
      const two = i8x16.splat(0x02);
      const zero = i8x16.splat(0);
      const bslash = i8x16.splat(0x5c);
      const space = i8x16.splat(0x20);
      // 1 when the step's first byte is escaped by a backslash that ended the step before.
      let carry: u32 = 0;
      while (true) {
        const v = v128.load(p);
        // A quote or a control character: flipping bit 1 keeps 0x00-0x1f among themselves and
        // turns the quote into 0x20, so both are the bytes <= 0x20 after it (one compare).
        const stopV = i8x16.eq(i8x16.sub_sat_u(v128.xor(v, two), space), zero);
        const slashV = i8x16.eq(v, bslash);
        if ((<u32>i8x16.bitmask(v128.or(stopV, slashV)) | carry) == 0) { p += 16; continue; }
        let stops = <u32>i8x16.bitmask(stopV);
        const slashes = <u32>i8x16.bitmask(slashV);
        if ((slashes | carry) != 0) {
          // Escapes of one letter (\\ \" \/ \b \f \n \r \t: arguments text is full of them)
          // are passed over for the whole step at once; any other (\u, or a fault) stops the
          // step at its backslash, and what follows it is scanned one escape at a time below.
          // With no backslash next to another and none carried in, each escapes the byte after it.
          const letters = ((slashes & (slashes << 1)) | carry) == 0 ? slashes << 1 : escapedBytes<u32>(slashes, carry, 0x5555);
          // Escaped quotes and line feeds (JSON in JSON, text with line breaks) are valid and
          // RFC 8785's: when the step escapes nothing else, its letters need no classes.
          const common = <u32>i8x16.bitmask(v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x6e))));
          let bad: u32 = 0;
          let odd: u32 = 0;
          if ((letters & ~common & 0xffff) != 0) {
            const cls = escapeLetters(v, true);
            bad = letters & <u32>i8x16.bitmask(i8x16.eq(cls, i8x16.splat(0)));
            odd = letters & <u32>i8x16.bitmask(i8x16.eq(cls, i8x16.splat(2)));
          }
          if ((bad & carry) != 0) { p--; break; } // the escape the last step's end cut
          stops = (stops & ~letters) | (bad >> 1);
          const before = stops == 0 ? <u32>0xffff : (<u32>1 << ctz(stops)) - 1;
          if ((slashes & before) != 0) gEsc = true;
          if ((odd & before) != 0) gOdd = true;
          if (stops == 0) {
            carry = letters >> 16;
            p += 16;
            continue;
          }
        }
        p += <usize>ctz(stops);
        break;
      }
    } else {
      while (true) {
        const c = <u32>load<u8>(p);
        if (c == 0x22 || c == 0x5c || c < 0x20) break;
        p++;
      }
    }
    const c = <u32>load<u8>(p);
    if (c == 0x22) break;
    if (c == 0x5c) {
      gEsc = true;
      const e = <u32>load<u8>(p + 1);
      if (e == 0x75) {
        gOdd = true;
        const cu = hex4(p + 2);
        if (cu < 0) return 0;
        p += 6;
        if (cu >= 0xd800 && cu <= 0xdfff) {
          // A high surrogate must be followed by an escaped low one; anything else is a lone
          // surrogate, which has no UTF-8 form (the canonical writer's E_LONE_SURROGATE).
          if (cu >= 0xdc00 || load<u8>(p) != 0x5c || load<u8>(p + 1) != 0x75) return 0;
          const lo = hex4(p + 2);
          if (lo < 0xdc00 || lo > 0xdfff) return 0;
          p += 6;
        }
        continue;
      }
      if (e == 0x22 || e == 0x5c || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) {
        if (e == 0x2f) gOdd = true;
        p += 2;
        continue;
      }
      return 0;
    }
    return 0; // a control character, or the zero padding after the input
  }
  if (p >= end) return 0;
  gHash = p - start <= HASHED_MAX ? hashBytes(start, p) : 0;
  return p + 1;
}

/**
 * The hash of the bytes [s, e) that records carry (keyHash, valueHash): eight bytes a step (the
 * last step's bytes past e masked off), a 64-bit multiply with the product's high half folded
 * down. A string of up to 8 bytes (most keys and short values) is one multiply. Only ever
 * compared with hashes made here (view.ts literalHash() hashes its names with it too). Reads up
 * to 7 bytes past e (the input's padding; view.ts's scratch buffer sits in static memory).
 */
export function hashBytes(s: usize, e: usize): u32 {
  let h: u64 = 0x9e3779b97f4a7c15 ^ <u64>(e - s);
  let q = s;
  for (; q + 8 <= e; q += 8) {
    h = (h ^ load<u64>(q)) * 0xff51afd7ed558ccd;
    h ^= h >> 32;
  }
  if (q < e) {
    h = (h ^ (load<u64>(q) & (<u64>-1 >> (<u64>(q + 8 - e) << 3)))) * 0xff51afd7ed558ccd;
    h ^= h >> 32;
  }
  return <u32>h;
}

/**
 * skipWs() with the common case first: compact JSON has no whitespace between tokens, and a byte
 * above 0x20 is none in one compare instead of four.
 */
// @ts-ignore: decorator
@inline function ws(p: usize): usize {
  return <u32>load<u8>(p) > 0x20 ? p : skipWs(p);
}

/**
 * Indexes the n bytes of JSON text at `at` (written there after prepare()). Returns the number
 * of records, or -1 if the text is not JSON (or nests deeper than MAX_DEPTH), -2 if memory
 * cannot grow. RESULT + 48 holds the address of the records.
 */
export function index(at: usize, n: u32): i32 {
  // A root `tools` array the loader knows (RESULT + 100/104: its input offsets, checked byte
  // for byte against a value indexed whole by an earlier call whose view was written; RESULT +
  // 116: 1 for the `tools` of the root's `toolConfig` instead): one record with no children.
  // Read once; every other call indexes everything.
  const skipAt = load<u32>(RESULT + 100);
  const skipEnd = load<u32>(RESULT + 104);
  const skipIn = load<u32>(RESULT + 116);
  store<u32>(RESULT + 100, NO_KEY);
  store<u32>(RESULT + 116, 0);
  store<u32>(RESULT + 112, 0);
  const end = at + <usize>n;
  memory.fill(end, 0, INPUT_PAD);
  const base = (end + INPUT_PAD + 7) & ~(<usize>7);
  // A value takes at least one byte and all but the last a separator too.
  if (!ensureMemory(base + (<usize>n / 2 + 2) * NODE)) return -2;
  store<u32>(RESULT + 48, <u32>base);
  let count: u32 = 0;
  let depth: i32 = 0;
  let keyStart: u32 = NO_KEY;
  let keyEnd: u32 = 0;
  let keyHash: u32 = 0;
  let keyFlag: u32 = 0;
  // The innermost open container (when depth > 0): its record, and whether it is an object.
  let top: usize = 0;
  let inObject = false;
  let p = ws(at);
  while (true) {
    // One value at p.
    const q = base + <usize>count * NODE;
    const c = <u32>load<u8>(p);
    const start = p;
    let kind: u32 = 0;
    let flags: u32 = keyFlag;
    let valueHash: u32 = 0;
    let opened = false;
    if (c == 0x22) {
      p = scanString(p, end);
      if (p == 0) return -1;
      kind = T_STRING;
      if (gEsc) flags |= gOdd ? F_ESCAPED | F_ODD_ESCAPE : F_ESCAPED;
      valueHash = gHash;
    } else if (c == 0x5b && <u32>(start - at) == skipAt && skipEnd <= n && isToolsKey(at, keyStart, keyEnd) && skipPlace(depth, base, at, skipIn)) {
      kind = T_ARRAY;
      p = at + <usize>skipEnd;
      store<u32>(RESULT + 112, count + 1);
    } else if (c == 0x7b || c == 0x5b) {
      if (depth == MAX_DEPTH) return -1;
      kind = c == 0x7b ? T_OBJECT : T_ARRAY;
      p = ws(p + 1);
      const close: u32 = c == 0x7b ? 0x7d : 0x5d;
      if (<u32>load<u8>(p) == close) {
        p++;
      } else {
        store<u32>(TSTACK + (<usize>depth << 2), count);
        depth++;
        top = <usize>count;
        inObject = c == 0x7b;
        opened = true;
      }
    } else if (c - 0x30 < 10 || c == 0x2d) {
      if (c == 0x2d) p++;
      const d = <u32>load<u8>(p);
      if (d == 0x30) {
        p++;
      } else if (d - 0x31 < 9) {
        p++;
        while (<u32>load<u8>(p) - 0x30 < 10) p++;
      } else {
        return -1;
      }
      if (load<u8>(p) == 0x2e) {
        p++;
        if (<u32>load<u8>(p) - 0x30 >= 10) return -1;
        while (<u32>load<u8>(p) - 0x30 < 10) p++;
      }
      let exponent = false;
      if ((load<u8>(p) | 0x20) == 0x65) {
        exponent = true;
        p++;
        const s = load<u8>(p);
        if (s == 0x2b || s == 0x2d) p++;
        if (<u32>load<u8>(p) - 0x30 >= 10) return -1;
        while (<u32>load<u8>(p) - 0x30 < 10) p++;
      }
      if (p > end) return -1;
      // Only an exponent or a very long integer part can overflow a double (E_NON_FINITE).
      if (p - start > 300 || exponent) {
        if (!isFinite(parseNumber(start, <i32>(p - start)))) return -1;
      }
      kind = T_NUMBER;
    } else if (c == 0x74 && load<u32>(p) == 0x65757274) {
      p += 4;
      kind = T_TRUE;
    } else if (c == 0x66 && load<u32>(p + 1) == 0x65736c61) {
      p += 5;
      kind = T_FALSE;
    } else if (c == 0x6e && load<u32>(p) == 0x6c6c756e) {
      p += 4;
      kind = T_NULL;
    } else {
      return -1;
    }
    if (p > end) return -1;
    store<u32>(q, kind | flags);
    store<u32>(q + 4, <u32>(start - at));
    store<u32>(q + 8, <u32>(p - at));
    store<u32>(q + 12, count + 1);
    store<u32>(q + 16, keyStart);
    store<u32>(q + 20, keyEnd);
    store<u32>(q + 24, keyHash);
    store<u32>(q + 28, valueHash);
    count++;
    keyStart = NO_KEY;
    keyFlag = 0;
    if (!opened) {
      // After a complete value: close containers until one expects another item.
      while (true) {
        if (depth == 0) {
          p = ws(p);
          return p == end ? <i32>count : -1;
        }
        p = ws(p);
        const s = <u32>load<u8>(p);
        if (s == 0x2c) {
          p = ws(p + 1);
          break;
        }
        if (s == (inObject ? 0x7d : 0x5d)) {
          p++;
          const o = base + top * NODE;
          store<u32>(o + 8, <u32>(p - at));
          store<u32>(o + 12, count);
          if (inObject && !smallDistinct(base, at, <u32>top, count) && !distinctKeys(base, at, <u32>top, count)) return -1;
          depth--;
          if (depth > 0) {
            top = <usize>load<u32>(TSTACK + (<usize>(depth - 1) << 2));
            inObject = (load<u32>(base + top * NODE) & 0xff) == T_OBJECT;
          }
          continue;
        }
        return -1;
      }
    }
    // The next item: for an object member, its key first.
    if (inObject) {
      if (load<u8>(p) != 0x22) return -1;
      const k = scanString(p, end);
      if (k == 0) return -1;
      keyStart = <u32>(p - at);
      keyEnd = <u32>(k - at);
      keyHash = gHash;
      keyFlag = gEsc ? F_KEY_ESCAPED : 0;
      p = ws(k);
      if (load<u8>(p) != 0x3a) return -1;
      p = ws(p + 1);
    }
  }
}
