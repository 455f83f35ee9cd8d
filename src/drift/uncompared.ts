// The records a drift report and the stats leave alone, counted so that the reports can say so:
// a report that read "0 pairs ... nothing fails" over a tape of records it never compared (the
// MCP exchanges, before they were compared) let a drift gate pass on anything. Compared are HTTP
// exchanges and ReplayCache records (pair.ts), realtime sessions (realtime-diff.ts) and MCP
// exchanges (mcp-diff.ts); anything else on a tape (another tool's records, the durable replay
// store's entries, a kind of a later release) is counted here by its `kind`.

import { askedOf } from './answer.ts';
import { isMcpRecord, isRealtimeRecord } from '../store/records.ts';
import { newerRecordVersion } from '../store/record-version.ts';
import type { TapeSide } from './pair.ts';

/** Records of one kind no report compares, and how many each side holds. */
export interface Uncompared {
  /** The records' `kind` (`tapedeck.replay`, another tool's), or `unknown` for records that name none. */
  kind: string;
  /** Records of tapedeck's own kind written by a newer tapedeck: their record version, which this one does not read. */
  version?: number;
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
        // A newer tapedeck's record is counted apart: the upgrade is what compares it.
        const version = newerRecordVersion(r)?.version;
        const at = version === undefined ? kind : `${kind}\u0000${version}`;
        let u = by.get(at);
        if (!u) by.set(at, (u = { kind, ...(version !== undefined ? { version } : {}), old: 0, new: 0 }));
        u[side]++;
      }
    }
  };
  count(oldTapes, 'old');
  count(newTapes, 'new');
  return [...by.values()].sort((a, b) => a.kind.localeCompare(b.kind) || (a.version ?? 0) - (b.version ?? 0));
}

/**
 * The record versions of the records a newer tapedeck wrote, by tape name and stored key: a
 * recording of the same request on the other side of a report was not compared with them, and
 * is neither gone nor new.
 *
 * @example
 * newerByKey(after).get(`chat.tape\u0000${key}`) // 9: the new tape's recording of key is of record version 9
 */
export function newerByKey(tapes: readonly TapeSide[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of tapes) {
    for (const r of t.records) {
      const n = newerRecordVersion(r);
      const key = n && (r as { key?: unknown }).key;
      if (n && typeof key === 'string') out.set(`${t.name}\u0000${key}`, n.version);
    }
  }
  return out;
}

/**
 * The uncompared records in one phrase, or '' when there are none.
 *
 * @example
 * uncomparedPhrase([{ kind: 'tapedeck.replay', old: 3, new: 2 }]) // '5 records not compared (tapedeck.replay: 3 old, 2 new)'
 * uncomparedPhrase([{ kind: 'http', version: 9, old: 0, new: 1 }]) // '1 record not compared (http of record version 9, newer than this tapedeck reads: 0 old, 1 new)'
 */
export function uncomparedPhrase(list: readonly Uncompared[]): string {
  if (list.length === 0) return '';
  const total = list.reduce((n, u) => n + u.old + u.new, 0);
  const what = (u: Uncompared) => (u.version === undefined ? u.kind : `${u.kind} of record version ${u.version}, newer than this tapedeck reads`);
  return `${total} record${total === 1 ? '' : 's'} not compared (${list.map((u) => `${what(u)}: ${u.old} old, ${u.new} new`).join('; ')})`;
}
