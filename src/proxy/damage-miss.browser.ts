/**
 * damage-miss.ts for browser builds: a page's miss is given as it is (the 100 KB budget; the
 * damage is said by the warnings at open).
 */
import type { TapedeckError } from '../errors.ts';

/** The miss as it is (see damage-miss.ts). */
export function missOnDamagedTape(miss: TapedeckError, _col: unknown, _verifyCommand: string | undefined): TapedeckError {
  return miss;
}
