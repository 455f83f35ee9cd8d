/**
 * A list of indexes kept as runs of consecutive ones. The deck lists which recordings it loaded
 * and which of them a route's matcher will key: on a large tape those are long runs (0 to
 * 99,999), and as plain arrays they were 100,000 pushes each at open, every growth copying into
 * memory touched for the first time (~15 ms per list of 100,000 in a fresh process).
 *
 * @example
 * const runs = new IndexRuns();
 * runs.add(0, 3);
 * runs.add(5, 6);
 * [...runs] // [0, 1, 2, 5]
 */
export class IndexRuns implements Iterable<number> {
  /** Start and end (exclusive) of each run, in order. */
  private readonly bounds: number[] = [];

  /** Appends the indexes from..to-1 (after every index added so far). */
  add(from: number, to: number): void {
    if (to <= from) return;
    const b = this.bounds;
    if (b.length > 0 && b[b.length - 1] === from) b[b.length - 1] = to;
    else b.push(from, to);
  }

  *[Symbol.iterator](): Iterator<number> {
    const b = this.bounds;
    for (let r = 0; r < b.length; r += 2) for (let i = b[r]!; i < b[r + 1]!; i++) yield i;
  }
}
