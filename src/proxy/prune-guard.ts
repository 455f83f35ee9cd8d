/**
 * Whether a deck's `pruneUnused` may remove the recordings its run did not use. A call an
 * injected fault answered (a rate limit, a 5xx, a reset, a timeout) got no recording's answer:
 * a recording this run did not serve may be the one that call needs without the fault (another
 * seed, or no chaos), so after such faults nothing is removed and the warning says why. Browser
 * builds take prune-guard.browser.ts: a page injects no faults.
 */
import { faultsInPlaceOfRecordings } from '../chaos/answer-faults.ts';

/**
 * True when the run's faults (`stats().faults`) leave its unused recordings to be judged; else
 * warns (naming the tape and the faults) and returns false.
 *
 * @example
 * if (pruneMayRemove(deck.stats().faults, 'app.tape', console.warn)) await col.close({ pruneUnused: true })
 */
export function pruneMayRemove(faults: Readonly<Record<string, number>> | undefined, tape: string | undefined, warn: (m: string) => void): boolean {
  const faulted = faultsInPlaceOfRecordings(faults);
  if (faulted.calls === 0) return true;
  warn(`tapedeck: not removing unused recordings from ${tape}: ${faulted.text}, not by the recordings they would have got. Prune after a run without chaos.`);
  return false;
}
