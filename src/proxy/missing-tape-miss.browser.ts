/** missing-tape-miss.ts for browser builds: a page's tapes are URLs, never paths from a working directory. */
import type { MissEntry } from '../match/diagnose.ts';

/** Nothing to add in a page (see missing-tape-miss.ts). */
export function missingTapeMiss(_col: unknown, _tape: string | undefined, _entry: MissEntry): { difference: string; fix: string } | undefined {
  return undefined;
}
