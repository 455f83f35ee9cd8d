// Tapes for property tests of the tape readers: frames of random payloads, with or without the
// header, and damage (bit flips, inserted bytes, cuts and stray frame magic, which
// resynchronization must not be fooled by) applied to their bytes.
import fc from 'fast-check';
import { TapedeckError } from '../../src/errors.ts';
import { recordBytes } from '../../src/store/tape-file.ts';

export const tapeHeader = recordBytes.header({ created: '2026-01-01T00:00:00.000Z' });
export const tapeFrame = (payload: Uint8Array) => recordBytes.frame(payload);

export const damageArb = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('magic' as const), at: fc.nat() }),
);

export type Damage = typeof damageArb extends fc.Arbitrary<infer D> ? D : never;

/** `bytes` with each damage applied in turn (a flip changes `bytes` itself). */
export function applyDamage(bytes: Uint8Array, damages: readonly Damage[]): Uint8Array {
  for (const d of damages) {
    if (bytes.length === 0) break;
    const at = d.at % bytes.length;
    if (d.kind === 'flip') bytes[at] = bytes[at]! ^ (1 << d.bit);
    else if (d.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), d.bytes, bytes.subarray(at)]);
    else if (d.kind === 'cut') bytes = bytes.subarray(0, at);
    else bytes = Buffer.concat([bytes.subarray(0, at), Uint8Array.of(0xc1, 0x54, 0x44, 0x52), bytes.subarray(at)]);
  }
  return bytes;
}

/**
 * A tape's bytes: up to 12 frames of up to 300 bytes, with or without the header, damaged up to
 * 3 times; `sound` when it has its header and no damage.
 */
export const tapeArb = fc
  .record({ payloads: fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 }), damages: fc.array(damageArb, { maxLength: 3 }), headerless: fc.boolean() })
  .map(({ payloads, damages, headerless }) => ({
    bytes: applyDamage(Buffer.concat([headerless ? Buffer.alloc(0) : tapeHeader, ...payloads.map(tapeFrame)]), damages),
    sound: damages.length === 0 && !headerless,
  }));

/** What the oracle `f` says of a tape: its result, or the TapedeckError it refuses the tape with. */
export function outcome<T>(f: () => T): T | TapedeckError {
  try {
    return f();
  } catch (e) {
    return e as TapedeckError;
  }
}
