// Bad input: every rejection is a TapedeckError with a stable code and a location, the same on
// every backend, and the engine keeps working afterwards.
import { describe, expect, it } from 'vitest';
import {
  backend, canonicalize, canonicalizeJSON, hashJSON, hashValue, MAX_DEPTH, MAX_INPUT_BYTES, pathHashes, setBackend, TapedeckError,
} from '../src/index.ts';
import { refDigest, utf8 } from './reference.ts';
import { errorOf } from './helpers.ts';


// [input, code, byte offset]: offsets are part of the contract (both engines must agree).
const textCases: [string | Uint8Array, string, number][] = [
  ['', 'E_JSON', 0],
  ['   ', 'E_JSON', 3],
  ['[1,]', 'E_JSON', 3],
  ['[1 2]', 'E_JSON', 3],
  ['{"a":1,}', 'E_JSON', 7],
  ['{"a" 1}', 'E_JSON', 5],
  ['{a:1}', 'E_JSON', 1],
  ['[01]', 'E_JSON', 2],
  ['[1.]', 'E_JSON', 3],
  ['[.5]', 'E_JSON', 1],
  ['[-]', 'E_JSON', 2],
  ['[1e]', 'E_JSON', 3],
  ['[+1]', 'E_JSON', 1],
  ['[NaN]', 'E_JSON', 1],
  ['[Infinity]', 'E_JSON', 1],
  ['[tru]', 'E_JSON', 1],
  ['[nul', 'E_JSON', 1],
  ['"abc', 'E_JSON', 4],
  ['"a\\x"', 'E_JSON', 2],
  ['"a\\u12G4"', 'E_JSON', 2],
  ['"a\nb"', 'E_JSON', 2],
  ['[1] x', 'E_JSON', 4],
  ['[1', 'E_JSON', 2],
  ['{"a":1', 'E_JSON', 6],
  ['// c\n1', 'E_JSON', 0],
  ['\ufeff1', 'E_JSON', 0],
  [new Uint8Array([0x22, 0xff, 0x22]), 'E_UTF8', 1],
  [new Uint8Array([0x22, 0x61, 0xc3, 0x28, 0x22]), 'E_UTF8', 2],
  [new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]), 'E_UTF8', 1], // UTF-8-encoded surrogate
  [new Uint8Array([0x22, 0xc0, 0xaf, 0x22]), 'E_UTF8', 1], // overlong '/'
  [new Uint8Array([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]), 'E_UTF8', 1], // > U+10FFFF
  [new Uint8Array([0x22, 0xe2, 0x82]), 'E_UTF8', 1], // truncated at end of input
  ['"\\ud800"', 'E_LONE_SURROGATE', 1],
  ['"x\\udc00"', 'E_LONE_SURROGATE', 2],
  ['"\\ud83d\\u0041"', 'E_LONE_SURROGATE', 1],
  ['{"k\\ud800":1}', 'E_LONE_SURROGATE', 3],
  ['{"a":1,"a":2}', 'E_DUPLICATE_KEY', 7],
  ['{"b":1,"a":2,"b":3}', 'E_DUPLICATE_KEY', 13],
  ['{"a":1,"\\u0061":2}', 'E_DUPLICATE_KEY', 7],
  ['[1e400]', 'E_NON_FINITE', 1],
  ['{"x":-1e309}', 'E_NON_FINITE', 5],
  ['['.repeat(MAX_DEPTH + 1), 'E_DEPTH', MAX_DEPTH],
];

describe(`JSON text errors (${backend()})`, () => {
  for (const [input, code, offset] of textCases) {
    const label = typeof input === 'string' ? JSON.stringify(input.slice(0, 30)) : `bytes ${Buffer.from(input).toString('hex')}`;
    it(`${label} -> ${code} at ${offset}`, () => {
      const e = errorOf(() => canonicalizeJSON(input));
      expect(e.code).toBe(code);
      expect(e.offset).toBe(offset);
      expect(e.message).toMatch(/byte \d+/);
      expect(e.hint).toBeTruthy();
      // And the engine is still usable.
      expect(hashJSON('{"ok":true}')).toBe(refDigest({ ok: true }));
    });
  }

  it('messages say what was expected and show the spot', () => {
    const e = errorOf(() => canonicalizeJSON('{\n  "a": 1,\n  "b" 2\n}'));
    expect(e.message).toContain("expected ':'");
    expect(e.message).toContain('line 3, column 7');
    expect(e.message).toContain('⟪here⟫');
    // The spot as the text reads: quotes as they are; a line break, a control character and a
    // backslash escaped, so the excerpt stays on one line and says what the bytes are.
    expect(e.message).toContain('…{\\n  "a": 1,\\n  "b" ⟪here⟫2\\n}…');
    const dup = errorOf(() => canonicalizeJSON('{"model":"a\\u0041","model":"b"}'));
    expect(dup.message).toContain('…{"model":"a\\\\u0041",⟪here⟫"model":"b"}…');
  });

  it('exactly MAX_DEPTH levels is fine; one more is E_DEPTH; a million is no stack overflow', () => {
    expect(canonicalizeJSON('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH)).length).toBe(2 * MAX_DEPTH);
    expect(errorOf(() => canonicalizeJSON('['.repeat(MAX_DEPTH + 1) + ']'.repeat(MAX_DEPTH + 1))).code).toBe('E_DEPTH');
    expect(errorOf(() => canonicalizeJSON('{"a":'.repeat(1_000_000))).code).toBe('E_DEPTH');
  });

  it('input over the size limit is E_TOO_LARGE before any work', () => {
    const e = errorOf(() => canonicalizeJSON(new Uint8Array(MAX_INPUT_BYTES + 1)));
    expect(e.code).toBe('E_TOO_LARGE');
    expect(e.message).toContain(String(MAX_INPUT_BYTES));
  });

  it('a lone surrogate in a JavaScript string given as JSON text', () => {
    const e = errorOf(() => canonicalizeJSON('["é", "\ud800"]'));
    expect(e.code).toBe('E_LONE_SURROGATE');
    expect(e.offset).toBe(8);
  });

  it('pathHashes needs an array', () => {
    expect(errorOf(() => pathHashes('{"messages":[]}')).code).toBe('E_NOT_ARRAY');
    expect(errorOf(() => pathHashes(utf8('  7'))).offset).toBe(2);
    expect(errorOf(() => pathHashes({} as unknown as unknown[])).code).toBe('E_NOT_ARRAY');
  });
});

describe(`arguments (${backend()})`, () => {
  it('setBackend rejects an unknown name and keeps the current backend', () => {
    const before = backend();
    const e = errorOf(() => setBackend('gpu' as never));
    expect(e.code).toBe('E_BACKEND');
    expect(e.hint).toContain('wasm-simd, wasm, js');
    expect(backend()).toBe(before);
  });
  it('ignoreKeys must be strings; JSON input must be a string or bytes', () => {
    expect(errorOf(() => canonicalizeJSON('{}', { ignoreKeys: [1 as unknown as string] })).code).toBe('E_ARG');
    expect(errorOf(() => canonicalizeJSON(42 as unknown as string)).code).toBe('E_ARG');
  });
});

describe(`JavaScript value errors (${backend()})`, () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = { back: cyclic };
  let deep: unknown = 1;
  for (let i = 0; i <= MAX_DEPTH; i++) deep = [deep];
  const valueCases: [string, unknown, string, string][] = [
    ['NaN', { messages: [{ t: NaN }] }, 'E_NON_FINITE', '$.messages[0].t'],
    ['Infinity', [1, -Infinity], 'E_NON_FINITE', '$[1]'],
    ['NaN after string and null siblings', { m: ['x', null, { s: 'y', n: null, t: NaN }] }, 'E_NON_FINITE', '$.m[2].t'],
    ['Infinity after string and null elements', ['a', null, 'b', Infinity], 'E_NON_FINITE', '$[3]'],
    ['NaN via toJSON', { d: { toJSON: () => NaN } }, 'E_NON_FINITE', '$.d'],
    ['BigInt', { n: 10n }, 'E_BIGINT', '$.n'],
    ['cycle', cyclic, 'E_CYCLE', '$.self.back'],
    ['lone surrogate value', { s: 'a\udc00' }, 'E_LONE_SURROGATE', '$.s'],
    ['lone surrogate key', { ['k\ud800']: 1 }, 'E_LONE_SURROGATE', '$["k\\ud800"]'],
    ['too deep', deep, 'E_DEPTH', `$${'[0]'.repeat(MAX_DEPTH)}`],
    ['undefined', undefined, 'E_TYPE', '$'],
    ['function', () => 1, 'E_TYPE', '$'],
  ];
  for (const [name, value, code, path] of valueCases) {
    it(`${name} -> ${code} at ${path}`, () => {
      for (const f of [() => canonicalize(value), () => hashValue(value)]) {
        const e = errorOf(f);
        expect(e.code).toBe(code);
        expect(e.path).toBe(path);
        expect(e.message).toContain(path);
      }
      expect(hashValue({ ok: true })).toBe(refDigest({ ok: true }));
    });
  }

  it('NaN inside messages for pathHashes', () => {
    expect(errorOf(() => pathHashes([{ a: 1 }, { b: NaN }])).path).toBe('$[1].b');
  });

  it('shared references that are not cycles are fine', () => {
    const shared = { x: 1 };
    expect(hashValue({ a: shared, b: shared })).toBe(refDigest({ a: { x: 1 }, b: { x: 1 } }));
  });

  it('null values do not trip the NaN check', () => {
    expect(hashValue({ a: null, b: [null], c: 'null' })).toBe(refDigest({ a: null, b: [null], c: 'null' }));
  });

  it('a BigInt under an ignored key is dropped, not an error', () => {
    expect(hashValue({ a: 1, id: 5n }, { ignoreKeys: ['id'] })).toBe(refDigest({ a: 1 }));
  });
});
