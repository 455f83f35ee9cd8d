// Exact conversion between JSON number tokens and IEEE 754 binary64, as needed
// by RFC 8785 (JSON Canonicalization Scheme), whose number serialization is
// ECMAScript's Number::toString.
//
//   parseNumber          decimal text -> correctly rounded binary64 (ties-to-even)
//   formatNumber         binary64 -> shortest round-trip decimal, ES layout
//   writeCanonicalNumber token -> canonical token (with fast paths that skip both)
//
// Runs under `--runtime stub`: no heap, no strings, no arrays. All scratch
// space is static (memory.data), so the functions are not reentrant, but they
// never allocate and every loop is bounded: any token the JSON grammar admits
// is handled exactly, however many digits or exponent digits it has.

import {
  LOG10_POW2_MUL, LOG10_POW2_ADD, LOG10_POW2_SHIFT,
  LOG10_POW2_34_MUL, LOG10_POW2_34_ADD, LOG10_POW2_34_SHIFT,
  LOG2_POW10_MUL, LOG2_POW10_ADD, LOG2_POW10_SHIFT,
  POW5_128, POW5_QMIN, POW5_EXACT_QMAX, LEMIRE_QMIN, LEMIRE_QMAX,
  POW10_F64, POW10_U64, POW5_U32, DIGIT_PAIRS,
} from "./generated/number-tables";

const MASK52: u64 = 0x000F_FFFF_FFFF_FFFF;
const MASK63: u64 = 0x7FFF_FFFF_FFFF_FFFF;
const HIDDEN: u64 = 0x0010_0000_0000_0000;
const INF_BITS: u64 = 0x7FF0_0000_0000_0000;
const MAX_BITS: u64 = 0x7FEF_FFFF_FFFF_FFFF;
const TWO53: u64 = 0x0020_0000_0000_0000;

const CH_MINUS: u8 = 0x2D;
const CH_PLUS: u8 = 0x2B;
const CH_DOT: u8 = 0x2E;
const CH_0: u8 = 0x30;
const CH_E: u8 = 0x65;

// Exponent digits beyond this magnitude cannot change the result (any token is
// shorter than 2^32 bytes, so |decimal point position| < 2^32 << 10^15); we stop
// accumulating instead of overflowing.
const EXP_CLAMP: i64 = 1_000_000_000_000_000;

/**
 * The exponent of a validated token whose remaining bytes [p, end) are empty or "e[+-]digits";
 * saturates at EXP_CLAMP so absurd exponents cannot overflow (they only decide 0 or Infinity).
 */
@inline function readExponent(p: usize, end: usize): i64 {
  let e: i64 = 0;
  if (p >= end) return 0;
  p++; // 'e' or 'E'
  let eneg = false;
  const c = load<u8>(p);
  if (c == CH_MINUS) { eneg = true; p++; } else if (c == CH_PLUS) p++;
  while (p < end) {
    if (e < EXP_CLAMP) e = e * 10 + <i64>(load<u8>(p) - CH_0);
    p++;
  }
  return eneg ? -e : e;
}

// ---------------------------------------------------------------------------
// Static scratch memory (the only writable state besides a few globals).

// Significant digits kept for the exact path. Any halfway point between two
// adjacent doubles has at most 768 significant decimal digits, so keeping 800
// digits plus one sticky digit decides every comparison exactly (see exactParse).
const DIGITS_CAP: i32 = 800;
const DIGITS: usize = memory.data(DIGITS_CAP + 16, 16);

// Fixed-capacity big naturals: [len: i32][limbs: u32 x BIG_CAP], little-endian.
// The exact path needs at most ~2,750 bits (801 digits, or 54 bits times 5^1145);
// 160 limbs = 5,120 bits, and overflow is still handled conservatively.
const BIG_CAP: i32 = 160;
const BIG_BYTES: i32 = (BIG_CAP + 1) * 4;
const BIG_A: usize = memory.data(BIG_BYTES, 16);
const BIG_B: usize = memory.data(BIG_BYTES, 16);
const BIG_T: usize = memory.data(BIG_BYTES, 16);

// Digit staging: the formatter writes at most 17 digits backwards from
// DBUF_END; writeCanonicalNumber's scan copies up to 16+8 digits from DBUF.
const DBUF: usize = memory.data(32, 16);
const DBUF_END: usize = DBUF + 24;

// ---------------------------------------------------------------------------
// Small exact helpers.

// floor(q * log10(2)), floor(log10(3/4 * 2^q)), floor(e * log2(10)); the
// constants are fitted and exhaustively verified by scripts/gen-tables.mjs.
// @ts-ignore: decorator
@inline function floorLog10Pow2(q: i32): i32 {
  return (q * LOG10_POW2_MUL + LOG10_POW2_ADD) >> LOG10_POW2_SHIFT;
}
// @ts-ignore: decorator
@inline function floorLog10ThreeQuartersPow2(q: i32): i32 {
  return (q * LOG10_POW2_34_MUL + LOG10_POW2_34_ADD) >> LOG10_POW2_34_SHIFT;
}
// @ts-ignore: decorator
@inline function floorLog2Pow10(e: i32): i32 {
  return (e * LOG2_POW10_MUL + LOG2_POW10_ADD) >> LOG2_POW10_SHIFT;
}

// High 64 bits of the 128-bit product a*b. WebAssembly has no widening
// multiply, so this is schoolbook on 32-bit halves (4 i64.mul).
// @ts-ignore: decorator
@inline function mulhi(a: u64, b: u64): u64 {
  const a0 = a & 0xFFFF_FFFF, a1 = a >> 32;
  const b0 = b & 0xFFFF_FFFF, b1 = b >> 32;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const mid = (p00 >> 32) + (p01 & 0xFFFF_FFFF) + (p10 & 0xFFFF_FFFF);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

// @ts-ignore: decorator
@inline function isDigit(c: u32): bool {
  return c - CH_0 < 10;
}

// ===========================================================================
// Parsing
// ===========================================================================

// Bits of a nearby double, left behind by eiselLemire() when it cannot decide;
// the exact path walks from there.
let lemireCandidate: u64 = 0;

// Eisel-Lemire (Lemire 2021, "Number parsing at a gigabyte per second",
// Software: Practice and Experience 51(8)). Returns the bits of the correctly
// rounded positive double nearest w * 10^q, or -1 if the 128-bit product cannot
// decide the rounding.
//
// Error analysis used here (self-contained; it only needs |T - 5^q*2^s| < 1 for
// the table entry T): with w normalised to wn and z = floor(wn*T / 2^64), the
// exact scaled value E satisfies z - 1 < E < z + 2. Rounding can only differ
// across a halfway point H, which lies in that window iff z == H (54-bit prefix
// odd, remainder 0) or z == H - 1 (prefix even, remainder all ones). Exact
// binades and mantissa boundaries round the same from both sides, so they need
// no check. For 0 <= q <= 27 the table entry has a zero low word and z == E
// exactly, so a tie there is a true tie and is resolved to even.
function eiselLemire(w: u64, q: i32): i64 {
  const l = <i32>clz<u64>(w);
  const wn = w << <u64>l;
  const entry = POW5_128 + (<usize>(q - POW5_QMIN) << 4);
  const thi = load<u64>(entry);
  let lo = wn * thi;
  let hi = mulhi(wn, thi);
  let ub = <i32>(hi >> 63);
  let sh = <u64>(9 + ub);
  let mask = (<u64>1 << sh) - 1;
  let below = hi & mask;
  // biased exponent of the result's leading bit is bias + ub
  const bias = floorLog2Pow10(q) + 63 - l + 1023;
  let tie = false;
  let ambiguous = false;
  // The omitted low product adds less than 2^64 to z; it can only move the
  // 54-bit prefix or its rounding when the 9-10 bits under the prefix are all
  // zeros or all ones (the paper's "second product" test). Otherwise skip it. Subnormals
  // round higher up and always take the full product.
  if (below == 0 || below == mask || bias + ub <= 0) {
    const nlo = lo + mulhi(wn, load<u64>(entry, 8));
    hi += <u64>(nlo < lo);
    lo = nlo;
    ub = <i32>(hi >> 63);
    sh = <u64>(9 + ub);
    mask = (<u64>1 << sh) - 1;
    below = hi & mask;
    const m54 = hi >> sh;
    const be0 = bias + ub;
    if (be0 <= 0) {
      // Subnormal: 1 - be0 more bits fall below the rounding bit. The same
      // halfway-window test applies at that position. No exact tie is
      // possible here (q < -300), so a tie-looking pattern means "ask the
      // exact path".
      const drop = <u64>(1 - be0);
      if (drop >= 54) { lemireCandidate = 0; return -1; }
      const dmask = (<u64>1 << drop) - 1;
      const pre = m54 >> drop;
      const rem = m54 & dmask;
      if ((pre & 1) != 0 ? (rem == 0 && below == 0 && lo == 0)
                         : (rem == dmask && below == mask && lo == 0xFFFF_FFFF_FFFF_FFFF)) {
        lemireCandidate = pre >> 1;
        return -1;
      }
      // Rounding up into 2^52 yields the smallest normal's bit pattern, as it should.
      return <i64>((pre + 1) >> 1);
    }
    const odd = (m54 & 1) != 0;
    if (<u32>q <= <u32>POW5_EXACT_QMAX) {
      tie = odd && below == 0 && lo == 0;
    } else {
      ambiguous = odd ? (below == 0 && lo == 0) : (below == mask && lo == 0xFFFF_FFFF_FFFF_FFFF);
    }
  }
  let m = hi >> sh; // 54 bits: 53-bit significand plus the rounding bit
  let be = bias + ub;
  if (be >= 2047) return <i64>INF_BITS;
  if (ambiguous) {
    lemireCandidate = (<u64>be << 52) | ((m >> 1) & MASK52);
    return -1;
  }
  if (tie) {
    const half = m >> 1;
    m = half + (half & 1);
  } else {
    m = (m + 1) >> 1;
  }
  if (m == TWO53) { m = HIDDEN; be++; }
  if (be >= 2047) return <i64>INF_BITS;
  return <i64>((<u64>be << 52) | (m & MASK52));
}

// ---- fixed-capacity bignum (only used by the exact path) ------------------

// @ts-ignore: decorator
@inline function bigLen(b: usize): i32 { return load<i32>(b); }
// @ts-ignore: decorator
@inline function limb(b: usize, i: i32): usize { return b + 4 + (<usize>i << 2); }

function bigSetU64(b: usize, v: u64): void {
  store<u32>(b, <u32>v, 4);
  store<u32>(b, <u32>(v >> 32), 8);
  store<i32>(b, v >> 32 ? 2 : v ? 1 : 0);
}

// b = b * m + a. Returns false (leaving b meaningless) if it would exceed BIG_CAP.
function bigMulAdd(b: usize, m: u32, a: u32): bool {
  const n = bigLen(b);
  let carry: u64 = a;
  for (let i = 0; i < n; i++) {
    const p = limb(b, i);
    const x = <u64>load<u32>(p) * m + carry;
    store<u32>(p, <u32>x);
    carry = x >> 32;
  }
  if (carry != 0) {
    if (n >= BIG_CAP) return false;
    store<u32>(limb(b, n), <u32>carry);
    store<i32>(b, n + 1);
  }
  return true;
}

function bigMulPow5(b: usize, e: i32): bool {
  while (e >= 13) {
    if (!bigMulAdd(b, 1220703125, 0)) return false; // 5^13, the largest u32 power
    e -= 13;
  }
  return e > 0 ? bigMulAdd(b, load<u32>(POW5_U32 + (<usize>e << 2)), 0) : true;
}

function bigShl(b: usize, s: i32): bool {
  const n = bigLen(b);
  if (n == 0 || s == 0) return true;
  const words = s >> 5;
  const bits = s & 31;
  const top = load<u32>(limb(b, n - 1));
  const grow = bits != 0 && (top >> <u32>(32 - bits)) != 0 ? 1 : 0;
  const newLen = n + words + grow;
  if (newLen > BIG_CAP) return false;
  if (bits == 0) {
    for (let i = n - 1; i >= 0; i--) store<u32>(limb(b, i + words), load<u32>(limb(b, i)));
  } else {
    const rb = <u32>(32 - bits);
    if (grow) store<u32>(limb(b, n + words), top >> rb);
    for (let i = n - 1; i > 0; i--) {
      const v = (load<u32>(limb(b, i)) << <u32>bits) | (load<u32>(limb(b, i - 1)) >> rb);
      store<u32>(limb(b, i + words), v);
    }
    store<u32>(limb(b, words), load<u32>(limb(b, 0)) << <u32>bits);
  }
  for (let i = 0; i < words; i++) store<u32>(limb(b, i), 0);
  store<i32>(b, newLen);
  return true;
}

function bigCmp(a: usize, b: usize): i32 {
  const na = bigLen(a), nb = bigLen(b);
  if (na != nb) return na < nb ? -1 : 1;
  for (let i = na - 1; i >= 0; i--) {
    const x = load<u32>(limb(a, i)), y = load<u32>(limb(b, i));
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Sign of (value - halfway point above the double with these bits), where
// value = D * 10^e10 and BIG_A already holds D * 5^max(e10, 0).
// With the double written m * 2^e, the halfway point is (2m+1) * 2^(e-1); both
// sides are scaled to integers by moving the powers of 5 and 2 across.
function cmpHalfUp(bits: u64, e10: i32): i32 {
  const ef = <i32>(bits >> 52);
  const fr = bits & MASK52;
  const m = ef == 0 ? fr : fr | HIDDEN;
  const h = (ef == 0 ? -1074 : ef - 1075) - 1;
  bigSetU64(BIG_B, (m << 1) | 1);
  // A number too large for the buffers is larger than anything that fits.
  if (e10 < 0 && !bigMulPow5(BIG_B, -e10)) return -1;
  const s = e10 - h;
  if (s >= 0) {
    memory.copy(BIG_T, BIG_A, <usize>(4 + (bigLen(BIG_A) << 2)));
    if (!bigShl(BIG_T, s)) return 1;
    return bigCmp(BIG_T, BIG_B);
  }
  if (!bigShl(BIG_B, -s)) return -1;
  return bigCmp(BIG_A, BIG_B);
}

// Exact fallback: compare the decimal against halfway points with big
// integers, starting from a candidate that is already within an ulp or two.
// This is the digit-comparison idea that backs Eisel-Lemire in Lemire 2021 (and
// goes back to Clinger 1990), done with fixed-size static buffers.
//
// Digits past DIGITS_CAP are replaced by one extra digit 1 when any of them is
// nonzero: a halfway point has at most 768 significant digits, so it is a
// multiple of the unit of the 800th digit, and D < H, D == H, D > H are decided
// identically for the truncated-plus-sticky value and for the full value.
function exactParse(ptr: usize, len: i32, candidate: u64): u64 {
  let p = ptr;
  const end = ptr + <usize>len;
  if (load<u8>(p) == CH_MINUS) p++;
  let nk: i32 = 0;
  let dp: i32 = 0;
  let sticky = false;
  if (load<u8>(p) == CH_0) {
    p++;
  } else {
    while (p < end) {
      const d = <u32>load<u8>(p) - CH_0;
      if (d > 9) break;
      if (nk < DIGITS_CAP) { store<u8>(DIGITS + <usize>nk, <u8>d); nk++; }
      else sticky |= d != 0;
      dp++;
      p++;
    }
  }
  if (p < end && load<u8>(p) == CH_DOT) {
    p++;
    if (nk == 0) {
      while (p < end && load<u8>(p) == CH_0) { dp--; p++; }
    }
    while (p < end) {
      const d = <u32>load<u8>(p) - CH_0;
      if (d > 9) break;
      if (nk < DIGITS_CAP) { store<u8>(DIGITS + <usize>nk, <u8>d); nk++; }
      else sticky |= d != 0;
      p++;
    }
  }
  const e = readExponent(p, end);
  if (sticky) { store<u8>(DIGITS + <usize>nk, 1); nk++; }
  while (nk > 0 && load<u8>(DIGITS + <usize>(nk - 1)) == 0) nk--;
  // The caller only comes here when the first 19 digits put the value within
  // the finite, non-zero range, so this exponent is small.
  const e10 = <i32>(<i64>dp + e - <i64>nk);

  // BIG_A = D * 5^max(e10, 0), digits consumed nine at a time.
  store<i32>(BIG_A, 0);
  for (let i = 0; i < nk; i += 9) {
    const n = min(9, nk - i);
    let chunk: u32 = 0;
    for (let j = 0; j < n; j++) chunk = chunk * 10 + <u32>load<u8>(DIGITS + <usize>(i + j));
    bigMulAdd(BIG_A, <u32>load<u64>(POW10_U64 + (<usize>n << 3)), chunk);
  }
  if (e10 > 0) bigMulPow5(BIG_A, e10);

  let bits = candidate > MAX_BITS ? MAX_BITS : candidate;
  // Each step moves one ulp toward the value; the candidate is at most a couple
  // of ulps away, so the bound is never reached in practice.
  for (let iter = 0; iter < 64; iter++) {
    const up = cmpHalfUp(bits, e10);
    if (up > 0) {
      if (bits == MAX_BITS) return INF_BITS;
      bits++;
      continue;
    }
    if (up == 0) return (bits & 1) != 0 ? bits + 1 : bits; // tie: even significand
    if (bits == 0) return 0;
    const down = cmpHalfUp(bits - 1, e10);
    if (down < 0) { bits--; continue; }
    if (down == 0) return (bits & 1) != 0 ? bits - 1 : bits;
    return bits;
  }
  return bits;
}

// ---- token scanning ---------------------------------------------------------

// What scanToken() learned about the token (globals: AssemblyScript functions
// return one value, and wasm globals are as cheap as locals to read).
let tokNeg = false;
let tokW: u64 = 0;       // first 19 significant digits
let tokNd: i32 = 0;      // significant digits seen
let tokDp: i32 = 0;      // decimal point position relative to the first significant digit
let tokTrunc = false;    // a nonzero digit after the 19th significant one
let tokExp: i64 = 0;     // explicit exponent, clamped to +/-EXP_CLAMP
let tokLastNz: i32 = 0;  // (canonical scan only) 1 + index of the last nonzero significant digit

const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

// True if all 8 bytes are ASCII digits: each high nibble is 3, and adding 6
// to each low nibble does not carry out of it (so it was at most 9).
// @ts-ignore: decorator
@inline function eightDigits(v: u64): bool {
  return (((v & 0xF0F0_F0F0_F0F0_F0F0) ^ ASCII_ZEROS) | (((v + 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) ^ ASCII_ZEROS)) == 0;
}

// Value of 8 ASCII digits loaded little-endian (first digit in the low byte):
// combine neighbouring digits, then neighbouring pairs, then the two halves,
// each step a multiply-add inside wider lanes (the SWAR trick described in
// Lemire 2021).
// @ts-ignore: decorator
@inline function eightDigitsValue(v: u64): u64 {
  v -= ASCII_ZEROS;
  v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;     // 4 lanes of 2 digits
  v = (v * 100 + (v >> 16)) & 0x0000_FFFF_0000_FFFF;   // 2 lanes of 4 digits
  return (v & 0xFFFF_FFFF) * 10000 + (v >> 32);
}

// One pass over a validated token. With `canon`, also copies the first 16
// significant digits (ASCII) to DBUF and tracks the last nonzero digit, which
// is all writeCanonicalNumber's short-decimal path needs.
// @ts-ignore: decorator
@inline function scanToken(ptr: usize, len: i32, canon: bool): void {
  let p = ptr;
  const end = ptr + <usize>len;
  const neg = load<u8>(p) == CH_MINUS;
  if (neg) p++;
  let w: u64 = 0;
  let nd: i32 = 0;
  let dp: i32 = 0;
  let trunc = false;
  let lastNz: i32 = 0;
  let frac = false;
  if (load<u8>(p) == CH_0) {
    // The grammar allows no other leading zero; skip straight to the fraction.
    p++;
    frac = true;
  }
  // Integer digits, then (second round) fraction digits.
  for (;;) {
    if (frac) {
      if (p >= end || load<u8>(p) != CH_DOT) break;
      p++;
      if (nd == 0) {
        while (p < end && load<u8>(p) == CH_0) { dp--; p++; }
      }
    }
    while (p < end) {
      if (p + 8 <= end) {
        const v = load<u64>(p);
        // nd in 12..18 puts the 19-digit boundary inside the block: digit by digit then.
        if (eightDigits(v) && (nd <= 11 || nd >= 19)) {
          if (canon) {
            if (nd < 16) store<u64>(DBUF + <usize>nd, v);
            const nz = v ^ ASCII_ZEROS; // little-endian: the last digit is the top byte
            if (nz != 0) lastNz = nd + 8 - <i32>(clz<u64>(nz) >> 3);
          }
          if (nd <= 11) w = w * 100_000_000 + eightDigitsValue(v);
          else trunc |= v != ASCII_ZEROS;
          nd += 8;
          if (!frac) dp += 8;
          p += 8;
          continue;
        }
      }
      const d = <u32>load<u8>(p) - CH_0;
      if (d > 9) break;
      if (canon) {
        if (nd < 16) store<u8>(DBUF + <usize>nd, <u8>(d + CH_0));
        if (d != 0) lastNz = nd + 1;
      }
      if (nd < 19) w = w * 10 + <u64>d; else trunc |= d != 0;
      nd++;
      if (!frac) dp++;
      p++;
    }
    if (frac) break;
    frac = true;
  }
  const e = readExponent(p, end);
  tokNeg = neg;
  tokW = w;
  tokNd = nd;
  tokDp = dp;
  tokTrunc = trunc;
  tokExp = e;
  if (canon) tokLastNz = lastNz;
}

// parseNumber's work after scanning (the token's text is only read again on the
// rare exact path).
function finishParse(ptr: usize, len: i32): f64 {
  const w = tokW;
  const neg = tokNeg;
  if (w == 0) return neg ? -0.0 : 0.0;
  const trunc = tokTrunc;
  const q64 = <i64>tokDp + tokExp - <i64>min(tokNd, 19); // value ~ w * 10^q64
  // Clinger's fast path (Clinger 1990, "How to read floating point numbers
  // accurately"): w and 10^|q| are exact doubles, so one IEEE multiply or
  // divide is correctly rounded.
  if (!trunc && w <= TWO53) {
    if (q64 >= -22 && q64 <= 22) {
      const f = <f64>w;
      const r = q64 < 0 ? f / load<f64>(POW10_F64 + (<usize>(-q64) << 3))
                        : f * load<f64>(POW10_F64 + (<usize>q64 << 3));
      return neg ? -r : r;
    }
    // 1234e30: move surplus powers of ten into the integer while it stays exact.
    if (q64 > 22 && q64 <= 22 + 15) {
      const p10 = load<u64>(POW10_U64 + (<usize>(q64 - 22) << 3));
      if (w <= TWO53 / p10) {
        const r = <f64>(w * p10) * 1e22;
        return neg ? -r : r;
      }
    }
  }
  if (q64 < <i64>LEMIRE_QMIN) return neg ? -0.0 : 0.0;
  if (q64 > <i64>LEMIRE_QMAX) return neg ? -Infinity : Infinity;
  const q = <i32>q64;
  let bits = eiselLemire(w, q);
  // More than 19 digits: the value lies strictly between w*10^q and (w+1)*10^q;
  // if both round to the same double, so does everything in between (rounding
  // is monotonic; Lemire 2021 uses the same test).
  if (trunc && bits >= 0 && eiselLemire(w + 1, q) != bits) {
    lemireCandidate = <u64>bits;
    bits = -1;
  }
  if (bits < 0) bits = <i64>exactParse(ptr, len, lemireCandidate);
  const r = reinterpret<f64>(<u64>bits);
  return neg ? -r : r;
}

// Correctly rounded (round-half-even) IEEE binary64 value of the JSON number
// token at [ptr, ptr+len). The token must already match RFC 8259's grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? ; any digit count and any
// exponent size is handled exactly. Overflow gives +/-Infinity, underflow +/-0.
export function parseNumber(ptr: usize, len: i32): f64 {
  scanToken(ptr, len, false);
  return finishParse(ptr, len);
}

// ===========================================================================
// Formatting
// ===========================================================================

// Shortest decimal for a double, as fmtDigits * 10^fmtExp.
let fmtDigits: u64 = 0;
let fmtExp: i32 = 0;

// Giulietti's r_o (round to odd of g*cp / 2^127, g = g1*2^63 + g0), given the
// 128-bit products X = g0*cp = (x1:_) and Y = g1*cp = (y1:y0). Rounding to odd
// keeps every comparison against the even values 4s, 4t exact.
// @ts-ignore: decorator
@inline function ropFinish(x1: u64, y0: u64, y1: u64): u64 {
  const z = (y0 >> 1) + x1;
  return (y1 + (z >> 63)) | (((z & MASK63) + MASK63) >> 63);
}

// Schubfach (Giulietti 2020, "The Schubfach way to render doubles"): the
// decimal in the rounding interval of the double with the fewest digits, and
// among those the closest, ties to an even last digit; interval bounds are
// included when the significand is even. That is exactly ECMAScript's
// Number::toString choice (and V8's). Ryu (Adams 2018, "Ryū: fast
// float-to-string conversion", PLDI) yields the same digits; Schubfach needs no
// digit-removal loop, which matters where 64-bit division is the slowest op.
function toDecimal(bits: u64): void {
  const be = <i32>(bits >> 52);
  const frac = bits & MASK52;
  let c: u64;
  let q: i32;
  if (be != 0) {
    c = frac | HIDDEN;
    q = be - 1075;
  } else {
    c = frac;
    q = -1074;
    // Giulietti's reference implementation treats c < 3 separately too; the
    // shortest forms of these two subnormals are 5e-324 and 1e-323.
    if (c < 3) {
      fmtDigits = c == 1 ? 5 : 1;
      fmtExp = c == 1 ? -324 : -323;
      return;
    }
  }
  const out = c & 1;
  const cb = c << 2;
  let k: i32;
  const regular = frac != 0 || be <= 1;
  if (regular) {
    k = floorLog10Pow2(q);
  } else {
    // At a power of two the gap below is half the gap above.
    k = floorLog10ThreeQuartersPow2(q);
  }
  const h = <u64>(q + floorLog2Pow10(-k) + 2);
  // g = floor(10^-k / 2^r) + 1 (2^125 < g < 2^126) comes from the parser's
  // 128-bit 5^-k: a quarter of it, floored, plus one, where a rounded-up entry
  // (k > 0) is first brought back to the floor (gen-tables.mjs checks this for
  // every k). Then split into Giulietti's 63-bit halves g1, g0.
  const entry = POW5_128 + (<usize>(-k - POW5_QMIN) << 4);
  let thi = load<u64>(entry);
  let tlo = load<u64>(entry, 8);
  if (k > 0) {
    thi -= <u64>(tlo == 0);
    tlo--;
  }
  const glo = ((thi << 62) | (tlo >> 2)) + 1;
  const ghi = (thi >> 2) + <u64>(glo == 0);
  const g1 = (ghi << 1) | (glo >> 63);
  const g0 = glo & MASK63;
  // vb, vbl, vbr = rop(g, cb << h), rop(g, cbl << h), rop(g, cbr << h). The
  // three multipliers differ by powers of two, so the two 128-bit products are
  // computed once and the neighbours' products are exact shifted adds: the
  // results are bit-identical to three independent rop calls, for a third of
  // the multiplications.
  const cp = cb << h;
  const x0 = g0 * cp, x1 = mulhi(g0, cp);
  const y0 = g1 * cp, y1 = mulhi(g1, cp);
  const vb = ropFinish(x1, y0, y1);
  // + (2 << h) for cbr
  const sr = h + 1;
  const d0lo = g0 << sr, d0hi = g0 >> (64 - sr);
  const d1lo = g1 << sr, d1hi = g1 >> (64 - sr);
  const xlo = x0 + d0lo;
  const xr1 = x1 + d0hi + <u64>(xlo < x0);
  let ylo = y0 + d1lo;
  const yr1 = y1 + d1hi + <u64>(ylo < y0);
  const vbr = ropFinish(xr1, ylo, yr1);
  // - (2 << h) for cbl on regular spacing, - (1 << h) at powers of two
  const sl = regular ? sr : h;
  const e0lo = g0 << sl, e0hi = g0 >> (64 - sl);
  const e1lo = g1 << sl, e1hi = g1 >> (64 - sl);
  const xl1 = x1 - e0hi - <u64>(x0 < e0lo);
  ylo = y0 - e1lo;
  const yl1 = y1 - e1hi - <u64>(y0 < e1lo);
  const vbl = ropFinish(xl1, ylo, yl1);

  const s = vb >> 2;
  fmtExp = k;
  // One digit shorter: at most one multiple of 10 fits in the interval.
  const sp10 = (s / 10) * 10;
  const tp10 = sp10 + 10;
  const upin = vbl + out <= sp10 << 2;
  const wpin = (tp10 << 2) + out <= vbr;
  if (upin != wpin) {
    fmtDigits = upin ? sp10 : tp10;
    return;
  }
  const t = s + 1;
  const uin = vbl + out <= s << 2;
  const win = (t << 2) + out <= vbr;
  if (uin != win) {
    fmtDigits = uin ? s : t;
    return;
  }
  const cmp = <i64>vb - <i64>((s + t) << 1);
  fmtDigits = cmp < 0 || (cmp == 0 && (s & 1) == 0) ? s : t;
}

// @ts-ignore: decorator
@inline function putPair(p: usize, v: u32): void {
  store<u16>(p, load<u16>(DIGIT_PAIRS + (<usize>v << 1)));
}

// Writes exactly 8 digits of v < 10^8 at p.
// @ts-ignore: decorator
@inline function write8(p: usize, v: u32): void {
  const hi = v / 10000, lo = v - hi * 10000;
  const a = hi / 100, b = lo / 100;
  putPair(p, a);
  putPair(p + 2, hi - a * 100);
  putPair(p + 4, b);
  putPair(p + 6, lo - b * 100);
}

// Writes u's digits so that they end just before `end`; returns the start.
// 32-bit division by constants compiles to multiplications.
function writeU32Backward(u: u32, end: usize): usize {
  let p = end;
  while (u >= 100) {
    const qq = u / 100;
    p -= 2;
    putPair(p, u - qq * 100);
    u = qq;
  }
  if (u >= 10) {
    p -= 2;
    putPair(p, u);
  } else {
    p--;
    store<u8>(p, <u8>(CH_0 + u));
  }
  return p;
}

// Number of decimal digits of v >= 1 (bit length times log10(2), then one compare).
// @ts-ignore: decorator
@inline function decimalLength(v: u64): i32 {
  const t = ((64 - <i32>clz<u64>(v)) * 1233) >> 12;
  return t + 1 - <i32>(v < load<u64>(POW10_U64 + (<usize>t << 3)));
}

// @ts-ignore: decorator
@inline function copyBytes(dst: usize, src: usize, n: i32): void {
  while (n >= 8) {
    store<u64>(dst, load<u64>(src));
    dst += 8; src += 8; n -= 8;
  }
  while (n > 0) {
    store<u8>(dst, load<u8>(src));
    dst++; src++; n--;
  }
}

// @ts-ignore: decorator
@inline function fillZeros(dst: usize, n: i32): void {
  while (n >= 8) {
    store<u64>(dst, ASCII_ZEROS);
    dst += 8; n -= 8;
  }
  while (n > 0) {
    store<u8>(dst, CH_0);
    dst++; n--;
  }
}

// ECMAScript Number::toString layout (ECMA-262, Number::toString) for the
// digits src[0..k) (no trailing zeros) with value 0.d1..dk * 10^n.
function layout(out: usize, src: usize, k: i32, n: i32): i32 {
  let p = out;
  if (k <= n && n <= 21) {
    copyBytes(p, src, k);
    fillZeros(p + <usize>k, n - k);
    return n;
  }
  if (0 < n && n <= 21) {
    copyBytes(p, src, n);
    store<u8>(p + <usize>n, CH_DOT);
    copyBytes(p + <usize>n + 1, src + <usize>n, k - n);
    return k + 1;
  }
  if (-6 < n && n <= 0) {
    store<u16>(p, 0x2E30); // "0."
    fillZeros(p + 2, -n);
    copyBytes(p + 2 + <usize>(-n), src, k);
    return 2 - n + k;
  }
  store<u8>(p, load<u8>(src));
  p++;
  if (k > 1) {
    store<u8>(p, CH_DOT);
    copyBytes(p + 1, src + 1, k - 1);
    p += <usize>k;
  }
  let x = n - 1;
  store<u8>(p, CH_E);
  store<u8>(p, x < 0 ? CH_MINUS : CH_PLUS, 1);
  p += 2;
  if (x < 0) x = -x;
  if (x >= 100) {
    const hd = x / 100;
    store<u8>(p, <u8>(CH_0 + hd));
    putPair(p + 1, x - hd * 100);
    p += 3;
  } else if (x >= 10) {
    putPair(p, x);
    p += 2;
  } else {
    store<u8>(p, <u8>(CH_0 + x));
    p++;
  }
  return <i32>(p - out);
}

// Writes ECMAScript Number::toString(x) (== JavaScript String(x)) as ASCII at
// out and returns the byte count (at most 25 for finite x). -0 prints "0".
// Non-finite values print NaN / Infinity / -Infinity, as String() does.
export function formatNumber(x: f64, out: usize): i32 {
  let bits = reinterpret<u64>(x);
  let p = out;
  if ((bits & MASK63) >= INF_BITS) {
    if ((bits & MASK63) != INF_BITS) {
      store<u16>(p, 0x614E); // "NaN"
      store<u8>(p, 0x4E, 2);
      return 3;
    }
    if (bits >> 63) { store<u8>(p, CH_MINUS); p++; }
    store<u64>(p, 0x7974_696E_6966_6E49); // "Infinity"
    return <i32>(p - out) + 8;
  }
  if (bits >> 63) {
    bits &= MASK63;
    if (bits == 0) { store<u8>(p, CH_0); return 1; }
    store<u8>(p, CH_MINUS);
    p++;
  } else if (bits == 0) {
    store<u8>(p, CH_0);
    return 1;
  }
  const ax = reinterpret<f64>(bits);
  // Integers below 2^53 print as themselves: the rounding interval is at most
  // one unit wide, so no other decimal with as few digits is inside it.
  if (ax < 9007199254740992.0) {
    const i = <u64>ax;
    if (<f64>i == ax) {
      const n = decimalLength(i);
      const end = p + <usize>n;
      if (i >= 100_000_000) {
        const hi = i / 100_000_000; // < 10^8 since i < 2^53 < 10^16
        write8(end - 8, <u32>(i - hi * 100_000_000));
        writeU32Backward(<u32>hi, end - 8);
      } else {
        writeU32Backward(<u32>i, end);
      }
      return <i32>(end - out);
    }
  }
  toDecimal(bits);
  // Digits into DBUF. fmtDigits < 10^17, so it splits into a u32 head below
  // 10^9 and an 8-digit tail; a zero tail (typical of short decimals, whose
  // digits come out padded to 16-17) is skipped outright.
  const f = fmtDigits;
  let start: usize;
  let last: usize = DBUF_END;
  let k0: i32;
  if (f >= 100_000_000) {
    const hi = f / 100_000_000;
    const lo = <u32>(f - hi * 100_000_000);
    if (lo == 0) {
      start = writeU32Backward(<u32>hi, DBUF_END);
      k0 = <i32>(DBUF_END - start) + 8;
    } else {
      write8(DBUF_END - 8, lo);
      start = writeU32Backward(<u32>hi, DBUF_END - 8);
      k0 = <i32>(DBUF_END - start);
    }
  } else {
    start = writeU32Backward(<u32>f, DBUF_END);
    k0 = <i32>(DBUF_END - start);
  }
  while (load<u8>(last - 1) == CH_0) last--;
  return <i32>(p - out) + layout(p, start, <i32>(last - start), fmtExp + k0);
}

// Canonical RFC 8785 form of the number token at [ptr, ptr+len) (validated
// grammar as for parseNumber); returns bytes written (at most 25), or -1 if
// the value overflows binary64 (RFC 8785 forbids such numbers).
export function writeCanonicalNumber(ptr: usize, len: i32, out: usize): i32 {
  const end = ptr + <usize>len;
  let p = ptr;
  if (load<u8>(p) == CH_MINUS) p++;

  // Plain integers of up to 15 digits are already canonical (they are exact
  // doubles below 1e21 and the grammar excludes leading zeros), except "-0".
  const intStart = p;
  while (p < end && isDigit(load<u8>(p))) p++;
  if (p == end && p - intStart <= 15) {
    if (p - intStart == 1 && load<u8>(intStart) == CH_0) {
      store<u8>(out, CH_0);
      return 1;
    }
    copyBytes(out, ptr, len);
    return len;
  }

  scanToken(ptr, len, true);
  if (tokW == 0) {
    store<u8>(out, CH_0);
    return 1;
  }
  // Any decimal with at most 15 significant digits in the normal range is the
  // shortest representation of the double it rounds to: a normal double's
  // rounding interval is at most 2^-52 wide relative to it, while distinct
  // decimals of 15 digits are at least 10^-15 apart relatively (the reason
  // DBL_DIG is 15). So its digits minus trailing zeros are the output, and
  // neither parsing nor Schubfach is needed.
  const n = <i64>tokDp + tokExp;
  if (tokLastNz <= 15 && n > -300 && n <= 300) {
    let o = out;
    if (tokNeg) { store<u8>(o, CH_MINUS); o++; }
    return <i32>(o - out) + layout(o, DBUF, tokLastNz, <i32>n);
  }

  const x = finishParse(ptr, len);
  if (!isFinite(x)) return -1;
  return formatNumber(x, out);
}
