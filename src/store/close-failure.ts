/**
 * A record run whose closing removal failed (Redis gone, a tape lock held) has stored its new
 * recordings beside the older ones they were to replace, and replay serves the older ones
 * first. The backend's own error says only that the store failed; this says what was left
 * undone and what puts it right, so a CI log shows the stale answers coming.
 */
import { TapedeckError, withContext } from '../errors.ts';

/**
 * The close-time failure of a store's removal, said as what stays: `replaced` older recordings
 * of requests this run re-recorded, `pruned` unused ones. The backend's code is kept, so code
 * that checks `E_STORE_UNAVAILABLE` or `E_TAPE_LOCKED` still does; anything that is not a
 * TapedeckError is passed on as it is.
 *
 * @example
 * try { await backend.rewrite(select) } catch (e) { throw closeRemovalFailure(e, { replaced: 2, pruned: 0 }) }
 * // E_STORE_UNAVAILABLE "Closing the record run: its new recordings are stored, but the 2 older ..."
 */
export function closeRemovalFailure(e: unknown, counts: { replaced: number; pruned: number }): unknown {
  if (!(e instanceof TapedeckError)) return e;
  const undone: string[] = [];
  if (counts.replaced > 0) undone.push(`the ${counts.replaced} older recording(s) of the requests it re-recorded could not be removed, so replay serves those older ones first until they are`);
  if (counts.pruned > 0) undone.push(`the ${counts.pruned} unused recording(s) could not be pruned and stay`);
  const prefix = `Closing the ${counts.replaced > 0 ? 'record run' : 'store'}: ${counts.replaced > 0 ? 'its new recordings are stored, but ' : ''}${undone.join('; ')}. `;
  const redo = counts.replaced > 0 ? 'Then record again: a record run replaces the older recordings and these alike.' : 'Then prune again.';
  return withContext(e, prefix, { hint: `${e.hint ? `${e.hint} ` : ''}${redo}` });
}
