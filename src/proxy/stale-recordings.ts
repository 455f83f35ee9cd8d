/**
 * What a createFetch record run says at close of the recordings it left that nothing asked for:
 * most often the previous version of a request the code now makes differently, which stays on
 * the tape (docs/modes.md rule 5) and grows it with every edit of a prompt. Node only: a page
 * never records (./stale-recordings.browser.ts).
 */

/**
 * The summary line for `unused` recordings a record run that recorded (and does not prune) left,
 * or undefined when there is nothing to say. Not in update mode, which adds to a tape other code
 * shares as often as not: what it did not ask for is another caller's as likely as stale.
 *
 * @example
 * staleLine(true, 1) // '  The unused recording stays on the tape (…): createFetch({ pruneUnused: true }) …'
 */
export function staleLine(recorded: boolean, unused: number): string | undefined {
  if (!recorded || unused === 0) return undefined;
  return `  ${unused === 1 ? 'The unused recording stays' : `The ${unused} unused recordings stay`} on the tape (earlier versions of requests the code now makes differently?): when a record run makes every call the tape is for, createFetch({ pruneUnused: true }) removes what it did not ask for as it closes.`;
}
