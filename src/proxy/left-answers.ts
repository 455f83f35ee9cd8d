/**
 * What close() says when its bound cuts answers whose callers aborted them. Such an answer is
 * read on for its record (docs/modes.md rule 10), so close() waits for it, up to its bound: a
 * reasoning model's stream may be silent for many seconds and still end whole. When the bound
 * cut only such answers, the message used to tell the user to wait for answers they had
 * abandoned. Node only: a page records nothing (./left-answers.browser.ts).
 */
import type { OpenAnswers } from './fetch-record.ts';

/**
 * The shutdown message and hint when every answer still in flight at the bound is one whose
 * caller aborted it, or undefined (the usual message stands).
 *
 * @example
 * const left = leftAnswersCut(open, 10_000); link.shutdown(left?.message ?? usual, left?.hint)
 */
export function leftAnswersCut(open: OpenAnswers, boundMs: number): { message: string; hint: string } | undefined {
  const left = open.left;
  if (left === undefined || left.size === 0 || left.size < open.inFlight.size) return undefined;
  const one = left.size === 1;
  return {
    message: `This tapedeck fetch was closed while it still read ${one ? 'an answer its caller had' : `${left.size} answers their callers had`} aborted (read on to record ${one ? 'it' : 'them'}), and the upstream had not finished within the shutdown timeout (${boundMs} ms); not recorded.`,
    hint: 'Nothing to do unless the recording is wanted: let the call finish before aborting it, raise createFetch({ shutdownTimeoutMs }), or record it again.',
  };
}
