// POST /v1/replay serves what the proxy's replay store holds, and that store holds only the
// answers this proxy served or recorded since it started, up to its maxEntries. A trace token
// from an earlier run, or one evicted by a long run (an eval of thousands of calls), names a
// recording the tape still holds byte for byte: the endpoint finds it there rather than answer
// "never stored". Only the endpoint's 404 path looks, so a served answer costs nothing more.
import type { RecordCollection } from '../store/collection.ts';
import type { HttpRecord } from '../store/records.ts';

/**
 * The recording on the tape whose trace token is `token`, or undefined. Recordings loaded at
 * open are matched on their stored `trace` field without decoding them; those made in this run
 * are in memory already.
 *
 * @example
 * const rec = recordOfTrace(deck.collection!, 'ab12…'); // the HttpRecord that carried it, or undefined
 */
export function recordOfTrace(col: RecordCollection<HttpRecord>, token: string): HttpRecord | undefined {
  for (let i = col.indexes - 1; i >= 0; i--) {
    const stored = col.loadedField(i, 'trace');
    if (stored !== undefined && stored !== token) continue;
    const rec = col.loadedValue(i);
    if (rec?.trace === token) return rec;
  }
  return undefined;
}

/**
 * The trace token of a `POST /v1/replay` body the endpoint found well formed (its token is 64
 * hex characters, of either case), in lower case; undefined for anything else.
 *
 * @example
 * tokenOfReplayBody(Buffer.from('{"trace_token":"AB…","query":"q","document_id":"d"}')) // 'ab…'
 */
export function tokenOfReplayBody(body: Uint8Array): string | undefined {
  try {
    const v = JSON.parse(new TextDecoder().decode(body)) as { trace_token?: unknown };
    return typeof v?.trace_token === 'string' && /^[0-9a-fA-F]{64}$/.test(v.trace_token) ? v.trace_token.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}
