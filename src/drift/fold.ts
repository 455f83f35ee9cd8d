// Recordings added or removed, summed up per tape for the Markdown and terminal reports. A new
// tape of hundreds of recordings (a new test suite) listed row by row made a Markdown report too
// long for a pull-request comment (GitHub refuses a body over 65,536 characters) and buried the
// change that fails under rows that, by default, do not fail. The JSON report lists every one.

import type { DriftEntry } from './report.ts';

/** Recordings of one tape added (or removed) alike, shown as one row. */
export interface FoldedRows {
  tape: string;
  /** `identical`: copies an earlier run's recordings a later record run kept (see DriftEntry.kept). */
  status: 'added' | 'removed' | 'identical';
  count: number;
  /** Lowest and highest position in their tape. */
  first: number;
  last: number;
  /** The route they share, or how many routes they have. */
  route: string;
  /** One line: how many, and what that means. */
  summary: string;
}

/** More recordings of one tape added (or removed) than this are shown as one row. */
const FOLD_OVER = 5;

/**
 * The entries a report shows row by row, with the added and removed recordings of a tape summed
 * up in one row when there are more than five (another recording of a request recorded before
 * stays a row of its own: it says how many each side has).
 *
 * @example
 * foldOneSided(report.entries.filter((e) => e.primary !== 'identical'))
 * // [entry, { tape: 'new.tape', status: 'added', count: 500, first: 0, last: 499, route: 'POST /v1/chat/completions', summary: '500 recordings added (no old ones for these requests)' }]
 */
export function foldOneSided(entries: readonly DriftEntry[]): (DriftEntry | FoldedRows)[] {
  const groups = new Map<string, DriftEntry[]>();
  // Copies kept from an earlier run (paired with themselves, identical) are summed up apart:
  // they are stale, neither new nor changed.
  const keyOf = (e: DriftEntry) => (e.kept && e.primary === 'identical' ? `kept\0${e.tape}` : (e.status === 'added' || e.status === 'removed') && !e.repeats ? `${e.status}\0${e.tape}${e.kept ? '\0kept' : ''}` : undefined);
  for (const e of entries) {
    const k = keyOf(e);
    if (k !== undefined) groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  const out: (DriftEntry | FoldedRows)[] = [];
  const shown = new Set<string>();
  for (const e of entries) {
    const k = keyOf(e);
    const group = k === undefined ? undefined : groups.get(k)!;
    if (!group || group.length <= FOLD_OVER) {
      out.push(e);
      continue;
    }
    if (shown.has(k!)) continue;
    shown.add(k!);
    const status = e.kept && e.primary === 'identical' ? 'identical' : (e.status as 'added' | 'removed');
    const indexes = group.map((x) => (x.new ?? x.old)!.index);
    const routes = new Set(group.map((x) => x.route));
    const why = status === 'added' ? 'no old ones for these requests' : 'no new ones for these requests';
    // Not Math.min(...indexes): a tape of many thousand recordings would overflow the stack.
    const first = indexes.reduce((m, i) => Math.min(m, i));
    const last = indexes.reduce((m, i) => Math.max(m, i));
    const summary = e.kept ? `${group.length} recordings kept from an earlier run (the latest record run did not make these requests again)` : `${group.length} recordings ${status} (${why})`;
    out.push({ tape: e.tape, status, count: group.length, first, last, route: routes.size === 1 ? e.route : `${routes.size} routes`, summary });
  }
  return out;
}

/** Whether a row is recordings summed up. */
export const isFolded = (r: DriftEntry | FoldedRows): r is FoldedRows => 'count' in r;
