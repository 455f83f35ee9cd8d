/**
 * Short miss diagnoses for test output: the one line that says what differs from the closest
 * recording, then the command that records the request, before the full report. A failing test
 * shows what changed at a glance, and the text is stable enough for snapshots (no timings, no
 * absolute paths).
 */
import { TapedeckError } from '../errors.ts';
import { forTestOutput } from './test-output.ts';

/**
 * A recording close to a request that missed, as createFetch and the proxy report it in a miss
 * body (`error.tapedeck.closest`, closest first): what {@link diagnoseMiss} reads to say what
 * differs.
 *
 * @example
 * const near: Near = { index: 0, sharedMessages: 1, messageCount: 2, divergesAt: 1, requestExcerpt: '"Hi!"', recordingExcerpt: '"Hi"' }
 * diagnoseMiss({ closest: [near], signature: { messageCount: 2 } })
 */
export interface Near {
  /** Its place among the recordings it was chosen from. */
  index?: number;
  /** How many messages, from the first, the request and the recording share. */
  sharedMessages?: number;
  /** How many messages the recording has. */
  messageCount?: number;
  /** The first message where the two differ (or where one of them ends). */
  divergesAt?: number;
  /** Tools the request declares that the recording does not. */
  toolsAdded?: string[];
  /** Tools the recording declares that the request does not. */
  toolsRemoved?: string[];
  /** The request's message at `divergesAt`, as canonical JSON ('' where it has none). */
  requestExcerpt?: string;
  /** The recording's message there, the same way. */
  recordingExcerpt?: string;
  /** Top-level request arguments whose values differ, besides the messages (`temperature`, `tools`). */
  differingArgs?: string[];
  /** The member at the first difference inside the diverging message, when it is one leaf. */
  differingField?: string;
  /** Whether the recording was already served in this run. */
  used?: boolean;
}

/** What a miss body carries (`error.tapedeck`), as far as the diagnosis reads it. */
export interface MissDetails {
  /** What differs from the closest recording, as the miss's first line says it. */
  difference?: string;
  route?: string;
  key?: string;
  match?: string;
  closest?: Near[];
  signature?: { messageCount?: number };
  recordedRoutes?: string[];
  /** Update mode could not record the request: why (no network, a refused key). */
  unrecordable?: string;
}

const q = (s: string) => (s.length > 160 ? `${s.slice(0, 157)}...` : s);

/**
 * One line: what differs between the request and its closest recording. Miss bodies carry it as
 * `difference` (the first line of the miss message); older bodies without it are read member by
 * member.
 *
 * @example
 * diagnoseMiss({ closest: [{ index: 0, sharedMessages: 0, messageCount: 1, divergesAt: 0,
 *   requestExcerpt: '{"content":"Hi!"}', recordingExcerpt: '{"content":"Hi"}' }], signature: { messageCount: 1 } })
 * // 'closest recording #0: message 0 differs: request {"content":"Hi!"} / recorded {"content":"Hi"}'
 */
export function diagnoseMiss(d: MissDetails, container: 'tape' | 'namespace' = 'tape'): string {
  if (typeof d.difference === 'string' && d.difference !== '') return d.difference;
  const n = d.closest?.[0];
  if (!n) {
    if (d.recordedRoutes && d.recordedRoutes.length > 0 && d.route && !d.recordedRoutes.includes(d.route)) {
      return `nothing was recorded for ${d.route} (recorded routes: ${d.recordedRoutes.join(', ')})`;
    }
    if (d.recordedRoutes && d.recordedRoutes.length > 0) return `none of the recordings of ${d.route ?? 'this route'} has this request (${d.match ?? 'request'} key ${(d.key ?? '').slice(0, 12)})`;
    return `the ${container} has no recordings`;
  }
  const parts: string[] = [];
  const reqCount = d.signature?.messageCount;
  const sameMessages = n.sharedMessages === n.messageCount && (reqCount === undefined || reqCount === n.sharedMessages);
  if (n.toolsAdded?.length || n.toolsRemoved?.length) {
    parts.push(`tools changed (${[...(n.toolsRemoved ?? []).map((t) => `-${t}`), ...(n.toolsAdded ?? []).map((t) => `+${t}`)].join(' ')})`);
  }
  if (!sameMessages) {
    const field = n.differingField ? ` in "${n.differingField}"` : '';
    parts.push(`message ${n.divergesAt ?? n.sharedMessages ?? 0} differs${field}: request ${q(n.requestExcerpt ?? '')} / recorded ${q(n.recordingExcerpt ?? '')}`);
  }
  if (n.differingArgs?.length) parts.push(`arguments differ: ${n.differingArgs.join(', ')}`);
  if (parts.length === 0) parts.push(n.used ? 'the same request was recorded but its recordings are used up (the code makes this call more often than when it was recorded)' : 'the request differs from it only in ignored parts');
  return `closest recording #${n.index ?? 0}: ${parts.join('; ')}`;
}

/**
 * Whether a failed test's errors already include a tapedeck miss (an SDK error whose message
 * says `tapedeck miss`), so the helper that fails tests with misses does not report it twice.
 *
 * @example
 * failedWithMiss([new Error('400 tapedeck miss: message 0 (user) text differs')]) // true
 */
export function failedWithMiss(errors: readonly unknown[]): boolean {
  return errors.some((e) => {
    const one = Array.isArray(e) ? e[0] : e;
    return String((one as { message?: unknown } | undefined)?.message ?? '').includes('tapedeck miss');
  });
}

/**
 * The words of the error a call gets when it came through the fetch of a test that had ended
 * while another test was running (keptClientError in ./open-tests.ts): a test that failed with
 * it is not told again.
 */
export const KEPT_CLIENT_WORDS = 'tape.fetch of a test that has ended';

/**
 * Whether a failed test's errors already include what its tape would fail it with: a miss (see
 * {@link failedWithMiss}), or the answer to a call made through the fetch of a test that had
 * ended (a client kept from an earlier test), so the helpers do not report it twice.
 *
 * @example
 * failedWithTapeError([new Error('400 This request came through the tape.fetch of a test that has ended ...')]) // true
 */
export function failedWithTapeError(errors: readonly unknown[]): boolean {
  return (
    failedWithMiss(errors) ||
    errors.some((e) => {
      const one = Array.isArray(e) ? e[0] : e;
      return String((one as { message?: unknown } | undefined)?.message ?? '').includes(KEPT_CLIENT_WORDS);
    })
  );
}

/**
 * The error that fails a later attempt of a test one of whose earlier attempts had a request
 * with no recording (`attempt`, counted from 1), when this attempt had none: a retry that makes
 * no request (the app memoized its fallback after the miss) passed, and CI went green with no
 * recording behind the test. The earlier attempt's failure follows, with its record command.
 *
 * @example
 * missedInEarlierAttempt(firstAttemptFailure, 1, 2).message
 * // 'tapedeck miss in attempt 1 of this test: attempt 2 had none, but a retry does not hide a miss ...\ntapedeck miss: 1 request had no recording ...'
 */
export function missedInEarlierAttempt(earlier: TapedeckError, attempt: number, now: number): TapedeckError {
  return forTestOutput(
    new TapedeckError(
      earlier.code,
      `${earlier.code === 'E_MISS' ? 'tapedeck miss' : 'tapedeck: a call got no answer'} in attempt ${attempt} of this test: attempt ${now} had none, but a retry does not hide a miss (CI would pass with no recording behind the test). Attempt ${attempt}:\n${earlier.message}`,
      { ...earlier.details, attempt },
    ),
  );
}

/**
 * What a test's miss failure adds when the test skipped itself after the miss (vitest's
 * `skip()`, mocha's `this.skip()`, called from the `catch` that caught it): a skip does not hide
 * a miss, or CI would pass with no recording behind the test.
 *
 * @example
 * failure.message += `\n${SKIPPED_AFTER_MISS}`
 */
/** Said of a test that skipped itself after its tape failed a request (damaged, its store down). */
export const SKIPPED_AFTER_ERROR =
  'The test skipped itself after this error of its tape: a skip does not hide it (CI would pass with no recording behind the test). Fix the tape or its store, as the error says.';

export const SKIPPED_AFTER_MISS =
  'The test skipped itself after the miss: a skip does not hide a miss (CI would pass with no recording behind the test). To skip while recording without the API, decide before the call (say, when tape.mode is not replay and there is no API key).';
