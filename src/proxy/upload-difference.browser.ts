/**
 * upload-difference.ts for browser builds: a page replaying a tape keeps the route's general miss
 * sentence ("none of the N recordings for ... has this body") for an upload, so the part-by-part
 * comparison stays out of a bundle with a 100 KB budget (bench/size.mjs).
 */

/** Always undefined in a page (see upload-difference.ts). */
export function uploadDifference(_asked: Uint8Array, _recorded: Iterable<Uint8Array | string | undefined>): string | undefined {
  return undefined;
}
