/**
 * The AWS event-stream framing (`application/vnd.amazon.eventstream`), used by Bedrock's
 * ConverseStream and InvokeModelWithResponseStream answers. Each message is
 *
 *   total length (u32 BE) · headers length (u32 BE) · CRC32 of those 8 bytes
 *   headers: name length (u8) · name (UTF-8) · type (u8) · value
 *   payload
 *   CRC32 of everything before it
 *
 * Integers are big-endian; CRC32 is the IEEE polynomial (zlib's). Recorded streams are replayed
 * as their bytes; this decoder is what tells a whole stream from a cut one and reads the answer
 * out of it, and the encoder is what a test server frames its answers with.
 */
import { TapedeckError } from '../../errors.ts';

/** A header's value, with the wire type it is written in. */
export type EventStreamHeaderValue =
  | { type: 'boolean'; value: boolean }
  | { type: 'byte' | 'short' | 'integer'; value: number }
  | { type: 'long' | 'timestamp'; value: bigint }
  | { type: 'binary'; value: Uint8Array }
  | { type: 'string'; value: string }
  | { type: 'uuid'; value: string };

/** One header, in the order it is on the wire (order is kept, so re-encoding is byte-exact). */
export type EventStreamHeader = { name: string } & EventStreamHeaderValue;

/** One event-stream message. */
export interface EventStreamMessage {
  headers: EventStreamHeader[];
  body: Uint8Array;
}

const PRELUDE = 8;
const OVERHEAD = PRELUDE + 4 + 4;
// The AWS format's own limits: 16 MiB a message, 128 KiB of headers.
const MAX_MESSAGE = 16 * 1024 * 1024;
const MAX_HEADERS = 128 * 1024;

const TYPE_CODES = { boolean: -1, byte: 2, short: 3, integer: 4, long: 5, binary: 6, string: 7, timestamp: 8, uuid: 9 } as const;

let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/**
 * CRC32 (IEEE 802.3, as zlib and the event-stream format compute it) of `bytes[start, end)`.
 *
 * @example
 * crc32(new TextEncoder().encode('123456789')) // 0xcbf43926
 */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const t = crcTable();
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function corrupt(what: string, offset: number): TapedeckError {
  return new TapedeckError('E_EVENT_STREAM', `Bad AWS event-stream message: ${what} at byte ${offset}.`, {
    offset,
    hint: 'The answer is not a whole application/vnd.amazon.eventstream stream (cut off or damaged in transit); it is not recorded.',
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

function hex(b: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += b[i]!.toString(16).padStart(2, '0');
  return s;
}

function readText(b: Uint8Array, from: number, to: number, at: number, what: string): string {
  try {
    return utf8.decode(b.subarray(from, to));
  } catch {
    throw corrupt(`${what} is not valid UTF-8`, at);
  }
}

/** Reads the headers in `b[from, to)`; `base` is the stream offset of `b[0]`, for errors. */
function readHeaders(b: Uint8Array, v: DataView, from: number, to: number, base: number): EventStreamHeader[] {
  const out: EventStreamHeader[] = [];
  let i = from;
  const need = (n: number, what: string) => {
    if (i + n > to) throw corrupt(`${what} runs past the end of the headers`, base + i);
  };
  while (i < to) {
    const start = i;
    const nameLen = b[i++]!;
    if (nameLen === 0) throw corrupt('empty header name', base + start);
    need(nameLen + 1, 'header name');
    const name = readText(b, i, i + nameLen, base + i, 'header name');
    i += nameLen;
    const code = b[i++]!;
    switch (code) {
      case 0:
      case 1:
        out.push({ name, type: 'boolean', value: code === 0 });
        break;
      case 2:
        need(1, `header ${name}`);
        out.push({ name, type: 'byte', value: v.getInt8(i) });
        i += 1;
        break;
      case 3:
        need(2, `header ${name}`);
        out.push({ name, type: 'short', value: v.getInt16(i) });
        i += 2;
        break;
      case 4:
        need(4, `header ${name}`);
        out.push({ name, type: 'integer', value: v.getInt32(i) });
        i += 4;
        break;
      case 5:
      case 8:
        need(8, `header ${name}`);
        out.push({ name, type: code === 5 ? 'long' : 'timestamp', value: v.getBigInt64(i) });
        i += 8;
        break;
      case 6:
      case 7: {
        need(2, `header ${name}`);
        const n = v.getUint16(i);
        i += 2;
        need(n, `header ${name}`);
        if (code === 6) out.push({ name, type: 'binary', value: new Uint8Array(b.subarray(i, i + n)) });
        else out.push({ name, type: 'string', value: readText(b, i, i + n, base + i, `header ${name}`) });
        i += n;
        break;
      }
      case 9: {
        need(16, `header ${name}`);
        const h = hex(b, i, i + 16);
        out.push({ name, type: 'uuid', value: `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}` });
        i += 16;
        break;
      }
      default:
        throw corrupt(`unknown header type ${code} for header ${name}`, base + i - 1);
    }
  }
  return out;
}

/**
 * Decodes the message at `b[at]`, whose prelude has been checked and whose `total` bytes are all
 * in `b`. `base` is the stream offset of `b[0]`, for error offsets.
 */
function decodeAt(b: Uint8Array, at: number, total: number, base: number): EventStreamMessage {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const headersLen = v.getUint32(at + 4);
  if (headersLen > total - OVERHEAD || headersLen > MAX_HEADERS) throw corrupt(`headers length ${headersLen} does not fit a ${total}-byte message`, base + at + 4);
  const end = at + total;
  if (crc32(b, at, end - 4) !== v.getUint32(end - 4)) throw corrupt('message CRC mismatch', base + end - 4);
  const hStart = at + OVERHEAD - 4;
  const headers = readHeaders(b, v, hStart, hStart + headersLen, base);
  // Copied into a plain Uint8Array (a Buffer's slice would be a Buffer sharing the chunk).
  return { headers, body: new Uint8Array(b.subarray(hStart + headersLen, end - 4)) };
}

/**
 * Decodes a whole event stream. Throws E_EVENT_STREAM with the byte `offset` for a bad CRC, a
 * bad header or a stream cut inside a message.
 *
 * @example
 * const [m] = decodeEventStream(bytes)
 * headerString(m, ':event-type') // 'messageStart'
 */
export function decodeEventStream(bytes: Uint8Array): EventStreamMessage[] {
  const d = new EventStreamDecoder();
  const out = d.push(bytes);
  d.end();
  return out;
}

/**
 * Whether bytes can begin an event stream: long enough for a message, and the first message's
 * declared length within the bounds the decoder accepts. False means decodeEventStream finds no
 * message in them (it throws, or returns none for no bytes): a caller trying every body (the
 * secret scan) skips the attempt and the error it would make.
 *
 * @example
 * mayBeEventStream(new TextEncoder().encode('{"a":1}')) // false
 */
export function mayBeEventStream(bytes: Uint8Array): boolean {
  if (bytes.length < OVERHEAD) return false;
  const total = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  return total >= OVERHEAD && total <= MAX_MESSAGE;
}

/**
 * An incremental decoder: feed it chunks as they arrive, get the messages completed by each.
 *
 * @example
 * const d = new EventStreamDecoder()
 * for await (const chunk of body) for (const m of d.push(chunk)) handle(m)
 * d.end() // throws if the stream stopped inside a message
 */
export class EventStreamDecoder {
  private pending: Uint8Array = new Uint8Array(0);
  /** Stream offset of pending[0]. */
  private offset = 0;

  /** Bytes read so far that belong to no whole message yet. */
  get buffered(): number {
    return this.pending.length;
  }

  push(chunk: Uint8Array): EventStreamMessage[] {
    let b = chunk;
    if (this.pending.length > 0) {
      b = new Uint8Array(this.pending.length + chunk.length);
      b.set(this.pending);
      b.set(chunk, this.pending.length);
    }
    const out: EventStreamMessage[] = [];
    let at = 0;
    while (b.length - at >= PRELUDE + 4) {
      const v = new DataView(b.buffer, b.byteOffset + at, PRELUDE + 4);
      // The prelude CRC is checked before its length is trusted: a damaged length would
      // otherwise make the decoder wait for megabytes that never come.
      if (crc32(b, at, at + PRELUDE) !== v.getUint32(PRELUDE)) throw corrupt('prelude CRC mismatch', this.offset + at + PRELUDE);
      const total = v.getUint32(0);
      if (total < OVERHEAD || total > MAX_MESSAGE) throw corrupt(`message length ${total} outside ${OVERHEAD}..${MAX_MESSAGE}`, this.offset + at);
      if (b.length - at < total) break;
      out.push(decodeAt(b, at, total, this.offset));
      at += total;
    }
    this.pending = at === b.length ? new Uint8Array(0) : new Uint8Array(b.subarray(at));
    this.offset += at;
    return out;
  }

  /** Throws E_EVENT_STREAM when bytes of an unfinished message are left. */
  end(): void {
    if (this.pending.length > 0) throw corrupt(`stream ends inside a message (${this.pending.length} bytes of it)`, this.offset);
  }
}

function uuidBytes(s: string, name: string): Uint8Array {
  const h = s.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(h)) throw new TapedeckError('E_ARG', `Header ${name}: ${JSON.stringify(s)} is not a UUID.`, { hint: 'Give 32 hex digits, dashes optional.' });
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function headerBytes(h: EventStreamHeader): Uint8Array {
  const name = encoder.encode(h.name);
  if (name.length === 0 || name.length > 255) throw new TapedeckError('E_ARG', `Header name ${JSON.stringify(h.name)} is ${name.length} bytes.`, { hint: 'Use a name of 1 to 255 UTF-8 bytes.' });
  let value: Uint8Array;
  let code: number;
  switch (h.type) {
    case 'boolean':
      value = new Uint8Array(0);
      code = h.value ? 0 : 1;
      break;
    case 'byte':
      value = new Uint8Array(1);
      new DataView(value.buffer).setInt8(0, h.value);
      code = TYPE_CODES.byte;
      break;
    case 'short':
      value = new Uint8Array(2);
      new DataView(value.buffer).setInt16(0, h.value);
      code = TYPE_CODES.short;
      break;
    case 'integer':
      value = new Uint8Array(4);
      new DataView(value.buffer).setInt32(0, h.value);
      code = TYPE_CODES.integer;
      break;
    case 'long':
    case 'timestamp':
      value = new Uint8Array(8);
      new DataView(value.buffer).setBigInt64(0, h.value);
      code = TYPE_CODES[h.type];
      break;
    case 'binary':
    case 'string': {
      const data = h.type === 'string' ? encoder.encode(h.value) : h.value;
      if (data.length > 0xffff) throw new TapedeckError('E_ARG', `Header ${h.name} holds ${data.length} bytes.`, { hint: 'A header value holds at most 65,535 bytes.' });
      value = new Uint8Array(2 + data.length);
      new DataView(value.buffer).setUint16(0, data.length);
      value.set(data, 2);
      code = TYPE_CODES[h.type];
      break;
    }
    case 'uuid':
      value = uuidBytes(h.value, h.name);
      code = TYPE_CODES.uuid;
      break;
  }
  const out = new Uint8Array(1 + name.length + 1 + value.length);
  out[0] = name.length;
  out.set(name, 1);
  out[1 + name.length] = code;
  out.set(value, 2 + name.length);
  return out;
}

/**
 * Encodes one message, CRCs included.
 *
 * @example
 * encodeEventStreamMessage({
 *   headers: [{ name: ':event-type', type: 'string', value: 'messageStop' }, { name: ':message-type', type: 'string', value: 'event' }],
 *   body: new TextEncoder().encode('{"stopReason":"end_turn"}'),
 * })
 */
export function encodeEventStreamMessage(m: EventStreamMessage): Uint8Array {
  const hs = m.headers.map(headerBytes);
  const headersLen = hs.reduce((n, h) => n + h.length, 0);
  const total = OVERHEAD + headersLen + m.body.length;
  if (headersLen > MAX_HEADERS || total > MAX_MESSAGE) throw new TapedeckError('E_ARG', `An event-stream message of ${total} bytes (${headersLen} of headers) is over the format's limits.`, { hint: 'Keep a message under 16 MiB and its headers under 128 KiB.' });
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  v.setUint32(0, total);
  v.setUint32(4, headersLen);
  v.setUint32(8, crc32(out, 0, PRELUDE));
  let at = OVERHEAD - 4;
  for (const h of hs) {
    out.set(h, at);
    at += h.length;
  }
  out.set(m.body, at);
  v.setUint32(total - 4, crc32(out, 0, total - 4));
  return out;
}

/**
 * The value of a string header, or undefined.
 *
 * @example
 * headerString(message, ':event-type') // 'contentBlockDelta'
 */
export function headerString(m: EventStreamMessage, name: string): string | undefined {
  for (const h of m.headers) if (h.name === name && h.type === 'string') return h.value;
  return undefined;
}
