// A miss ranks the closest recordings by their full keys (normalized view, messages, path
// hashes), and an eval whose prompt template changed makes a miss of every call: each one
// normalized the same few hundred recordings again (~30 ms of CPU a miss on a 3,200-recording
// tape, against well under 1 ms for a replayed call). A matcher keeps the keys it made for a
// recording and uses them for its later misses. Counted here by the reads of each recording's
// `messages`, which normalizing it makes and a kept key does not.
import { describe, expect, it } from 'vitest';
import { createMatcher, type Recording } from '../../src/match/index.ts';

const SYSTEM = 'You are a precise calculator.';

/** A recording whose request counts how often its messages are read. */
function counted(i: number, reads: number[]): Recording {
  const messages = [{ role: 'system', content: SYSTEM }, { role: 'user', content: `Question ${i}: what is ${i}*${i + 3}?` }];
  const request = { model: 'gpt-4o-mini', temperature: 0 } as Record<string, unknown>;
  Object.defineProperty(request, 'messages', { enumerable: true, get: () => (reads[i]!++, messages) });
  return { request, response: { choices: [{ message: { role: 'assistant', content: String(i * (i + 3)) } }] } };
}

describe('the keys a miss makes of recordings', () => {
  it('are made once per recording, not again at each miss', () => {
    const n = 300;
    const reads = new Array<number>(n).fill(0);
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: Array.from({ length: n }, (_, i) => counted(i, reads)) });
    const afterOpen = [...reads];
    const miss = (i: number) => {
      try {
        m.match({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: `Question ${i} (edited): what is ${i}*${i + 3}?` }] });
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('expected a miss');
    };
    const first = miss(1);
    const afterFirst = reads.map((r, i) => r - afterOpen[i]!);
    for (let i = 2; i < 8; i++) miss(i);
    const afterMore = reads.map((r, i) => r - afterOpen[i]! - afterFirst[i]!);
    // The first miss normalizes the few hundred recordings it ranks. The six after it rank
    // nearly the same ones and normalize only those not ranked before (and compare the text of
    // their closest one), so all six together read less than the first alone; each read them
    // all again before.
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(afterFirst.filter((r) => r > 0).length).toBeGreaterThan(200);
    expect(sum(afterMore)).toBeLessThan(sum(afterFirst));
    // And the diagnosis is the same as before: the closest recording, what differs.
    expect(first).toMatch(/message 1 \(user\) text differs from the closest recording/);
    expect(first).toMatch(/Question 1: what is 1\*4\?/);
  });

  it('are made again for a recording whose request was replaced', () => {
    const reads = [0, 0];
    const recordings = [counted(0, reads), counted(1, reads)];
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings });
    const ask = (text: string) => {
      try {
        m.match({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: text }] });
      } catch (e) {
        return (e as Error).message;
      }
      return 'hit';
    };
    expect(ask('Question 0: what is 0*3? (edited)')).toMatch(/text differs/);
    recordings[0] = { request: { model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Replaced question' }] }, response: {} };
    expect(ask('Replaced question!')).toMatch(/recording: "Replaced question"/);
  });
});
