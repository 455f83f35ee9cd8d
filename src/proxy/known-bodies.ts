/**
 * Request bodies the proxy has answered before, found again by their bytes: the replay hot path
 * of the proxy, where the same test suite sends the same bodies over and over.
 */
import { sameBytes } from '../bytes.ts';
import { crc32 } from '../store/tape-codec.ts';

interface Entry<V> {
  body: Uint8Array;
  /** {@link fingerprint} of the body. */
  fp: number;
  value: V;
}

/**
 * A cheap fingerprint of a body: its last 16 bytes (where the turns of a conversation, and the
 * values filled into a template, usually end) and 16 bytes spread over the rest. Bodies with
 * different fingerprints differ; equal ones are compared whole. It spares the comparisons with
 * the other bodies of one length, each a call into the runtime (~80 ns) however early it stops.
 */
function fingerprint(b: Uint8Array): number {
  const n = b.length;
  const tail = n > 16 ? n - 16 : 0;
  let h = n | 0;
  for (let i = tail; i < n; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  const step = tail > 16 ? Math.floor(tail / 16) : 1;
  for (let i = 0; i < tail; i += step) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h;
}

interface Bucket<V> {
  /** The first bodies of this length, compared whole one after another. */
  list: Entry<V>[];
  /** Bodies of this length past the list, by CRC-32 (one per CRC: the later replaces the earlier). */
  byCrc?: Map<number, Entry<V>>;
}

/**
 * A map from body bytes to a value. Bodies are filed by length, and the first `perLength` of a
 * length are compared with memcmp (after a fingerprint of a few bytes), which stops at the first
 * differing byte: cheaper than hashing the body, which costs ~0.3-0.6 µs per request for a 2 KB body
 * through zlib's CRC-32 (a tenth of what the proxy spends on a replayed request). Many bodies of
 * one length (a prompt template with numbers filled in) go past the list into a CRC-32 map, so a
 * lookup never compares more than `perLength` bodies. Every hit is checked byte for byte: a value
 * is never returned for other bytes.
 *
 * @example
 * const known = new KnownBodies<string>(1024)
 * known.set(body, 'answer')
 * known.get(Buffer.from(body)) // 'answer'
 */
export class KnownBodies<V> {
  private readonly byLength = new Map<number, Bucket<V>>();
  private count = 0;

  /**
   * @param maxEntries bodies held at most; past it the map starts again empty (a body seen
   *   again is filed again on its next full-path answer).
   * @param perLength bodies of one length compared whole before the CRC-32 map takes over.
   */
  constructor(
    private readonly maxEntries: number,
    private readonly perLength = 16,
  ) {}

  /** How many bodies are held. */
  get size(): number {
    return this.count;
  }

  /** The value filed for exactly these bytes. */
  get(body: Uint8Array): V | undefined {
    const b = this.byLength.get(body.length);
    if (b === undefined) return undefined;
    const list = b.list;
    const fp = fingerprint(body);
    for (let i = 0; i < list.length; i++) {
      const e = list[i]!;
      if (e.fp === fp && sameBytes(e.body, body)) return e.value;
    }
    if (b.byCrc === undefined) return undefined;
    const e = b.byCrc.get(crc32(body));
    return e !== undefined && e.fp === fp && sameBytes(e.body, body) ? e.value : undefined;
  }

  /** Files `value` for a copy of `body` (the caller's buffer may be reused). */
  set(body: Uint8Array, value: V): void {
    if (this.count >= this.maxEntries) this.clear();
    let b = this.byLength.get(body.length);
    if (b === undefined) this.byLength.set(body.length, (b = { list: [] }));
    const fp = fingerprint(body);
    for (const e of b.list) {
      if (e.fp === fp && sameBytes(e.body, body)) {
        e.value = value;
        return;
      }
    }
    // A copy: the caller's buffer may be reused (Buffer's slice() would be a view of it).
    const entry = { body: new Uint8Array(body), fp, value };
    if (b.list.length < this.perLength) b.list.push(entry);
    else (b.byCrc ??= new Map()).set(crc32(body), entry);
    this.count++;
  }

  /** Forgets every body. */
  clear(): void {
    this.byLength.clear();
    this.count = 0;
  }
}
