// Members that differ on every call (system_fingerprint, ids, times) are noise whether their value
// changes or they appear or disappear: a hand-written answer rarely carries them.
import { describe, expect, it } from 'vitest';
import { chatCall, chatCompletion, driftOf } from './hand-answers.ts';

describe('tapedeck diff and noise members that appear or disappear', () => {
  it('system_fingerprint added: benign, nothing fails', async () => {
    const r = await driftOf([chatCall()], [{ body: chatCompletion() }], [{ body: chatCompletion({ system_fingerprint: 'fp_0ba0d124f1' }) }]);
    const e = r.entries[0]!;
    expect(e.classes).toEqual(['benign']);
    expect(e.details.structure).toBeUndefined();
    expect(e.summary).toContain('system_fingerprint');
    expect(r.summary.failing).toBe(0);
  });

  it('system_fingerprint gone: benign too', async () => {
    const r = await driftOf([chatCall()], [{ body: chatCompletion({ system_fingerprint: 'fp_0ba0d124f1' }) }], [{ body: chatCompletion() }]);
    expect(r.entries[0]!.classes).toEqual(['benign']);
    expect(r.summary.failing).toBe(0);
  });
});
