/**
 * The refusal a page gets when it asks for a fault: browser bundles leave faults on demand out.
 * Apart from ./refused.ts, whose mode rule only Node needs (./refused.browser.ts).
 */
import { TapedeckError } from '../errors.ts';

/**
 * The error a page gets when it asks for a fault.
 *
 * @example
 * throw chaosUnavailable()
 */
export const chaosUnavailable = (): TapedeckError =>
  new TapedeckError('E_CHAOS_MODE', 'Faults on demand are not part of browser playback (the browser bundle leaves them out).', {
    hint: 'Test retries and cut streams in Node: createFetch({ chaos }) or tapedeck serve --chaos (docs/chaos.md).',
  });
