/**
 * Update mode, a request with no recording, and no way to record it: the upstream is
 * unreachable (no network), or refuses the credentials (a placeholder key such as `replay`).
 * Answered as the miss it is, with what differs from the closest recording and what recording
 * needs, rather than as an upstream failure (a 502 that SDKs retry, counted as no miss) or the
 * provider's 401 about a key the user never meant to send.
 */
import { TapedeckError } from '../errors.ts';
import { missHeadline } from '../match/diagnose.ts';
import type { Deck } from './deck.ts';
import { echoing, type EchoSource } from '../store/echo-redact.ts';

/**
 * Whether an upstream failure means the upstream cannot be reached from here at all (refused
 * connection, DNS, TLS, the connect timeout), so that recording needs the network. One that took
 * the connection and dropped it, or was slower than the idle timeout, failed this once: it stays
 * the retryable E_UPSTREAM / E_UPSTREAM_TIMEOUT record mode gives, which SDKs retry, with its own
 * advice (raise the idle timeout), not a final miss that blames the network and the key.
 */
function unreachable(e: TapedeckError): boolean {
  if (e.code === 'E_UPSTREAM') return e.details.reached !== true;
  return e.code === 'E_UPSTREAM_TIMEOUT' && e.details.timeout === 'connect';
}

/**
 * The error an upstream call failed with, or, for a request that missed in update mode and an
 * upstream that could not be reached at all, the miss that says recording it needs the network.
 *
 * @example
 * catch (e) { throw unrecordedMiss(deck, decision.miss, e) }
 */
export function unrecordedMiss(d: Deck, miss: TapedeckError | undefined, e: unknown): unknown {
  if (!miss || !(e instanceof TapedeckError) || !unreachable(e)) return e;
  // The upstream error's own hint (check --upstream, replay) is not what this user needs.
  const said = e.hint ? e.message.slice(0, e.message.length - e.hint.length - 1) : e.message;
  const why = said.replace(/\.$/, '').replace(/; nothing was recorded$/, '');
  return unrecordable(d.explained(miss), `${why.charAt(0).toLowerCase()}${why.slice(1)}`);
}

/**
 * For a request that missed in update mode and that the upstream refused (401, 403: no key or a
 * placeholder one), the miss that says so; undefined otherwise (the answer goes on as usual).
 * Reads the refusal's body for its message, masked as a recorded answer is: providers and
 * gateways repeat the key they refused, and the miss goes to the client's error, a summary and
 * tapedeck serve's log line.
 *
 * @example
 * const refused = await unrecordedByKey(deck, decision.miss, upstreamResponse, request)
 * if (refused) throw refused
 */
export async function unrecordedByKey(d: Deck, miss: TapedeckError | undefined, up: Response, req: EchoSource): Promise<TapedeckError | undefined> {
  if (!miss || d.recordErrors || (up.status !== 401 && up.status !== 403)) return undefined;
  const text = await up.text().catch(() => '');
  let said = '';
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof body.error === 'object' ? body.error?.message : (body.error ?? body.message);
    if (typeof m === 'string') said = m;
  } catch {
    said = text;
  }
  // Masked before it is cut short: a key cut in two would no longer look like one.
  said = echoing(d.redactor, req).text(said.replace(/\s+/g, ' ').trim());
  if (said.length > 120) said = `${said.slice(0, 117)}...`;
  return unrecordable(d.explained(miss), `the upstream refused the API key (${up.status}${said ? `: ${said}` : ''})`);
}

/**
 * The miss an update-mode request becomes when it cannot be recorded (`why`: the upstream is
 * unreachable, or refused the credentials, as with a placeholder key): what differs from the
 * closest recording, and that recording it needs the network and a real API key. A miss, not
 * an upstream failure: SDKs do not retry it, and summaries count it.
 */
function unrecordable(miss: TapedeckError, why: string): TapedeckError {
  const difference = typeof miss.details.difference === 'string' ? miss.details.difference : miss.message.split('\n')[0]!;
  const fix = `recording it needs the network and a real API key: ${why}`;
  const { hint: _hint, ...details } = miss.details;
  // The miss's excerpt lines (the request's and the recording's text where they differ) stay
  // under the new headline: they are what the user needs to see of the difference.
  const head = typeof miss.details.fix === 'string' ? missHeadline(difference, miss.details.fix) : undefined;
  const excerpts = head !== undefined && miss.message.startsWith(`${head}\n`) ? miss.message.slice(head.length) : '';
  return new TapedeckError('E_MISS', missHeadline(difference, fix) + excerpts, { ...details, difference, fix, unrecordable: why });
}
