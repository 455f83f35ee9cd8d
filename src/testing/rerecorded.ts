/**
 * Which of a test's new recordings were re-recordings: in record mode, a request the test
 * recorded again has its older recordings (of ended runs) replaced as the tape closes, and the
 * run summary says "re-recorded (replaced)" for those, not "added", since the tape did not grow.
 * The tape itself tells: the test's recordings on it just before its writers closed, against
 * those after. Only the test's own recordings are looked at (and those that name no test, which
 * it replaces too): another test sharing the tape may replace its own meanwhile.
 */
import { peekFrame, scanTape } from '../store/tape-file.ts';

/** The fields that name an HTTP recording and its request, read without decoding the record. */
const FIELDS: readonly string[] = ['trace', 'key', 'route', 'test'];

/**
 * The HTTP recordings on the tape at `tape` of the test `test` (records naming another test are
 * left out), by trace token: the request each answers (its route and key). Empty for a missing
 * or unreadable tape; damaged records are skipped (the summary is advice, not a gate).
 *
 * @example
 * await testRecordings('test/__tapes__/chat.test/hello.tape', 'test/chat.test.ts > hello')
 * // Map { '6b1f…' => 'POST /v1/chat/completions 9f86d0…' }
 */
export async function testRecordings(tape: string, test: string | undefined): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let scan;
  try {
    scan = await scanTape(tape);
  } catch {
    return out;
  }
  for (const frame of scan.frames) {
    const head = peekFrame(scan.bytes, frame, FIELDS, true);
    if (typeof head.trace !== 'string' || typeof head.key !== 'string') continue;
    if (typeof head.test === 'string' && head.test !== test) continue;
    out.set(head.trace, `${typeof head.route === 'string' ? head.route : ''} ${head.key}`);
  }
  return out;
}

/**
 * How many of the recordings `made` (trace tokens of the recordings a test made) took the place
 * of a recording of the same request that was on the tape `before` its writers closed and is
 * gone `after` (see {@link testRecordings}): one re-recording for each recording replaced, and
 * a request recorded more often than before has its extra recordings added.
 *
 * @example
 * rerecordedCount(new Map([['old', 'POST /v1/chat k']]), new Map([['new', 'POST /v1/chat k']]), ['new']) // 1
 */
export function rerecordedCount(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, made: Iterable<string>): number {
  const gone = new Map<string, number>();
  for (const [trace, request] of before) if (!after.has(trace)) gone.set(request, (gone.get(request) ?? 0) + 1);
  let n = 0;
  for (const trace of made) {
    const request = after.get(trace);
    const left = request === undefined ? 0 : (gone.get(request) ?? 0);
    if (left === 0) continue;
    gone.set(request!, left - 1);
    n++;
  }
  return n;
}
