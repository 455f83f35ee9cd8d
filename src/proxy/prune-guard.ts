/**
 * Whether a deck's `pruneUnused` may remove the recordings its run did not use. A call an
 * injected fault answered (a rate limit, a 5xx, a reset, a timeout) got no recording's answer:
 * a recording this run did not serve may be the one that call needs without the fault (another
 * seed, or no chaos), so after such faults nothing is removed and the warning says why. Browser
 * builds take prune-guard.browser.ts: a page injects no faults.
 */
import { faultsInPlaceOfRecordings } from '../chaos/answer-faults.ts';
import { pruneUnusedSessions } from '../realtime/prune.ts';
import type { CloseReport, RecordCollection } from '../store/collection.ts';
import type { TapeMode } from '../store/mode.ts';
import type { MatchKind } from '../store/records.ts';
import { filedKey } from '../store/origins.ts';

/**
 * True when the run's faults (`stats().faults`) leave its unused recordings to be judged; else
 * warns (naming the tape and the faults) and returns false.
 *
 * @example
 * if (pruneMayRemove(deck.stats().faults, 'app.tape', console.warn)) await col.close({ pruneUnused: true })
 */
export function pruneMayRemove(faults: Readonly<Record<string, number>> | undefined, tape: string | undefined, warn: (m: string) => void): boolean {
  const faulted = faultsInPlaceOfRecordings(faults);
  if (faulted.calls === 0) return true;
  warn(`tapedeck: not removing unused recordings from ${tape}: ${faulted.text}, not by the recordings they would have got. Prune after a run without chaos.`);
  return false;
}

const TRACE_FIELD: readonly string[] = ['trace'];

/**
 * Record mode: the stats' `kept` (DeckStats.kept), the trace tokens of the recordings a call of
 * this run asked for again without a new answer being recorded (RecordCollection.keptAsked):
 * used, not stale, for a run summary. `{}` when there are none.
 *
 * @example
 * const stats = { ...counters, ...keptOf('record', col) } // kept: ['t-1a2b...']
 */
export function keptOf(mode: TapeMode, col: RecordCollection<unknown> | undefined): { kept?: string[] } {
  if (mode !== 'record' || !col) return {};
  const kept: string[] = [];
  for (const r of col.keptAsked()) {
    const trace = r.head(TRACE_FIELD, true).trace;
    if (typeof trace === 'string') kept.push(trace);
  }
  return kept.length > 0 ? { kept } : {};
}

/**
 * Record mode: a request of this run goes upstream for `p` (its route, match kind and key) to
 * `to.origin` (under `to.upstreamPath`): its old recordings are asked for
 * (RecordCollection.ask), so a prune keeps them if the new answer is never recorded. Those of
 * its host, and those that name no host (written before origins were stored), which a new
 * recording of it replaces too.
 *
 * @example
 * askedFor(col, deck.prepareRequest(req), req)
 */
export function askedFor(col: RecordCollection<unknown>, p: { route: string; match: MatchKind; key: string }, to: { origin?: string; upstreamPath?: string }): void {
  col.ask(filedKey({ ...p, origin: to.origin, upstreamPath: to.upstreamPath }));
  if (to.origin !== undefined) col.ask(filedKey(p));
}

/**
 * Says, after a prune, how many recordings it left because their calls were asked for again
 * and not recorded (the upstream failed or was cut).
 */
function sayKept(col: RecordCollection<unknown>, tape: string | undefined, warn: (m: string) => void): void {
  const kept = col.keptAsked().length;
  if (kept > 0) warn(`tapedeck: kept ${kept} recording(s) in ${tape} that calls of this run asked for again without getting a new answer recorded (the upstream failed or was cut); pruning leaves them.`);
}

/**
 * After a deck's close: with a prune (`pruned`, the collection it pruned), the realtime sessions
 * on the proxy's tape `sessions` that no connect of this run used go too (added to
 * `report.pruned`), and the recordings the prune kept are said; then what was removed is said.
 * Here, not in ./deck.ts: a page prunes nothing (prune-guard.browser.ts).
 *
 * @example
 * await sayPruned(await col.close({ pruneUnused: true }), col, undefined, 'app.tape', console.warn)
 * // warns "tapedeck: removed 2 unused recording(s) from app.tape: ..."
 */
export async function sayPruned(report: CloseReport, pruned: RecordCollection<unknown> | undefined, sessions: string | undefined, tape: string | undefined, warn: (m: string) => void): Promise<void> {
  if (sessions !== undefined) report.pruned.push(...(await pruneUnusedSessions(sessions).catch((e: unknown) => (warn(`tapedeck: could not prune unused realtime sessions in ${tape}: ${e instanceof Error ? e.message : String(e)}`), []))));
  if (pruned) sayKept(pruned, tape, warn);
  if (report.pruned.length > 0) {
    const which = report.pruned.map((x) => `${x.key.replace('\u0000', ' ')} (byte ${x.at})`);
    warn(`tapedeck: removed ${report.pruned.length} unused recording(s) from ${tape}: ${which.slice(0, 20).join(', ')}${which.length > 20 ? ', ...' : ''}.`);
  }
}
