/** not-a-tape.ts for browser builds: a page's tape is fetched by URL, not checked out. */
import type { TapedeckError } from '../errors.ts';

export function notATape(_buf: Uint8Array, _file: string): TapedeckError | undefined {
  return undefined;
}
