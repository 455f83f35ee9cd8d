/**
 * Per request key, the LLM recordings a route's matcher has, stand-ins for lost ones included: a
 * key with one answers the same every time (the proxy's fast path). Which turns were lost is the
 * collection's to say (RecordCollection.lostBefore, src/store/turns.ts): it serves a key by the
 * same rule, and numbers that writers open at once gave apart are not read as lost turns there.
 *
 * @example
 * const turns = new KeyTurns();
 * turns.file('k');      // a recording
 * turns.file('k', 2);   // two lost turns, then a recording
 * turns.recordings('k') // 4 (two recordings and two stand-ins)
 */
export class KeyTurns {
  private readonly counts = new Map<string, number>();

  /** Files a recording of `key`, after stand-ins for the `lost` turns before it. */
  file(key: string, lost = 0): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + lost + 1);
  }

  /** The recordings filed for `key`, stand-ins included. */
  recordings(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
