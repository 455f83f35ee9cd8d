/**
 * Whether a live answer can be recorded as it came, for the record paths (createFetch, the
 * proxy) and re-recording: a whole answer is; a stream cut before its end is not (replaying half
 * an answer as all of it is worse than a miss); a stream that carried the API's error event is an
 * error answer sent after a 200, recorded only where errors are (`recordErrors`), as a 4xx/5xx is.
 *
 * Node only: a page never records.
 */
import { responseComplete, type RouteRequest } from './index.ts';
import { isNdjson } from './ollama.ts';
import { streamErrorOf } from './stream-error.ts';
import { usageChunkMissing } from './usage-chunk.ts';

/**
 * `whole`; or `cut`, with what is missing when it is more than the stream's end; or `error`,
 * with what the error event said.
 */
export type AnswerVerdict = { whole: true } | { whole: false; cut: true; missing?: string } | { whole: false; cut: false; error: string };

const WHOLE: AnswerVerdict = Object.freeze({ whole: true });
const CUT: AnswerVerdict = Object.freeze({ whole: false, cut: true });

/**
 * An event stream whose text ends `\r\n\r`: a CRLF stream (Google's) cut one byte before the
 * end of its last event. The WHATWG rules take the lone CR for the blank line that ends the
 * event, but @google/genai does not (its reader fails with "Incomplete JSON segment at the
 * end"), and the LF that was due never came. Three bytes looked at, whatever the body's size.
 */
function endsInHalfCrlf(contentType: string | readonly string[] | undefined | null, body: Uint8Array): boolean {
  const n = body.length;
  if (n < 3 || body[n - 1] !== 13 || body[n - 2] !== 10 || body[n - 3] !== 13) return false;
  const ct = Array.isArray(contentType) ? contentType[0] : contentType;
  return typeof ct === 'string' && ct.trim().toLowerCase().startsWith('text/event-stream');
}

/**
 * The verdict on a live answer to `req`, whose parsed request body is `asked` (the stored body:
 * redaction leaves `stream_options` as it was).
 *
 * @example
 * answerVerdict({ method: 'POST', url: '/v1/messages' }, undefined, 'text/event-stream', 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')
 * // { whole: false, cut: false, error: 'overloaded_error: Overloaded' }
 */
export function answerVerdict(req: RouteRequest, asked: unknown, contentType: string | readonly string[] | undefined | null, body: Uint8Array): AnswerVerdict {
  if (!responseComplete(req, contentType, body)) {
    const error = streamErrorOf(contentType, body);
    return error === undefined ? CUT : { whole: false, cut: false, error };
  }
  if (endsInHalfCrlf(contentType, body)) return CUT;
  // An NDJSON stream no module judges (Ollama's /api/pull, /api/push, /api/create progress) may
  // still end in the API's `{"error": …}` line: the failed pull is its answer, not a success.
  if (isNdjson(contentType)) {
    const error = streamErrorOf(contentType, body);
    if (error !== undefined) return { whole: false, cut: false, error };
  }
  if (usageChunkMissing(asked, contentType, body)) return { whole: false, cut: true, missing: 'the usage chunk asked for with stream_options.include_usage never came' };
  return WHOLE;
}
