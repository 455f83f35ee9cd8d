// The page's stand-in for recording-keys.ts (package.json "browser"): a page replays the small
// tapes a test records, so each miss makes the keys of the recordings it ranks again instead of
// keeping them, and the bundle stays within its budget (bench/size.mjs).

import type { Recording, RequestKeys } from './matcher.ts';

/**
 * recordingKeys as the page has it: the same keys, made on each call.
 *
 * @example
 * recordingKeys(recordings, (request) => requestKeys(request, norm))(0) // recording 0's keys
 */
export const recordingKeys =
  (recordings: readonly Recording[], make: (request: unknown) => RequestKeys) =>
  (i: number): RequestKeys =>
    make(recordings[i]!.request);
