/**
 * telemetry-take.ts for browser builds: a page sends no trace uploads of an agent SDK's, so its
 * lookup is the deck's own (and the bundle stays within its budget).
 */
import type { HttpRecord } from '../store/records.ts';

/**
 * The deck's own lookup in a page.
 *
 * @example
 * telemetryTake(col, 'replay', take) // take()
 */
export function telemetryTake(_col: unknown, _mode: string, take: (repeatLast?: boolean) => HttpRecord | undefined): HttpRecord | undefined {
  return take();
}
