// Differential tests against the `canonicalize` package on random JSON: unicode keys mixing BMP
// and astral characters (their UTF-16 and UTF-8 orders differ), escapes, deep nesting, and raw
// JSON text spelled in many equivalent ways.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize, canonicalizeJSON, hashJSON, hashValue } from '../src/index.ts';
import { refCanonical, refDigest, text } from './reference.ts';

// Characters chosen to break naive implementations: controls, quotes, the ranges where UTF-8
// and UTF-16 orders disagree (U+E000..U+FFFF vs astral), line separators, DEL.
const tricky = fc.constantFrom(
  'a', 'b', 'B', '0', ' ', 'é', 'ö', '€', '\u0000', '\u0001', '\u001f', '\b', '\f', '\n', '\r', '\t', '"', '\\', '/',
  '\u007f', '\u0080', '\u2028', '\u2029', '\ud7ff', '\ue000', '\ufb33', '\ufeff', '\uffff', '😂', '\u{10000}', '\u{10ffff}', '\u{1f600}',
);
const char = fc.oneof(tricky, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }));
const str = fc.string({ unit: char, maxLength: 12 });
const num = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, Number.MIN_VALUE, 0.1, 0.7, 1e-6, 123456789012345680000),
);
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    num,
    str,
    fc.array(tie('json'), { maxLength: 6 }),
    fc.dictionary(str, tie('json'), { maxKeys: 6 }),
  ),
}));

/** JSON text of v with random whitespace, escapes and number spellings: same value, other bytes. */
function respell(v: unknown, r: () => number): string {
  const ws = () => [' ', '\n', '\t', '\r', ''][Math.floor(r() * 5)]!.repeat(r() < 0.7 ? 0 : 1 + Math.floor(r() * 2));
  const hex4 = (c: number) => {
    const h = c.toString(16).padStart(4, '0');
    return r() < 0.5 ? h : h.toUpperCase();
  };
  const s = (x: string) => {
    let out = '"';
    for (const ch of x) {
      const cp = ch.codePointAt(0)!;
      const short: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
      if (cp < 0x20 || ch === '"' || ch === '\\' || r() < 0.25) {
        if (short[ch] && r() < 0.5) out += short[ch];
        else if (ch === '/' && r() < 0.5) out += '\\/';
        else if (cp > 0xffff) out += `\\u${hex4(ch.charCodeAt(0))}\\u${hex4(ch.charCodeAt(1))}`;
        else out += `\\u${hex4(cp)}`;
      } else out += ch;
    }
    return out + '"';
  };
  const n = (x: number) => {
    if (Object.is(x, -0)) return r() < 0.5 ? '-0' : '-0.0e5';
    const options = [String(x), x.toExponential(), x.toExponential().replace('e', 'E').replace('+', ''), x.toPrecision(17)];
    if (Number.isInteger(x) && x !== 0 && Math.abs(x) < 1e15) options.push(`${x}.000`, `${x}0e-1`);
    return options[Math.floor(r() * options.length)]!;
  };
  const go = (x: unknown): string => {
    if (x === null) return 'null';
    if (typeof x === 'boolean') return String(x);
    if (typeof x === 'number') return n(x);
    if (typeof x === 'string') return s(x);
    if (Array.isArray(x)) return `[${ws()}${x.map((e) => go(e) + ws()).join(`,${ws()}`)}]`;
    const entries = Object.entries(x as Record<string, unknown>);
    return `{${ws()}${entries.map(([k, e]) => `${s(k)}${ws()}:${ws()}${go(e)}${ws()}`).join(`,${ws()}`)}}`;
  };
  return ws() + go(v) + ws();
}

describe('canonical form against the canonicalize package', () => {
  it('JavaScript values', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(text(canonicalize(v))).toBe(refCanonical(v));
      }),
      { numRuns: 1500 },
    );
  });

  it('two members in reverse order, of every length around the copy sizes, nested and side by side', () => {
    const sizes = [0, 1, 7, 8, 60, 63, 64, 65, 300];
    for (const la of sizes) {
      for (const lb of sizes) {
        const o = { zb: 'x'.repeat(la), a: ['é'.repeat(lb)] };
        for (const v of [o, [o, o], { k: o, b: [o, 1] }, { z: { y: 1, x: o }, a: o }]) {
          const want = refCanonical(v);
          expect(text(canonicalize(v)), `${la}/${lb}`).toBe(want);
          expect(text(canonicalizeJSON(JSON.stringify(v)))).toBe(want);
          expect(text(canonicalizeJSON(JSON.stringify(v, null, 1)))).toBe(want);
        }
      }
    }
  });

  it('raw JSON text in random equivalent spellings (string and bytes)', () => {
    fc.assert(
      fc.property(json, fc.integer(), (v, seed) => {
        let st = seed;
        const r = () => ((st = (Math.imul(st, 1103515245) + 12345) | 0) >>> 0) / 4294967296;
        const spelled = respell(v, r);
        const want = refCanonical(v);
        expect(text(canonicalizeJSON(spelled))).toBe(want);
        expect(text(canonicalizeJSON(new TextEncoder().encode(spelled)))).toBe(want);
      }),
      { numRuns: 1500 },
    );
  });

  it('digests equal SHA-256 of the reference canonical form', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(hashValue(v)).toBe(refDigest(v));
        expect(hashJSON(JSON.stringify(v, null, 2))).toBe(refDigest(v));
      }),
      { numRuns: 500 },
    );
  });

  it('deep nesting up to the limit', () => {
    for (const depth of [1, 2, 50, 200, 511]) {
      let v: unknown = { z: 1, a: [depth] };
      for (let i = 1; i < depth; i++) v = i % 2 ? [v, { b: i, a: -i }] : { y: v, x: [] };
      expect(text(canonicalize(v))).toBe(refCanonical(v));
      expect(text(canonicalizeJSON(JSON.stringify(v)))).toBe(refCanonical(v));
    }
  });

  it('large objects (sorting many members) and long strings', () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 5000; i++) big[`k${(i * 7919) % 5000}\u{1f600}${i % 3 ? '\ufb33' : ''}`] = i;
    expect(text(canonicalizeJSON(JSON.stringify(big)))).toBe(refCanonical(big));
    const long = { s: 'x'.repeat(100_000) + '\u{1f600}é"\\\n'.repeat(1000), t: '\u0001'.repeat(5000) };
    expect(text(canonicalizeJSON(JSON.stringify(long)))).toBe(refCanonical(long));
  });

  it('JSON.stringify data model for JavaScript values', () => {
    const v = {
      date: new Date(Date.UTC(2026, 10, 22)),
      dropped: undefined,
      fn: () => 1,
      arr: [undefined, () => 1, Symbol('s')],
      boxed: [new Number(1.5), new String('s'), new Boolean(false)],
      custom: { toJSON: () => ({ b: 2, a: 1 }) },
    };
    expect(text(canonicalize(v))).toBe(refCanonical(JSON.parse(JSON.stringify(v))));
  });

  it('rootOnly: ignoreKeys drop root members only, in values and raw text alike', () => {
    const v = { user: 'u1', stream: true, tools: [{ parameters: { properties: { user: { type: 'string' } } } }], messages: [{ user: 'x' }] };
    const want = refCanonical({ tools: v.tools, messages: v.messages });
    const opts = { ignoreKeys: ['user', 'stream'], rootOnly: true };
    expect(text(canonicalize(v, opts))).toBe(want);
    expect(text(canonicalizeJSON(JSON.stringify(v), opts))).toBe(want);
    expect(text(canonicalizeJSON('{"stream":1,"b":{"stream":2},"a":[{"stream":3}]}', opts))).toBe('{"a":[{"stream":3}],"b":{"stream":2}}');
    expect(hashValue(v, opts)).toBe(hashJSON(JSON.stringify(v, null, 2), opts));
    // And NaN under an ignored root member is dropped with it, but not one deeper down.
    expect(() => canonicalize({ user: NaN, a: 1 }, opts)).not.toThrow();
    expect(() => canonicalize({ a: { user: NaN } }, opts)).toThrow(expect.objectContaining({ code: 'E_NON_FINITE' }));
  });

  it('ignoreKeys drops members at any depth, in values and raw text alike', () => {
    const v = { id: 'req_1', messages: [{ role: 'user', content: 'hi', id: 'm1' }], meta: { created: 1, id: 2 } };
    const want = refCanonical({ messages: [{ role: 'user', content: 'hi' }], meta: { created: 1 } });
    expect(text(canonicalize(v, { ignoreKeys: ['id'] }))).toBe(want);
    expect(text(canonicalizeJSON(JSON.stringify(v), { ignoreKeys: ['id'] }))).toBe(want);
    // An ignored member first, last, or alone leaves well-formed output.
    expect(text(canonicalizeJSON('{"id":1,"b":2,"a":3}', { ignoreKeys: ['id'] }))).toBe('{"a":3,"b":2}');
    expect(text(canonicalizeJSON('{"a":3,"id":[1,{"x":2}]}', { ignoreKeys: ['id'] }))).toBe('{"a":3}');
    expect(text(canonicalizeJSON('{"id":1}', { ignoreKeys: ['id'] }))).toBe('{}');
    expect(text(canonicalizeJSON('{"id":1,"a":2}', { ignoreKeys: ['id'] }))).toBe('{"a":2}');
    // Keys match by value, so an escaped spelling is ignored too.
    expect(text(canonicalizeJSON('{"\\u0069d":1,"a":2}', { ignoreKeys: ['id'] }))).toBe('{"a":2}');
    expect(text(canonicalizeJSON('{"a":1,"😂":2}', { ignoreKeys: ['😂'] }))).toBe('{"a":1}');
  });
});
