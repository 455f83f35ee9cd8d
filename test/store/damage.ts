// Damage for property tests of the tape readers: bit flips, inserted bytes, cuts and stray
// frame magic (which resynchronization must not be fooled by), applied to a tape's bytes.
import fc from 'fast-check';

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
