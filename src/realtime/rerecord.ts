/**
 * Record mode and the other sessions of a connect (docs/modes.md, rule 3: record replaces only
 * what this run re-recorded). Sessions are stored under their connect key (route, model,
 * subprotocols), and the recording collection replaces, at a record run's close, every old
 * record of a key the run appended to: re-recording one session of a connect deleted the
 * sessions of other conversations on it (a text, a tool-call and an audio session at
 * `/v1/realtime?model=gpt-realtime`), and left their parts and audio on the tape.
 *
 * A record run re-records an old session when one of its new sessions of the same key sent the
 * same client frames (keyed as replay compares them: ids renumbered, audio by its bytes however
 * chunked). Those old sessions go, with their parts and the audio no kept session refers to;
 * the other old sessions of the key stay where they are: their heads are kept by the collection
 * as it replaces the key (reuse), so no crash between the replacement and a write-back can lose
 * them; heads a collection removed anyway (an older store) are written back after the new ones.
 */
import type { CloseReport } from '../store/collection.ts';
import type { RealtimeRecord, RealtimeSessionRecord } from '../store/records.ts';
import { realtimeUsageMark, sessionRemains } from './usage-mark.ts';

/** What a record run's close does to the old sessions of the keys it recorded. */
export interface RecordRunSessions {
  /** Old sessions one of this run's re-recorded, with where their heads are stored: removed, parts and unshared audio too. */
  replaced: { head: RealtimeSessionRecord; at: number | undefined }[];
  /**
   * Old sessions of those keys no new one re-recorded, with where their heads are stored and
   * their place among their key's recordings loaded at open (`k`, for the collection's reuse):
   * kept.
   */
  kept: { head: RealtimeSessionRecord; at: number | undefined; k: number }[];
}

/**
 * Sorts the old sessions of the keys a record run appended sessions to (`fresh`: the sids it
 * recorded), from the tape's realtime records in order.
 *
 * @example
 * const { replaced, kept } = recordRunSessions(col.entries(), newSids)
 */
export function recordRunSessions(entries: Iterable<{ value: RealtimeRecord; at?: number }>, fresh: ReadonlySet<string>): RecordRunSessions {
  const heads: { head: RealtimeSessionRecord; at: number | undefined; k: number }[] = [];
  // Each old head's place among its key's loaded recordings: the run's own come after them.
  const loadedOf = new Map<string, number>();
  const client = new Map<string, string[]>();
  for (const { value, at } of entries) {
    if (value.role === 'session') {
      const k = fresh.has(value.sid) ? -1 : (loadedOf.get(value.key) ?? 0);
      if (k >= 0) loadedOf.set(value.key, k + 1);
      heads.push({ head: value, at, k });
    }
    else if (value.role === 'part') {
      let keys = client.get(value.sid);
      if (!keys) client.set(value.sid, (keys = []));
      for (const f of value.frames) if ('c' in f) keys.push(f.key);
    }
  }
  // The client frames of each new session, by key.
  const sent = new Map<string, Set<string>>();
  for (const { head } of heads) {
    if (!fresh.has(head.sid)) continue;
    let s = sent.get(head.key);
    if (!s) sent.set(head.key, (s = new Set()));
    s.add(JSON.stringify(client.get(head.sid) ?? []));
  }
  const replaced: RecordRunSessions['replaced'] = [];
  const kept: RecordRunSessions['kept'] = [];
  for (const h of heads) {
    const same = sent.get(h.head.key);
    if (!same || fresh.has(h.head.sid)) continue;
    if (same.has(JSON.stringify(client.get(h.head.sid) ?? []))) replaced.push(h);
    else kept.push(h);
  }
  return { replaced, kept };
}

/**
 * After the collection's close: the heads of kept sessions it removed (`report.replaced`), to
 * write back; the indexes (of the store's records in order, decoded) of the parts of the
 * replaced sessions and of the audio only they referred to, to remove.
 *
 * @example
 * const { restore, remove } = afterRecordRun(sessions, report, values)
 */
export function afterRecordRun(s: RecordRunSessions, report: CloseReport, values: readonly unknown[]): { restore: RealtimeSessionRecord[]; remove: number[] } {
  // Only sessions whose heads the collection did remove (not those of another run still open).
  const dropped = new Set(report.replaced.map((r) => `${r.key}\u0000${r.at}`));
  const gone = (k: { head: RealtimeSessionRecord; at: number | undefined }) => dropped.has(`${k.head.key}\u0000${k.at}`);
  const restore = s.kept.filter(gone).map((k) => k.head);
  const stale = new Set(s.replaced.filter(gone).map((k) => realtimeUsageMark(k.head)));
  return { restore, remove: stale.size > 0 ? sessionRemains(values, stale) : [] };
}
