/**
 * close-failure.ts for browser builds: a page only replays (record and update are refused
 * there), so a collection in a page never removes recordings at close; the error passes as is.
 */

/** The error as it is (see close-failure.ts). */
export function closeRemovalFailure(e: unknown, _counts: unknown): unknown {
  return e;
}
