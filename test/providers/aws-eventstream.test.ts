// The AWS event-stream codec against the AWS SDK's own (@smithy/eventstream-codec), both ways:
// what ours encodes the SDK decodes to the same message, what the SDK encodes ours decodes to
// the same message and re-encodes to the same bytes; damaged CRCs and cut streams are refused
// with the byte offset.
import { EventStreamCodec, Int64, type Message, type MessageHeaders } from '@smithy/eventstream-codec';
import fc from 'fast-check';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { crc32, decodeEventStream, encodeEventStreamMessage, EventStreamDecoder, mayBeEventStream, type EventStreamHeader, type EventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';

const codec = new EventStreamCodec((b) => new TextDecoder().decode(b), (s) => new TextEncoder().encode(s));

/** Our header list as the SDK's header map (names are unique in the generated messages). */
function toSmithy(m: EventStreamMessage): Message {
  const headers: MessageHeaders = {};
  for (const h of m.headers) {
    if (h.type === 'long') headers[h.name] = { type: 'long', value: Int64.fromNumber(Number(h.value)) };
    else if (h.type === 'timestamp') headers[h.name] = { type: 'timestamp', value: new Date(Number(h.value)) };
    else headers[h.name] = { type: h.type, value: h.value } as MessageHeaders[string];
  }
  return { headers, body: m.body };
}

function fromSmithy(m: Message): EventStreamMessage {
  const headers: EventStreamHeader[] = [];
  for (const [name, h] of Object.entries(m.headers)) {
    if (h.type === 'long') headers.push({ name, type: 'long', value: BigInt(h.value.toString()) });
    else if (h.type === 'timestamp') headers.push({ name, type: 'timestamp', value: BigInt(h.value.getTime()) });
    else headers.push({ name, ...h } as EventStreamHeader);
  }
  return { headers, body: new Uint8Array(m.body) };
}

const hexByte = fc.integer({ min: 0, max: 255 }).map((n) => n.toString(16).padStart(2, '0'));
const uuid = fc.array(hexByte, { minLength: 16, maxLength: 16 }).map((a) => {
  const h = a.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
});
// Int64 in the SDK goes through a double: keep longs within the exactly representable range.
const safeLong = fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n });
const header: fc.Arbitrary<Omit<EventStreamHeader, 'name'>> = fc.oneof(
  fc.boolean().map((value) => ({ type: 'boolean' as const, value })),
  fc.integer({ min: -128, max: 127 }).map((value) => ({ type: 'byte' as const, value })),
  fc.integer({ min: -32768, max: 32767 }).map((value) => ({ type: 'short' as const, value })),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((value) => ({ type: 'integer' as const, value })),
  safeLong.map((value) => ({ type: 'long' as const, value })),
  fc.uint8Array({ maxLength: 300 }).map((value) => ({ type: 'binary' as const, value })),
  fc.string({ unit: 'grapheme', maxLength: 100 }).map((value) => ({ type: 'string' as const, value })),
  fc.integer({ min: -8.64e12, max: 8.64e12 }).map((n) => ({ type: 'timestamp' as const, value: BigInt(n) })),
  uuid.map((value) => ({ type: 'uuid' as const, value })),
);
// Integer-like names would be reordered by the SDK's header object, and __proto__ is no member
// of it at all: those are the oracle's limits, not the format's.
const headerName = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => Buffer.byteLength(s) <= 255 && !/^(0|[1-9]\d*)$/.test(s) && s !== '__proto__');
const message: fc.Arbitrary<EventStreamMessage> = fc.record({
  headers: fc.uniqueArray(fc.tuple(headerName, header), { selector: ([n]) => n, maxLength: 8 }).map((hs) => hs.map(([name, h]) => ({ name, ...h }) as EventStreamHeader)),
  body: fc.uint8Array({ maxLength: 2000 }),
});

describe('AWS event-stream codec', () => {
  it('CRC32 is zlib\'s', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 500 }), (b) => crc32(b) === zlibCrc32(b)));
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('mayBeEventStream: false only where the decoder finds no message', () => {
    const decodes = (b: Uint8Array) => {
      try {
        return decodeEventStream(b).length > 0;
      } catch {
        return false;
      }
    };
    // Any bytes, and bytes that start with a plausible length: never a stream it turns away.
    const start = fc.tuple(fc.integer({ min: 0, max: 64 }), fc.uint8Array({ maxLength: 80 })).map(([len, rest]) => Uint8Array.of(0, 0, 0, len, ...rest));
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), start), (b) => mayBeEventStream(b) || !decodes(b)), { numRuns: 2000 });
    fc.assert(fc.property(fc.array(message, { minLength: 1, maxLength: 3 }), (ms) => mayBeEventStream(Buffer.concat(ms.map(encodeEventStreamMessage)))), { numRuns: 200 });
    expect(mayBeEventStream(new TextEncoder().encode('{"answer":"a JSON body, as most are"}'))).toBe(false);
  });

  it('what it encodes, the AWS SDK decodes to the same message', () => {
    fc.assert(
      fc.property(message, (m) => {
        const ours = encodeEventStreamMessage(m);
        expect(fromSmithy(codec.decode(ours))).toEqual(m);
      }),
      { numRuns: 300 },
    );
  });

  it('what the AWS SDK encodes, it decodes to the same message and re-encodes byte for byte', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 4 }), (ms) => {
        const frames = ms.map((m) => codec.encode(toSmithy(m)));
        const stream = Buffer.concat(frames);
        const decoded = decodeEventStream(stream);
        expect(decoded).toEqual(ms.map((m) => fromSmithy(codec.decode(codec.encode(toSmithy(m))))));
        decoded.forEach((d, i) => expect(Buffer.from(encodeEventStreamMessage(d))).toEqual(Buffer.from(frames[i]!)));
      }),
      { numRuns: 200 },
    );
  });

  it('decodes a stream fed in chunks of every size the same as whole', () => {
    const ms: EventStreamMessage[] = [
      { headers: [{ name: ':event-type', type: 'string', value: 'messageStart' }, { name: ':content-type', type: 'string', value: 'application/json' }, { name: ':message-type', type: 'string', value: 'event' }], body: new TextEncoder().encode('{"role":"assistant"}') },
      { headers: [{ name: ':message-type', type: 'string', value: 'event' }], body: new Uint8Array(0) },
    ];
    const stream = Buffer.concat(ms.map(encodeEventStreamMessage));
    for (let size = 1; size <= stream.length; size++) {
      const d = new EventStreamDecoder();
      const got: EventStreamMessage[] = [];
      for (let i = 0; i < stream.length; i += size) got.push(...d.push(stream.subarray(i, i + size)));
      d.end();
      expect(got).toEqual(ms);
    }
  });

  it('a flipped bit anywhere is refused with the byte offset of the check that caught it', () => {
    const m: EventStreamMessage = { headers: [{ name: ':event-type', type: 'string', value: 'contentBlockDelta' }], body: new TextEncoder().encode('{"delta":{"text":"hi"}}') };
    const one = encodeEventStreamMessage(m);
    const stream = Buffer.concat([one, one]);
    for (let i = 0; i < stream.length; i++) {
      const bad = Buffer.from(stream);
      bad[i] ^= 0x10;
      let err: unknown;
      try {
        decodeEventStream(bad);
      } catch (e) {
        err = e;
      }
      expect(err, `flip at ${i}`).toBeInstanceOf(TapedeckError);
      const e = err as TapedeckError;
      expect(e.code).toBe('E_EVENT_STREAM');
      // The second message's errors are offset by the first one's length: offsets are the stream's.
      const base = i < one.length ? 0 : one.length;
      const rel = i - base;
      const expected = rel < 12 ? base + 8 : base + one.length - 4;
      expect(e.offset, `flip at ${i}: ${e.message}`).toBe(expected);
      expect(e.message).toMatch(/CRC mismatch at byte \d+/);
      // The SDK refuses the same bytes.
      expect(() => codec.decode(bad.subarray(base, base + one.length))).toThrow();
    }
  });

  it('a stream cut inside a message is refused at end(), with where the message began', () => {
    const one = encodeEventStreamMessage({ headers: [], body: new Uint8Array(40) });
    const stream = Buffer.concat([one, one]);
    for (let cut = one.length + 1; cut < stream.length; cut++) {
      const d = new EventStreamDecoder();
      expect(d.push(stream.subarray(0, cut))).toHaveLength(1);
      expect(() => d.end()).toThrow(expect.objectContaining({ code: 'E_EVENT_STREAM', offset: one.length }));
    }
  });

  it('a header that runs past its block or has an unknown type is refused', () => {
    // Build a message by hand whose header claims a 10-byte string inside a 6-byte block.
    const headers = Buffer.from([1, 0x61, 7, 0, 10, 0x62]);
    const total = 16 + headers.length;
    const b = Buffer.alloc(total);
    b.writeUInt32BE(total, 0);
    b.writeUInt32BE(headers.length, 4);
    b.writeUInt32BE(crc32(b, 0, 8), 8);
    headers.copy(b, 12);
    b.writeUInt32BE(crc32(b, 0, total - 4), total - 4);
    expect(() => decodeEventStream(b)).toThrow(expect.objectContaining({ code: 'E_EVENT_STREAM', offset: 17 }));
    b[14] = 42;
    b.writeUInt32BE(crc32(b, 0, total - 4), total - 4);
    expect(() => decodeEventStream(b)).toThrow(expect.objectContaining({ code: 'E_EVENT_STREAM', offset: 14, message: expect.stringMatching(/unknown header type 42/) }));
  });
});
