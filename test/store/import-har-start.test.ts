// When an imported HAR entry started: the reader keeps a startedDateTime that toISOString would
// write back unchanged as it is, and parses the rest. Against the plain round trip
// (Date.parse, then toISOString) for canonical times on every day and hour boundary, the years
// at the ends of four digits, other spellings browsers and tools write, and invalid ones.
import { describe, expect, it } from 'vitest';
import { readHar } from '../../src/store/import/har.ts';
import { rng } from '../reference.ts';

/** The reference: what Date makes of the text, or undefined where it is no time. */
function roundTrip(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

const entry = (startedDateTime: unknown) => ({
  startedDateTime,
  time: 1,
  request: { method: 'GET', url: 'https://example.com/', headers: [] },
  response: { status: 200, headers: [], content: { size: 0, text: '' } },
});

/** startedAt of each time as the HAR reader gives it. */
function read(times: unknown[]): (string | undefined)[] {
  const r = readHar(JSON.stringify({ log: { entries: times.map(entry) } }), 'times.har');
  const got = [...r.exchanges].map((x) => x.startedAt);
  expect(r.bad).toEqual([]);
  return got;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

describe('start times of imported HAR entries', () => {
  it('are the Date round trip of startedDateTime, for boundary and random times', () => {
    const times: unknown[] = [];
    for (const year of [0, 1, 1969, 1970, 2024, 2025, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (const day of [0, 1, 9, 10, 19, 20, 27, 28, 29, 30, 31, 32]) {
          for (const [h, m, s] of [[0, 0, 0], [23, 59, 59], [24, 0, 0], [12, 60, 0], [12, 0, 60]]) {
            times.push(`${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(h!, 2)}:${pad(m!, 2)}:${pad(s!, 2)}.${pad(day * 31, 3)}Z`);
          }
        }
      }
    }
    const r = rng(7);
    for (let i = 0; i < 2000; i++) times.push(new Date(Math.floor((r() - 0.3) * 4e12)).toISOString());
    times.push(
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.000+01:00',
      '2026-01-01T00:00:00.1234Z',
      '2026-01-01 00:00:00.000Z',
      '2026-01-01T00:00:00.000z',
      '+002026-01-01T00:00:00.000Z',
      '-000001-01-01T00:00:00.000Z',
      'Thu, 01 Jan 2026 00:00:00 GMT',
      '2026-01-01',
      'not a time',
      '',
      ' 2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z\n',
      '٢٠٢٦-01-01T00:00:00.000Z',
      1767225600000,
      null,
    );
    const got = read(times);
    const want = times.map(roundTrip);
    for (let i = 0; i < times.length; i++) if (got[i] !== want[i]) expect.fail(`${JSON.stringify(times[i])}: ${got[i]} where the round trip gives ${want[i]}`);
    expect(want.filter((w) => w === undefined).length).toBeGreaterThan(100);
  });
});
