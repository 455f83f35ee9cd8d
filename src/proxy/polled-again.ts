/**
 * Update mode: a GET or HEAD asked past its recordings goes upstream (its state may have moved
 * on: a batch, a background response), and its answer is recorded only when it differs from the
 * key's last recording. The same state again (a batch still in progress, a model list) is what a
 * later call past the end is served anyway, so a long-running shared update proxy that run after
 * run polls does not grow by it.
 */
import { sameBytes } from '../bytes.ts';
import type { RecordCollection } from '../store/collection.ts';
import { filedKey } from '../store/origins.ts';
import type { HttpRecord, MatchKind } from '../store/records.ts';

/**
 * The check `record` applies to such an answer (true: not stored), or undefined when every
 * answer is stored: another mode or method, or strictOrder (`repeatLast` false), where each call
 * past the end is a miss and needs a recording of its own.
 *
 * @example
 * const unchanged = polledAgain({ mode: 'update', repeatLast: true, col }, p, req)
 * if (unchanged?.(rec)) return // the key's last recording already holds it
 */
export function polledAgain(
  deck: { mode: string; repeatLast: boolean; col: RecordCollection<HttpRecord> | undefined },
  p: { route: string; match: MatchKind; key: string },
  req: { method: string; origin?: string; upstreamPath?: string },
): ((rec: HttpRecord) => boolean) | undefined {
  if (deck.mode !== 'update' || !deck.repeatLast || p.match !== 'http' || (req.method !== 'GET' && req.method !== 'HEAD') || !deck.col) return undefined;
  const last = deck.col.lastOf(filedKey({ route: p.route, origin: req.origin, upstreamPath: req.upstreamPath, match: p.match, key: p.key }));
  if (last === undefined) return undefined;
  // The status and the body (the headers carry a date and a request id that differ every time).
  return (rec) => rec.response.status === last.response.status && sameBytes(rec.response.body, last.response.body);
}
