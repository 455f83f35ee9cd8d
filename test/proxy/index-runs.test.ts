import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { IndexRuns } from '../../src/proxy/index-runs.ts';

describe('IndexRuns', () => {
  it('lists the indexes added, in order, as a plain array of them would', () => {
    // Ranges in increasing order, touching, apart or empty, as the deck adds them at open.
    const steps = fc.array(fc.tuple(fc.nat(3), fc.nat(5)), { maxLength: 40 });
    fc.assert(
      fc.property(steps, (parts) => {
        const runs = new IndexRuns();
        const want: number[] = [];
        let at = 0;
        for (const [gap, len] of parts) {
          const from = at + gap;
          runs.add(from, from + len);
          for (let i = from; i < from + len; i++) want.push(i);
          at = from + len;
        }
        expect([...runs]).toEqual(want);
        // Iterated again, the same (the runs are kept, not consumed).
        expect([...runs]).toEqual(want);
      }),
    );
  });

  it('joins a run that starts where the last one ended', () => {
    const runs = new IndexRuns();
    runs.add(0, 2);
    runs.add(2, 4);
    runs.add(6, 7);
    runs.add(3, 3);
    expect([...runs]).toEqual([0, 1, 2, 3, 6]);
    expect((runs as unknown as { bounds: number[] }).bounds).toEqual([0, 4, 6, 7]);
  });
});
