// After TAPEDECK_PRUNE=1, the summary printed below "tapedeck: pruned 2 unused recording(s)."
// still said "2 unused recordings" and listed each tape as "2 unused", as if nothing had been
// dropped. Now a pruned run's summary says the unused recordings were pruned.
import { describe, expect, it } from 'vitest';
import { formatSummary, type RunSummary } from '../../src/testing/run-report.ts';

const summary: RunSummary = {
  tapes: [{ tape: '/p/test/__tapes__/chat.test/hello.tape', mode: 'update', added: 0, hits: 1, misses: 0, unused: 2, unusedTraces: ['a', 'b'] }],
  tapesWritten: 0,
  added: 0,
  hits: 1,
  misses: [],
  unused: 2,
};

describe('the summary of a run that pruned', () => {
  it('says the unused recordings were pruned, and prints no prune command', () => {
    const text = formatSummary(summary, { root: '/p', pruned: true });
    expect(text.split('\n')[0]).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 2 unused recordings (pruned)');
    expect(text).toContain('test/__tapes__/chat.test/hello.tape (update): 2 unused, pruned');
    expect(text).not.toContain('TAPEDECK_PRUNE=1');
  });

  it('a run that did not prune says them unused, with the command', () => {
    const text = formatSummary(summary, { root: '/p', pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' });
    expect(text.split('\n')[0]).toMatch(/2 unused recordings$/);
    expect(text).toContain('hello.tape (update): 2 unused\n');
  });
});
