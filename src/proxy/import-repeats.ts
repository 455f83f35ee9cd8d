/**
 * The import's count of recordings per request key, for each record's `repeat` (identical
 * requests keep their order as repeats), without hashing each key whole: a HAR's keys are
 * mostly all different, and a Map keyed by the 64-hex key hashed 64 characters a record.
 */

/** An empty count. */
export const newRepeats = (): Repeats => ({ first: new Map(), more: new Map() });

/**
 * The recordings so far per request key: `first` by a number made of the key's first seven
 * characters (a 64-hex key's first 28 bits) holds the first key seen with that number; `more`
 * counts, by the whole key, only the keys whose number was seen before (the key again, or
 * another with the same number). A Map keyed by the whole key hashed 64 characters per record.
 */
export interface Repeats {
  first: Map<number, string>;
  more: Map<string, number>;
}

/** A number made of a key's first seven characters: a hex digit's value for each hex digit. */
function keyHead(key: string): number {
  let n = key.length;
  for (let i = 0; i < 7 && i < key.length; i++) {
    const c = key.charCodeAt(i);
    n = ((n << 4) + (c & 15) + (c >> 6) * 9) & 0xfffffff;
  }
  return n;
}

/**
 * How many recordings of `key` came before this one (its `repeat`), and counts this one.
 *
 * @example
 * const r = newRepeats()
 * repeatOf(r, key) // 0
 * repeatOf(r, key) // 1
 */
export function repeatOf(r: Repeats, key: string): number {
  const head = keyHead(key);
  const first = r.first.get(head);
  if (first === undefined) {
    r.first.set(head, key);
    return 0;
  }
  const n = r.more.get(key) ?? (first === key ? 1 : 0);
  r.more.set(key, n + 1);
  return n;
}
