/**
 * The recording a telemetry upload (the OpenAI Agents SDK's trace export) is answered with. How
 * many uploads a run makes is its trace processor's timer's doing, not the code's: past the
 * recorded ones the last answer is served again, strictOrder or not, and not counted as a call
 * answered again (a loop running longer). Update mode sends those instead: each carries other
 * spans, which the run that records has to deliver, and its answer is recorded as any miss's.
 */
import type { RecordCollection } from '../store/collection.ts';
import type { HttpRecord } from '../store/records.ts';

/**
 * `take(repeatLast)` for an upload in `mode`, with the collection's count of calls served past
 * their recordings left as it was.
 *
 * @example
 * const rec = telemetryTake(col, 'replay', (last) => col.next(key, { repeatLast: last }))
 */
export function telemetryTake(
  col: RecordCollection<HttpRecord> | undefined,
  mode: string,
  take: (repeatLast?: boolean) => HttpRecord | undefined,
): HttpRecord | undefined {
  if (!col) return take(mode !== 'update');
  const served = col.repeatsServed;
  const made = col.repeatsOfMade;
  const rec = take(mode !== 'update');
  col.repeatsServed = served;
  col.repeatsOfMade = made;
  return rec;
}
