/**
 * other-temperature.ts for browser builds: a page replays what Node recorded, and the note on
 * a recording made at another sampling temperature is said where the tape is recorded and
 * replayed in Node (the page bundle stays within its budget).
 */
import type { Decision } from './deck.ts';

type Replayed = Extract<Decision, { kind: 'replay' }>;

/**
 * The decision as it is: no note in a page.
 *
 * @example
 * otherTemperature(deck, dreq, decision) === decision // true
 */
export function otherTemperature(_d: unknown, _dreq: unknown, decision: Replayed): Replayed {
  return decision;
}
