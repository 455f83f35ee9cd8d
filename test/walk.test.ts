// JavaScript values through the public API, on each backend: the wasm engines write the text of
// the values they can themselves (src/core/walk.ts) and give the rest to JSON.stringify, so
// generated values mixing both kinds, at any depth, must give the reference canonicalizer's
// bytes, and every value with no JSON form the same error, with the same path, as the
// TypeScript serializer reports.
import { afterEach, describe, expect, it } from 'vitest';
import { backend, canonicalize, hashMany, hashValue, pathHashes, setBackend, type BackendName } from '../src/index.ts';
import { errorOf } from './helpers.ts';
import { refCanonical, refDigest, refPathHashes, text } from './reference.ts';
import { valueGen } from './values.ts';

const gen = (seed: number) => valueGen(seed, true);

/** What the reference canonicalizer takes: JSON.stringify's view (toJSON applied, drops dropped). */
const viewOf = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

/** The error the TypeScript serializer reports for f, as code and path. */
function referenceError(f: () => unknown): { code: string; path: unknown } {
  const was: BackendName = backend();
  setBackend('js');
  try {
    const e = errorOf(f);
    return { code: e.code, path: e.path };
  } finally {
    setBackend(was);
  }
}

describe('JavaScript values written by the walk or by JSON.stringify', () => {
  const active = backend();
  afterEach(() => setBackend(active));

  it('agree with the reference on 3,000 generated values', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const v = gen(seed).value(0);
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      const want = refCanonical(viewOf(v));
      expect(text(canonicalize(v)), `seed ${seed}`).toBe(want);
      expect(hashValue(v), `seed ${seed}`).toBe(refDigest(viewOf(v)));
    }
  });

  it('message lists: path hashes, hashMany and { member } agree, long lists included', () => {
    for (const [seed, count] of [[1, 1], [2, 50], [3, 400], [4, 5000]] as const) {
      const g = gen(seed * 31);
      const list = Array.from({ length: count }, (_, i) => ({ role: i % 3 ? 'user' : 'assistant', content: g.str(i % 50 === 0 ? 2000 : 60), meta: g.value(2) }));
      const view = viewOf(list) as unknown[];
      expect(pathHashes(list)).toEqual(refPathHashes(view));
      expect(hashMany(list)).toEqual(view.map(refDigest));
      const body = { model: 'm', messages: list, tools: [{ name: g.str(5) }] };
      const got = pathHashes(body, { member: 'messages' });
      expect(got.messageHashes).toEqual(refPathHashes(view).messageHashes);
      expect(got.digest).toBe(refDigest(viewOf(body)));
    }
  });

  it('values with no JSON form: the same error and path as the TypeScript serializer', () => {
    const cyclic: Record<string, unknown> = { a: [1] };
    (cyclic.a as unknown[]).push(cyclic);
    let deep: unknown = 1;
    for (let i = 0; i < 600; i++) deep = { d: deep };
    const cases: unknown[] = [
      { a: 'ok', b: 'x\ud800y' },
      ['é'.repeat(40) + '\udfff'],
      { ['k\udc00']: 1 },
      { n: [1, NaN] },
      { m: { i: -Infinity } },
      [1n],
      { b: { c: 2n } },
      cyclic,
      deep,
      Array.from({ length: 300 }, (_, i) => (i === 250 ? { c: 'lone \ud83d' } : { c: 'fine 😀' })),
      Array.from({ length: 300 }, (_, i) => (i === 299 ? { n: NaN } : { n: i })),
    ];
    for (const v of cases) {
      const want = referenceError(() => canonicalize(v));
      for (const f of [() => canonicalize(v), () => hashValue(v)]) {
        const e = errorOf(f);
        expect({ code: e.code, path: e.path }).toEqual(want);
      }
      if (Array.isArray(v)) expect(errorOf(() => pathHashes(v)).code).toBe(want.code);
    }
  });

  it('what ignoreKeys drops may hold NaN or a BigInt', () => {
    const v = { keep: 'x', drop: { n: NaN, b: 1n }, list: [{ drop: Infinity, k: 1 }] };
    expect(text(canonicalize(v, { ignoreKeys: ['drop'] }))).toBe('{"keep":"x","list":[{"k":1}]}');
    expect(errorOf(() => canonicalize(v, { ignoreKeys: ['drop'], rootOnly: true })).code).toBe('E_NON_FINITE');
  });

  it('toJSON gets its key; getters and null-prototype objects are read as JSON.stringify reads them', () => {
    const seen: string[] = [];
    const tj = { toJSON: (k: string) => (seen.push(k), k) };
    const v = { a: tj, list: [tj, tj], n: Object.assign(Object.create(null), { z: 1, a: [tj] }) };
    expect(text(canonicalize(v))).toBe('{"a":"a","list":["0","1"],"n":{"a":["0"],"z":1}}');
    const g = Object.defineProperty({}, 'x', { get: () => ['é"'], enumerable: true });
    expect(text(canonicalize(g))).toBe('{"x":["é\\""]}');
  });

  // for...in lists enumerable members only, and JSON.stringify calls a toJSON that is not one:
  // the walk's lookup of toJSON on every object (a few per cent of its time) is what sends these
  // to JSON.stringify's path.
  it('a toJSON that for...in does not list (own and not enumerable, or on Object.prototype) is called', () => {
    const hidden = Object.defineProperty({ a: 1, long: 'x'.repeat(40) }, 'toJSON', { value: () => 'hidden', enumerable: false });
    const created = Object.create(Object.prototype, { toJSON: { value: () => ({ z: [1, 'é'] }) }, a: { value: 2, enumerable: true } }) as object;
    const v = { list: [hidden, { b: created }], plain: { c: 'y'.repeat(30) } };
    expect(text(canonicalize(v))).toBe('{"list":["hidden",{"b":{"z":[1,"é"]}}],"plain":{"c":"' + 'y'.repeat(30) + '"}}');
    expect(hashValue(v)).toBe(refDigest(viewOf(v)));
    expect(pathHashes(v.list)).toEqual(refPathHashes(viewOf(v.list) as unknown[]));
    Object.defineProperty(Object.prototype, 'toJSON', { value: () => 'every', configurable: true, writable: true });
    try {
      const w = { a: 1, list: [{ b: 'x'.repeat(40) }] };
      expect(text(canonicalize(w))).toBe('"every"');
      expect(hashValue(w)).toBe(refDigest('every'));
    } finally {
      delete (Object.prototype as { toJSON?: unknown }).toJSON;
    }
  });
});

describe('an enumerable member added to Object.prototype', () => {
  it('is not taken for a member of every object', () => {
    const v = { a: 1, list: [{ b: 'x'.repeat(40) }] };
    const before = text(canonicalize(v));
    (Object.prototype as Record<string, unknown>).polluted = 'yes';
    try {
      expect(text(canonicalize(v))).toBe(before);
      expect(hashValue(v)).toBe(refDigest({ a: 1, list: [{ b: 'x'.repeat(40) }] }));
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });
});

describe('a getter that hashes something while its value is written', () => {
  it('leaves both digests right', () => {
    const inner = { note: 'é'.repeat(100), n: [1, 2, 3] };
    let seen = '';
    const list = Array.from({ length: 300 }, (_, i) =>
      i === 150
        ? Object.defineProperty({ role: 'user' }, 'content', {
            get: () => (seen = hashValue(inner)),
            enumerable: true,
          })
        : { role: 'user', content: `message ${i} ${'x'.repeat(50)}` },
    );
    const got = pathHashes(list);
    expect(seen).toBe(refDigest(inner));
    expect(got).toEqual(refPathHashes(viewOf(list) as unknown[]));
    expect(hashValue({ a: list[150], b: 'y'.repeat(40) })).toBe(refDigest({ a: { role: 'user', content: seen }, b: 'y'.repeat(40) }));
  });
});
