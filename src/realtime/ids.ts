/**
 * Ids renumbered by first use (`#1`, `#2`...): how a session's keys hold the ids the client or
 * the server made up, so that ids that change on every run never split recordings, and how a
 * replay finds which of this run's ids stands where the recording had another.
 */

/**
 * @example
 * const ids = new Ids()
 * ids.id('item_x') // '#1'
 * ids.id('item_y') // '#2'
 * ids.id('item_x') // '#1'
 * ids.rawOf('#2')  // 'item_y'
 */
export class Ids {
  private readonly map = new Map<string, string>();
  /** The raw ids in order of first use. */
  readonly raws: string[] = [];
  readonly id = (raw: string): string => {
    let v = this.map.get(raw);
    if (v === undefined) {
      v = `#${this.map.size + 1}`;
      this.map.set(raw, v);
      this.raws.push(raw);
    }
    return v;
  };

  /** The raw id numbered `#n`, if one was. */
  rawOf(n: string): string | undefined {
    return this.raws[Number(n.slice(1)) - 1];
  }
}
