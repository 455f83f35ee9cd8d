// KeyTurns counts a route's LLM recordings per request key, stand-ins for lost ones included
// (the proxy's fast path serves a key with one recording without its matcher). Which turns were
// lost is the collection's rule (test/store/overlapping-writers.test.ts, src/store/turns.ts).
import { describe, expect, it } from 'vitest';
import { KeyTurns } from '../../src/proxy/key-turns.ts';

describe('KeyTurns', () => {
  it('counts recordings and the stand-ins filed before them, per key', () => {
    const t = new KeyTurns();
    t.file('a');
    t.file('a', 2); // turns 1 and 2 lost
    t.file('a', 0);
    expect(t.recordings('a')).toBe(5);
    expect(t.recordings('b')).toBe(0);
    t.file('b');
    expect(t.recordings('b')).toBe(1);
  });
});
