// The import's count of recordings per request key (each record's `repeat`) against a Map
// keyed by the whole key, for keys made to share the number it files them by: 64-hex keys
// with the same first seven digits, keys whose digits differ only where the number folds them
// (`a` and `1` have the same low four bits), short and non-hex keys, in random order with repeats.
import { describe, expect, it } from 'vitest';
import { newRepeats, repeatOf } from '../../src/proxy/import-repeats.ts';
import { rng } from '../reference.ts';

describe('repeatOf', () => {
  it('counts each key as a Map keyed by the whole key does, whatever keys share', () => {
    const r = rng(20260404);
    const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');
    const keys: string[] = [];
    for (let i = 0; i < 40; i++) keys.push(`0000000${hex(57)}`, `abcdef0${hex(57)}`, hex(64));
    for (let i = 0; i < 10; i++) keys.push(`1bcdef0${hex(57)}`, `a${'0'.repeat(6)}${hex(57)}`, hex(i % 8), `key-${i}`, `KEY-${i}`, '');
    const seen = new Map<string, number>();
    const count = newRepeats();
    for (let i = 0; i < 3000; i++) {
      const key = keys[Math.floor(r() * keys.length)]!;
      const want = seen.get(key) ?? 0;
      seen.set(key, want + 1);
      const got = repeatOf(count, key);
      if (got !== want) expect.fail(`record ${i}, key ${key}: repeat ${got}, want ${want}`);
    }
    expect(Math.max(...seen.values())).toBeGreaterThan(10);
  });
});
