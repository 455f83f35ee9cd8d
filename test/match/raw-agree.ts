// The differential check of the raw-bytes request path against the reference (requestKeys), for
// the raw-key property tests: whenever the raw path answers, its digests are the reference's;
// whenever the reference throws, the raw path does not answer.
import { expect } from 'vitest';
import { requestKeys, TapedeckError } from '../../src/index.ts';
import { rawRequestDigests } from '../../src/match/raw-keys.ts';
import type { NormalizeOptions } from '../../src/providers/types.ts';

type Obj = Record<string, any>;

/** The reference's digests, or its error code. */
export function reference(body: Uint8Array | string, opts?: NormalizeOptions): Obj {
  try {
    const { messages: _m, view: _v, ...digests } = requestKeys(body, opts);
    return digests;
  } catch (e) {
    if (e instanceof TapedeckError) return { error: e.code };
    throw e;
  }
}

/** Checks one body; returns whether the raw path answered. */
export function agree(body: Uint8Array | string, opts?: NormalizeOptions): boolean {
  const ref = reference(body, opts);
  const raw = rawRequestDigests(body, opts);
  if (raw === undefined) return false;
  expect(ref.error, 'the raw path keyed a body the reference rejects').toBeUndefined();
  expect(raw).toEqual(ref);
  return true;
}

/** A float in [0, 1) from a seed, for the respelling choices. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}
