// Arrays given as JavaScript values reach the wasm engines as JSON.stringify text made in pieces
// (src/core/pieces.ts). The pieces must add up to exactly JSON.stringify's text, and where they
// cannot (toJSON methods, which get the element's index), the whole array is stringified: so
// every case here is checked against the reference and, for errors, the same path as before.
import { describe, expect, it } from 'vitest';
import { backend, canonicalize, hashMany, hashValue, pathHashes, type TapedeckError } from '../src/index.ts';
import { ArrayText, stringifyPieces } from '../src/core/pieces.ts';
import { errorOf } from './helpers.ts';
import { refCanonical, refDigest, refPathHashes, rng } from './reference.ts';

/** A list of messages of random sizes (a few bytes to ~40 KB), some non-ASCII, with nulls. */
function messages(count: number, seed: number): unknown[] {
  const r = rng(seed);
  const words = ['hello', 'world', 'déjà', 'Привет', '東京', '😀', '"quoted"', 'tab\there', 'null'];
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const n = r() < 0.02 ? 8000 : Math.floor(r() * 60);
    const text = Array.from({ length: n }, () => words[Math.floor(r() * words.length)]).join(' ');
    out.push(r() < 0.1 ? { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, arguments: '{"a":1}' }] } : { role: 'user', content: text, n: i / 7 });
  }
  return out;
}

describe('stringifyPieces', () => {
  it('pieces add up to JSON.stringify, for every array shape', () => {
    const sparse: unknown[] = [1];
    sparse[100] = 2;
    // Short shapes repeated past the length below which lists are stringified whole.
    const many = (shape: unknown[]) => Array.from({ length: 100 }, () => shape).flat();
    const cases: unknown[][] = [
      many([1]),
      many(['a', 'b']),
      messages(3000, 1),
      messages(70, 2),
      many([undefined, () => 1, Symbol('s'), null, [[]], {}]),
      sparse,
      Array.from({ length: 4096 }, (_, i) => i),
      many(['x'.repeat(100_000), 'y', 'z'.repeat(70_000)]).slice(0, 70),
    ];
    const piecesOf = (t: ArrayText) => {
      const all: string[] = [];
      t.each((p, i) => {
        expect(i).toBe(all.length);
        all.push(p);
      });
      return all;
    };
    for (const a of cases) {
      const t = stringifyPieces(a);
      expect(t).toBeInstanceOf(ArrayText);
      expect(t!.text()).toBe(JSON.stringify(a));
      // Every piece is the JSON text of a run of elements, and they add up to the whole.
      const pieces = piecesOf(t!);
      expect(`[${pieces.map((p) => p.slice(1, -1)).join(',')}]`).toBe(JSON.stringify(a));
      expect(1 - pieces.length + pieces.reduce((n, p) => n + p.length, 0)).toBe(JSON.stringify(a).length);
    }
    // 1,000 messages of ~500 units: pieces of ~32K units; ten times as many, still pieces (each
    // is made as it is written, so none outlives its turn).
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'user', content: `${'déjà vu 東京 '.repeat(40)}${i}` }));
    for (const n of [1000, 10_000]) {
      const long = piecesOf(stringifyPieces(list(n))!);
      expect(long.length).toBeGreaterThan(n / 100);
      expect(Math.max(...long.map((p) => p.length))).toBeLessThan(65_536);
      expect(stringifyPieces(list(n))!.text()).toBe(JSON.stringify(list(n)));
    }
    // The projected length of a list made piece by piece is close to the real one.
    const projected = stringifyPieces(list(3000))!;
    expect(projected.exact).toBe(false);
    expect(Math.abs(projected.units / JSON.stringify(list(3000)).length - 1)).toBeLessThan(0.05);
  });

  it('leaves short arrays, and arrays with toJSON or BigInt elements, to JSON.stringify', () => {
    const long = (x: unknown) => [...Array.from({ length: 100 }, (_, i) => i), x];
    const withToJSON = Object.assign(long(1), { toJSON: () => 'x' });
    const fn = Object.assign(() => 1, { toJSON: (k: string) => k });
    const cases = [[], [1], Array.from({ length: 64 }, () => 'x'), withToJSON, long({ toJSON: (k: string) => k }), long(fn), long(2n)];
    for (const a of cases) expect(stringifyPieces(a)).toBeUndefined();
    expect(stringifyPieces(Array.from({ length: 65 }, () => 'x'))).toBeInstanceOf(ArrayText);
    expect(stringifyPieces(Array.from({ length: 100_000 }, () => 'x'))).toBeInstanceOf(ArrayText);
  });
});

describe(`arrays as JavaScript values, stringified in pieces (${backend()})`, () => {
  it('the same hashes as the reference for long lists', () => {
    for (const [count, seed] of [[3000, 3], [200, 4], [1, 5]] as const) {
      const m = messages(count, seed);
      expect(pathHashes(m)).toEqual(refPathHashes(m));
      expect(hashMany(m)).toEqual(m.map(refDigest));
      expect(hashValue(m)).toBe(refDigest(m));
    }
  });

  it('toJSON gets the element index, however long the list', () => {
    // Past the first piece: a toJSON that returns its key keys apart by position.
    const m: unknown[] = messages(3000, 6);
    m.push({ toJSON: (k: string) => ({ key: k }) });
    const want = JSON.parse(JSON.stringify(m)) as unknown[];
    expect((want.at(-1) as { key: string }).key).toBe('3000');
    expect(pathHashes(m)).toEqual(refPathHashes(want));
    expect(new TextDecoder().decode(canonicalize(m))).toBe(refCanonical(want));
  });

  it.skipIf(backend() === 'js')('a list whose text passes the size limit is E_TOO_LARGE, though made piece by piece', () => {
    const big = 'x'.repeat(700_000);
    const list = Array.from({ length: 100 }, () => ({ role: 'user', content: big }));
    for (const f of [() => pathHashes(list), () => hashValue(list)]) {
      const e = errorOf(f);
      expect(e.code).toBe('E_TOO_LARGE');
    }
    // Just under the limit, the same list is hashed.
    expect(pathHashes(list.slice(0, 90)).messageHashes.length).toBe(90);
  });

  it('errors deep in a long list keep their path', () => {
    const cases: [string, (m: unknown[]) => void, string, string][] = [
      ['NaN', (m) => ((m[2500] as { n: number }).n = NaN), 'E_NON_FINITE', '$[2500].n'],
      ['BigInt', (m) => ((m[2600] as { n: unknown }).n = 5n), 'E_BIGINT', '$[2600].n'],
      ['cycle', (m) => ((m[2700] as { n: unknown }).n = m), 'E_CYCLE', '$[2700].n'],
      ['lone surrogate', (m) => ((m[2800] as { n: unknown }).n = 'a\ud800'), 'E_LONE_SURROGATE', '$[2800].n'],
    ];
    for (const [name, spoil, code, path] of cases) {
      const m = messages(3000, 7).map((x) => ({ ...(x as object), n: 1 }));
      spoil(m);
      for (const f of [() => pathHashes(m), () => hashValue(m)]) {
        const e: TapedeckError = errorOf(f);
        expect([name, e.code, e.path]).toEqual([name, code, path]);
      }
    }
  });
});
