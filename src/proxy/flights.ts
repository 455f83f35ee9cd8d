/**
 * The requests a proxy handler has in flight, which close() cuts once its bound has passed: each
 * request takes a numbered slot when it arrives and gives it back when its exchange is done.
 *
 * Why slots and not a Set of responses: a Set keys a response by its identity hash, which V8
 * makes on the first add, for every request. At 64 connections a replayed answer took 1.25 µs
 * more CPU than a bare node:http server answering the same bytes with the Set, 0.59 µs more
 * with slots (21 paired rounds; docs/benchmarks.md). A slot is an array index the request's
 * own callbacks carry.
 */
import type { ServerResponse } from 'node:http';

/**
 * Slots of the responses in flight, reused as they free up.
 *
 * @example
 * const flights = new Flights();
 * const slot = flights.enter(res);
 * // ... the answer is written
 * flights.leave(slot, res);
 * for (const r of flights) r.destroy(); // at shutdown: what is still in flight
 */
export class Flights {
  private readonly slots: (ServerResponse | undefined)[] = [];
  private readonly free: number[] = [];

  /** Takes a slot for `res`; returns its number, for leave(). */
  enter(res: ServerResponse): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.slots.length;
    this.slots[slot] = res;
    return slot;
  }

  /** Gives back `slot`, if `res` holds it (a second leave of the same request changes nothing). */
  leave(slot: number, res: ServerResponse): void {
    if (this.slots[slot] !== res) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
  }

  /** The responses in flight, in slot order. */
  *[Symbol.iterator](): IterableIterator<ServerResponse> {
    for (const res of this.slots) if (res !== undefined) yield res;
  }
}
