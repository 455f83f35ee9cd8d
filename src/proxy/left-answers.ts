/**
 * What close() does about answers whose callers aborted them. Such an answer is read on for its
 * record (docs/modes.md rule 10), so close() waits for it; but when its upstream stalls nobody is
 * waiting for it, and close() used to wait out its whole bound (10 s by default), then warn the
 * user to wait for the answers they had abandoned. Node only: a page records nothing
 * (./left-answers.browser.ts).
 */
import type { OpenAnswers } from './fetch-record.ts';
import type { UpstreamLink } from './upstream.ts';

/** Silence of an upstream after which close() cuts an answer whose caller aborted it. */
const LEFT_QUIET_MS = 2000;

/**
 * While close() waits: once the answers in flight are all ones whose callers aborted them and
 * each upstream has been silent for LEFT_QUIET_MS, cuts them (nothing of them is recorded), with
 * a message that says so. An answer a caller still reads keeps close() waiting to its bound.
 * Returns the function that stops watching.
 *
 * @example
 * const stop = cutLeftWhenQuiet(open, link); try { await drained } finally { stop() }
 */
export function cutLeftWhenQuiet(open: OpenAnswers, link: UpstreamLink): () => void {
  const timer = setInterval(() => {
    const left = open.left;
    if (left === undefined || left.size === 0 || left.size < open.inFlight.size) return;
    const now = performance.now();
    for (const at of left) if (now - at() < LEFT_QUIET_MS) return;
    const one = left.size === 1;
    link.shutdown(
      `This tapedeck fetch was closed while it still read ${one ? 'an answer its caller had' : `${left.size} answers their callers had`} aborted (read on to record ${one ? 'it' : 'them'}); the upstream had sent nothing for ${LEFT_QUIET_MS / 1000} s; not recorded.`,
      'Nothing to do unless the recording is wanted: let the call finish before aborting it, or record it again.',
    );
  }, LEFT_QUIET_MS / 4);
  return () => clearInterval(timer);
}
