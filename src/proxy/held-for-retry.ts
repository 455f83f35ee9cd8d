/**
 * Record mode's recordings made behind an injected fault (./chaos.ts, recordBehind), held for
 * the faulted call's retry. Record mode sends every call upstream, so a retry would otherwise be
 * sent and recorded again: the tape would hold two answers where its replay asks for one (the
 * fault stands in for no lookup there), and a later identical call would replay the retry's
 * answer in place of its own. Held, the retry (or, with none, the next identical call) is
 * answered by the recording made behind the fault, as its replay will be.
 */
import { filedKey } from '../store/origins.ts';
import type { HttpRecord } from '../store/records.ts';

export class HeldForRetry {
  private readonly held = new Map<string, HttpRecord[]>();

  /**
   * Holds `rec`, stored, for the next request filed under its key.
   *
   * @example
   * held.hold(rec) // after its append resolved
   */
  hold(rec: HttpRecord): void {
    const key = filedKey(rec);
    const list = this.held.get(key);
    if (list) list.push(rec);
    else this.held.set(key, [rec]);
  }

  /**
   * The recording held for a request filed under `key`, taken (oldest first); undefined when
   * none is.
   *
   * @example
   * const rec = held.take(filedKey({ ...req, ...prepared }))
   */
  take(key: string): HttpRecord | undefined {
    const list = this.held.get(key);
    if (!list) return undefined;
    const rec = list.shift();
    if (list.length === 0) this.held.delete(key);
    return rec;
  }

  /**
   * Whether a recording is held for a request filed under `key` (not taken): a faulted retry of
   * the call needs no second recording behind its fault.
   *
   * @example
   * if (!held.has(key)) await recordBehind()
   */
  has(key: string): boolean {
    return this.held.has(key);
  }

  /** Whether anything is held: a record run with no fault pays one size check a request. */
  get size(): number {
    return this.held.size;
  }
}
