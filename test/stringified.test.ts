// The JavaScript-value path hands the core JSON.stringify's own text, whose strings and numbers
// the core copies as they are (they are already RFC 8785's spelling): differential tests of that
// path against the reference canonicalizer on generated values heavy in what JSON escapes,
// numbers at the edges of the format, keys that sort differently in UTF-16 and UTF-8, toJSON,
// and JSON inside JSON; lone surrogates must still be rejected wherever they hide.
import { describe, expect, it } from 'vitest';
import { canonicalize, hashMany, hashValue, pathHashes } from '../src/index.ts';
import { errorOf } from './helpers.ts';
import { refCanonical, refDigest, refPathHashes, rng, text } from './reference.ts';

const CONTROL = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i));
// Everything JSON.stringify escapes, and neighbours it does not: '/', DEL, U+2028/9, U+FFFF.
const PIECES = [...CONTROL, '"', '\\', '/', '\x7f', '\u2028', '\u2029', '\uffff', 'é', 'Ω', '日本', '😀', '👩‍💻', '𠜎', '\ue000', ' ', 'a', 'Z', '0', '{', '}', '[', ']', ':', ','];
const NUMBERS = [0, -0, 1, -1, 0.1, 0.5, 1e21, 1e-7, 1e-6, 123456789012, 2 ** 53, 2 ** 53 + 2, -(2 ** 31), 5e-324, -5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 0.1 + 0.2, 1 / 3, 4.35, 100, 1e300];

function gen(seed: number) {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const str = (max: number): string => {
    let s = '';
    for (let i = 0, n = int(max); i < n; i++) s += r() < 0.5 ? PIECES[int(PIECES.length)]! : 'text '.slice(0, 1 + int(5));
    return s;
  };
  const num = (): number => (r() < 0.5 ? NUMBERS[int(NUMBERS.length)]! : r() < 0.5 ? (r() - 0.5) * 10 ** (int(40) - 20) : int(1e6));
  const value = (depth: number): unknown => {
    const k = int(depth > 3 ? 4 : 9);
    switch (k) {
      case 0:
        return str(12);
      case 1:
        return num();
      case 2:
        return r() < 0.3 ? null : r() < 0.5;
      case 3:
        // JSON inside JSON: a string holding an encoded value, sometimes encoded twice.
        return r() < 0.5 ? JSON.stringify(value(depth + 1)) : JSON.stringify(JSON.stringify(value(depth + 1)));
      case 4:
        return Array.from({ length: int(5) }, () => value(depth + 1));
      case 5: {
        const fixed = r() < 0.5 ? str(6) : num();
        return r() < 0.5 ? new Date(int(2e12)) : { toJSON: () => fixed };
      }
      default: {
        const o: Record<string, unknown> = {};
        for (let i = 0, n = int(6); i < n; i++) o[str(6)] = r() < 0.1 ? undefined : value(depth + 1);
        return o;
      }
    }
  };
  return { value, str, int, r };
}

describe("JSON.stringify's text copied as it is", () => {
  it('canonicalize and hashValue agree with the reference on 3,000 generated values', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const v = gen(seed).value(0);
      const want = refCanonical(v);
      expect(text(canonicalize(v)), `seed ${seed}`).toBe(want);
      expect(hashValue(v), `seed ${seed}`).toBe(refDigest(v));
    }
  });

  it('every control character, quote and backslash, alone and in runs, as values and keys', () => {
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, ch.repeat(17), `a${ch}b`, `${'x'.repeat(15)}${ch}`, `${ch}\u00e9${ch}😀`]) {
        const v = { [s]: s, [`k${s}`]: [s, { [s]: 1 }] };
        expect(text(canonicalize(v))).toBe(refCanonical(v));
      }
    }
  });

  it('numbers keep their spelling: -0, the extremes, and 20,000 random doubles', () => {
    const r = rng(7);
    const list: number[] = [...NUMBERS];
    const f64 = new Float64Array(1);
    const u32 = new Uint32Array(f64.buffer);
    while (list.length < 20_000) {
      u32[0] = Math.floor(r() * 2 ** 32);
      u32[1] = Math.floor(r() * 2 ** 32);
      if (Number.isFinite(f64[0]!)) list.push(f64[0]!);
    }
    expect(text(canonicalize(list))).toBe(refCanonical(list));
    expect(text(canonicalize({ n: -0, m: [-0] }))).toBe('{"m":[0],"n":0}');
  });

  it('message lists long enough to go in pieces: path hashes and hashMany agree', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const g = gen(seed * 101);
      const list = Array.from({ length: 60 + g.int(400) }, () => ({ role: g.r() < 0.5 ? 'user' : 'tool', content: g.str(40), args: JSON.stringify(g.value(1)), meta: g.value(2) }));
      expect(pathHashes(list)).toEqual(refPathHashes(list));
      expect(hashMany(list)).toEqual(list.map(refDigest));
    }
  });

  it('strings after text that mixes escapes and non-ASCII units (written without the test for escapes) agree', () => {
    // A string of 64 units or more whose steps of 16 hold escapes and non-ASCII units alike
    // switches the core to its path for mixed text for the strings after it: every kind of
    // string must come out the same there.
    // Steps of 16 units: one with a quote, one of non-ASCII units without escapes, and so on.
    const MIXED = `"${'a'.repeat(15)}${'ü'.repeat(16)}`.repeat(4);
    expect(MIXED.length).toBeGreaterThanOrEqual(64);
    const r = rng(11);
    const int = (n: number) => Math.floor(r() * n);
    const probes: string[] = [];
    for (let i = 0; i < 400; i++) {
      let s = '';
      for (let j = 0, n = int(90); j < n; j++) s += r() < 0.6 ? PIECES[int(PIECES.length)]! : 'word '.slice(0, 1 + int(5));
      probes.push(s);
    }
    // Pairs cut by a step's end, escapes as \u00XX, and plain runs, at every offset in a step.
    for (let k = 0; k < 18; k++) probes.push(`${'é'.repeat(k)}😀${'"'.repeat(k & 3)}\u0001${'x'.repeat(40)}`, `${'a'.repeat(k)}\x7f\x1f日本😀😀`.repeat(5));
    const list = probes.flatMap((p) => [MIXED, p]);
    expect(text(canonicalize(list))).toBe(refCanonical(list));
    expect(pathHashes(list.map((content) => ({ role: 'user', content })))).toEqual(refPathHashes(list.map((content) => ({ role: 'user', content }))));
    for (const lone of ['\ud800', '\udc00']) {
      for (const at of [0, 7, 15, 16, 31]) {
        const bad = 'ü"'.repeat(16).slice(0, at) + lone + 'x'.repeat(20);
        expect(errorOf(() => canonicalize([MIXED, bad])).code).toBe('E_LONE_SURROGATE');
        expect(errorOf(() => hashValue({ a: MIXED, b: bad })).code).toBe('E_LONE_SURROGATE');
      }
    }
  });

  it('lone surrogates are still rejected, in values and keys, alone or among escapes', () => {
    for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff']) {
      for (const s of [lone, `a${lone}`, `"\\${lone}\n`, `${lone}${lone}`, `\udc00\ud800`, `😀${lone}😀`]) {
        for (const v of [s, [s], { k: s }, { [s]: 1 }, Array.from({ length: 100 }, (_, i) => (i === 77 ? { c: s } : { c: 'ok' }))]) {
          const e = errorOf(() => canonicalize(v));
          expect(e.code).toBe('E_LONE_SURROGATE');
          expect(errorOf(() => hashValue(v)).code).toBe('E_LONE_SURROGATE');
        }
      }
    }
    // A well-formed pair next to escapes is not a lone surrogate.
    const ok = { '\n😀': '\t😀"', x: '\ud83d\ude00\\' };
    expect(text(canonicalize(ok))).toBe(refCanonical(ok));
  });
});
