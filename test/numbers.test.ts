// Number canonicalization through the public API: the output must equal JavaScript's String(x)
// for every double, whatever way the literal was spelled.
import { describe, expect, it } from 'vitest';
import { canonicalizeJSON, canonicalize } from '../src/index.ts';
import { rng, text } from './reference.ts';

function randomDoubles(seed: number, count: number): number[] {
  const r = rng(seed);
  const buf = new DataView(new ArrayBuffer(8));
  const out: number[] = [];
  while (out.length < count) {
    const kind = r();
    let x: number;
    if (kind < 0.6) {
      buf.setUint32(0, Math.floor(r() * 2 ** 32));
      buf.setUint32(4, Math.floor(r() * 2 ** 32));
      x = buf.getFloat64(0);
    } else if (kind < 0.8) x = Math.round(r() * 10 ** Math.floor(r() * 8)) / 10 ** Math.floor(r() * 8);
    else if (kind < 0.9) x = Math.floor((r() - 0.5) * 2 ** Math.floor(r() * 64));
    else x = (r() < 0.5 ? -1 : 1) * 2 ** Math.floor(r() * 2098 - 1074);
    if (Number.isFinite(x)) out.push(x);
  }
  return out;
}

describe('numbers match String(x)', () => {
  it('the RFC 8785 appendix examples and edge cases', () => {
    const cases: [string, string][] = [
      ['1.0', '1'], ['1E2', '100'], ['0.70', '0.7'], ['-0', '0'], ['-0.0', '0'], ['1e21', '1e+21'], ['1e20', '100000000000000000000'],
      ['5e-324', '5e-324'], ['333333333.33333329', '333333333.3333333'], ['1E30', '1e+30'], ['4.50', '4.5'], ['2e-3', '0.002'],
      ['0.000000000000000000000000001', '1e-27'], ['1e-7', '1e-7'], ['1e-6', '0.000001'], ['9007199254740993', '9007199254740992'],
      ['1.7976931348623157e308', '1.7976931348623157e+308'], ['2.2250738585072014e-308', '2.2250738585072014e-308'],
      ['4.9406564584124654e-324', '5e-324'], ['2.4703282292062328e-324', '5e-324'], ['2.4703282292062327e-324', '0'],
      ['0.1', '0.1'], ['100', '100'], ['-123.456e-2', '-1.23456'], ['1e-400', '0'], ['123456789012345678901234567890', '1.2345678901234568e+29'],
    ];
    const got = text(canonicalizeJSON(`[${cases.map((c) => c[0]).join(',')}]`));
    expect(got).toBe(`[${cases.map((c) => c[1]).join(',')}]`);
  });

  it('100,000 random doubles (seeded), spelled by String, toExponential and toPrecision(17)', () => {
    const seed = 20261122;
    const xs = randomDoubles(seed, 100_000);
    const want = `[${xs.map(String).join(',')}]`;
    expect(text(canonicalizeJSON(`[${xs.map(String).join(',')}]`)), `seed ${seed}`).toBe(want);
    expect(text(canonicalizeJSON(`[${xs.map((x) => x.toExponential()).join(',')}]`)), `seed ${seed}`).toBe(want);
    expect(text(canonicalizeJSON(`[${xs.map((x) => x.toPrecision(17)).join(',')}]`)), `seed ${seed}`).toBe(want);
    expect(text(canonicalize(xs)), `seed ${seed}`).toBe(want);
  });

  it('long mantissas and extreme exponents parse exactly', () => {
    const r = rng(7);
    const lits: string[] = [];
    for (let i = 0; i < 3000; i++) {
      let digits = String(1 + Math.floor(r() * 9));
      const len = Math.floor(r() * (i % 10 === 0 ? 800 : 40));
      for (let j = 0; j < len; j++) digits += Math.floor(r() * 10);
      const exp = Math.floor(r() * 700) - 350 - len;
      lits.push(`${r() < 0.5 ? '-' : ''}${digits}e${exp}`);
    }
    const finite = lits.filter((l) => Number.isFinite(Number(l)));
    expect(text(canonicalizeJSON(`[${finite.join(',')}]`))).toBe(`[${finite.map((l) => String(Number(l))).join(',')}]`);
  });

  it('halfway cases between adjacent doubles round to even', () => {
    // x + ulp/2 exactly, written out in full decimal: round-half-even must pick the even one.
    const r = rng(99);
    const lits: string[] = [];
    const want: string[] = [];
    const buf = new DataView(new ArrayBuffer(8));
    for (let i = 0; i < 500; i++) {
      buf.setUint32(0, Math.floor(r() * 0x7fe00000));
      buf.setUint32(4, Math.floor(r() * 2 ** 32));
      const x = buf.getFloat64(0);
      const bits = buf.getBigUint64(0);
      const exp = Number((bits >> 52n) & 0x7ffn);
      const mant = (bits & ((1n << 52n) - 1n)) | (exp ? 1n << 52n : 0n);
      const e2 = (exp ? exp : 1) - 1075; // x = mant * 2^e2; halfway = (2 mant + 1) * 2^(e2-1)
      const num = 2n * mant + 1n;
      const p = e2 - 1;
      // Exact decimal: num * 2^p = num * 5^-p / 10^-p for p < 0.
      const lit = p >= 0 ? `${num << BigInt(p)}` : `${num * 5n ** BigInt(-p)}e${p}`;
      lits.push(lit);
      want.push(String(Number(lit)));
      expect(Number.isFinite(x)).toBe(true);
    }
    expect(text(canonicalizeJSON(`[${lits.join(',')}]`))).toBe(`[${want.join(',')}]`);
  });
});
