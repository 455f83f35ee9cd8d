/**
 * When faults on demand are refused: outside replay unless asked for in front of the live API
 * too, and in browser bundles, which leave them out (./options.browser.ts,
 * ../proxy/chaos.browser.ts). Apart from ./decide.ts, so a page's bundle needs none of it; a page's
 * bundle takes ./refused.browser.ts, whose refusal is ./unavailable.ts alone.
 */
import { TapedeckError } from '../errors.ts';
import type { TapeMode } from '../store/mode.ts';

/**
 * Refuses chaos outside replay unless it is asked for in front of the live API too.
 *
 * @example
 * refuseChaos('record', false, '--chaos') // throws E_CHAOS_MODE
 */
export function refuseChaos(mode: TapeMode, live: boolean | undefined, how: string): void {
  if (mode === 'replay' || live === true) return;
  throw new TapedeckError('E_CHAOS_MODE', `Chaos (${how}) is refused in ${mode} mode: injected faults would stand in front of the live API, and a test could take one for the API's answer.`, {
    mode,
    hint: 'Use chaos in replay mode, or say you want faults in front of the live API too with --chaos-live (option chaos: { live: true }; in a test, call tape.chaos({}) first). Faults are never recorded.',
  });
}

export { chaosUnavailable } from './unavailable.ts';
