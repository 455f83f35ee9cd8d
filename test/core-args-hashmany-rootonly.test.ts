// hashMany() is the batch form of hashValue(): with { ignoreKeys, rootOnly: true } each element
// is its own root, so its top-level members of those names are dropped, from values, JSON text
// and bytes alike, on every backend. It once took the outer array as the root and dropped
// nothing. pathHashes() keeps its documented reading: the root is the list (or, with { member },
// the request object).
import { describe, expect, it } from 'vitest';
import { backend, hashJSON, hashMany, hashValue, pathHashes } from '../src/index.ts';
import { errorOf } from './helpers.ts';

const msgs = [
  { id: 1, role: 'user', content: 'hi', meta: { id: 2, x: 1 } },
  { id: 3, role: 'assistant', content: [{ id: 4, type: 'text', text: 'yo' }] },
  'plain',
  [{ id: 5 }],
];
const text = JSON.stringify(msgs);
const rootOnly = { ignoreKeys: ['id'], rootOnly: true };

describe(`hashMany with rootOnly (${backend()})`, () => {
  it('each element is its own root: hashMany(v, opts)[i] === hashValue(v[i], opts)', () => {
    const want = msgs.map((m) => hashValue(m, rootOnly));
    expect(hashValue(msgs[0], rootOnly)).toBe(hashJSON('{"content":"hi","meta":{"id":2,"x":1},"role":"user"}'));
    expect(hashMany(msgs, rootOnly)).toEqual(want);
    expect(hashMany(text, rootOnly)).toEqual(want);
    expect(hashMany(new TextEncoder().encode(text), rootOnly)).toEqual(want);
  });

  it('without rootOnly, and without keys, nothing changes', () => {
    const any = { ignoreKeys: ['id'] };
    expect(hashMany(msgs, any)).toEqual(msgs.map((m) => hashValue(m, any)));
    expect(hashMany(text, any)).toEqual(msgs.map((m) => hashValue(m, any)));
    expect(hashMany(msgs, { rootOnly: true })).toEqual(msgs.map((m) => hashValue(m)));
    expect(hashMany([undefined, 1], rootOnly)).toEqual([hashValue(null), hashValue(1)]);
  });

  it('pathHashes keeps the list (or the request object) as the root', () => {
    expect(pathHashes(msgs, rootOnly).messageHashes).toEqual(msgs.map((m) => hashValue(m)));
    expect(pathHashes(text, rootOnly).messageHashes).toEqual(msgs.map((m) => hashValue(m)));
  });

  it('errors keep their place in the list', () => {
    const e = errorOf(() => hashMany([{ a: 1 }, { b: { c: Number.NaN } }], rootOnly));
    expect(e.code).toBe('E_NON_FINITE');
    expect(e.path).toBe('$[1].b.c');
    expect(e.message).toContain('at $[1].b.c');
    expect(errorOf(() => hashMany('[1,', rootOnly)).code).toBe('E_JSON');
    expect(errorOf(() => hashMany('{"a":1}', rootOnly)).code).toBe('E_NOT_ARRAY');
    expect(errorOf(() => hashMany({ a: 1 } as never, rootOnly)).code).toBe('E_NOT_ARRAY');
  });
});
