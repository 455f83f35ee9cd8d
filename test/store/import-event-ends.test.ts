// Where an imported stream's chunks end: streamChunks (which visits only the line feeds) against
// a byte-by-byte reference scan, for every body of up to 9 bytes over LF, CR and one other byte,
// and for random longer ones.
import { describe, expect, it } from 'vitest';
import { streamChunks } from '../../src/store/import/exchange.ts';

/** Ends of events (after `\n\n` or `\r\n\r\n`), scanning each byte; the body's end last. */
function referenceEnds(body: Uint8Array): number[] {
  const ends: number[] = [];
  let i = 0;
  while (i + 1 < body.length) {
    if (body[i] === 0x0a && body[i + 1] === 0x0a) ends.push((i += 2));
    else if (body[i] === 0x0d && body[i + 1] === 0x0a && body[i + 2] === 0x0d && body[i + 3] === 0x0a) ends.push((i += 4));
    else i++;
  }
  if (ends.length === 0 || ends[ends.length - 1] !== body.length) ends.push(body.length);
  return ends;
}

const SSE = { 'content-type': 'text/event-stream' };
const ends = (body: Uint8Array) => streamChunks(SSE, body, 0, 10)?.map((c) => c[1]);
const want = (body: Uint8Array) => {
  const e = referenceEnds(body);
  return e.length < 2 ? undefined : e;
};

describe('stream chunks of an imported event stream', () => {
  it('end where a byte-by-byte scan finds the blank lines, for every short body', () => {
    const bytes = [0x0a, 0x0d, 0x61];
    let checked = 0;
    for (let len = 0; len <= 9; len++) {
      for (let n = 0; n < 3 ** len; n++) {
        const body = new Uint8Array(len);
        for (let i = 0, m = n; i < len; i++, m = Math.floor(m / 3)) body[i] = bytes[m % 3]!;
        expect(ends(body)).toEqual(want(body));
        checked++;
      }
    }
    expect(checked).toBe(29524);
  });

  it('end where a byte-by-byte scan finds the blank lines, for long bodies', () => {
    let seed = 11;
    const r = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let k = 0; k < 500; k++) {
      const body = Buffer.from(Array.from({ length: 200 + Math.floor(r() * 2000) }, () => (r() < 0.1 ? '\n' : r() < 0.1 ? '\r' : 'x')).join(''));
      expect(ends(body)).toEqual(want(body));
    }
  });
});
