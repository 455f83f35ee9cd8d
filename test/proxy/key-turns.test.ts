// KeyTurns keeps one count per request key where the deck kept two maps (the recordings a key
// has, and the `repeat` its next recording should have). The oracle below is that rule as it
// was written before, two maps for every key; a seeded random walk over keys and `repeat` values
// (missing, equal to the turn, ahead of it, behind it) must get the same stand-ins and counts.
import { describe, expect, it } from 'vitest';
import { KeyTurns } from '../../src/proxy/key-turns.ts';

/** The rule with a map for each: stand-ins made before each recording, and the counts. */
class TwoMaps {
  private readonly counts = new Map<string, number>();
  private readonly expect = new Map<string, number>();
  file(key: string, repeat: unknown): number[] {
    const expect = this.expect.get(key) ?? 0;
    const lost: number[] = [];
    if (typeof repeat === 'number') for (let k = expect; k < repeat; k++) lost.push(k);
    this.counts.set(key, (this.counts.get(key) ?? 0) + lost.length + 1);
    this.expect.set(key, (typeof repeat === 'number' ? repeat : expect) + 1);
    return lost;
  }
  recordings(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

/** The turns KeyTurns says were lost before a recording stored with `repeat`. */
const lostTurns = (lost: number, repeat: unknown): number[] => Array.from({ length: lost }, (_, j) => (repeat as number) - lost + j);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('KeyTurns', () => {
  it('a gap makes stand-ins for the lost turns; a recording that does not say takes the next turn', () => {
    const t = new KeyTurns();
    expect(t.file('a', 0)).toBe(0);
    expect(t.file('a', 3)).toBe(2); // turns 1 and 2 lost
    expect(t.file('a', undefined)).toBe(0); // turn 4
    expect(t.file('a', 5)).toBe(0);
    expect(t.recordings('a')).toBe(6);
    expect(t.recordings('b')).toBe(0);
  });

  it('recordings out of order: a repeat behind the turn makes none, and the turn after it follows that repeat', () => {
    const t = new KeyTurns();
    expect(t.file('a', 0)).toBe(0);
    expect(t.file('a', 1)).toBe(0);
    expect(t.file('a', 0)).toBe(0); // behind: 3 recordings, the next turn is 1
    expect(t.file('a', 2)).toBe(1); // turn 1 lost: 5 recordings, the next turn is 3
    expect(t.file('a', 3)).toBe(0);
    expect(t.file('a', 4)).toBe(0);
    expect(t.recordings('a')).toBe(7);
  });

  it('agrees with the two-map rule on 20,000 random sequences', () => {
    const next = rng(0x7e11);
    let disagreements = 0;
    let standIns = 0;
    let behind = 0;
    for (let s = 0; s < 20_000; s++) {
      const ours = new KeyTurns();
      const oracle = new TwoMaps();
      const steps = 1 + Math.floor(next() * 10);
      for (let i = 0; i < steps; i++) {
        const key = 'abc'[Math.floor(next() * 3)]!;
        const repeat = next() < 0.15 ? undefined : Math.floor(next() * 6);
        const before = oracle.recordings(key);
        const want = oracle.file(key, repeat);
        const lost = ours.file(key, repeat);
        if (typeof repeat === 'number' && repeat < before) behind++;
        standIns += want.length;
        if (JSON.stringify(lostTurns(lost, repeat)) !== JSON.stringify(want) || ours.recordings(key) !== oracle.recordings(key)) disagreements++;
      }
    }
    expect(disagreements).toBe(0);
    // The walk reached the cases that matter: gaps and recordings behind their turn.
    expect(standIns).toBeGreaterThan(10_000);
    expect(behind).toBeGreaterThan(10_000);
  });
});
