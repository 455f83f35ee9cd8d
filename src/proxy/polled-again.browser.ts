/**
 * polled-again.ts for browser builds: a page only replays, so no answer is recorded and none is
 * checked against its key's last recording (and the bundle stays within its budget).
 */
import type { HttpRecord } from '../store/records.ts';

/**
 * Never a check in a page.
 *
 * @example
 * polledAgain(deck, p, req) // undefined
 */
export function polledAgain(_deck: unknown, _p: unknown, _req: unknown): ((rec: HttpRecord) => boolean) | undefined {
  return undefined;
}
