// createFetch and the proxy serve a recording made at another sampling temperature than the
// request's, as the key allows (docs/matching.md, "Options"), and say so: once per pair of
// temperatures on the deck's warning channel, and on that answer in x-tapedeck-warning
// (../match/sampling-temperature.ts says why).
import { samplingNote } from '../match/sampling-temperature.ts';
import type { Deck, DeckRequest, Decision } from './deck.ts';

type Replayed = Extract<Decision, { kind: 'replay' }>;

/**
 * The decision to serve `decision.record` for `dreq`, with a note added when the recording was
 * made at another sampling temperature (the note is also said once through the deck).
 *
 * @example
 * decision = otherTemperature(deck, dreq, decision); // decision.warnings names both temperatures
 */
export function otherTemperature(d: Deck, dreq: DeckRequest, decision: Replayed): Replayed {
  const rec = decision.record;
  if (rec.match !== 'llm' || dreq.body === undefined) return decision;
  const note = samplingNote(dreq.body, rec.request.body);
  if (note === undefined) return decision;
  d.warnOnce(note);
  return { ...decision, warnings: [...decision.warnings, note] };
}
