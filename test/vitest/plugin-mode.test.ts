// `vitest --mode` is Vite's mode too: a tape mode sets the tapes' mode, Vite's own pass silently,
// and a mistyped tape mode is said, with the one it was probably meant to be.
import { describe, expect, it } from 'vitest';
import { tapeModeOfViteMode } from '../../src/vitest/mode-flag.ts';

describe('vitest --mode', () => {
  it('a tape mode, in any case, is the tapes mode', () => {
    expect(tapeModeOfViteMode('update')).toEqual({ mode: 'update' });
    expect(tapeModeOfViteMode('RECORD')).toEqual({ mode: 'record' });
  });
  it("Vite's own modes, and a project's, pass without a word", () => {
    for (const m of [undefined, 'test', 'production', 'development', 'staging', 'ci', 'e2e']) expect(tapeModeOfViteMode(m)).toEqual({});
  });
  it('a mistyped tape mode gets a warning naming the mode meant', () => {
    for (const [typo, meant] of [['recrod', 'record'], ['upadte', 'update'], ['replya', 'replay'], ['passtrough', 'passthrough']] as const) {
      const r = tapeModeOfViteMode(typo);
      expect(r.mode).toBeUndefined();
      expect(r.warning).toContain(`vitest --mode "${typo}" is no tape mode`);
      expect(r.warning).toContain(`did you mean --mode ${meant}?`);
    }
  });
});
