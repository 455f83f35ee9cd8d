// The proxy's table of requests in flight (src/proxy/flights.ts): what close() cuts must be
// exactly the requests not yet done, held to a Set of them over random arrivals and endings.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Flights } from '../../src/proxy/flights.ts';

const response = (id: number) => ({ id }) as unknown as ServerResponse;
const ids = (it: Iterable<ServerResponse>) => [...it].map((r) => (r as unknown as { id: number }).id).sort((a, b) => a - b);

describe('requests in flight', () => {
  it('holds exactly the requests that entered and have not left, over random traffic', () => {
    const flights = new Flights();
    const oracle = new Set<ServerResponse>();
    const open: { res: ServerResponse; slot: number }[] = [];
    let seed = 7;
    const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    for (let step = 0, next = 0; step < 5000; step++) {
      if (open.length === 0 || rand(3) !== 0) {
        const res = response(next++);
        open.push({ res, slot: flights.enter(res) });
        oracle.add(res);
      } else {
        const [{ res, slot }] = open.splice(rand(open.length), 1);
        flights.leave(slot, res);
        oracle.delete(res);
      }
      if (step % 97 === 0) expect(ids(flights)).toEqual(ids(oracle));
    }
    expect(ids(flights)).toEqual(ids(oracle));
  });

  it("a second leave of a request does not free the slot a later request took", () => {
    const flights = new Flights();
    const a = response(1);
    const slot = flights.enter(a);
    flights.leave(slot, a);
    const b = response(2);
    expect(flights.enter(b)).toBe(slot);
    flights.leave(slot, a);
    // b is still in flight, and its slot is not handed to c.
    const c = response(3);
    expect(flights.enter(c)).not.toBe(slot);
    expect(ids(flights)).toEqual([2, 3]);
  });

  it('a request leaving while close() walks the table does not hide the others', () => {
    const flights = new Flights();
    const all = [1, 2, 3, 4].map(response);
    const slots = all.map((r) => flights.enter(r));
    const seen: number[] = [];
    for (const r of flights) {
      seen.push((r as unknown as { id: number }).id);
      // As res.destroy() ends the exchange, which leaves the table at once.
      flights.leave(slots[all.indexOf(r)]!, r);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(ids(flights)).toEqual([]);
  });
});
