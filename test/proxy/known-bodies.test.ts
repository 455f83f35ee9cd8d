// KnownBodies, the proxy's replay fast path: a body is found again only by its exact bytes.
// Checked against a Map keyed by the body's text (the oracle): it may forget a body (a CRC-32
// slot taken by another body, the size limit), but never answers for other bytes.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { KnownBodies } from '../../src/proxy/known-bodies.ts';

const enc = (s: string) => Buffer.from(s);
// One prompt template with a 12-hex-digit number filled in: every body has the same length.
const templated = (i: number) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Order ${createHash('sha256').update(String(i)).digest('hex').slice(0, 12)}?"}]}`;

describe('KnownBodies', () => {
  it('finds each of many same-length bodies by its bytes, never another body, past the compared list into the CRC-32 map', () => {
    const known = new KnownBodies<number>(100_000, 16);
    const oracle = new Map<string, number>();
    for (let i = 0; i < 500; i++) {
      known.set(enc(templated(i)), i);
      oracle.set(templated(i), i);
    }
    let found = 0;
    for (let i = 0; i < 1000; i++) {
      const body = templated(i);
      const got = known.get(enc(body));
      if (oracle.has(body)) {
        // Only a CRC-32 collision among the crowded bodies may forget one; none here.
        expect(got).toBe(oracle.get(body));
        found++;
      } else expect(got).toBeUndefined();
    }
    expect(found).toBe(500);
    expect(known.size).toBe(500);
  });

  it('bodies that differ only between the bytes the fingerprint reads are told apart by their bytes', () => {
    // The number sits in the middle of a long body with a fixed end, so most pairs share a
    // fingerprint: only the byte comparison tells them apart.
    const body = (i: number) => `{"messages":[{"role":"user","content":"${'x'.repeat(301)}${String(i).padStart(4, '0')}${'y'.repeat(300)}"}],"model":"m"}`;
    for (const perLength of [4, 16, 64]) {
      const known = new KnownBodies<number>(10_000, perLength);
      for (let i = 0; i < 40; i++) known.set(enc(body(i)), i);
      for (let i = 0; i < 80; i++) {
        const got = known.get(enc(body(i)));
        if (i < 40 && perLength >= 40) expect(got).toBe(i);
        else if (i < 40) expect(got === i || got === undefined).toBe(true);
        else expect(got).toBeUndefined();
      }
    }
  });

  it('two crowded bodies with one CRC-32: the later takes the slot, the earlier is forgotten, neither gets the other answer', () => {
    // A pair of same-length bodies sharing a CRC-32 (birthday bound, ~2^16 tries).
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const body = templated(i);
      const c = crc32(body);
      const other = seen.get(c);
      if (other !== undefined) pair = [other, body];
      else seen.set(c, body);
    }
    expect(pair[0].length).toBe(pair[1].length);
    // perLength 0: every body goes to the CRC-32 map.
    const known = new KnownBodies<string>(1000, 0);
    known.set(enc(pair[0]), 'first');
    expect(known.get(enc(pair[0]))).toBe('first');
    expect(known.get(enc(pair[1]))).toBeUndefined();
    known.set(enc(pair[1]), 'second');
    expect(known.get(enc(pair[1]))).toBe('second');
    expect(known.get(enc(pair[0]))).toBeUndefined();
    // In the compared list both are kept.
    const listed = new KnownBodies<string>(1000, 16);
    listed.set(enc(pair[0]), 'first');
    listed.set(enc(pair[1]), 'second');
    expect([listed.get(enc(pair[0])), listed.get(enc(pair[1]))]).toEqual(['first', 'second']);
  });

  it('keeps a copy of the body, refiles a body set again, and starts again empty past its size', () => {
    const known = new KnownBodies<number>(3);
    const buf = enc('{"a":1}');
    known.set(buf, 1);
    buf[5] = 0x32; // the caller reuses its buffer: {"a":2}
    expect(known.get(enc('{"a":1}'))).toBe(1);
    expect(known.get(buf)).toBeUndefined();
    known.set(enc('{"a":1}'), 10);
    expect(known.get(enc('{"a":1}'))).toBe(10);
    expect(known.size).toBe(1);
    known.set(enc('{"b":1}'), 2);
    known.set(enc('{"c":1}'), 3);
    expect(known.size).toBe(3);
    known.set(enc('{"d":1}'), 4);
    expect(known.size).toBe(1);
    expect(known.get(enc('{"a":1}'))).toBeUndefined();
    expect(known.get(enc('{"d":1}'))).toBe(4);
    // A prefix or an extension of a known body is another body.
    expect(known.get(enc('{"d":1} '))).toBeUndefined();
    expect(known.get(enc('{"d":1'))).toBeUndefined();
  });
});
