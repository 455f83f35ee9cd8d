// Bad arguments to the value and text entries are TapedeckErrors that say what was given and
// the fix: ignoreKeys given as a string (a bare TypeError from a WeakMap before), an ArrayBuffer
// where JSON text is expected (read as an object with no members, "no LLM request shape"), a
// boxed BigInt (written as {} before), and E_DEPTH from requestKeys() of an object, which had
// no location.
import { describe, expect, it } from 'vitest';
import { backend, canonicalize, canonicalizeJSON, createMatcher, hashJSON, hashMany, hashValue, pathHashes, requestDigests, requestKeys, TapedeckError } from '../src/index.ts';
import { errorOf } from './helpers.ts';

describe(`argument checks (${backend()})`, () => {
  it('ignoreKeys that is not an array is E_ARG, from every entry', () => {
    const bad = { ignoreKeys: 'id' } as never;
    for (const f of [() => canonicalize({ id: 1 }, bad), () => hashValue({ id: 1 }, bad), () => canonicalizeJSON('{"id":1}', bad), () => hashJSON('{"id":1}', bad), () => hashMany([{ id: 1 }], bad), () => pathHashes([{ id: 1 }], bad)]) {
      const e = errorOf(f);
      expect(e.code).toBe('E_ARG');
      expect(e.message).toContain('got a string ("id")');
      expect(e.hint).toContain('["id"]');
    }
    expect(errorOf(() => hashValue({}, { ignoreKeys: new Set(['id']) } as never)).message).toContain('got a Set');
    expect(errorOf(() => hashValue({}, { ignoreKeys: '' } as never)).code).toBe('E_ARG');
    // An empty list and no list still drop nothing.
    expect(hashValue({ id: 1 }, { ignoreKeys: [] })).toBe(hashValue({ id: 1 }));
  });

  it('an ArrayBuffer where JSON text is expected is E_ARG saying how to wrap it', () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    const ab = new TextEncoder().encode(JSON.stringify(body)).buffer;
    const m = createMatcher({ recordings: [{ request: body, response: 'recorded' }], allowRepeats: true });
    for (const f of [() => m.match(ab), () => requestDigests(ab), () => requestKeys(ab), () => canonicalizeJSON(ab as never), () => hashJSON(new DataView(ab) as never)]) {
      const e = errorOf(f);
      expect(e.code).toBe('E_ARG');
      expect(e.message).toMatch(/got an? (ArrayBuffer|DataView)/);
      expect(e.hint).toContain('new Uint8Array(');
    }
    expect(m.match(new Uint8Array(ab)).recording.response).toBe('recorded');
  });

  it('a boxed BigInt is E_BIGINT with its path, as JSON.stringify refuses it', () => {
    for (const v of [[Object(5n)], { a: Object(5n) }]) {
      const e = errorOf(() => canonicalize(v));
      expect(e.code).toBe('E_BIGINT');
      expect(e.path).toBe(Array.isArray(v) ? '$[0]' : '$.a');
      expect(errorOf(() => hashMany([v])).code).toBe('E_BIGINT');
    }
    // Other objects with no members are still {}.
    expect(new TextDecoder().decode(canonicalize([{}, new (class {})()]))).toBe('[{},{}]');
  });

  it('E_DEPTH from requestKeys of an object has the path hashValue gives', () => {
    let v: unknown = 1;
    for (let i = 0; i < 600; i++) v = { a: v };
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'x', v }] }] };
    const want = errorOf(() => hashValue(body));
    for (const f of [() => requestKeys(body), () => requestDigests(body)]) {
      const e = errorOf(f);
      expect(e).toBeInstanceOf(TapedeckError);
      expect(e.code).toBe('E_DEPTH');
      expect(e.path).toBe(want.path);
      expect(e.path!.startsWith('$.messages[1].content[0].v.a.a')).toBe(true);
    }
  });
});
