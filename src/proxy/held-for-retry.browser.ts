/**
 * held-for-retry.ts for browser builds: a page only replays, and a recording is held for a
 * retry only in record mode, so nothing is ever held (and the bundle stays within its budget).
 */
import type { HttpRecord } from '../store/records.ts';

export class HeldForRetry {
  /**
   * Never called in a page (it records nothing).
   *
   * @example
   * held.hold(rec) // nothing
   */
  hold(_rec: HttpRecord): void {}

  /**
   * Nothing is held in a page.
   *
   * @example
   * held.take(key) // undefined
   */
  take(_key: string): HttpRecord | undefined {
    return undefined;
  }

  /**
   * Nothing is held in a page.
   *
   * @example
   * held.has(key) // false
   */
  has(_key: string): boolean {
    return false;
  }

  /** Always 0 in a page. */
  get size(): number {
    return 0;
  }
}
