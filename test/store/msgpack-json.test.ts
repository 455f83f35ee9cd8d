// JSON text straight from msgpack bytes (src/store/msgpack-json.ts), held to msgpackr's own
// decode with the tape's options: whenever it gives a text, that text parses to the value the
// decode gives (compared by an independent key-sorting serializer); for plain JSON data it
// always gives one; for anything the decode would turn into something else (a renamed key, one
// of two repeated keys, BigInt, Date, binary, lenient UTF-8, NaN) it gives none.
import { Packr, Unpackr } from 'msgpackr';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonOfMsgpack } from '../../src/store/msgpack-json.ts';
import { MSGPACK_OPTIONS } from '../../src/store/tape-codec.ts';

const packr = new Packr(MSGPACK_OPTIONS);
const unpackr = new Unpackr(MSGPACK_OPTIONS);

/** JSON with object keys sorted, written here (the oracle shares no code with the transcoder). */
function sorted(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sorted).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sorted((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Whether a decoded value is JSON data that JSON.stringify writes as it is. */
function plain(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(plain);
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.values(v as object).every(plain);
  return false;
}

/** Whether every string and key in a value is well-formed UTF-16 (no lone surrogate). */
function wellFormed(v: unknown): boolean {
  if (typeof v === 'string') return v.isWellFormed();
  if (Array.isArray(v)) return v.every(wellFormed);
  if (v !== null && typeof v === 'object') return Object.entries(v).every(([k, x]) => k.isWellFormed() && wellFormed(x));
  return true;
}

const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));
const of = (bytes: Uint8Array) => text(jsonOfMsgpack(Buffer.from(bytes), 0, bytes.length));

/** The msgpack bytes of a string header and payload (str8/str16 as the length needs). */
function str(payload: number[]): number[] {
  if (payload.length < 32) return [0xa0 | payload.length, ...payload];
  return [0xd9, payload.length, ...payload];
}
const ascii = (s: string) => [...Buffer.from(s, 'latin1')];

describe('jsonOfMsgpack', () => {
  it('gives the JSON of the decoded value for any JSON data, and never a text that parses to another value', () => {
    const values = fc.oneof(fc.jsonValue(), fc.jsonValue({ stringUnit: 'binary' }), fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 6 }));
    fc.assert(
      fc.property(values, (v) => {
        const bytes = packr.pack(v);
        const decoded = unpackr.unpack(bytes);
        const got = of(bytes);
        if (got !== undefined) {
          expect(plain(decoded)).toBe(true);
          expect(sorted(JSON.parse(got))).toBe(sorted(decoded));
        }
        // Plain data with well-formed strings and no key the decode renames always has one.
        if (plain(decoded) && wellFormed(v) && !JSON.stringify(v).includes('"__proto__"')) expect(got).toBeDefined();
      }),
      { numRuns: 3000 },
    );
  });

  it('spells strings and numbers as JSON.stringify does', () => {
    const v = { s: 'tab\there "quoted" back\\slash \u0000\u0001\u001f\b\f\n\r é ✓ 𠜎 \u2028', n: [0, -1, 127, 128, -32, -33, 255, 256, 65535, 65536, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 2 ** 32, 0.1, -2.5e-7, 1e21, 123456789012], t: true, f: false, z: null, e: {}, a: [] };
    expect(of(packr.pack(v))).toBe(JSON.stringify(v));
  });

  it('gives none where the decode is not the same JSON value', () => {
    // A key the decode renames, a repeated key (in a small map and in a large one).
    expect(of(Uint8Array.from([0x81, ...str(ascii('__proto__')), 0x01]))).toBeUndefined();
    expect(of(Uint8Array.from([0x82, ...str(ascii('a')), 0x01, ...str(ascii('a')), 0x02]))).toBeUndefined();
    const many = (dup: boolean) => {
      const members: number[] = [];
      for (let i = 0; i < 40; i++) members.push(...str(ascii(dup && i === 39 ? 'k3' : `k${i}`)), i);
      return Uint8Array.from([0xde, 0, 40, ...members]);
    };
    expect(of(many(false))).toBe(JSON.stringify(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]))));
    expect(of(many(true))).toBeUndefined();
    // Keys that are not strings.
    expect(of(Uint8Array.from([0x81, 0x01, 0x02]))).toBeUndefined();
    // Types JSON has no spelling of, or that decode as something else.
    for (const v of [new Date(0), new Uint8Array([1, 2]), 2n ** 60n, Number.NaN, Number.POSITIVE_INFINITY, new Set([1])]) {
      expect(of(packr.pack({ a: [v] })), String(v)).toBeUndefined();
    }
    // 32-bit floats and 64-bit integers (BigInt when decoded).
    expect(of(Uint8Array.from([0xca, 0x3f, 0x80, 0x00, 0x00]))).toBeUndefined();
    expect(of(Uint8Array.from([0xcf, 0, 0, 0, 0, 0, 0, 0, 1]))).toBeUndefined();
    expect(of(Uint8Array.from([0xd3, 0, 0, 0, 0, 0, 0, 0, 1]))).toBeUndefined();
    // Strings that are not UTF-8 (a stray continuation byte; a surrogate encoded on its own).
    expect(of(Uint8Array.from(str([0x61, 0x80])))).toBeUndefined();
    expect(of(Uint8Array.from(str([0xed, 0xa0, 0x80])))).toBeUndefined();
    // Bytes that end before the value does.
    expect(of(Uint8Array.from([0x92, 0x01]))).toBeUndefined();
    expect(of(Uint8Array.from([0xa5, 0x61, 0x62]))).toBeUndefined();
  });

  it('leaves deep nesting to the decode, and takes what is shallower', () => {
    const nest = (d: number): unknown => (d === 0 ? 1 : [nest(d - 1)]);
    expect(of(packr.pack(nest(64)))).toBe(JSON.stringify(nest(64)));
    expect(of(packr.pack(nest(65)))).toBeUndefined();
  });

  it('reads only up to the end it is given, from where it is told', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xff]), packr.pack({ a: 'x' }), packr.pack([1, 2])]);
    const first = packr.pack({ a: 'x' }).length;
    expect(text(jsonOfMsgpack(bytes, 2, 2 + first))).toBe('{"a":"x"}');
    expect(text(jsonOfMsgpack(bytes, 2, 2 + first - 1))).toBeUndefined();
  });

  it('gives bytes that stay as they were after later calls', () => {
    const kept = Array.from({ length: 3000 }, (_, i) => jsonOfMsgpack(packr.pack({ i, s: 'é'.repeat(i % 97) }), 0, Infinity)!);
    // Infinity as the end: the value's own lengths bound every read.
    kept.forEach((b, i) => expect(text(b)).toBe(JSON.stringify({ i, s: 'é'.repeat(i % 97) })));
    const big = 'x'.repeat(100_000);
    const long = jsonOfMsgpack(packr.pack({ big }), 0, Infinity)!;
    jsonOfMsgpack(packr.pack({ other: 1 }), 0, Infinity);
    expect(text(long)).toBe(JSON.stringify({ big }));
  });
});
