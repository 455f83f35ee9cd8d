/**
 * Per request key, the LLM recordings a route's matcher has (stand-ins for lost ones included)
 * and the turn (`repeat`) the key's next recording should have. A recording whose `repeat` is
 * past that turn follows recordings lost to damage, each of which keeps its turn as a stand-in.
 *
 * The turn expected is the key's count of recordings unless its recordings came out of order
 * (a `repeat` behind the turn), so only such keys get an entry of their own: a second map for
 * every key cost two more lookups a recording when a route's first miss files 100,000 of them.
 *
 * @example
 * const turns = new KeyTurns();
 * turns.file('k', 0);   // 0: nothing lost before it
 * turns.file('k', 3);   // 2: turns 1 and 2 were lost
 * turns.recordings('k') // 4 (two recordings and two stand-ins)
 */
export class KeyTurns {
  private readonly counts = new Map<string, number>();
  /** Keys whose next turn is not their count. */
  private behind: Map<string, number> | undefined;

  /**
   * Files a recording of `key` stored with `repeat` (a number, or anything else for a recording
   * that does not say); returns how many turns were lost before it, which the caller files as
   * stand-ins first (turns repeat - lost to repeat - 1), counted here.
   */
  file(key: string, repeat: unknown): number {
    let count = this.counts.get(key) ?? 0;
    const expect = this.behind?.get(key) ?? count;
    const lost = typeof repeat === 'number' && repeat > expect ? repeat - expect : 0;
    count += lost + 1;
    this.counts.set(key, count);
    const next = (typeof repeat === 'number' ? repeat : expect) + 1;
    if (next !== count) (this.behind ??= new Map()).set(key, next);
    else this.behind?.delete(key);
    return lost;
  }

  /** The recordings filed for `key`, stand-ins included. */
  recordings(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
