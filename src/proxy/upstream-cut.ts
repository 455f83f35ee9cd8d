/**
 * What a record run says when the upstream's answer fails before its end (a reset connection,
 * a load balancer dropping the stream, an idle timeout): the caller's SDK raises, and nothing
 * is recorded, since half an answer replayed as whole is worse than a miss. A test that catches
 * that error would otherwise pass with the call missing from the tape, found only when CI
 * replays it; so the proxy's stderr and createFetch's onWarning name the call.
 */
import { TapedeckError } from '../errors.ts';

/**
 * The warning for an answer to `route` that the upstream failed midway with `e`.
 *
 * @example
 * upstreamCutWarning('POST /v1/chat/completions', new TypeError('terminated', { cause: { code: 'ECONNRESET' } }))
 * // "tapedeck: POST /v1/chat/completions: the upstream's answer failed before its end (terminated: ECONNRESET); not recorded."
 */
export function upstreamCutWarning(route: string, e: unknown): string {
  // The idle timeout's own message says the route, the wait and the option that sets it.
  if (e instanceof TapedeckError && e.code === 'E_UPSTREAM_TIMEOUT') return `tapedeck: ${e.message}`;
  // So does a shutdown's (the fetch closed or the proxy shut down mid-answer), with its fix.
  if (e instanceof TapedeckError && e.code === 'E_PROXY_CLOSED') return `tapedeck: ${route}: ${e.message}`;
  const message = e instanceof Error ? e.message : String(e);
  const cause = e instanceof Error ? (e.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return `tapedeck: ${route}: the upstream's answer failed before its end (${code && !message.includes(code) ? `${message}: ${code}` : message}); not recorded.`;
}
