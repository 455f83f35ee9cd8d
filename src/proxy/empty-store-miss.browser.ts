/** empty-store-miss.ts for browser builds: a page has no ReplayCache and no Redis, so a miss says only that the tape has no HTTP recordings. */
import type { MissEntry } from '../match/diagnose.ts';

/** Nothing to add in a page (see empty-store-miss.ts). */
export function emptyStoreMiss(_col: unknown, _tape: string | undefined, _entry: MissEntry, _store?: string): { difference: string; fix?: string } | undefined {
  return undefined;
}
