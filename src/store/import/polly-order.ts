/**
 * Polly.js's order of identical requests. Polly numbers the calls of one request (`_id`, its
 * hash of method, URL and body) by `_order` and answers the n-th call with the entry whose
 * `_order` is n, wherever that entry sits in the file. The file order can disagree: a recording
 * that gained a call in a later session (`recordIfMissing`) with `disableSortingHarEntries` has
 * the new entry first, as Polly adds new entries to the front. A tape answers repeats in the
 * order its records come, so the entries of one `_id` are put in `_order` before they are keyed.
 */
import type { Exchange } from './exchange.ts';

/** A Polly.js entry's request id and its place among that id's calls. */
export interface PollyOrder {
  id: string;
  order: number;
}

/**
 * The `_id` and `_order` of a HAR entry Polly.js wrote, or undefined for any other entry (a
 * browser's or Playwright's HAR has neither).
 *
 * @example
 * pollyOrderOf({ _id: '53f5…', _order: 1, request: {}, response: {} }) // { id: '53f5…', order: 1 }
 */
export function pollyOrderOf(entry: Record<string, unknown>): PollyOrder | undefined {
  const id = entry._id;
  const order = entry._order;
  if (typeof id !== 'string' || id === '' || typeof order !== 'number' || !Number.isSafeInteger(order) || order < 0) return undefined;
  return { id, order };
}

/**
 * The exchanges with each Polly.js request's calls in `_order`; everything else as it comes.
 * Lazy, as the import reads: an entry is held back only while a call of its request with a
 * lower `_order` is still to come, and is given right after that call (or, when that call is
 * not in the file, at the end, still in `_order`). Entries that repeat an `_order` already
 * given keep their place.
 *
 * @example
 * // log.entries[0] has _order 1 and log.entries[1] _order 0, of one _id
 * [...inPollyOrder(read.exchanges, (x) => orders.get(x))].map((x) => x.index) // [1, 0]
 */
export function* inPollyOrder(exchanges: Iterable<Exchange>, pollyOf: (x: Exchange) => PollyOrder | undefined): Generator<Exchange> {
  /** Per request id: the `_order` to give next, and the calls held back until then. */
  const ids = new Map<string, { next: number; held: Map<number, Exchange> }>();
  for (const exchange of exchanges) {
    const polly = pollyOf(exchange);
    if (polly === undefined) {
      yield exchange;
      continue;
    }
    let id = ids.get(polly.id);
    if (id === undefined) ids.set(polly.id, (id = { next: 0, held: new Map() }));
    if (polly.order > id.next) {
      // A later call of this request: the earlier ones answer first.
      if (!id.held.has(polly.order)) {
        id.held.set(polly.order, exchange);
        continue;
      }
      yield exchange;
      continue;
    }
    yield exchange;
    if (polly.order < id.next) continue;
    id.next++;
    for (let x = id.held.get(id.next); x !== undefined; x = id.held.get(id.next)) {
      id.held.delete(id.next);
      id.next++;
      yield x;
    }
  }
  // Calls whose earlier ones the file lacks: still in their order among themselves.
  for (const { held } of ids.values()) {
    for (const order of [...held.keys()].sort((a, b) => a - b)) yield held.get(order)!;
  }
}
