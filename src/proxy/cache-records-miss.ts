/**
 * What a miss says of a tape that holds ReplayCache records but no HTTP recordings (a directory
 * of JSON recordings imported, a DSPy cache, ReplayCache's own): "re-record" alone sent the user
 * back to the live API for answers the tape holds, which ReplayCache serves. Browser builds take
 * cache-records-miss.browser.ts: a page has no ReplayCache to point to.
 */
import { recordHow, type MissEntry } from '../match/diagnose.ts';

/**
 * The difference and the fix of a miss on a tape (or a shared `store`) of `n` ReplayCache records
 * and no HTTP ones; undefined for none.
 *
 * @example
 * cacheRecordsMiss(3, 'app.tape', entry)?.difference // 'the tape has no HTTP recordings: it holds 3 replay-cache records (...)'
 */
export function cacheRecordsMiss(n: number, tape: string | undefined, entry: MissEntry, store = 'tape'): { difference: string; fix: string } | undefined {
  if (n === 0) return undefined;
  return {
    difference: `the ${store} has no HTTP recordings: it holds ${n} replay-cache record${n === 1 ? '' : 's'} (keyed by the request body alone, as ReplayCache and tapedeck import of a directory of JSON recordings write them), which createFetch and tapedeck serve do not serve`,
    fix: `replay them with ReplayCache.open(${JSON.stringify(tape ?? '<tape>')}) or withReplayCache from llm-tapedeck/store (docs/migrate.md, "From a directory of JSON recordings"); or record this request's HTTP call: ${recordHow(entry)}`,
  };
}
