/**
 * What a miss says of a store that lists no HTTP recordings, where "the tape has no HTTP
 * recordings" is not the whole truth:
 * - it holds ReplayCache records (a directory of JSON recordings imported, a DSPy cache,
 *   ReplayCache's own): "re-record" alone sent the user back to the live API for answers the
 *   tape holds, which ReplayCache serves;
 * - it is a Redis namespace that lost its index (its master restarted without persistence): it
 *   lists nothing, yet serves the recordings it finds by their request, so "no HTTP recordings"
 *   was said in a run that had just served some (the lost index's own note follows the miss,
 *   ../store/damage-miss.ts).
 * Browser builds take empty-store-miss.browser.ts: a page has neither.
 */
import { recordHow, type MissEntry } from '../match/diagnose.ts';
import type { RecordCollection } from '../store/collection.ts';
import { lostIndexWarning } from '../store/damage-miss.ts';

/**
 * The difference (and, for ReplayCache records, the fix) of a miss on `col`, a tape or a shared
 * `store` that lists no HTTP recordings; undefined when the plain words say it.
 *
 * @example
 * emptyStoreMiss(col, 'app.tape', entry)?.difference // 'the tape has no HTTP recordings: it holds 3 replay-cache records (...)'
 */
export function emptyStoreMiss(col: RecordCollection<unknown> | undefined, tape: string | undefined, entry: MissEntry, store = 'tape'): { difference: string; fix?: string } | undefined {
  if (lostIndexWarning(col)) return { difference: 'this request has no recording the namespace still lists' };
  const n = col?.cacheRecords ?? 0;
  if (n === 0) return undefined;
  return {
    difference: `the ${store} has no HTTP recordings: it holds ${n} replay-cache record${n === 1 ? '' : 's'} (keyed by the request body alone, as ReplayCache and tapedeck import of a directory of JSON recordings write them), which createFetch and tapedeck serve do not serve`,
    fix: `replay them with ReplayCache.open(${JSON.stringify(tape ?? '<tape>')}) or withReplayCache from llm-tapedeck/store (docs/migrate.md, "From a directory of JSON recordings"); or record this request's HTTP call: ${recordHow(entry)}`,
  };
}
