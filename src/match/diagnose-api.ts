/**
 * The checked public forms of the miss diagnostics. The matcher calls the diagnostics itself on
 * every miss, in the page bundle too (a 100 KB budget); the checks that turn a wrong argument
 * into an E_ARG, instead of Node's TypeError about a member of null, are made here, at the
 * entry a program imports.
 */
import { TapedeckError } from '../errors.ts';
import { describeArgument } from '../option-names.ts';
import { closestRecordings as closest, explainMiss as explain, type MissContext, type NearMiss } from './diagnose.ts';

/** E_ARG unless ctx is an object with the members a diagnosis reads. */
function checkContext(ctx: unknown, where: string): asserts ctx is MissContext {
  const c = ctx as Partial<MissContext> | null | undefined;
  if (typeof c !== 'object' || c === null || typeof c.request !== 'object' || c.request === null || !Array.isArray(c.keys) || !Array.isArray(c.recordings) || typeof c.full !== 'function') {
    throw new TapedeckError('E_ARG', `${where} takes the context of a miss (its request, recordings, keys and full()), which the matcher builds on each miss; got ${typeof c === 'object' && c !== null && !Array.isArray(c) ? 'an object without them' : describeArgument(c)}.`, {
      hint: "A miss comes with its diagnosis: catch the matcher's E_MISS and read e.message and e.details.report (closest, difference, fix).",
    });
  }
}

/**
 * Builds the E_MISS error for a request no recording answers: the short headline (what differs
 * from the closest recording and how to fix it) with at most two excerpt lines, and in
 * `details` the rest (`difference`, `kind`, `fix`, `closest`, `report`). createMatcher's match()
 * throws it on a miss; a matcher of your own builds the {@link MissContext} (the request's keys,
 * the recordings' keys) and gets the same diagnosis.
 *
 * @example
 * const e = explainMiss(ctx)                 // ctx: MissContext, what your matcher holds at the miss
 * e.code === 'E_MISS' && e.details.report     // the whole diagnosis as text; e.message its headline
 */
export function explainMiss(ctx: MissContext): TapedeckError {
  checkContext(ctx, 'explainMiss');
  return explain(ctx);
}

/**
 * The recordings closest to a missed request, best first (at most `limit`), ranked by the
 * leading messages they share with it, then the words of the rest, the arguments that decide
 * the answer's shape, the tools, the model and the signature.
 *
 * @example
 * closestRecordings(ctx, 1)[0]?.divergesAt // the first message where the nearest recording differs
 */
export function closestRecordings(ctx: MissContext, limit = 3): NearMiss[] {
  checkContext(ctx, 'closestRecordings');
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TapedeckError('E_ARG', `closestRecordings takes a limit that is a whole number of 1 or more; got ${String(limit)}.`, { hint: 'Pass e.g. closestRecordings(ctx, 3), or leave the limit out (3).' });
  }
  return closest(ctx, limit);
}
