// The full keys of recordings (normalized view, messages, path hashes) that a miss ranks, made
// once per recording and kept for the matcher's later misses. An eval whose prompt template
// changed misses on every call, and each miss normalized the same few hundred closest
// recordings again: ~30 ms of CPU a miss on a 3,200-recording tape. At most KEEP recordings'
// keys are kept (the oldest made go first), so a tape of long conversations does not hold a
// second, normalized copy of every request; past that a key is made again, as before.

import type { Recording, RequestKeys } from './matcher.ts';

/** Recordings whose keys are kept: a miss ranks at most 256, so several misses' worth. */
const KEEP = 2048;

/**
 * A function giving recording i's full keys, made by `make` the first time and kept while its
 * recording's request is the object they were made from.
 *
 * @example
 * const full = recordingKeys(recordings, (request) => requestKeys(request, norm));
 * full(0) === full(0) // true: made once
 */
export function recordingKeys(recordings: readonly Recording[], make: (request: unknown) => RequestKeys): (i: number) => RequestKeys {
  // Made at the first miss: a matcher that never misses keeps nothing.
  let kept: Map<number, { from: unknown; keys: RequestKeys }> | undefined;
  return (i) => {
    const request = recordings[i]!.request;
    const k = (kept ??= new Map()).get(i);
    if (k !== undefined && k.from === request) return k.keys;
    const keys = make(request);
    if (k === undefined && kept.size >= KEEP) kept.delete(kept.keys().next().value!);
    kept.set(i, { from: request, keys });
    return keys;
  };
}
