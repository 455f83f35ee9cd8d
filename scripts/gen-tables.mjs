#!/usr/bin/env node
// Generates assembly/generated/number-tables.ts: the constant tables used by
// assembly/number.ts for exact decimal <-> binary64 conversion.
//
// Everything is computed with BigInt, so the tables are exact by construction,
// and every approximation the AssemblyScript code relies on (floor-log
// multipliers, table ranges, shift ranges) is checked exhaustively here over
// the whole domain it is used on. If a check fails the script throws instead
// of writing a subtly wrong table. Output is deterministic (no dates, no
// environment-dependent content), so re-running yields identical bytes.

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outFile = resolve(here, "..", "assembly", "generated", "number-tables.ts");

const ONE = 1n;
const M64 = (ONE << 64n) - ONE;
const M63 = (ONE << 63n) - ONE;

function assert(cond, msg) {
  if (!cond) throw new Error("gen-tables: check failed: " + msg);
}

const pow = (b, e) => BigInt(b) ** BigInt(e);
const bitLength = (x) => (x === 0n ? 0 : x.toString(2).length);

// Sign of (a10 of 10^a10) - (mul * 2^b2), exactly.
function cmp10vs2(a10, mul, b2) {
  let lhs = ONE, rhs = BigInt(mul);
  if (a10 >= 0) lhs *= pow(10, a10); else rhs *= pow(10, -a10);
  if (b2 >= 0) rhs *= pow(2, b2); else lhs *= pow(2, -b2);
  return lhs < rhs ? -1 : lhs > rhs ? 1 : 0;
}

// floor(log10(mul * 2^q)) for mul in {1, 3/4 (as 3 with q-2)}: largest k with 10^k <= mul*2^q.
function floorLog10Of2Pow(q, mul = 1, extraShift = 0) {
  let k = Math.floor((q + extraShift) * Math.log10(2) + Math.log10(mul)) - 2;
  while (cmp10vs2(k + 1, mul, q + extraShift) <= 0) k++;
  while (cmp10vs2(k, mul, q + extraShift) > 0) k--;
  return k;
}

// floor(log2(10^e)): largest f with 2^f <= 10^e.
function floorLog2Of10Pow(e) {
  let f = Math.floor(e * Math.log2(10)) - 2;
  while (cmp10vs2(e, 1, f + 1) >= 0) f++;
  while (cmp10vs2(e, 1, f) < 0) f--;
  return f;
}

// Finds a (mul, add, shift) so that (x*mul + add) >> shift (arithmetic shift,
// i.e. floor division) reproduces exact(x) for every x in [lo, hi], with all
// intermediates inside i32 range, so the AssemblyScript side can stay in i32.
function fitFloorLinear(name, lo, hi, exact, realSlope, realOffset) {
  for (let shift = 12; shift <= 24; shift++) {
    const scale = 2 ** shift;
    const m0 = Math.round(realSlope * scale);
    const a0 = Math.round(realOffset * scale);
    for (let dm = -2; dm <= 2; dm++) {
      for (let da = -64; da <= 64; da++) {
        const mul = m0 + dm, add = a0 + da;
        let ok = true;
        for (let x = lo; x <= hi && ok; x++) {
          const v = x * mul + add;
          if (Math.abs(v) >= 2 ** 31) { ok = false; break; }
          if (Math.floor(v / scale) !== exact(x)) ok = false;
        }
        if (ok) return { mul, add, shift };
      }
    }
  }
  throw new Error("gen-tables: no linear fit for " + name);
}

// ---------------------------------------------------------------------------
// Binary64 domain.
const Q_MIN = -1074;          // exponent of the ulp of subnormals
const Q_MAX = 2046 - 1075;    // exponent of the ulp of the largest binade

// floor(q*log10(2)), needed for q over the whole double range (and a margin).
const exLog10Pow2 = new Map();
for (let q = -1100; q <= 1100; q++) exLog10Pow2.set(q, floorLog10Of2Pow(q));
const LOG10_POW2 = fitFloorLinear("log10(2^q)", -1100, 1100, (q) => exLog10Pow2.get(q), Math.log10(2), 0);

// floor(log10(3/4 * 2^q)) = floor(log10(3 * 2^(q-2))): the decimal scale of the
// asymmetric rounding interval at powers of two.
const exLog10Pow2x34 = new Map();
for (let q = -1100; q <= 1100; q++) exLog10Pow2x34.set(q, floorLog10Of2Pow(q, 3, -2));
const LOG10_POW2_34 = fitFloorLinear("log10(3/4*2^q)", -1100, 1100, (q) => exLog10Pow2x34.get(q), Math.log10(2), Math.log10(0.75));

// floor(e*log2(10)) for decimal exponents used by both algorithms.
const exLog2Pow10 = new Map();
for (let e = -400; e <= 400; e++) exLog2Pow10.set(e, floorLog2Of10Pow(e));
const LOG2_POW10 = fitFloorLinear("log2(10^e)", -400, 400, (e) => exLog2Pow10.get(e), Math.log2(10), 0);

const applyFit = (f, x) => Math.floor((x * f.mul + f.add) / 2 ** f.shift);

// ---------------------------------------------------------------------------
// Schubfach parameters (Giulietti 2020, "The Schubfach way to render doubles"):
// the decimal exponents k it needs, and the shift h = q + floor(log2(10^-k)) + 2.
let kMin = Infinity, kMax = -Infinity, hMin = Infinity, hMax = -Infinity;
for (let q = Q_MIN; q <= Q_MAX; q++) {
  assert(applyFit(LOG10_POW2, q) === exLog10Pow2.get(q), `LOG10_POW2 at ${q}`);
  assert(applyFit(LOG10_POW2_34, q) === exLog10Pow2x34.get(q), `LOG10_POW2_34 at ${q}`);
  const regular = exLog10Pow2.get(q);
  const irregular = exLog10Pow2x34.get(q);
  // The irregular (asymmetric) interval only occurs for normal powers of two
  // above the smallest normal, i.e. q > Q_MIN.
  for (const k of q > Q_MIN ? [regular, irregular] : [regular]) {
    kMin = Math.min(kMin, k); kMax = Math.max(kMax, k);
    const h = q + exLog2Pow10.get(-k) + 2;
    assert(applyFit(LOG2_POW10, -k) === exLog2Pow10.get(-k), `LOG2_POW10 at ${-k}`);
    hMin = Math.min(hMin, h); hMax = Math.max(hMax, h);
  }
}
// cbr << h must stay below 2^60 so the products in number.ts's rop cannot
// overflow, and 64 - h must be a valid shift.
assert(hMin >= 1 && hMax <= 5, `schubfach shift h in [1,5] (got ${hMin}..${hMax})`);

// ---------------------------------------------------------------------------
// One table of powers of five serves both directions.
//
// Eisel-Lemire (Lemire 2021, "Number parsing at a gigabyte per second") needs,
// for each decimal exponent q, the 128 most significant bits T(q) of 5^q,
// normalised so that bit 127 is set: truncated for q >= 0, rounded up for
// q < 0 (reciprocals). Either way T is within 1 of the exact scaled value,
// which is the only property number.ts's error analysis uses.
//
// Schubfach needs g(k) = floor(10^-k / 2^r) + 1 with r = floor(log2(10^-k)) - 125
// (so 2^125 < g < 2^126). Powers of two do not change a normalised mantissa, so
// with q = -k this is floor(x / 4) + 1 where x = 5^q scaled to [2^127, 2^128):
// g = floor(T / 4) + 1 when T is truncated (q >= 0) and floor((T - 1) / 4) + 1
// when T is rounded up (q < 0, where x is never an integer). Checked below for
// every k, so the formatter can derive g from T at run time.
const LEMIRE_QMIN = -342; // w*10^q rounds to 0 for every w < 2^64 below this
const LEMIRE_QMAX = 308;  // w*10^q overflows for every w >= 1 above this
assert(cmp10vs2(LEMIRE_QMIN - 1, 1, -1075 - 64) < 0, "2^64 * 10^(QMIN-1) < 2^-1075 (rounds to zero)");
assert(cmp10vs2(LEMIRE_QMAX + 1, 1, 1024) > 0, "10^(QMAX+1) > 2^1024 (overflows)");
const POW5_QMIN = Math.min(LEMIRE_QMIN, -kMax);
const POW5_QMAX = Math.max(LEMIRE_QMAX, -kMin);

const pow5 = [];
const pow5Map = new Map();
let exactMax = -1;
for (let q = POW5_QMIN; q <= POW5_QMAX; q++) {
  let t;
  if (q >= 0) {
    const v = pow(5, q);
    const p = bitLength(v) - 1;
    t = p <= 127 ? v << BigInt(127 - p) : v >> BigInt(p - 127);
  } else {
    const v = pow(5, -q);
    // 5^q in [2^p, 2^(p+1)) with p = -bitLength(v) (v is never a power of two)
    const p = -bitLength(v);
    const num = ONE << BigInt(127 - p);
    t = (num + v - ONE) / v; // ceil
  }
  assert(t >= ONE << 127n && t < ONE << 128n, `T(${q}) normalised`);
  if ((t & M64) === 0n && q >= 0 && q === exactMax + 1) exactMax = q;
  if (q >= LEMIRE_QMIN && q <= LEMIRE_QMAX) {
    // exponent bookkeeping used by number.ts: leading bit of w*10^q with the
    // product computed as (w<<l)*T>>64 is floorLog2(10^q) + 63 + upperbit - l.
    const p = q >= 0 ? bitLength(pow(5, q)) - 1 : -bitLength(pow(5, -q));
    assert(p + q === exLog2Pow10.get(q), `p(q)+q == floor(q*log2(10)) at ${q}`);
    assert(applyFit(LOG2_POW10, q) === exLog2Pow10.get(q), `LOG2_POW10 at ${q}`);
  }
  pow5Map.set(q, t);
  pow5.push(t >> 64n, t & M64);
}
// For 0 <= q <= exactMax the low word is zero, so the 64x64 product is exact.
assert(exactMax === 27, "5^q fits in 64 bits exactly for q <= 27");

for (let k = kMin; k <= kMax; k++) {
  const e = -k;
  const f = exLog2Pow10.get(e);
  const r = f - 125;
  let g;
  if (e >= 0) {
    const v = pow(10, e);
    g = (r >= 0 ? v >> BigInt(r) : v << BigInt(-r)) + ONE;
  } else {
    // 10^e / 2^r = 2^-r / 10^-e, with -r > 0
    g = (ONE << BigInt(-r)) / pow(10, -e) + ONE;
  }
  assert(g > ONE << 125n && g < ONE << 126n, `schubfach g(${k}) in (2^125, 2^126)`);
  const t = pow5Map.get(e);
  const derived = ((e >= 0 ? t : t - ONE) >> 2n) + ONE;
  assert(derived === g, `schubfach g(${k}) derivable from T(${e})`);
}

// ---------------------------------------------------------------------------
// Small exact tables.
const f64bits = (x) => {
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, x, true);
  return b.getBigUint64(0, true);
};
const pow10f64 = [];
for (let i = 0; i <= 22; i++) {
  const x = Number(pow(10, i));
  assert(BigInt(x) === pow(10, i), `10^${i} exact in binary64`);
  pow10f64.push(f64bits(x));
}
const pow10u64 = [];
for (let i = 0; i <= 19; i++) pow10u64.push(pow(10, i));
const pow5u32 = [];
for (let i = 0; i <= 13; i++) pow5u32.push(pow(5, i));
assert(pow(5, 13) < ONE << 32n && pow(5, 14) >= ONE << 32n, "5^13 is the largest power of 5 in u32");
// "00".."99" as little-endian u16 pairs of ASCII digits.
const pairs = [];
for (let i = 0; i < 100; i++) pairs.push(48 + Math.floor(i / 10) + ((48 + (i % 10)) << 8));

// ---------------------------------------------------------------------------
// Emit.
const hex64 = (v) => "0x" + v.toString(16).toUpperCase().padStart(16, "0");
function rows(values, fmt, perLine) {
  const out = [];
  for (let i = 0; i < values.length; i += perLine) {
    out.push("  " + values.slice(i, i + perLine).map(fmt).join(", ") + ",");
  }
  return out.join("\n");
}

const src = `// GENERATED by scripts/gen-tables.mjs — do not edit.
// Regenerate with: node scripts/gen-tables.mjs
// Every table below is exact (computed with BigInt) and every constant was
// verified exhaustively over the range where assembly/number.ts uses it.

// floor(x*log10(2)) == (x*LOG10_POW2_MUL + LOG10_POW2_ADD) >> LOG10_POW2_SHIFT, for x in [-1100, 1100]
export const LOG10_POW2_MUL: i32 = ${LOG10_POW2.mul};
export const LOG10_POW2_ADD: i32 = ${LOG10_POW2.add};
export const LOG10_POW2_SHIFT: i32 = ${LOG10_POW2.shift};
// floor(log10(3/4 * 2^x)) == (x*MUL + ADD) >> SHIFT, for x in [-1100, 1100]
export const LOG10_POW2_34_MUL: i32 = ${LOG10_POW2_34.mul};
export const LOG10_POW2_34_ADD: i32 = ${LOG10_POW2_34.add};
export const LOG10_POW2_34_SHIFT: i32 = ${LOG10_POW2_34.shift};
// floor(x*log2(10)) == (x*LOG2_POW10_MUL + LOG2_POW10_ADD) >> LOG2_POW10_SHIFT, for x in [-400, 400]
export const LOG2_POW10_MUL: i32 = ${LOG2_POW10.mul};
export const LOG2_POW10_ADD: i32 = ${LOG2_POW10.add};
export const LOG2_POW10_SHIFT: i32 = ${LOG2_POW10.shift};

// 128-bit normalised 5^q for q in [POW5_QMIN, POW5_QMAX], as (hi, lo) u64
// pairs; entry q is at POW5_128 + (q - POW5_QMIN) * 16. Truncated for q >= 0,
// rounded up for q < 0. The low word is 0 for q in [0, POW5_EXACT_QMAX].
// Eisel-Lemire uses q in [LEMIRE_QMIN, LEMIRE_QMAX]; Schubfach uses q = -k for
// k in [SCHUB_KMIN, SCHUB_KMAX] and derives its g(k) from the same entries.
// The builds for Node embed it (assembly/node.ts defines POW5_EMBEDDED); the browser's build
// reserves the space and its loader writes the same bytes (src/core/pow5.ts).
export const POW5_QMIN: i32 = ${POW5_QMIN};
export const POW5_QMAX: i32 = ${POW5_QMAX};
export const POW5_EXACT_QMAX: i32 = ${exactMax};
export const LEMIRE_QMIN: i32 = ${LEMIRE_QMIN};
export const LEMIRE_QMAX: i32 = ${LEMIRE_QMAX};
export const SCHUB_KMIN: i32 = ${kMin};
export const SCHUB_KMAX: i32 = ${kMax};
export const POW5_128: usize = isDefined(POW5_EMBEDDED) ? memory.data<u64>([
${rows(pow5, hex64, 4)}
], 16) : memory.data(${pow5.length * 8}, 16);

// 10^0 .. 10^22 as binary64 bit patterns (all exact).
export const POW10_F64: usize = memory.data<u64>([
${rows(pow10f64, hex64, 4)}
], 8);

// 10^0 .. 10^19 as u64.
export const POW10_U64: usize = memory.data<u64>([
${rows(pow10u64, hex64, 4)}
], 8);

// 5^0 .. 5^13 as u32 (5^13 is the largest that fits).
export const POW5_U32: usize = memory.data<u32>([
${rows(pow5u32, (v) => v.toString(), 7)}
], 4);

// ASCII digit pairs "00".."99", little-endian u16 (first char in the low byte).
export const DIGIT_PAIRS: usize = memory.data<u16>([
${rows(pairs, (v) => "0x" + v.toString(16).toUpperCase(), 10)}
], 2);
`;

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, src);
console.log(`gen-tables: wrote ${outFile} (5^q for q in ${POW5_QMIN}..${POW5_QMAX}; parse uses ${LEMIRE_QMIN}..${LEMIRE_QMAX}, format k ${kMin}..${kMax})`);
