/**
 * An index of the recordings a collection loaded at open and filed by their key parts
 * (RecordKind.keyParts): their indexes by a hash of their key, in two typed arrays (open
 * addressing, linear probing). No object and no string is kept per recording, so a store of
 * 100,000 recordings opens without 100,000 map entries and key strings for the garbage
 * collector to copy. A candidate is confirmed by the caller (which reads its key again from
 * the stored record), so a hash collision costs a comparison, never a wrong answer.
 */

/**
 * Where a key starts probing: FNV-1a (32 bits) of its length and its last 16 UTF-16 code units.
 * Keys filed here end in a SHA-256 digest in hex, whose last 16 digits are as good as all 64; a
 * key that does not only probes longer (candidates are compared whole).
 */
export function keyHash(key: string): number {
  let h = Math.imul(0x811c9dc5 ^ key.length, 0x01000193);
  for (let i = Math.max(0, key.length - 16); i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * @example
 * const index = new HeadIndex(records.length);
 * if (index.find(keyHash(key), (i) => keyOf(i) === key) < 0) index.add(keyHash(key), i);
 */
export class HeadIndex {
  /** Record index + 1 per table slot (0: empty). */
  private readonly at: Int32Array;
  /** The key hash of each slot's record, so most other keys are passed over without a comparison. */
  private readonly hashes: Int32Array;
  private readonly mask: number;
  private count = 0;

  /** A table for up to `capacity` records, at most half full. */
  constructor(capacity: number) {
    let size = 16;
    while (size < capacity * 2) size *= 2;
    this.at = new Int32Array(size);
    this.hashes = new Int32Array(size);
    this.mask = size - 1;
  }

  /** Files `index` under `hash` (its key is not filed yet: see find); false when the table is half full. */
  add(hash: number, index: number): boolean {
    if (this.count * 2 >= this.at.length) return false;
    let p = hash & this.mask;
    while (this.at[p] !== 0) p = (p + 1) & this.mask;
    this.at[p] = index + 1;
    this.hashes[p] = hash;
    this.count++;
    return true;
  }

  /** The first record filed under `hash` that `is` confirms, or -1. */
  find(hash: number, is: (index: number) => boolean): number {
    let p = hash & this.mask;
    for (;;) {
      const i = this.at[p]!;
      if (i === 0) return -1;
      if (this.hashes[p] === hash && is(i - 1)) return i - 1;
      p = (p + 1) & this.mask;
    }
  }
}
