// sortedShared against sortedKeys (the deep copy every other writer uses): for random JSON-like
// values the two must encode to the same bytes, sortedShared must leave its input as it was, and
// give back the input itself when every object in it is in order already.
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { sortedKeys, sortedShared } from '../../src/store/record-order.ts';
import { MSGPACK_OPTIONS } from '../../src/store/tape-codec.ts';
import { rng } from '../reference.ts';

const packr = new Packr(MSGPACK_OPTIONS);

// Names that sort differently by UTF-16 units than by code points or case, integer-like names
// (which objects list first whatever their insertion order) and __proto__ as an own member.
const NAMES = ['b', 'a', 'B', 'aa', '10', '9', '0', 'é', '\u{1F600}', '\uFFFD', '__proto__', 'z', 'content', 'role'];

function value(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth > 4 || pick < 0.35) return [1, -0, 1.5, 'x', null, true, new Uint8Array([1, 2])][Math.floor(r() * 7)];
  if (pick < 0.55) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  // Built as JSON.parse builds objects, so __proto__ is an own member, not the prototype.
  const members = Array.from({ length: Math.floor(r() * 6) }, () => [NAMES[Math.floor(r() * NAMES.length)]!, value(r, depth + 1)] as const);
  const o: Record<string, unknown> = {};
  for (const [k, v] of r() < 0.5 ? members : [...members].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return o;
}

describe('sortedShared', () => {
  it('encodes like sortedKeys for 3,000 random values, and changes nothing in its input', () => {
    const r = rng(42);
    let shared = 0;
    for (let i = 0; i < 3000; i++) {
      const v = value(r, 0);
      const before = Buffer.from(packr.pack(v));
      const got = sortedShared(v);
      expect(Buffer.from(packr.pack(got)).equals(Buffer.from(packr.pack(sortedKeys(v))))).toBe(true);
      expect(Buffer.from(packr.pack(v)).equals(before)).toBe(true);
      if (got === v && v !== null && typeof v === 'object') shared++;
    }
    expect(shared).toBeGreaterThan(100);
  });

  it('gives back the value itself when it is in order, and copies only the path to an object out of order', () => {
    const inOrder = { a: [{ c: 1, d: 2 }], b: { e: 'x' } };
    expect(sortedShared(inOrder)).toBe(inOrder);
    const one = { a: { x: 1 }, b: { z: 1, y: 2 }, c: [1] };
    const got = sortedShared(one);
    expect(got).not.toBe(one);
    expect(got.a).toBe(one.a);
    expect(got.c).toBe(one.c);
    expect(Object.keys(got.b)).toEqual(['y', 'z']);
    expect(Object.keys(one.b)).toEqual(['z', 'y']);
  });
});
