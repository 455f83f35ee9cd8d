// The page's stand-in for request-texts.ts (package.json "browser"): a page replays the small
// tapes a test records, so each miss makes the tied recordings' texts again instead of keeping
// them, and the bundle stays within its budget (bench/size.mjs).

import { canonicalBytes } from './canonical-bytes.ts';
import type { Recording } from './matcher.ts';

/**
 * RequestTexts as the page has it: the same texts, made on each call.
 *
 * @example
 * new RequestTexts(recordings).get(0) // canonical bytes of recordings[0].request
 */
export class RequestTexts {
  constructor(private readonly recordings: readonly Recording[]) {}

  /** The canonical JSON of recording i's request, or undefined (none, or not canonical JSON). */
  get(i: number): Uint8Array | undefined {
    const request = this.recordings[i]?.request;
    return request === undefined ? undefined : canonicalBytes(request);
  }
}
