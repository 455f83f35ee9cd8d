// What browser bundles get instead of raw-keys.ts (package.json "browser" maps one to the
// other): no raw-bytes path. That path is a second implementation of normalization, kept
// only for speed (a proxy keying thousands of bodies), and it gives requestKeys()'s digests or
// declines; declining every body gives the same digests from the reference path. A page
// replaying a tape keys a handful of requests, so it saves ~9 KB (gzipped) of walk code, and
// the core's structural index it reads (left out of the browser's wasm build too).
import type * as Raw from './raw-keys.ts';

// Node's tests read the per-path counters; here every body is declined, the only one that moves.
export const rawPathCounts = { answered: 0, declined: 0 } as typeof Raw.rawPathCounts;

export const rawRequestDigests: typeof Raw.rawRequestDigests = () => {
  rawPathCounts.declined++;
  return undefined;
};

export const rawRequestKey: typeof Raw.rawRequestKey = () => undefined;
