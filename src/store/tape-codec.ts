/**
 * Reading the tape format from bytes, with no Node built-ins: the header, the frames, their
 * CRC-32 and the msgpack payloads. The Node file layer (tape-file.ts: locking, appending,
 * rewriting) and the browser entry both read tapes through this one decoder, so a tape means
 * the same thing everywhere. The byte layout is specified in docs/tape-format.md.
 */
import { addExtension } from 'msgpackr/unpack';
import { ProtoUnpackr } from './proto-unpackr.ts';
import { convertedLineEndings, convertedTape, framesReadWithoutAddedCRs, headerReadsWithoutAddedCRs, type FrameCodec } from './line-endings.ts';
import { keptSalt } from './tape-header-salt.ts';
import { notATape } from './not-a-tape.ts';
import { TapedeckError } from '../errors.ts';
import { VERSION } from '../version.ts';

// ---------------------------------------------------------------------------------------------
// Layout constants (docs/tape-format.md). All integers are big-endian (msgpack's byte order).
// ---------------------------------------------------------------------------------------------

/**
 * File magic. 0x89 (high bit set) catches 7-bit transfers; CR LF catches line-ending conversion;
 * 0x1A stops `type` on Windows. Same trick as PNG.
 */
export const TAPE_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x89, 0x54, 0x41, 0x50, 0x45, 0x0d, 0x0a, 0x1a); // \x89TAPE\r\n\x1a
/** The format version this module writes and the highest it reads. */
export const TAPE_FORMAT_VERSION = 1;
/** magic(8) + version u16 + metadata length u32 + metadata CRC-32 u32. */
export const HEADER_FIXED = 18;
/**
 * Frame magic. 0xC1 is the one byte msgpack never uses as a type, so a frame start cannot be
 * mistaken for the first byte of a payload; the CRC rules out the rest.
 */
export const FRAME_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0xc1, 0x54, 0x44, 0x52); // \xC1TDR
/** magic(4) + payload length u32 + payload CRC-32 u32. */
export const FRAME_HEADER_SIZE = 12;
/** Largest payload accepted (256 MiB); a larger declared length is treated as damage. */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;
/** Whether a header's `salt` is a redaction salt: 32 lowercase hex digits. */
export const isRedactionSalt = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{32}$/.test(v);

/** Largest header metadata map accepted (1 MiB). */
export const MAX_META_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/** The tape header: the binary format version plus the decoded metadata map. */
export interface TapeHeader {
  formatVersion: number;
  created: string;
  tapedeckVersion: string;
  /**
   * The redaction salt (32 hex digits): masked values that are not credentials are stored as
   * HMACs under it (src/store/redact.ts). Absent in tapes made before salts existed.
   */
  salt?: string;
  /** True when the header was damaged or missing (then `created` and `tapedeckVersion` are ''). */
  headerLost?: boolean;
  [k: string]: unknown;
}

/**
 * One record as read back. `offset` is the byte offset of the frame (its magic) in the file and
 * `length` the whole frame's size (12-byte frame header + payload), so `offset + length` is where
 * the next frame starts; `value` is the msgpack-decoded payload.
 */
export interface TapeRecordEntry {
  offset: number;
  length: number;
  value: unknown;
}

/** Damage that reading survived. `offset` is the byte where the damaged region starts. */
export interface TapeWarning {
  code: 'E_TAPE_TORN_TAIL' | 'E_TAPE_CORRUPT' | (string & {});
  offset: number;
  message: string;
}

/**
 * A warning's message without the file name it starts with, for output that names the file
 * already (an export's `warnings`, a scan's line about the damage).
 *
 * @example
 * warningText({ code: 'E_TAPE_CORRUPT', offset: 9, message: 'a.tape: 3 damaged bytes …' }, 'a.tape') // '3 damaged bytes …'
 */
export function warningText(w: TapeWarning, file: string): string {
  return w.message.startsWith(`${file}: `) ? w.message.slice(file.length + 2) : w.message;
}

/**
 * What readTape returns: the header, every intact record in order, and warnings for the damage it
 * read past.
 */
export interface TapeContents {
  header: TapeHeader;
  records: TapeRecordEntry[];
  warnings: TapeWarning[];
  /** File size in bytes at the time it was read. */
  size: number;
}

// ---------------------------------------------------------------------------------------------
// msgpack
// ---------------------------------------------------------------------------------------------

/**
 * msgpackr options, chosen for lossless and deterministic plain data:
 * - `useRecords: false`: objects are ordinary msgpack maps, readable by any msgpack decoder, and
 *   no record structures carry state from one pack call to the next (which would make bytes
 *   depend on what was written before).
 * - `moreTypes: true`: Date, Set, Error, RegExp, typed arrays and bigint keep their types.
 * - `structuredClone: false`: no shared/cyclic references; equal sub-values encode the same
 *   wherever they appear.
 * - `int64AsType: 'bigint'`: an int64 on the wire (we only write one for a bigint) decodes to a
 *   bigint instead of a possibly-rounded number.
 * - `variableMapSize: true`: smallest map header for the key count, and maps beyond 65 535 keys.
 *
 * What does NOT round-trip exactly (by msgpackr's design):
 * - `-0` is written as integer 0.
 * - An Error keeps `name`, `message` and `cause` only: no `stack`, no own properties such as
 *   `code`, and subclasses come back as the built-in with that name (or `Error`).
 * - Class instances other than the types above come back as plain objects of their own
 *   enumerable properties; functions and symbols are dropped (like JSON).
 * - Sparse array holes come back as `undefined`.
 */
export const MSGPACK_OPTIONS = {
  useRecords: false,
  moreTypes: true,
  structuredClone: false,
  int64AsType: 'bigint',
  variableMapSize: true,
} as const;

/** The msgpack extension type of a boxed `Map` (tape-file.ts writes it; see TapeMapBox there). */
export const MAP_EXTENSION_TYPE = 0x4d;

/** Rebuilds a Map from its boxed `[key, value]` pairs. */
export function readMapBox(entries: unknown): Map<unknown, unknown> {
  return new Map(Array.isArray(entries) ? (entries as [unknown, unknown][]) : []);
}
addExtension({ type: MAP_EXTENSION_TYPE, read: readMapBox });

// A member named `__proto__` decodes as one (proto-unpackr.ts), not renamed `__proto_`.
const unpackr = new ProtoUnpackr(MSGPACK_OPTIONS);
// For payloads in a buffer that is read over again (tape-stream.ts's window): byte strings are
// copied out of it rather than handed out as views of it, so that decoded values outlive the
// window. Strings, numbers and typed arrays are copies with either decoder.
const copyingUnpackr = new ProtoUnpackr({ ...MSGPACK_OPTIONS, copyBuffers: true });

// ---------------------------------------------------------------------------------------------
// CRC-32 (ISO-HDLC, as zlib and PNG): node:zlib's native one where there is one, else a table.
// ---------------------------------------------------------------------------------------------

let crcTable: Uint32Array | undefined;

/** CRC-32 in plain JavaScript (one table lookup per byte); the reference the native one must match. */
export function crc32Js(data: Uint8Array): number {
  const t = (crcTable ??= (() => {
    const out = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      out[n] = c >>> 0;
    }
    return out;
  })());
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// Looked up, not imported: this module must load where there is no node:zlib (browsers).
const nativeCrc32 = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:zlib') as
  | { crc32?: (data: Uint8Array) => number }
  | undefined;

/** CRC-32 of the bytes: native on Node (several times faster on large payloads), else {@link crc32Js}. */
export const crc32: (data: Uint8Array) => number = typeof nativeCrc32?.crc32 === 'function' ? nativeCrc32.crc32 : crc32Js;

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

function corruptHeader(file: string, offset: number, what: string): TapedeckError {
  return new TapedeckError('E_TAPE_CORRUPT', `${file} is not a readable tape: ${what} (byte ${offset}).`, {
    file,
    offset,
    // What failed, on its own: a lost header in front of records is reported in other words.
    what,
    // Recording onto it is refused too (it is never replaced): to record, it goes out of the way first.
    hint: 'The header is damaged or this is not a tapedeck tape; restore it from version control, or move it away (mv it to another name: it is never replaced) and record again.',
  });
}

/**
 * How many bytes from the start parseHeader reads of a header whose fixed part (HEADER_FIXED
 * bytes) is `fixed`: the fixed part and the metadata its length field declares, at most
 * MAX_META_BYTES of it (parseHeader refuses more, whatever follows). For readers that take a
 * file in parts (tape-stream.ts, scanTape's checkArrived).
 */
export function headerSpan(fixed: Uint8Array): number {
  return HEADER_FIXED + Math.min(new DataView(fixed.buffer, fixed.byteOffset, fixed.byteLength).getUint32(10), MAX_META_BYTES);
}

/** Parse and check the header; returns it and where the first frame starts. */
export function parseHeader(buf: Uint8Array, file: string): { header: TapeHeader; end: number } {
  const converted = convertedLineEndings(buf);
  if (converted) throw convertedTape(file, converted);
  if (buf[0] !== TAPE_MAGIC[0]) {
    const other = notATape(buf, file);
    if (other) throw other;
  }
  if (buf.length < HEADER_FIXED) throw corruptHeader(file, 0, `only ${buf.length} bytes, a header needs at least ${HEADER_FIXED}`);
  for (let i = 0; i < TAPE_MAGIC.length; i++) {
    if (buf[i] !== TAPE_MAGIC[i]) throw corruptHeader(file, i, 'wrong magic bytes');
  }
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const version = view.getUint16(8);
  if (version === 0) throw corruptHeader(file, 8, 'format version 0 (no such version: the field is damaged)');
  const metaLen = view.getUint32(10);
  if (metaLen > MAX_META_BYTES || HEADER_FIXED + metaLen > buf.length) {
    throw corruptHeader(file, 10, `metadata length ${metaLen} runs past the end of the file or the ${MAX_META_BYTES}-byte limit`);
  }
  const metaBytes = buf.subarray(HEADER_FIXED, HEADER_FIXED + metaLen);
  if (crc32(metaBytes) !== view.getUint32(14)) throw corruptHeader(file, 14, 'metadata CRC-32 mismatch');
  let meta: unknown;
  try {
    meta = unpackr.unpack(metaBytes);
  } catch {
    throw corruptHeader(file, HEADER_FIXED, 'metadata is not valid msgpack');
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw corruptHeader(file, HEADER_FIXED, 'metadata is not a map');
  const m = meta as Record<string, unknown>;
  if (typeof m.created !== 'string' || typeof m.tapedeckVersion !== 'string') {
    throw corruptHeader(file, HEADER_FIXED, 'metadata lacks `created` or `tapedeckVersion`');
  }
  if (version > TAPE_FORMAT_VERSION) {
    // The version field is outside the metadata CRC. A tape written by this tapedeck or an
    // older one cannot have a newer format: then the field is damaged, not the reader too old.
    if (!newerThanUs(m.tapedeckVersion)) throw corruptHeader(file, 8, `format version ${version} from tapedeck ${m.tapedeckVersion}, which writes version ${TAPE_FORMAT_VERSION} (the field is damaged)`);
    throw new TapedeckError('E_TAPE_VERSION', `${file} has tape format version ${version}; this tapedeck reads up to ${TAPE_FORMAT_VERSION}.`, {
      file,
      offset: 8,
      hint: `It was written by tapedeck ${m.tapedeckVersion}; upgrade tapedeck to read this tape.`,
    });
  }
  return {
    header: { ...m, formatVersion: version, created: m.created, tapedeckVersion: m.tapedeckVersion },
    end: HEADER_FIXED + metaLen,
  };
}

/** Whether a `tapedeckVersion` (major.minor.patch) is newer than this package. */
function newerThanUs(v: string): boolean {
  const a = v.split(/[.+-]/).slice(0, 3).map(Number);
  const b = VERSION.split(/[.+-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (!Number.isFinite(x)) return true; // unparseable: assume a newer writer, do not guess
    if (x !== y) return x > y;
  }
  return false;
}

/**
 * The header of a tape whose own header was lost (a 0-byte file, or header bytes that fail their
 * checks): its metadata is gone, the records behind it are not. A rewrite gives it a fresh one.
 */
function lostHeader(): TapeHeader {
  return { formatVersion: TAPE_FORMAT_VERSION, created: '', tapedeckVersion: '', headerLost: true };
}

/**
 * The header, or what remains when it is damaged. Records carry their own CRCs, so a damaged
 * header costs only its metadata: the records are found by the same resynchronization as damage
 * anywhere else. Only a file that is neither a tape header nor holds any record frame (some
 * other file at the tape path) is refused. A 0-byte file, or a tape's magic with a header cut
 * short and nothing after it (a crash between create and header write, a full disk), is an
 * empty tape.
 */
function readHeader(buf: Uint8Array, file: string): { header: TapeHeader; end: number; warning?: TapeWarning } {
  if (buf.length === 0) {
    return {
      header: lostHeader(),
      end: 0,
      warning: { code: 'E_TAPE_EMPTY', offset: 0, message: `${file} is empty (0 bytes: a crash before its header was written, or a full disk); read as a tape with no records, and the next append writes its header.` },
    };
  }
  try {
    return parseHeader(buf, file);
  } catch (e) {
    if (!(e instanceof TapedeckError && e.code === 'E_TAPE_CORRUPT')) throw e;
    // Not a damaged header to read past: the whole tape was changed (see convertedTape).
    if (e.details.converted) throw e;
    if (headerReadsWithoutAddedCRs(buf, file, CODEC)) throw convertedTape(file, 'LF to CRLF', HEADER_FIXED);
    const first = nextValidFrame(buf, 0);
    let magic = buf.length >= TAPE_MAGIC.length;
    for (let i = 0; magic && i < TAPE_MAGIC.length; i++) magic = buf[i] === TAPE_MAGIC[i];
    if (first < 0 && !magic) throw e;
    const end = first < 0 ? buf.length : first;
    const offset = typeof e.details.offset === 'number' ? e.details.offset : 0;
    // A salt that still reads whole is kept: the records' keyed masks were made under it.
    const kept = keptSalt(buf.subarray(0, end), e.details.what);
    return {
      header: kept ? { ...lostHeader(), salt: kept.salt } : lostHeader(),
      end,
      warning: {
        code: 'E_TAPE_HEADER',
        offset,
        // Not "not a tapedeck tape": the tape magic, or a record frame behind it, says it is one.
        message: `${file}: the header is damaged (byte ${offset}: ${String(e.details.what ?? e.message)}); its metadata is lost${first < 0 ? ' and no record follows it' : `, records are read from byte ${first}`}${kept?.note ?? ''}. \`tapedeck prune ${file}\` writes a fresh header${first < 0 ? '' : ' and keeps every record'}.`,
      },
    };
  }
}

/** Why the bytes at a position are not a sound frame. `torn`: the first bytes of a frame cut off by EOF. */
export interface FrameFault {
  torn: boolean;
  why: string;
}

/**
 * Checks the frame at `pos` (magic, length, CRC) without decoding it: its length when sound, else
 * what is wrong. A number on success, so opening a large tape makes no object per frame. Internal
 * (src/store/tape-stream.ts checks frames in a window of the file with it).
 */
export function checkFrame(buf: Uint8Array, pos: number, view: DataView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)): number | FrameFault {
  const remaining = buf.length - pos;
  const magicBytes = Math.min(remaining, FRAME_MAGIC.length);
  for (let i = 0; i < magicBytes; i++) {
    if (buf[pos + i] !== FRAME_MAGIC[i]) return { torn: false, why: 'no frame magic' };
  }
  if (remaining < FRAME_HEADER_SIZE) return { torn: true, why: `frame header cut off after ${remaining} bytes` };
  const len = view.getUint32(pos + 4);
  if (len > MAX_RECORD_BYTES) return { torn: false, why: `declared length ${len} exceeds the ${MAX_RECORD_BYTES}-byte limit` };
  if (FRAME_HEADER_SIZE + len > remaining) {
    return { torn: true, why: `declared length ${len} runs past the end of the file (${remaining - FRAME_HEADER_SIZE} payload bytes present)` };
  }
  // A plain view, not subarray(): on a Buffer that makes a Buffer per frame (100,000 frames of
  // ~1 KB, view and CRC: 66-88 ms against 84-91 ms with subarray, one process).
  if (crc32(new Uint8Array(buf.buffer, buf.byteOffset + pos + FRAME_HEADER_SIZE, len)) !== view.getUint32(pos + 8)) return { torn: false, why: 'payload CRC-32 mismatch' };
  return FRAME_HEADER_SIZE + len;
}

/**
 * Where a tape read from its start stands while it is still arriving: the header once its bytes
 * are in, the sound frames checked so far and where the next one starts, and whether everything
 * so far has been sound. Internal: scanTape (tape-file.ts) checks frames as the file arrives.
 */
export interface ArrivedCheck {
  header?: TapeHeader;
  /** The first byte not yet checked (the next frame's start). */
  pos: number;
  /** Frames as parseTape(…, false) lists them. */
  frames: TapeRecordEntry[];
  /** False from the first header or frame fault on: the whole-file parser has the last word. */
  sound: boolean;
}

/**
 * Checks what has arrived of a tape (`prefix`, the file's first bytes; `final` when that is all
 * of it): the header once it is whole, then every frame that lies wholly in it, as parseTape
 * checks them (a frame's check reads only its own bytes, so a sound frame is sound in the prefix
 * as in the file). A frame cut by the end of the prefix waits for more bytes. At the first fault
 * it stops and says so (`sound: false`): the caller parses the whole file, which reports the
 * damage in readTape's words.
 */
export function checkArrived(prefix: Uint8Array, file: string, at: ArrivedCheck, final: boolean): void {
  if (!at.sound) return;
  if (at.header === undefined) {
    // The header waits for all of its bytes; a file that ends first goes to the whole-file parser.
    if (prefix.length < HEADER_FIXED || prefix.length < headerSpan(prefix)) {
      if (final) at.sound = false;
      return;
    }
    try {
      const h = parseHeader(prefix, file);
      at.header = h.header;
      at.pos = h.end;
    } catch {
      return void (at.sound = false);
    }
  }
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  let pos = at.pos;
  while (pos < prefix.length) {
    const c = checkFrame(prefix, pos, view);
    if (typeof c !== 'number') {
      if (!(c.torn && !final)) at.sound = false;
      break;
    }
    at.frames.push({ offset: pos, length: c, value: undefined });
    pos += c;
  }
  at.pos = pos;
}

/** The first offset at or after `from` where a complete, CRC-valid frame starts, or -1. */
function nextValidFrame(buf: Uint8Array, from: number): number {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let at = magicFrom(buf, from); at >= 0; at = magicFrom(buf, at + 1)) {
    if (typeof checkFrame(buf, at, view) === 'number') return at;
  }
  return -1;
}

/**
 * Where frames start in a damaged region (`region`: its bytes alone; offsets into it), so a
 * reader that numbers records can count the ones the damage took and keep the numbers of those
 * after it. `atFrame`: the region starts where a frame was expected (damage found by the frame
 * walk, an undecodable frame, a torn tail), so its first byte starts one whatever it holds; a
 * damaged header's region is searched for frame magic from its start. From each start, the next
 * is where the frame's declared length leads when a frame magic is there, else the next frame
 * magic: an estimate (a frame whose magic was hit is counted with the one before it), exact for
 * damage inside a frame, the usual case.
 *
 * @example
 * damagedFrameStarts(bytes.subarray(1265, 2486), true) // [0]: one record's frame
 */
export function damagedFrameStarts(region: Uint8Array, atFrame: boolean): number[] {
  const starts: number[] = [];
  const view = new DataView(region.buffer, region.byteOffset, region.byteLength);
  let p = atFrame ? 0 : magicFrom(region, 0);
  while (p >= 0 && p < region.length) {
    starts.push(p);
    let from = p + 1;
    if (hasFrameMagic(region, p) && p + FRAME_HEADER_SIZE <= region.length) {
      const next = p + FRAME_HEADER_SIZE + view.getUint32(p + 4);
      if (next === region.length) break;
      // Checked for magic rather than taken on trust: the length field may be the damaged byte.
      if (next < region.length && hasFrameMagic(region, next)) from = next;
    }
    p = from === p + 1 ? magicFrom(region, from) : from;
  }
  return starts;
}

function hasFrameMagic(buf: Uint8Array, at: number): boolean {
  if (at + FRAME_MAGIC.length > buf.length) return false;
  for (let i = 0; i < FRAME_MAGIC.length; i++) if (buf[at + i] !== FRAME_MAGIC[i]) return false;
  return true;
}

/** The first offset at or after `from` where the four bytes of a frame magic are, or -1 (the first byte found natively). */
function magicFrom(buf: Uint8Array, from: number): number {
  for (let at = buf.indexOf(FRAME_MAGIC[0]!, from); at >= 0; at = buf.indexOf(FRAME_MAGIC[0]!, at + 1)) {
    if (hasFrameMagic(buf, at)) return at;
  }
  return -1;
}

/**
 * Parse a whole tape image. Pure: shared by readTape, scanTape and rewriteTape. With
 * `decode: false` frames are only checked (magic, length, CRC) and `value` is left undefined:
 * a CRC that matches means the payload is exactly what was written, so decoding can wait until
 * someone asks for the value.
 */
export function parseTape(buf: Uint8Array, file: string, decode = true): TapeContents & { headerEnd: number } {
  const { header, end, warning } = readHeader(buf, file);
  const records: TapeRecordEntry[] = [];
  const warnings: TapeWarning[] = warning ? [warning] : [];
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = end;
  while (pos < buf.length) {
    const c = checkFrame(buf, pos, view);
    if (typeof c === 'number') {
      let value: unknown;
      if (decode) {
        const d = decodeOrWarn(buf, { offset: pos, length: c }, file);
        if ('warning' in d) {
          // The frame itself is sound (CRC matches), so skipping exactly this frame is safe.
          warnings.push(d.warning);
          pos += c;
          continue;
        }
        value = d.value;
      }
      records.push({ offset: pos, length: c, value });
      pos += c;
      continue;
    }
    const next = nextValidFrame(buf, pos + 1);
    // git's LF to CRLF, not damage: prune would drop every record it changed (see convertedTape).
    if (framesReadWithoutAddedCRs(buf, pos, next < 0 ? buf.length : next, CODEC)) throw convertedTape(file, 'LF to CRLF', pos);
    if (next < 0 && c.torn) {
      warnings.push({
        code: 'E_TAPE_TORN_TAIL',
        offset: pos,
        message: `${file}: the last ${buf.length - pos} bytes (from byte ${pos}) are an incomplete record, probably from a crash during an append; ignored (${c.why}).`,
      });
      break;
    }
    const stop = next < 0 ? buf.length : next;
    warnings.push({
      code: 'E_TAPE_CORRUPT',
      offset: pos,
      message: `${file}: ${stop - pos} damaged bytes at ${pos}..${stop - 1} skipped (${c.why}); reading resumed ${next < 0 ? 'nowhere: no valid record follows' : `at byte ${next}`}.`,
    });
    pos = stop;
  }
  return { header, records, warnings, size: buf.length, headerEnd: end };
}

/**
 * Decodes a frame whose CRC matched, or says why it cannot be: the warning readTape gives for
 * such a record, which it skips (only a buggy writer makes one).
 */
export function decodeOrWarn(buf: Uint8Array, frame: { offset: number; length: number }, file: string): { value: unknown } | { warning: TapeWarning } {
  return decodePayloadOrWarn(buf.subarray(frame.offset + FRAME_HEADER_SIZE, frame.offset + frame.length), frame.offset, file);
}

/**
 * Decodes one record payload on its own (a Redis store holds payloads without frames); throws
 * the decoder's own error when the bytes are not one msgpack value.
 *
 * @example
 * decodePayload(store.payload) // { v: 1, kind: 'http', key: '9f86…', … }
 */
export function decodePayload(payload: Uint8Array): unknown {
  return unpackr.unpack(payload);
}

/**
 * {@link decodeOrWarn} of a frame's payload on its own, the frame at `offset` in the file. With
 * `copy`, the value holds no view of `payload`'s memory (for a payload in a buffer that is read
 * over again).
 */
export function decodePayloadOrWarn(payload: Uint8Array, offset: number, file: string, copy = false): { value: unknown } | { warning: TapeWarning } {
  try {
    return { value: (copy ? copyingUnpackr : unpackr).unpack(payload) };
  } catch (e) {
    return { warning: { code: 'E_TAPE_CORRUPT', offset, message: `${file}: record at byte ${offset} skipped: payload is not decodable msgpack (${(e as Error).message}).` } };
  }
}

/**
 * Decodes one frame found by scanTape (tape-file.ts), or with `span` the msgpack value at those
 * bytes of it. Throws `E_TAPE_CORRUPT` (with the frame's offset) if that is not valid msgpack.
 *
 * @example
 * const value = decodeFrame(scan.bytes, scan.frames[0], 'chat.tape');
 */
export function decodeFrame(bytes: Uint8Array, frame: { offset: number; length: number }, file = '<tape>', span?: { start: number; end: number }): unknown {
  try {
    // `span`: one value of the payload on its own (tape-file.ts payloadMember()). Records are
    // packed without shared structures (MSGPACK_OPTIONS), so any value decodes by itself.
    return unpackr.unpack(span ? bytes.subarray(span.start, span.end) : bytes.subarray(frame.offset + FRAME_HEADER_SIZE, frame.offset + frame.length));
  } catch (e) {
    throw new TapedeckError('E_TAPE_CORRUPT', `${file}: record at byte ${frame.offset} is not decodable msgpack (${(e as Error).message}).`, {
      file,
      offset: frame.offset,
      hint: 'The frame checksum matched, so the writer produced bad data; remove the record with `tapedeck prune` or re-record.',
    });
  }
}

/** The frame and header readers line-endings.ts reads a converted tape back with. */
const CODEC: FrameCodec = {
  magic: TAPE_MAGIC,
  headerFixed: HEADER_FIXED,
  frameHeader: FRAME_HEADER_SIZE,
  maxRecord: MAX_RECORD_BYTES,
  hasFrameMagic,
  frameChecks: (b) => typeof checkFrame(b, 0) === 'number',
  headerSpan,
  parseHeader,
};
