/**
 * Browser bundles' stand-in for ./fetch-record.ts (package.json "browser"): a page replays and
 * passes through, and never records (record and update are refused with E_MODE before a request
 * is made), so the record path and what it needs of ./upstream.ts stay out of the 100 KB budget.
 */
import { TapedeckError } from '../errors.ts';

export type { OpenAnswers } from './fetch-record.ts';

/** Never reached in a page; refused as the modes that would reach it are. */
export async function recordStream(): Promise<Response> {
  throw new TapedeckError('E_MODE', 'Recording is not part of browser playback.', { hint: 'Record in Node: createFetch({ mode: "record" }), then load the tape in the page.' });
}
