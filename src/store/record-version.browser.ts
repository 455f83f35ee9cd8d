/**
 * record-version.ts for browser builds: a page does not tell a newer tapedeck's record from a
 * damaged one (it serves neither, and says the recording cannot be read), so the version table
 * and its messages stay out of a bundle with a 100 KB budget (bench/size.mjs). Node says
 * E_TAPE_VERSION, with the upgrade.
 */
import type { TapedeckError } from '../errors.ts';

/**
 * Never a newer record in a page (see record-version.ts).
 *
 * @example
 * newerRecordOf('http')({ v: 9, kind: 'http' }, 'app.tape', {}) // undefined
 */
export const newerRecordOf =
  (_kind: string) =>
  (_value: unknown, _where: string, _details: Record<string, unknown>): TapedeckError | undefined =>
    undefined;
