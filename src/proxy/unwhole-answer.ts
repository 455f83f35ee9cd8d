/**
 * A live answer the record paths (createFetch's, the proxy's) judge not to record as it came
 * (src/providers/answer-verdict.ts): counted and said here, one wording for both.
 *
 * A stream cut short is an error of the exchange (`errors` in the stats). A stream that carried
 * the API's error event is the upstream's error answer, sent after a 200: counted as a 4xx/5xx
 * answer is (passed through, `byMatch.passthrough`), and recorded as one is with `recordErrors`.
 * Node only: a page never records.
 */
import { answerVerdict, type AnswerVerdict } from '../providers/answer-verdict.ts';
import type { RouteRequest } from '../providers/index.ts';
import type { Deck } from './deck.ts';

/**
 * Whether the deck records an answer of this verdict: a whole one, and one that carried the
 * API's error event when the deck records errors.
 *
 * @example
 * if (!recordsAnswer(d, verdict)) notRecorded(d, p.route, verdict, 'event stream')
 */
export function recordsAnswer(d: Pick<Deck, 'recordErrors'>, v: AnswerVerdict): boolean {
  return v.whole || (!v.cut && d.recordErrors);
}

/**
 * Counts an answer kept off the tape and says why, once per distinct message. `what`: how the
 * answer came (`event stream`, or `stream` for a stream its content type did not announce).
 *
 * @example
 * notRecorded(d, 'POST /v1/messages', { whole: false, cut: false, error: 'overloaded_error: Overloaded' }, 'event stream')
 * // tapedeck: POST /v1/messages: the upstream's event stream carried an error event (overloaded_error: Overloaded); not recorded (recordErrors records it).
 */
export function notRecorded(d: Pick<Deck, 'count' | 'countError' | 'warnOnce'>, route: string, v: AnswerVerdict, what: string): void {
  if (v.whole) return;
  if (!v.cut) {
    d.count('passthrough');
    d.warnOnce(`tapedeck: ${route}: the upstream's ${what} carried an error event (${v.error}); not recorded (recordErrors records it).`);
    return;
  }
  d.countError();
  d.warnOnce(`tapedeck: ${route}: the upstream's ${what} ended before the answer was complete${v.missing ? ` (${v.missing})` : ''}; not recorded.`);
}

/**
 * The verdict on a live answer, for a record path: undefined when the deck records it; else the
 * verdict, the answer counted and said (notRecorded) as kept off the tape. `asked`: the parsed
 * request body; `what`: how the answer came (see notRecorded).
 *
 * @example
 * if (keptOffTape(d, p.route, dreq, p.body, headers['content-type'], body, 'event stream')) return 'unrecorded'
 */
export function keptOffTape(d: Pick<Deck, 'recordErrors' | 'count' | 'countError' | 'warnOnce'>, route: string, req: RouteRequest, asked: unknown, contentType: string | readonly string[] | undefined | null, body: Uint8Array, what: string): AnswerVerdict | undefined {
  const verdict = answerVerdict(req, asked, contentType, body);
  if (recordsAnswer(d, verdict)) return undefined;
  notRecorded(d, route, verdict, what);
  return verdict;
}
