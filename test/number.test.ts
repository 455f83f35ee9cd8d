// Drives assembly/number.ts directly through both wasm builds (scalar and SIMD) and holds it to
// V8, the reference RFC 8785 names: formatNumber(x) === String(x), parseNumber(text) is
// bit-identical to Number(text), writeCanonicalNumber(text) === String(Number(text)) (or -1 when
// the value overflows). Randomness is seeded (NUMBER_TEST_SEED overrides it) and every failure
// names its input; `npm run fuzz` runs the same checks at scale.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface NumberExports {
  memory: WebAssembly.Memory;
  parseNumber(ptr: number, len: number): number;
  formatNumber(x: number, out: number): number;
  writeCanonicalNumber(ptr: number, len: number, out: number): number;
}

const SEED = Number(process.env.NUMBER_TEST_SEED ?? 0x7a9e5eed) >>> 0;

class Harness {
  private readonly x: NumberExports;
  private readonly io: number;
  private readonly out: number;
  private u8: Uint8Array;
  private readonly enc = new TextEncoder();
  static readonly IN_CAP = 1 << 16;

  constructor(readonly file: string) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(new URL(`../build/${file}`, import.meta.url));
    } catch (e) {
      throw new Error(`build/${file} is missing: run \`npm run build:wasm\` first (${String(e)})`);
    }
    this.x = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as NumberExports;
    // I/O lives in freshly grown pages at the end of memory, away from the module's statics.
    const base = this.x.memory.buffer.byteLength;
    this.x.memory.grow(2);
    this.io = base;
    this.out = base + Harness.IN_CAP;
    this.u8 = new Uint8Array(this.x.memory.buffer);
  }

  private view(): Uint8Array {
    if (this.u8.buffer !== this.x.memory.buffer) this.u8 = new Uint8Array(this.x.memory.buffer);
    return this.u8;
  }

  private put(s: string): number {
    if (s.length > Harness.IN_CAP) throw new Error('input too long');
    return this.enc.encodeInto(s, this.view().subarray(this.io, this.io + Harness.IN_CAP)).written;
  }

  private read(n: number): string {
    const v = this.view();
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(v[this.out + i]!);
    return s;
  }

  parse(s: string): number {
    return this.x.parseNumber(this.io, this.put(s));
  }

  format(x: number): string {
    return this.read(this.x.formatNumber(x, this.out));
  }

  canon(s: string): string | number {
    const n = this.x.writeCanonicalNumber(this.io, this.put(s), this.out);
    return n < 0 ? n : this.read(n);
  }
}

// ---- helpers -------------------------------------------------------------------------------

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer); // little-endian: [lo, hi]
const bitsOf = (x: number): bigint => {
  f64[0] = x;
  return (BigInt(u32[1]!) << 32n) | BigInt(u32[0]!);
};
const fromBits = (hi: number, lo: number): number => {
  u32[1] = hi;
  u32[0] = lo;
  return f64[0]!;
};
const hex = (x: number) => '0x' + bitsOf(x).toString(16).padStart(16, '0');
const nextUp = (x: number): number => fromBitsBig(bitsOf(x) + 1n);
const nextDown = (x: number): number => fromBitsBig(bitsOf(x) - 1n);
function fromBitsBig(b: bigint): number {
  return fromBits(Number(b >> 32n) >>> 0, Number(b & 0xffffffffn) >>> 0);
}

// sfc32: small, fast, seedable.
function prng(seed: number) {
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = seed >>> 0;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 16; i++) next();
  const below = (n: number) => Math.floor((next() / 4294967296) * n);
  const digits = (n: number, lead = true) => {
    let s = lead ? String(1 + below(9)) : '';
    while (s.length < n) s += String(below(10));
    return s;
  };
  const randomBits = () => {
    for (;;) {
      const hi = next(), lo = next();
      if ((hi & 0x7ff00000) !== 0x7ff00000) return fromBits(hi, lo);
    }
  };
  return { next, below, digits, randomBits };
}

// Exact decimal spellings. A double is m * 2^e; the midpoint to its successor is (2m+1) * 2^(e-1).
function decompose(x: number): { m: bigint; e: number } {
  const b = bitsOf(Math.abs(x));
  const ef = Number(b >> 52n);
  const fr = b & ((1n << 52n) - 1n);
  return ef === 0 ? { m: fr, e: -1074 } : { m: fr | (1n << 52n), e: ef - 1075 };
}
function exactDecimal(m: bigint, e: number): { N: bigint; F: number } {
  return e >= 0 ? { N: m << BigInt(e), F: 0 } : { N: m * 5n ** BigInt(-e), F: -e };
}
// Renders N / 10^F in one of several valid JSON spellings.
function render(N: bigint, F: number, style: number): string {
  let S = N.toString();
  let X = -F;
  while (S.length > 1 && S.endsWith('0')) {
    S = S.slice(0, -1);
    X++;
  }
  if (style === 0 || S.length + Math.abs(X) > 400) return X === 0 ? S : `${S}e${X}`;
  if (style === 1) {
    const e = X + S.length - 1;
    return (S.length > 1 ? `${S[0]}.${S.slice(1)}` : S) + `E${e < 0 ? '-' : '+'}${Math.abs(e)}`;
  }
  if (X >= 0) return S + '0'.repeat(X);
  if (-X < S.length) return `${S.slice(0, S.length + X)}.${S.slice(S.length + X)}` + (style === 3 ? '000' : '');
  return `0.${'0'.repeat(-X - S.length)}${S}`;
}

type Failure = string;
const MAX_REPORTED = 10;

function checkDouble(h: Harness, x: number, fails: Failure[]): void {
  const want = String(x);
  const got = h.format(x);
  if (got !== want) fails.push(`formatNumber(${want} [${hex(x)}]) = ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  const back = h.parse(want);
  if (!Object.is(back, Number(want))) fails.push(`parseNumber(${JSON.stringify(want)}) = ${back} [${hex(back)}], want ${hex(Number(want))}`);
  const c = h.canon(want);
  if (c !== want) fails.push(`writeCanonicalNumber(${JSON.stringify(want)}) = ${JSON.stringify(c)}, want ${JSON.stringify(want)}`);
}

function checkString(h: Harness, s: string, fails: Failure[]): void {
  const want = Number(s);
  const got = h.parse(s);
  if (!Object.is(got, want)) fails.push(`parseNumber(${JSON.stringify(s)}) = ${got} [${hex(got)}], want ${want} [${hex(want)}]`);
  const c = h.canon(s);
  const wc = Number.isFinite(want) ? String(want) : -1;
  if (c !== wc) fails.push(`writeCanonicalNumber(${JSON.stringify(s)}) = ${JSON.stringify(c)}, want ${JSON.stringify(wc)}`);
}

function report(fails: Failure[], what: string, seed: number): string[] {
  return fails.slice(0, MAX_REPORTED).map((f) => `[${what}, seed ${seed}] ${f}`);
}

// ---- generated inputs (identical for both builds) -------------------------------------------

function doubles(seed: number): number[] {
  const r = prng(seed);
  const xs: number[] = [];
  // Every power of two and ten in range, with both neighbours.
  for (let e = -1074; e <= 1023; e++) {
    const x = 2 ** e;
    xs.push(x, nextUp(x));
    if (e > -1074) xs.push(nextDown(x));
  }
  for (let e = -323; e <= 308; e++) {
    const x = Number(`1e${e}`);
    xs.push(x, nextUp(x), nextDown(x));
  }
  // The smallest subnormals, where the shortest form has very few digits.
  for (let i = 1; i <= 3000; i++) xs.push(fromBits(0, i));
  xs.push(
    Number.MIN_VALUE, Number.MAX_VALUE, nextDown(Number.MAX_VALUE), Number.EPSILON,
    2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 9007199254740993, 2 ** 63, 2 ** 64, 2 ** 1023,
    2.2250738585072014e-308, 2.225073858507201e-308, nextUp(2.2250738585072014e-308),
    1e21, nextDown(1e21), 999999999999999900000, 1e-6, nextDown(1e-6), 1e-7, nextUp(1e-7),
    0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 4.35, 0.7, 333333333.33333329, 123e-20,
  );
  for (let i = 0; i < 100_000; i++) xs.push(r.randomBits());
  for (let i = 0; i < 15_000; i++) xs.push(fromBits(r.next() & 0x000fffff, r.next())); // subnormals
  for (let i = 0; i < 20_000; i++) xs.push(Number(`${r.digits(1 + r.below(9))}e${r.below(40) - 30}`)); // nice decimals
  for (let i = 0; i < 10_000; i++) xs.push(r.below(2) ? r.below(2 ** 31) : r.below(2 ** 21) * 2 ** 32 + r.next()); // integers
  for (let i = 0; i < 5_000; i++) xs.push((r.next() / 2 ** 32) * 10 ** (r.below(14) - 6)); // everyday magnitudes
  return xs.map((x) => (r.below(2) ? -x : x));
}

function strings(seed: number): string[] {
  const r = prng(seed);
  const ss: string[] = [];
  const sign = () => (r.below(6) === 0 ? '-' : '');
  const exp = (e: number) => (r.below(2) ? 'e' : 'E') + (e < 0 ? '-' : r.below(2) ? '+' : '') + Math.abs(e);
  for (let i = 0; i < 8000; i++) { // short
    let s = r.below(4) === 0 ? '0' : r.digits(1 + r.below(6));
    if (r.below(2)) s += '.' + r.digits(1 + r.below(6), false);
    if (r.below(3) === 0) s += exp(r.below(60) - 30);
    ss.push(sign() + s);
  }
  for (let i = 0; i < 8000; i++) { // 16-17 digits across the whole range
    ss.push(sign() + render(BigInt(r.digits(16 + r.below(2))), r.below(660) - 320, r.below(4)));
  }
  for (let i = 0; i < 5000; i++) { // 20-40 digits
    ss.push(sign() + render(BigInt(r.digits(20 + r.below(21))), r.below(700) - 340, r.below(4)));
  }
  for (let i = 0; i < 150; i++) { // ~800 digits, including far past the parser's 800 kept digits
    ss.push(sign() + render(BigInt(r.digits(700 + r.below(500))), r.below(1500) - 1100, r.below(4)));
  }
  for (let i = 0; i < 3000; i++) { // near the limits and absurd exponents
    const k = r.below(4);
    if (k === 0) ss.push(sign() + r.digits(1 + r.below(20)) + exp((r.below(2) ? -1 : 1) * (300 + r.below(45))));
    else if (k === 1) ss.push(sign() + r.digits(1 + r.below(5)) + exp((r.below(2) ? -1 : 1) * Number(r.digits(1 + r.below(14)))));
    else if (k === 2) ss.push(sign() + '0.' + '0'.repeat(r.below(400)) + r.digits(1 + r.below(30)) + (r.below(2) ? exp(r.below(400)) : ''));
    else ss.push(sign() + r.digits(1 + r.below(3)) + '0'.repeat(r.below(330)) + (r.below(2) ? '.' + '0'.repeat(1 + r.below(20)) : ''));
  }
  for (let i = 0; i < 6000; i++) { // exact halfway points between neighbours, and a hair either side
    let x = Math.abs(r.randomBits());
    if (x === Number.MAX_VALUE) x = 1;
    if (r.below(4) === 0) x = Math.abs(fromBits(r.next() & 0x000fffff, r.next()));
    if (r.below(6) === 0) x = Math.abs(Number(`${r.digits(1 + r.below(16))}e${r.below(40) - 10}`));
    const { m, e } = decompose(x);
    let { N, F } = exactDecimal(2n * m + 1n, e - 1);
    const v = r.below(6);
    if (v === 1 || v === 2) {
      N = N * 1000n + (v === 1 ? 1n : -1n);
      F += 3;
    } else if (v >= 3) {
      // the deciding digit lies beyond the digits the exact path keeps (v 4, 5) or just inside
      const z = v === 3 ? 10 : 30 + r.below(300);
      N = N * 10n ** BigInt(z) + (v === 5 ? -1n : 1n);
      F += z;
    }
    ss.push(sign() + render(N, F, r.below(4)));
  }
  for (let i = 0; i < 1500; i++) { // exact expansions of doubles
    const { m, e } = decompose(r.randomBits());
    const { N, F } = exactDecimal(m, e);
    ss.push(sign() + render(N, F, r.below(4)));
  }
  for (let i = 0; i < 3000; i++) ss.push(sign() + render(BigInt(r.digits(1 + r.below(15))), r.below(40) - 25, r.below(4)));
  return ss;
}

const builds = ['tapedeck.wasm', 'tapedeck-simd.wasm'].map((f) => new Harness(f));
const DOUBLES = doubles(SEED);
const STRINGS = strings(SEED ^ 0x51f15eed);

describe.each(builds.map((h) => [h.file, h] as const))('%s number module', (_file, h) => {
  it('formats the named examples', () => {
    const cases: [number, string][] = [
      [1e21, '1e+21'], [5e-324, '5e-324'], [1.0, '1'], [0.7, '0.7'], [1e2, '100'], [-0, '0'], [0, '0'],
      [333333333.33333329, '333333333.3333333'], [1e-7, '1e-7'], [123e-20, '1.23e-18'], [1e-6, '0.000001'],
      [1e20, '100000000000000000000'], [2 ** 53, '9007199254740992'], [2 ** 60, '1152921504606847000'],
      [Number.MAX_VALUE, '1.7976931348623157e+308'], [1e23, '1e+23'], [-1.5, '-1.5'], [0.1 + 0.2, '0.30000000000000004'],
      [2.2250738585072014e-308, '2.2250738585072014e-308'], [1e-323, '1e-323'], [-5e-324, '-5e-324'],
      [NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity'],
    ];
    for (const [x, want] of cases) expect(h.format(x), `formatNumber(${hex(x)})`).toBe(want);
  });

  it('parses and canonicalizes the named examples', () => {
    const cases: [string, number, string | number][] = [
      ['1.0', 1, '1'], ['0.70', 0.7, '0.7'], ['1E2', 100, '100'], ['-0', -0, '0'], ['-0.0e5', -0, '0'], ['0', 0, '0'],
      ['1e21', 1e21, '1e+21'], ['1e-7', 1e-7, '1e-7'], ['123e-20', 123e-20, '1.23e-18'],
      ['333333333.33333329', 333333333.3333333, '333333333.3333333'], ['5e-324', 5e-324, '5e-324'],
      ['9007199254740993', 2 ** 53, '9007199254740992'], ['9007199254740995', 2 ** 53 + 4, '9007199254740996'],
      ['4503599627370497.5', 4503599627370498, '4503599627370498'], ['1e23', 1e23, '1e+23'],
      ['2.4703282292062327e-324', 0, '0'], ['2.4703282292062328e-324', 5e-324, '5e-324'],
      ['1.7976931348623158e308', Number.MAX_VALUE, '1.7976931348623157e+308'],
      ['1e400', Infinity, -1], ['-1e309', -Infinity, -1], ['1.7976931348623159e308', Infinity, -1],
      ['1e-99999', 0, '0'], ['-1e-99999', -0, '0'], ['1e+99999999999', Infinity, -1], ['0e99999999999', 0, '0'],
      ['123456789012345', 123456789012345, '123456789012345'], ['-1234567890123456', -1234567890123456, '-1234567890123456'],
      ['100000000000000000000000', 1e23, '1e+23'], ['0.000001', 1e-6, '0.000001'], ['0.0000001', 1e-7, '1e-7'],
    ];
    for (const [s, value, canon] of cases) {
      expect(Object.is(h.parse(s), value), `parseNumber(${s}) = ${h.parse(s)}, want ${value}`).toBe(true);
      expect(h.canon(s), `writeCanonicalNumber(${s})`).toBe(canon);
    }
  });

  it(`matches String(x) on ${DOUBLES.length.toLocaleString('en-US')} doubles (seed ${SEED})`, () => {
    const fails: Failure[] = [];
    for (const x of DOUBLES) {
      checkDouble(h, x, fails);
      if (fails.length >= MAX_REPORTED) break;
    }
    expect(report(fails, 'doubles', SEED)).toEqual([]);
  });

  it(`matches Number(text) bit for bit on ${STRINGS.length.toLocaleString('en-US')} decimal strings (seed ${SEED})`, () => {
    const fails: Failure[] = [];
    for (const s of STRINGS) {
      checkString(h, s, fails);
      if (fails.length >= MAX_REPORTED) break;
    }
    expect(report(fails, 'strings', SEED)).toEqual([]);
  });

  it('rounds exact ties to even on both sides of every binade edge', () => {
    const fails: Failure[] = [];
    for (const e of [-1074, -1073, -1022, -1021, -1000, -500, -60, -1, 0, 1, 52, 53, 54, 100, 500, 969, 970, 971]) {
      for (const m of [1n << 52n, (1n << 52n) + 1n, (1n << 53n) - 1n, (1n << 53n) - 2n, 1n, 2n, 3n]) {
        if (e > -1074 && m < 1n << 52n) continue;
        for (const { N, F } of [exactDecimal(2n * m + 1n, e - 1), exactDecimal(2n * m - 1n, e - 1)]) {
          checkString(h, render(N, F, 0), fails);
          checkString(h, render(N, F, 1), fails);
        }
      }
    }
    expect(report(fails, 'ties', SEED)).toEqual([]);
  });
});
