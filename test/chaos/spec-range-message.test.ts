// `--chaos stall=99999999999` was refused with "pause "99999999999" is not a whole number",
// which it is: the message now gives the range a count or delay must be in.
import { describe, expect, it } from 'vitest';
import { parseChaosSpec } from '../../src/chaos/options.ts';
import { TapedeckError } from '../../src/errors.ts';

function refusal(spec: string): TapedeckError {
  try {
    parseChaosSpec(spec);
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error(`${spec} was accepted`);
}

describe('a --chaos count or delay out of range', () => {
  it.each(['stall=99999999999', 'latency=3000000000', 'cut=-1'])('%s names the range', (spec) => {
    const e = refusal(spec);
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_CHAOS_SPEC');
    expect(e.message).toContain('is not a whole number from 0 to 2147483647');
  });
});
