/**
 * What names one realtime session in a run summary's list of used recordings (HTTP recordings
 * carry a trace token for this, MCP exchanges a mark of their own: src/mcp/usage-mark.ts), and
 * which records make up a session when the summary prunes it. A session is stored as a head
 * record (its `sid`, unique per recorded session), part records of that `sid`, and audio blobs
 * stored once per content that any session's parts may refer to: pruning a session removes its
 * head and parts, and each blob no part left on the tape refers to, never a part or a blob a
 * kept session needs.
 */
import { isRealtimeRecord, type RealtimeFrame, type RealtimeSessionRecord } from '../store/records.ts';

/**
 * The mark of a realtime session, from its head record (as replayed or as recorded).
 *
 * @example
 * realtimeUsageMark({ sid: '5f0c…' }) // 'realtime 5f0c…'
 */
export function realtimeUsageMark(head: Pick<RealtimeSessionRecord, 'sid'>): string {
  return `realtime ${head.sid}`;
}

/**
 * Whether a tape record is part of a realtime session rather than a recording of its own: a
 * session's parts and audio blobs, which go with its head (the one recording a summary counts).
 *
 * @example
 * records.filter((r) => !sessionRemain(r.value)).length // recordings, a session counted once
 */
export function sessionRemain(value: unknown): boolean {
  return isRealtimeRecord(value) && value.role !== 'session';
}

/** The audio blobs (their digests) a frame refers to. */
function blobsOf(f: RealtimeFrame): string[] {
  return 'audio' in f ? [f.audio.blob] : 'blob' in f ? [f.blob] : 'blobs' in f ? (f.blobs ?? []) : [];
}

/**
 * Of a tape's records in order (their decoded values; undefined for one that does not decode),
 * the indexes of the parts of the sessions whose marks are in `stale`, and of the blobs only
 * those parts refer to. The heads themselves are found by their mark, as any record's.
 *
 * @example
 * const drop = new Set(sessionRemains(values, stale))
 * values.forEach((v, i) => { if (stale.has(markOf(v))) drop.add(i) })
 */
export function sessionRemains(values: readonly unknown[], stale: ReadonlySet<string>): number[] {
  const out: number[] = [];
  const dropped = new Set<string>();
  const kept = new Set<string>();
  const blobs = new Map<string, number[]>();
  values.forEach((v, i) => {
    if (!isRealtimeRecord(v)) return;
    if (v.role === 'blob') {
      const d = v.key.slice('blob:'.length);
      blobs.set(d, [...(blobs.get(d) ?? []), i]);
      return;
    }
    if (v.role !== 'part') return;
    const gone = stale.has(realtimeUsageMark(v));
    if (gone) out.push(i);
    for (const f of v.frames) for (const d of blobsOf(f)) (gone ? dropped : kept).add(d);
  });
  for (const d of dropped) if (!kept.has(d)) out.push(...(blobs.get(d) ?? []));
  return out.sort((a, b) => a - b);
}

/**
 * The values of a store's records as a rewrite is given them, each decoded, a damaged one as
 * undefined (it is no session's, and stays where it is).
 *
 * @example
 * await col.rewrite((records) => sessionRemains(decodedValues(records), stale))
 */
export function decodedValues(records: readonly { value(): unknown }[]): unknown[] {
  return records.map((r) => {
    try {
      return r.value();
    } catch {
      return undefined;
    }
  });
}
