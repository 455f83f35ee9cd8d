/**
 * `tapedeck serve --prune-unused` and realtime sessions: at the proxy's close, the sessions on
 * its tape that no connect of this run replayed or recorded are removed, with their parts and
 * the audio no kept session refers to (src/realtime/usage-mark.ts), and reported as the unused
 * HTTP recordings are. The realtime endpoint's tape closes before the proxy's recordings do: it
 * notes here which sessions its run used, and the proxy's close prunes by that.
 */
import type { RecordBackend } from '../store/backend.ts';
import { isRealtimeRecord, realtimeRecords, type RealtimeRecord } from '../store/records.ts';
import { openSessionCollection } from '../store/session-tape.ts';
import { decodedValues, realtimeUsageMark, sessionRemains } from './usage-mark.ts';

/** Per tape location, the usage marks of the sessions realtime tapes of this process used. */
const used = new Map<string, Set<string>>();

/**
 * Notes the sessions a realtime tape used (replayed, not given back by a miss, or recorded), for
 * a prune at the proxy's close: the last tape closed on a location speaks for it (a proxy has
 * one realtime tape; an earlier proxy's run in the same process is not this one's).
 *
 * @example
 * noteSessionsUsed(tape.location, tape.usedMarks())
 */
export function noteSessionsUsed(location: string, marks: Iterable<string>): void {
  used.set(location, new Set(marks));
}

/**
 * Removes the realtime sessions on `store` no realtime tape of this process used (see
 * noteSessionsUsed), their parts, and the audio only they refer to; returns the removed
 * sessions' heads (connect key and where each was stored).
 *
 * @example
 * const pruned = await pruneUnusedSessions('tapes/voice.tape')
 * // [{ key: '6129a4…', at: 113 }]
 */
export async function pruneUnusedSessions(store: string | RecordBackend): Promise<{ key: string; at: number }[]> {
  // Update mode: nothing is replaced at its close; only what is selected here goes.
  const { col, location } = await openSessionCollection<RealtimeRecord>({ tape: store, mode: 'update' }, realtimeRecords, 'tapedeck serve --tape tapes/voice.tape --prune-unused');
  if (!col) return [];
  const keep = used.get(location) ?? new Set<string>();
  used.delete(location);
  const pruned: { key: string; at: number }[] = [];
  try {
    if (!col.exists) return [];
    await col.rewrite((records) => {
      const values = decodedValues(records);
      const stale = new Set<string>();
      const heads: number[] = [];
      values.forEach((v, i) => {
        if (!isRealtimeRecord(v) || v.role !== 'session' || keep.has(realtimeUsageMark(v))) return;
        stale.add(realtimeUsageMark(v));
        heads.push(i);
        pruned.push({ key: v.key, at: records[i]!.at });
      });
      return stale.size === 0 ? [] : [...heads, ...sessionRemains(values, stale)];
    });
  } finally {
    await col.close();
  }
  return pruned;
}
