/**
 * deck-record.ts for browser builds: a page replays and passes through, and never records
 * (createReplayFetch refuses record and update with E_MODE, and a custom match function, before
 * a request is made), so the deck's record side (keying a request for its record, the request
 * as stored, building, redacting and appending the record, its trace token) stays out of a
 * bundle with a 100 KB budget (bench/size.mjs).
 */
import { TapedeckError } from '../errors.ts';
import type * as Full from './deck-record.ts';
export type { DeckRecorder, RecordSide } from './deck-record.ts';

/** Never reached in a page; refused as the modes that would reach it are. */
function refused(): never {
  throw new TapedeckError('E_MODE', 'Recording is not part of browser playback.', { hint: 'Record in Node: createFetch({ mode: "record" }), then load the tape in the page.' });
}

const PAGE_RECORDER: Full.DeckRecorder = { prepare: refused, storedRequest: refused, storedRequestHeaders: refused, takeTurn: refused, record: refused, recordOf: refused, append: refused, traceFor: refused };

/** The record side of a page's deck: every method refuses (see the top). */
export const openRecorder: typeof Full.openRecorder = () => PAGE_RECORDER;
