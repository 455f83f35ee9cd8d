/**
 * Errors a test runner prints to the user: tapedeck's message says what happened and what to
 * run; the frames inside tapedeck's own bundle (a fixture's teardown, a mode read at open) say
 * nothing the user can act on, so such an error carries its message alone.
 */
import { TapedeckError } from '../errors.ts';

/**
 * `e`, without its stack frames when it is tapedeck's own error (others as they are).
 *
 * @example
 * throw forTestOutput(new TapedeckError('E_MISS', 'tapedeck miss: ...')) // the runner prints the message alone
 */
export function forTestOutput<T>(e: T): T {
  if (e instanceof TapedeckError) e.stack = `${e.name}: ${e.message}`;
  return e;
}
