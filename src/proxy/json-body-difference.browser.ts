/**
 * json-body-difference.ts for browser builds: a page replaying a tape keeps the route's general
 * miss sentence for a JSON request that is no LLM call, so the comparison stays out of a bundle
 * with a 100 KB budget (bench/size.mjs).
 */

/** Always undefined in a page (see json-body-difference.ts). */
export function jsonBodyDifference(_asked: unknown, _recorded: Iterable<unknown>): string | undefined {
  return undefined;
}
