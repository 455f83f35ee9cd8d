// The records a drift report and the stats leave alone, counted so that the reports can say so:
// a report that read "0 pairs ... nothing fails" over a tape of records it never compared (the
// MCP exchanges, before they were compared) let a drift gate pass on anything. Compared are HTTP
// exchanges and ReplayCache records (pair.ts), realtime sessions (realtime-diff.ts) and MCP
// exchanges (mcp-diff.ts); anything else on a tape (another tool's records, the durable replay
// store's entries, a kind of a later release) is counted here by its `kind`.

import { askedOf } from './answer.ts';
import { isMcpRecord, isRealtimeRecord } from '../store/records.ts';
import type { TapeSide } from './pair.ts';

/** Records of one kind no report compares, and how many each side holds. */
export interface Uncompared {
  /** The records' `kind` (`tapedeck.replay`, another tool's), or `unknown` for records that name none. */
  kind: string;
  old: number;
  new: number;
}

/** The kind a record is counted under, or undefined for a record some report compares. */
export function uncomparedKind(record: unknown): string | undefined {
  // A record left out on purpose (rerecord's records it did not plan) is no record.
  if (record === undefined || record === null) return undefined;
  if (askedOf(record) || isMcpRecord(record) || isRealtimeRecord(record)) return undefined;
  const kind = typeof record === 'object' ? (record as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' && kind !== '' ? kind : 'unknown';
}

/**
 * The records of the old and new tapes no report compares, by kind (sorted by kind).
 *
 * @example
 * uncomparedRecords(before, after) // [{ kind: 'tapedeck.replay', old: 3, new: 3 }]
 */
export function uncomparedRecords(oldTapes: readonly TapeSide[], newTapes: readonly TapeSide[]): Uncompared[] {
  const by = new Map<string, Uncompared>();
  const count = (tapes: readonly TapeSide[], side: 'old' | 'new') => {
    for (const t of tapes) {
      for (const r of t.records) {
        const kind = uncomparedKind(r);
        if (kind === undefined) continue;
        let u = by.get(kind);
        if (!u) by.set(kind, (u = { kind, old: 0, new: 0 }));
        u[side]++;
      }
    }
  };
  count(oldTapes, 'old');
  count(newTapes, 'new');
  return [...by.values()].sort((a, b) => a.kind.localeCompare(b.kind));
}

/**
 * The uncompared records in one phrase, or '' when there are none.
 *
 * @example
 * uncomparedPhrase([{ kind: 'tapedeck.replay', old: 3, new: 2 }]) // '5 records not compared (tapedeck.replay: 3 old, 2 new)'
 */
export function uncomparedPhrase(list: readonly Uncompared[]): string {
  if (list.length === 0) return '';
  const total = list.reduce((n, u) => n + u.old + u.new, 0);
  return `${total} record${total === 1 ? '' : 's'} not compared (${list.map((u) => `${u.kind}: ${u.old} old, ${u.new} new`).join('; ')})`;
}
