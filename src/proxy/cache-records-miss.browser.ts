/** cache-records-miss.ts for browser builds: a page has no ReplayCache, so a miss says only that the tape has no HTTP recordings. */
import type { MissEntry } from '../match/diagnose.ts';

/** Nothing to add in a page (see cache-records-miss.ts). */
export function cacheRecordsMiss(_n: number, _tape: string | undefined, _entry: MissEntry, _store?: string): { difference: string; fix: string } | undefined {
  return undefined;
}
