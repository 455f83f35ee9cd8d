/**
 * Update mode with recordErrors: a call past an error answer recorded for its request (a 429, a
 * 503: what clients retry) goes to the API again, as a polled GET does. Served that error again
 * ("a request asked again in the run replays the answer recorded first"), an SDK's retries never
 * reached the API, the call failed in the run that records it, and its replay served the error
 * for ever. Node only: host-match.ts applies it, and a page (which never records) has its own.
 */
import type { Found } from './host-match.ts';
import type { Deck } from './deck.ts';

/** What pastError reads of the deck: its mode, its recordErrors, and how many calls it answered past their recordings. */
export type PastErrorDeck = Pick<Deck, 'mode' | 'recordErrors' | 'repeats'>;

/** Statuses a client retries: timeouts, conflicts, rate limits and server errors. */
const retried = (status: number): boolean => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * What `look` finds for a request; in update mode with recordErrors, a call that it answers past
 * its recordings with an error answer is found as no recording instead (a miss with nothing to
 * say: update mode sends it upstream and records the answer after the error).
 *
 * @example
 * const found = pastError(deck, () => hosts.find(req, route))
 */
export function pastError(d: PastErrorDeck, look: () => Found): Found {
  const before = d.repeats;
  const found = look();
  // Answered past its recordings: the repeat counters moved (each lookup path counts its own).
  if (found.kind !== 'replay' || !retried(found.record.response.status) || d.repeats === before) return found;
  // Update mode reads no miss here: the request goes to the API as a miss would.
  return { kind: 'miss', miss: undefined } as unknown as Found;
}
