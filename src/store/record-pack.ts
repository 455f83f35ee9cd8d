/**
 * Tape frames of plain records written straight into one buffer: the msgpack bytes the tape
 * writer makes of `inRecordOrder(sortedKeys(record))` with msgpackr (tape-codec.ts's options),
 * without making the sorted copies, a buffer per record, or a concatenation of the batch.
 * Object keys are sorted as they are written; a record's own fields go in RECORD_FIELDS order.
 *
 * Why: a bulk import writes every record once and keeps none, and copying each record's
 * objects into key order, then packing, then framing and concatenating the frames was a third
 * of the import's time after parsing (bench/import.mjs).
 *
 * Only plain data is written here: objects (of Object.prototype), arrays, strings, numbers,
 * booleans, null, undefined, Uint8Array and Buffer, at most MAX_DEPTH deep. For anything else
 * (a Map, a Date, a class instance, a bigint, deeper nesting) {@link FrameBuffer.addPlain}
 * writes nothing and says so, and the caller frames that record the general way. The bytes
 * follow msgpackr's choices exactly (test/store/record-pack.test.ts holds them to msgpackr):
 * - numbers: unsigned integers below 2^32 as fixint (below 0x80) / uint 8 / 16 / 32, negative
 *   ones from -2^31 as fixint (from -32) / int 8 / 16 / 32, everything else float 64;
 * - strings: the smallest header for their UTF-8 length; below 64 UTF-16 units a lone surrogate
 *   is written as its 3-byte form, from 64 on as U+FFFD (msgpackr's own loop, then Buffer's
 *   encoder);
 * - a Buffer as bin, any other Uint8Array as msgpackr's typed-array extension (`t`, type 1);
 * - undefined as fixext 1 type 0 (`d4 00 00`).
 */
import { crc32, FRAME_HEADER_SIZE, FRAME_MAGIC, MAX_RECORD_BYTES } from './tape-codec.ts';
import { RECORD_FIELDS } from './record-order.ts';
import { isFrozenHeaders } from './frozen-headers.ts';
import { prototypeLends } from './inherited-names.ts';

/** Nesting deeper than this is left to the general writer. */
const MAX_DEPTH = 500;

const RANK = new Map(RECORD_FIELDS.map((f, i) => [f, i]));
const rankOf = (k: string): number => RANK.get(k) ?? RECORD_FIELDS.length;

/**
 * UTF-8 of `s` from unit `i` on, written at `p` (msgpackr's own loop: a lone surrogate as its
 * 3-byte form); the end, or -1 at a lone surrogate when `stopAtLone`.
 */
function utf8Rest(b: Uint8Array, s: string, i: number, p: number, stopAtLone: boolean): number {
  for (; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) b[p++] = c;
    else if (c < 0x800) {
      b[p++] = (c >> 6) | 0xc0;
      b[p++] = (c & 0x3f) | 0x80;
    } else {
      const d = (c & 0xfc00) === 0xd800 ? s.charCodeAt(i + 1) : 0;
      if ((d & 0xfc00) === 0xdc00) {
        c = 0x10000 + ((c & 0x03ff) << 10) + (d & 0x03ff);
        i++;
        b[p++] = (c >> 18) | 0xf0;
        b[p++] = ((c >> 12) & 0x3f) | 0x80;
        b[p++] = ((c >> 6) & 0x3f) | 0x80;
        b[p++] = (c & 0x3f) | 0x80;
      } else {
        if (stopAtLone && (c & 0xf800) === 0xd800) return -1;
        b[p++] = (c >> 12) | 0xe0;
        b[p++] = ((c >> 6) & 0x3f) | 0x80;
        b[p++] = (c & 0x3f) | 0x80;
      }
    }
  }
  return p;
}

/** Thrown inside the writer for a value it does not write; caught in addPlain. */
const DECLINE = new Error('not plain data');

/** Whether a name is an array index, which an object lists before its other names, in numeric order. */
const isIndex = (k: string): boolean => {
  const c = k.charCodeAt(0);
  return c >= 48 && c <= 57 && /^(?:0|[1-9]\d*)$/.test(k) && Number(k) < 4294967295;
};

/**
 * How an object of one list of names is written: the names as for-in lists them (the same
 * strings, compared by identity first), the order they are written in (`order[j]`: where the
 * j-th written name is listed) and their msgpack bytes back to back (`ends[j]`: where the j-th
 * ends). Objects of one shape (a record's request and response, its messages, a HAR's header
 * maps) repeat from record to record: their names are sorted and encoded once.
 */
interface Shape {
  names: string[];
  order: number[];
  bytes: Uint8Array;
  ends: number[];
  /** The next shape whose first name is the same. */
  next: Shape | undefined;
}

/** Shapes kept per first name, first names kept, and names of a shape kept (names come from the traffic: bounded). */
const SHAPES_PER_NAME = 8;
const SHAPE_NAMES = 4096;
const SHAPE_SIZE = 64;

/**
 * Frames of plain records, back to back in one growing buffer, ready to append to a tape.
 *
 * @example
 * const frames = new FrameBuffer()
 * if (!frames.addPlain(record)) frames.addFrame(recordFrame(inRecordOrder(sortedKeys(record)), 0, file))
 * await appendFrames(file, [frames.take()])
 */
export class FrameBuffer {
  /** Buffer's own UTF-8 writer where there is one (what msgpackr calls; `write` checks its arguments first). */
  private buf: Buffer & { utf8Write?: (s: string, at: number, max: number) => number };
  private view: DataView;
  private pos = 0;

  constructor(size = 1 << 20) {
    this.buf = Buffer.allocUnsafeSlow(size);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** Bytes held. */
  get size(): number {
    return this.pos;
  }

  /** The frames held, and starts over: a view, valid until the next frame is added. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.pos);
    this.pos = 0;
    return out;
  }

  /** Appends a frame made elsewhere (recordFrame). */
  addFrame(frame: Uint8Array): void {
    this.room(frame.length);
    this.buf.set(frame, this.pos);
    this.pos += frame.length;
  }

  /**
   * Appends the frame of a plain record (see the module comment); false, with nothing
   * appended, when the record holds something else or its payload is over the record limit.
   * `repeated`: an object of the record that the next records are likely to hold too (the same
   * object: an importer's header map shared by the entries that list the same headers); when it
   * cannot change (frozen, its values strings or frozen arrays of strings), its bytes are written
   * once and copied while it repeats.
   */
  addPlain(record: Record<string, unknown>, repeated?: object): boolean {
    if (repeated !== this.repeated) this.repeat(repeated);
    const start = this.pos;
    this.room(FRAME_HEADER_SIZE + 64);
    this.pos = start + FRAME_HEADER_SIZE;
    try {
      this.record(record);
    } catch (e) {
      this.pos = start;
      if (e === DECLINE) return false;
      throw e;
    }
    const length = this.pos - start - FRAME_HEADER_SIZE;
    if (length > MAX_RECORD_BYTES) {
      this.pos = start;
      return false;
    }
    this.buf.set(FRAME_MAGIC, start);
    this.view.setUint32(start + 4, length);
    // A plain view of the payload (Buffer#subarray makes a Buffer through its species: slower).
    this.view.setUint32(start + 8, crc32(new Uint8Array(this.buf.buffer, this.buf.byteOffset + start + FRAME_HEADER_SIZE, length)));
    return true;
  }

  /** The object whose bytes are kept ({@link addPlain}'s `repeated`), and its bytes once written. */
  private repeated: object | undefined;
  private repeatedBytes: Uint8Array | undefined;

  /** Takes `o` as the repeated object if it cannot change. */
  private repeat(o: object | undefined): void {
    this.repeatedBytes = undefined;
    this.repeated = isFrozenHeaders(o) ? o : undefined;
  }

  /** Makes room for `n` more bytes. */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }

  /**
   * Names and values of the objects being written, as for-in lists them (an object's from
   * `top` on, its members' above it while they are written): no Object.keys and Object.values
   * arrays per object.
   */
  private names: string[] = [];
  private vals: unknown[] = [];
  private top = 0;

  /** Lists an object's names and values at `top`; how many. */
  private list(o: Record<string, unknown>): number {
    const names = this.names;
    const vals = this.vals;
    const from = this.top;
    let i = from;
    for (const k in o) {
      names[i] = k;
      vals[i] = o[k];
      i++;
    }
    return i - from;
  }

  /** The record's own fields in RECORD_FIELDS order, then any others sorted. */
  private record(r: Record<string, unknown>): void {
    if (Object.getPrototypeOf(r) !== Object.prototype) throw DECLINE;
    // for-in lists what Object.prototype lends too: nothing, unless a member was added to it.
    if (prototypeLends()) throw DECLINE;
    this.top = 0;
    const n = this.list(r);
    let s = this.recordShape;
    if (s === undefined || !this.listed(s, 0, n)) s = this.recordShape = this.shape(0, n, true);
    this.members(s, 0, 0);
  }

  /** The last record's shape: a writer's records mostly share it. */
  private recordShape: Shape | undefined;

  /** Shapes of nested objects by their first listed name. */
  private shapes = new Map<string, Shape>();

  /** A plain object (not the record), its members in name order. */
  private object(o: Record<string, unknown>, depth: number): void {
    const from = this.top;
    const n = this.list(o);
    if (n === 0) return this.head(0);
    const first = this.names[from]!;
    const head = this.shapes.get(first);
    let s = head;
    let chain = 0;
    while (s !== undefined && !this.listed(s, from, n)) {
      s = s.next;
      chain++;
    }
    if (s === undefined) {
      s = this.shape(from, n, false);
      if (n <= SHAPE_SIZE && (head !== undefined || this.shapes.size < SHAPE_NAMES)) {
        // The newest first; the oldest dropped from a long chain.
        s.next = head;
        if (chain >= SHAPES_PER_NAME) {
          let t = head!;
          for (let i = 2; i < SHAPES_PER_NAME; i++) t = t.next!;
          t.next = undefined;
        }
        this.shapes.set(first, s);
      }
    }
    this.members(s, from, depth);
  }

  /** Whether the names listed at `from` (`n` of them) are a shape's. */
  private listed(s: Shape, from: number, n: number): boolean {
    const a = s.names;
    if (a.length !== n) return false;
    const names = this.names;
    for (let i = 0; i < n; i++) if (a[i] !== names[from + i]) return false;
    return true;
  }

  /**
   * The shape of the names listed at `from`: a record's in RECORD_FIELDS order then sorted, an
   * object's array-index names first as listed (in numeric order already), then the others
   * sorted by UTF-16 code units (Array#sort's order for strings: a sorted copy's order).
   */
  private shape(from: number, n: number, record: boolean): Shape {
    const names = this.names.slice(from, from + n);
    const order = names.map((_, i) => i);
    if (record) {
      if (n > 0 && isIndex(names[0]!)) throw DECLINE;
      const ranks = names.map(rankOf);
      order.sort((a, b) => ranks[a]! - ranks[b]! || (names[a]! < names[b]! ? -1 : 1));
    } else {
      let f = 0;
      while (f < n && isIndex(names[f]!)) f++;
      const rest = order.slice(f).sort((a, b) => (names[a]! < names[b]! ? -1 : 1));
      for (let j = f; j < n; j++) order[j] = rest[j - f]!;
    }
    // The names' bytes as string() writes them, written where the object goes and copied out.
    const start = this.pos;
    const ends: number[] = [];
    for (let j = 0; j < n; j++) {
      this.string(names[order[j]!]!);
      ends.push(this.pos - start);
    }
    // A copy (Buffer#slice is a view).
    const bytes = new Uint8Array(this.buf.subarray(start, this.pos));
    this.pos = start;
    return { names, order, bytes, ends, next: undefined };
  }

  /** An object's head, then its names (the shape's bytes) and values (listed at `from`) in the shape's order. */
  private members(s: Shape, from: number, depth: number): void {
    const { order, bytes, ends } = s;
    const n = order.length;
    this.head(n);
    // Its members are listed above it.
    this.top = from + n;
    let q = 0;
    for (let j = 0; j < n; j++) {
      const end = ends[j]!;
      this.room(end - q);
      const b = this.buf;
      let p = this.pos;
      while (q < end) b[p++] = bytes[q++]!;
      this.pos = p;
      this.value(this.vals[from + order[j]!], depth + 1);
    }
    this.top = from;
  }

  /** A map's head for `n` members. */
  private head(n: number): void {
    this.room(5);
    if (n < 0x10) this.buf[this.pos++] = 0x80 | n;
    else if (n < 0x10000) {
      this.buf[this.pos++] = 0xde;
      this.buf[this.pos++] = n >> 8;
      this.buf[this.pos++] = n & 0xff;
    } else {
      this.buf[this.pos++] = 0xdf;
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
  }

  private value(v: unknown, depth: number): void {
    switch (typeof v) {
      case 'string':
        return this.string(v);
      case 'number':
        return this.number(v);
      case 'boolean':
        this.room(1);
        this.buf[this.pos++] = v ? 0xc3 : 0xc2;
        return;
      case 'undefined':
        this.room(3);
        this.buf[this.pos++] = 0xd4;
        this.buf[this.pos++] = 0;
        this.buf[this.pos++] = 0;
        return;
      case 'object':
        break;
      default:
        throw DECLINE;
    }
    if (v === null) {
      this.room(1);
      this.buf[this.pos++] = 0xc0;
      return;
    }
    if (depth > MAX_DEPTH) throw DECLINE;
    if (v === this.repeated) return this.repeatedObject(v as Record<string, unknown>, depth);
    const c = (v as object).constructor;
    if (c === Object) {
      if (Object.getPrototypeOf(v) !== Object.prototype) throw DECLINE;
      return this.object(v as Record<string, unknown>, depth);
    }
    if (c === Array) {
      const a = v as unknown[];
      const n = a.length;
      this.room(5);
      if (n < 0x10) this.buf[this.pos++] = 0x90 | n;
      else if (n < 0x10000) {
        this.buf[this.pos++] = 0xdc;
        this.buf[this.pos++] = n >> 8;
        this.buf[this.pos++] = n & 0xff;
      } else {
        this.buf[this.pos++] = 0xdd;
        this.view.setUint32(this.pos, n);
        this.pos += 4;
      }
      for (let i = 0; i < n; i++) this.value(a[i], depth + 1);
      return;
    }
    if (c === Buffer) return this.bin(v as Buffer);
    if (c === Uint8Array) return this.typedArray(v as Uint8Array);
    throw DECLINE;
  }

  /** The repeated object: its kept bytes, or written and kept. */
  private repeatedObject(o: Record<string, unknown>, depth: number): void {
    const kept = this.repeatedBytes;
    if (kept !== undefined) {
      this.room(kept.length);
      this.buf.set(kept, this.pos);
      this.pos += kept.length;
      return;
    }
    const start = this.pos;
    this.repeated = undefined;
    this.value(o, depth);
    this.repeated = o;
    this.repeatedBytes = new Uint8Array(this.buf.subarray(start, this.pos));
  }

  private number(v: number): void {
    this.room(9);
    const b = this.buf;
    if (v >>> 0 === v) {
      if (v < 0x80) b[this.pos++] = v;
      else if (v < 0x100) {
        b[this.pos++] = 0xcc;
        b[this.pos++] = v;
      } else if (v < 0x10000) {
        b[this.pos++] = 0xcd;
        b[this.pos++] = v >> 8;
        b[this.pos++] = v & 0xff;
      } else {
        b[this.pos++] = 0xce;
        this.view.setUint32(this.pos, v);
        this.pos += 4;
      }
    } else if (v >> 0 === v) {
      if (v >= -0x20) b[this.pos++] = 0x100 + v;
      else if (v >= -0x80) {
        b[this.pos++] = 0xd0;
        b[this.pos++] = v + 0x100;
      } else if (v >= -0x8000) {
        b[this.pos++] = 0xd1;
        this.view.setInt16(this.pos, v);
        this.pos += 2;
      } else {
        b[this.pos++] = 0xd2;
        this.view.setInt32(this.pos, v);
        this.pos += 4;
      }
    } else {
      b[this.pos++] = 0xcb;
      this.view.setFloat64(this.pos, v);
      this.pos += 8;
    }
  }

  private string(s: string): void {
    const n = s.length;
    // Room for the header the text's length takes, as msgpackr reserves it; UTF-8 can be longer
    // than the UTF-16 length, so the text is moved on when its real length needs a larger header
    // (only non-ASCII text can).
    const max = n * 3;
    this.room(max + 5);
    const b = this.buf;
    const head = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    const at = this.pos + head;
    // Well-formed text from 16 units on goes to Buffer's encoder (whose UTF-8 is msgpackr's for
    // well-formed text; ~50 ns a string against ~100 for this loop on the 16-100-unit header
    // values and hex digests of a record). Shorter text, and text with a lone surrogate up to
    // 255 units, is encoded here, ASCII first; from 64 units on a lone surrogate goes to
    // Buffer's encoder (U+FFFD), as msgpackr sends it.
    let len = -1;
    if (n >= 16 && s.isWellFormed()) len = b.utf8Write ? b.utf8Write(s, at, max) : b.write(s, at, max, 'utf8');
    else if (n < 0x100) {
      let p = at;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[p++] = c;
      }
      if (i < n) p = utf8Rest(b, s, i, p, n >= 0x40);
      if (p >= 0) len = p - at;
    }
    if (len < 0) len = b.utf8Write ? b.utf8Write(s, at, max) : b.write(s, at, max, 'utf8');
    const need = len < 0x20 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : 5;
    if (need !== head) b.copyWithin(this.pos + need, at, at + len);
    let p = this.pos;
    if (need === 1) b[p++] = 0xa0 | len;
    else if (need === 2) {
      b[p++] = 0xd9;
      b[p++] = len;
    } else if (need === 3) {
      b[p++] = 0xda;
      b[p++] = len >> 8;
      b[p++] = len & 0xff;
    } else {
      b[p++] = 0xdb;
      this.view.setUint32(p, len);
      p += 4;
    }
    this.pos = p + len;
  }

  /**
   * A msgpack length head of the 8 / 16 / 32-bit family whose 8-bit code is `code8` (bin: 0xc4,
   * ext: 0xc7; the 16- and 32-bit codes follow it), for length `n`; room already made.
   */
  private sized(code8: number, n: number): void {
    const b = this.buf;
    if (n < 0x100) {
      b[this.pos++] = code8;
      b[this.pos++] = n;
    } else if (n < 0x10000) {
      b[this.pos++] = code8 + 1;
      b[this.pos++] = n >> 8;
      b[this.pos++] = n & 0xff;
    } else {
      b[this.pos++] = code8 + 2;
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
  }

  private bin(v: Uint8Array): void {
    const n = v.length;
    this.room(n + 5);
    this.sized(0xc4, n);
    this.buf.set(v, this.pos);
    this.pos += n;
  }

  /** msgpackr's typed-array extension: ext 8 / 16 / 32, type `t`, the array kind (1: Uint8Array), the bytes. */
  private typedArray(v: Uint8Array): void {
    const n = v.length + 1;
    this.room(n + 6);
    this.sized(0xc7, n);
    const b = this.buf;
    b[this.pos++] = 0x74;
    b[this.pos++] = 1;
    b.set(v, this.pos);
    this.pos += n - 1;
  }
}
