/**
 * Browser bundles' stand-in for ./prune.ts (package.json "browser"): a page replays a loaded
 * tape and never prunes it (pruning rewrites a tape file, which only Node's proxy does), so the
 * realtime session prune and the session tape it opens stay out of the 100 KB budget.
 */

/**
 * Nothing to note: no prune follows in a page.
 *
 * @example
 * noteSessionsUsed(tape.location, tape.usedMarks()) // no-op in a page
 */
export function noteSessionsUsed(_location: string, _marks: Iterable<string>): void {}

/**
 * Nothing pruned: a page's tape is the page's own copy.
 *
 * @example
 * await pruneUnusedSessions('tapes/voice.tape') // []
 */
export async function pruneUnusedSessions(_store: unknown): Promise<{ key: string; at: number }[]> {
  return [];
}
