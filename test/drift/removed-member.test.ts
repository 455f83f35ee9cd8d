// A member the new answer does not have is said to be removed, not to have become null.
import { describe, expect, it } from 'vitest';
import { chatCall, chatCompletion, driftOf } from './hand-answers.ts';

describe('tapedeck diff and a removed member', () => {
  it('usage left out of the answer: "usage: removed", never a type change to null', async () => {
    const { usage: _u, ...noUsage } = chatCompletion();
    const r = await driftOf([chatCall()], [{ body: chatCompletion() }], [{ body: noUsage }]);
    const e = r.entries[0]!;
    expect(e.classes).toContain('structure');
    expect(e.details.structure).toEqual(['usage: removed (was object)']);
    expect(e.summary).not.toContain('null');
  });
});
