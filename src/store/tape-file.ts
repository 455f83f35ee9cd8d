/**
 * The tape file format: an append-only file of msgpack records that users commit next to their
 * tests. The byte layout is specified in docs/tape-format.md; keep the two in step.
 *
 * Design goals, in priority order:
 * 1. Never lose a valid record: damage (a torn tail after a crash, a flipped bit, a bad merge)
 *    costs only the damaged record, because every record is framed with a magic, a length and a
 *    CRC-32, and the reader resynchronizes on the next frame that checks out.
 * 2. Many writers at once (test workers, proxies) never interleave: every append is one write in
 *    append mode under an exclusive lock file.
 * 3. Deterministic bytes: the same values in the same order, under the same `created`, give the
 *    same file, so tapes diff cleanly in review.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, fstatSync, fsync, ftruncateSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { link, mkdir, open, readFile, rename, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { addExtension, Packr } from 'msgpackr/pack';
import { TapedeckError } from '../errors.ts';
import { checkOptionsObject, describeArgument } from '../option-names.ts';
import { VERSION } from '../version.ts';
import { jsonOfMsgpack } from './msgpack-json.ts';
import { prepareUnregisteredWith, UnregisteredTapeValue, unregisteredValue } from './unregistered-type.ts';
import { MAX_STORED_NESTING } from './cycle.ts';
import { newRedactionSalt } from './salt.ts';
import { tapeIsDirectory, tapeReadOnly } from './tape-path-errors.ts';
import { nonTapeFile, refuseNonTapeFile, tapeTarget } from './tape-target.ts';
import { deadTapeTemps, importTempPath, isTapeTemp, removeDeadTapeTemps, rewriteTempPath } from './rewrite-temps.ts';
import {
  checkArrived,
  crc32,
  decodeFrame,
  FRAME_HEADER_SIZE,
  FRAME_MAGIC,
  HEADER_FIXED,
  headerSpan,
  isRedactionSalt,
  MAP_EXTENSION_TYPE,
  MAX_RECORD_BYTES,
  MSGPACK_OPTIONS,
  parseHeader,
  parseTape,
  readMapBox,
  TAPE_FORMAT_VERSION,
  TAPE_MAGIC,
  type ArrivedCheck,
  type TapeContents,
  type TapeHeader,
  type TapeRecordEntry,
  type TapeWarning,
} from './tape-codec.ts';

// The decoding half of the format lives in tape-codec.ts (no Node built-ins, shared with the
// browser); re-exported so this stays the one import for the Node file API.
export {
  decodeFrame,
  decodeOrWarn,
  FRAME_HEADER_SIZE,
  FRAME_MAGIC,
  MAP_EXTENSION_TYPE,
  MAX_RECORD_BYTES,
  TAPE_FORMAT_VERSION,
  TAPE_MAGIC,
  type TapeContents,
  type TapeHeader,
  type TapeRecordEntry,
  type TapeWarning,
} from './tape-codec.ts';

/** Options of appendRecords. */
/**
 * A tape lock held by a {@link withTapeLock} callback. Passed back as `lock` to appendRecords or
 * rewriteTapeFrames inside that callback, it makes them write under the held lock instead of
 * waiting for it (a check-then-append stays atomic).
 */
export interface HeldTapeLock {
  readonly lockFile: string;
  /** True while the callback runs; a handle kept after it is refused. */
  readonly held: boolean;
}

/** Lock timing, or the lock a {@link withTapeLock} callback holds (then nothing waits). */
export interface LockedCallOptions extends TapeLockOptions {
  /** The lock this call runs under, from {@link withTapeLock}'s callback. */
  lock?: HeldTapeLock;
}

export interface AppendOptions extends LockedCallOptions {
  /**
   * fsync before resolving (default true). Off trades crash safety of the last appends for
   * speed: for bulk imports and benchmarks, never for recording tests.
   */
  durable?: boolean;
  /**
   * The redaction salt the records' keyed masks were made under (`null`: none, plain masks).
   * Given, the append is refused with E_TAPE_CHANGED when the tape's header holds another: the
   * tape was replaced since its salt was read (another tape renamed over it), and records masked
   * under the old salt would never match in it. Left out, any tape header is appended to.
   */
  salt?: string | null;
}

/** Lock timing; the defaults suit test workers and local proxies. */
export interface TapeLockOptions {
  /** Give up with `E_TAPE_LOCKED` after waiting this long (default 10 000 ms). */
  timeoutMs?: number;
  /**
   * A lock held from another host whose file has not been touched for this long is stale and
   * taken over (default 30 000 ms). Holders refresh the file's mtime every `staleMs / 3`. On this
   * host the holder's process decides instead: a live one keeps its lock however long it is
   * paused (SIGSTOP, a debugger), a dead one loses it at once.
   */
  staleMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Encoding (the msgpack options and the decoder are in tape-codec.ts)
// ---------------------------------------------------------------------------------------------

/**
 * msgpackr writes a `Map` as a plain msgpack map when records are off, which decodes as an
 * object: a Map would silently turn into `{}`-like data, and non-string keys would fail. We box
 * Maps before packing and register a tag for the box: `D4 4D 00` followed by an array of
 * `[key, value]` pairs (the same tag scheme msgpackr uses for Set, `D4 73 00`). The box class is
 * private, so registering it (msgpackr's extension table is process-global) changes nothing for
 * other msgpackr users; the read side claims tag 0x4D ('M') for every Unpackr in the process.
 */
class TapeMapBox {
  constructor(readonly entries: [unknown, unknown][]) {}
}
addExtension({
  Class: TapeMapBox,
  type: MAP_EXTENSION_TYPE,
  write: (box: TapeMapBox) => box.entries,
  read: readMapBox,
});
// Under jsdom (a component test's environment) the global Uint8Array is the DOM window's while
// Node's own bytes (a Buffer, a fetch body's chunk, TextEncoder output) stay Node's, and msgpackr
// takes only the typed arrays of the realm it was loaded in for bytes: the others were written as
// maps of numbers, and the recording was lost. Bytes of the realm it does not take are handed
// over as its own Uint8Array on the same memory. msgpackr itself is asked, once (a map of one
// entry starts with 0x81); in Node alone the two are one class, and nothing is registered.
const realms = [Object.getPrototypeOf(Buffer.prototype).constructor as typeof Uint8Array, Uint8Array];
if (realms[0] !== realms[1]) {
  const probe = new Packr(MSGPACK_OPTIONS);
  const taken = realms.map((C) => probe.pack(new C(1))[0] !== 0x81);
  for (const [i, C] of realms.entries()) {
    const To = realms[1 - i]!;
    if (!taken[i] && taken[1 - i]) addExtension({ Class: C, write: (v: Uint8Array) => new To(v.buffer, v.byteOffset, v.byteLength) });
  }
}
// A value of a class this process has not registered, written back: its data boxed as a
// registered class's write() result is, so the bytes are those its own writer wrote.
prepareUnregisteredWith((data, type) => boxMaps(data, new Set(), [`<type ${type}>`]));

/** A user class stored on tapes with its own msgpack extension type (see {@link registerTapeType}). */
export interface TapeType<T extends object> {
  /** Extension type number, 1..63 (msgpackr and tapedeck use types from 0x42 up). */
  type: number;
  /** A stable name; `tapedeck export` writes it as `{ "$type": "ext", "name", "value" }`. */
  name: string;
  /** Instances of this class (and subclasses) are written with this extension. */
  Class: abstract new (...args: never[]) => T;
  /** Turns an instance into plain data (anything a tape can hold, Maps and Dates included). */
  write(value: T): unknown;
  /** Rebuilds an instance from what `write` returned. */
  read(data: unknown): T;
}

const tapeTypesByName = new Map<string, TapeType<object>>();
const tapeTypesByNumber = new Map<number, TapeType<object>>();

/**
 * Registers a class so its instances survive the round trip through a tape (and through
 * `tapedeck export`/`import`) as instances, not plain objects. On the wire an instance is the
 * tag `D4 <type> 00` followed by `write(instance)` encoded like any record value. Register the
 * same classes, with the same numbers, in every process that reads the tape. A process that has
 * not registered a type still reads the tape, and tools show, export and copy such a value (as
 * a stand-in `{ type, value }`, exported under the name `#<type>`); a replay that
 * would hand one to the program throws E_TAPE_TYPE instead.
 *
 * @example
 * class Money { constructor(readonly cents: bigint, readonly currency: string) {} }
 * registerTapeType({ type: 1, name: 'Money', Class: Money,
 *   write: (m) => [m.cents, m.currency], read: ([c, cur]) => new Money(c, cur) });
 */
export function registerTapeType<T extends object>(def: TapeType<T>): void {
  checkOptionsObject(def, 'registerTapeType', "registerTapeType({ type: 1, name: 'Money', Class: Money, write, read })", 'a type definition, { type, name, Class, write, read }');
  const { type, name, Class } = def;
  if (!Number.isInteger(type) || type < 1 || type > 63) {
    throw new TapedeckError('E_ARG', `registerTapeType: type must be an integer from 1 to 63, got ${String(type)}.`, {
      hint: 'Types 0 and 64 and up are used by msgpackr and tapedeck itself.',
    });
  }
  if (typeof name !== 'string' || name === '' || typeof Class !== 'function' || typeof def.write !== 'function' || typeof def.read !== 'function') {
    throw new TapedeckError('E_ARG', 'registerTapeType needs { type, name, Class, write, read }.', { hint: 'See the example in the docs of registerTapeType.' });
  }
  if (/^#\d+$/.test(name)) {
    throw new TapedeckError('E_ARG', `registerTapeType: the name "${name}" is how an export names a type by its number; give the class a name of its own.`, {
      hint: "Use the class's name, e.g. name: 'Money'.",
    });
  }
  const clash = tapeTypesByNumber.get(type) ?? tapeTypesByName.get(name);
  if (clash && (clash.type !== type || clash.name !== name || clash.Class !== (Class as unknown))) {
    throw new TapedeckError('E_ARG', `registerTapeType: type ${type} / name "${name}" is already registered for ${clash.Class.name} as ${clash.type} "${clash.name}".`, {
      hint: 'Each class needs its own type number and name, the same in every process that reads the tape.',
    });
  }
  const entry = def as unknown as TapeType<object>;
  tapeTypesByName.set(name, entry);
  tapeTypesByNumber.set(type, entry);
  addExtension({
    Class: Class as unknown as new () => T,
    type,
    // What write returns goes through the same Map boxing as a record value.
    write: (v: T) => boxMaps(def.write(v), new Set(), [`<${name}>`]),
    read: (data: unknown) => def.read(data),
  });
}

/** The registered type an instance is written with, if any (export uses it). */
export function tapeTypeOf(value: object): TapeType<object> | undefined {
  if (value instanceof UnregisteredTapeValue) return numberedType(value.type);
  // None registered (the usual case): no iterator per value of an export.
  if (tapeTypesByName.size === 0) return undefined;
  for (const t of tapeTypesByName.values()) if (value instanceof t.Class) return t;
  return undefined;
}

/**
 * A registered type by name (import uses it). `#<type>` is a type by its number (what export
 * names a value of a class the exporting process had not registered): the class registered
 * with that number, else values that write back the same bytes.
 */
export function tapeTypeNamed(name: string): TapeType<object> | undefined {
  const number = /^#(\d+)$/.exec(name);
  if (!number) return tapeTypesByName.get(name);
  const type = Number(number[1]);
  return tapeTypesByNumber.get(type) ?? (type >= 1 && type <= 63 ? numberedType(type) : undefined);
}

/** Type `type` as a process without its class exports and imports it (see tapeTypeNamed). */
function numberedType(type: number): TapeType<object> {
  return {
    type,
    name: `#${type}`,
    Class: UnregisteredTapeValue,
    write: (v) => (v as UnregisteredTapeValue).value,
    read: (data) => unregisteredValue(type, data),
  };
}

const packr = new Packr(MSGPACK_OPTIONS);

/**
 * Where the walk in {@link boxMaps} is: the root's name, then one segment per level (an object's
 * member name, an array's index, or a Map or Set position already spelled out). Kept as a stack
 * and spelled only for an error, so a record's thousands of values cost no path strings.
 */
type WalkPath = (string | number | { spelled: string })[];

const spellPath = (path: WalkPath): string =>
  path.map((s, i) => (i === 0 ? String(s) : typeof s === 'number' ? `[${s}]` : typeof s === 'string' ? `.${s}` : s.spelled)).join('');


/** E_DEPTH for a record nesting deeper than a tape stores (`at`: where, when the walk knows it). */
function tooDeep(index: number, file: string, at?: string): TapedeckError {
  return new TapedeckError('E_DEPTH', `Record ${index} for tape ${file} nests deeper than the ${MAX_STORED_NESTING} levels a tape stores${at ? ` (at ${at})` : ''}.`, {
    file,
    path: at ?? `$[${index}]`,
    hint: 'Store such a value flattened, or as its JSON text (a string).',
  });
}

/** Copy-on-write walk that boxes Maps (see {@link TapeMapBox}) and rejects cycles up front. */
function boxMaps(value: unknown, ancestors: Set<object>, path: WalkPath): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (path.length > MAX_STORED_NESTING) throw new TapedeckError('E_DEPTH', spellPath(path.slice(0, 8)));
  if (ancestors.has(value)) {
    const at = spellPath(path);
    throw new TapedeckError('E_CYCLE', `A tape record cannot contain a cycle (at ${at}).`, {
      path: at,
      hint: 'Records are stored by value; break the cycle before appending.',
    });
  }
  const isMap = value instanceof Map;
  const isSet = value instanceof Set;
  const isArray = Array.isArray(value);
  const proto = Object.getPrototypeOf(value) as unknown;
  const isPlain = !isMap && !isSet && !isArray && (proto === Object.prototype || proto === null);
  if (!isMap && !isSet && !isArray && !isPlain) return value;
  ancestors.add(value);
  try {
    if (isMap) {
      const entries: [unknown, unknown][] = [];
      let i = 0;
      for (const [k, v] of value as Map<unknown, unknown>) {
        path.push({ spelled: `.<key ${i}>` });
        const bk = boxMaps(k, ancestors, path);
        path[path.length - 1] = { spelled: `.<value ${i}>` };
        entries.push([bk, boxMaps(v, ancestors, path)]);
        path.pop();
        i++;
      }
      return new TapeMapBox(entries);
    }
    if (isArray) {
      const arr = value as unknown[];
      let out: unknown[] | undefined;
      for (let i = 0; i < arr.length; i++) {
        const v = arr[i];
        let b = v;
        if (v !== null && typeof v === 'object') {
          path.push(i);
          b = boxMaps(v, ancestors, path);
          path.pop();
        }
        if (b !== v && !out) out = arr.slice(0, i);
        if (out) out.push(b);
      }
      return out ?? arr;
    }
    if (isSet) {
      const items = [...(value as Set<unknown>)];
      const boxed = items.map((v, i) => {
        path.push({ spelled: `.<item ${i}>` });
        const b = boxMaps(v, ancestors, path);
        path.pop();
        return b;
      });
      return boxed.some((b, i) => b !== items[i]) ? new Set(boxed) : value;
    }
    const obj = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      let b = v;
      if (v !== null && typeof v === 'object') {
        path.push(key);
        b = boxMaps(v, ancestors, path);
        path.pop();
      }
      if (b !== v && !out) out = { ...obj };
      if (out) out[key] = b;
    }
    return out ?? obj;
  } finally {
    ancestors.delete(value);
  }
}

/** Encode one value; the result is a fresh copy (Packr reuses its buffer between calls). */
function encodeValue(value: unknown, index: number, file: string): Uint8Array {
  return new Uint8Array(packed(value, index, file, false));
}

/**
 * One value packed: a view of Packr's buffer, valid until the next call. `plain` says the value
 * holds no Map, Set or cycle (data parsed from JSON and built from it), so the boxing walk
 * would change nothing and is skipped.
 */
function packed(value: unknown, index: number, file: string, plain: boolean): Uint8Array {
  let boxed: unknown;
  try {
    boxed = plain ? value : boxMaps(value, new Set(), [`$[${index}]`]);
  } catch (e) {
    // The walk's E_DEPTH carries the first segments of where it stopped, to be said with the record.
    if (e instanceof TapedeckError && e.code === 'E_DEPTH') throw tooDeep(index, file, `${e.message}…`);
    throw e;
  }
  let out: Uint8Array;
  try {
    out = packr.pack(boxed);
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep(index, file);
    throw new TapedeckError('E_TYPE', `Record ${index} for tape ${file} cannot be encoded: ${(e as Error).message}`, {
      file,
      path: `$[${index}]`,
      hint: 'Records must be plain data: objects, arrays, strings, numbers, booleans, null, bigint, Date, Map, Set, typed arrays, Error.',
    });
  }
  if (out.length > MAX_RECORD_BYTES) {
    throw new TapedeckError('E_TOO_LARGE', `Record ${index} for tape ${file} is ${out.length} bytes; the limit is ${MAX_RECORD_BYTES}.`, {
      file,
      path: `$[${index}]`,
      hint: 'Store large bodies outside the tape or split them.',
    });
  }
  return out;
}

function frame(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + payload.length);
  out.set(FRAME_MAGIC, 0);
  out.writeUInt32BE(payload.length, 4);
  out.writeUInt32BE(crc32(payload), 8);
  out.set(payload, FRAME_HEADER_SIZE);
  return out;
}

/**
 * The header's `salt` field: the given redaction salt (32 lowercase hex digits), checked; a new
 * random one when none is given; none for `null` (re-creating a tape made before salts existed).
 */
function saltField(salt: string | null | undefined): { salt?: string } {
  if (salt === null) return {};
  if (salt === undefined) return { salt: newRedactionSalt() };
  if (!isRedactionSalt(salt)) {
    throw new TapedeckError('E_ARG', `A tape's redaction salt must be 32 lowercase hex digits, got ${JSON.stringify(String(salt).slice(0, 40))}.`, {
      hint: 'Leave it out to get a random one, or pass the `salt` of the header the records came from.',
    });
  }
  return { salt };
}

function encodeHeader(meta: Record<string, unknown>): Buffer {
  const metaBytes = new Uint8Array(packr.pack(meta));
  const out = Buffer.alloc(HEADER_FIXED + metaBytes.length);
  out.set(TAPE_MAGIC, 0);
  out.writeUInt16BE(TAPE_FORMAT_VERSION, 8);
  out.writeUInt32BE(metaBytes.length, 10);
  out.writeUInt32BE(crc32(metaBytes), 14);
  out.set(metaBytes, HEADER_FIXED);
  return out;
}

/**
 * The bytes a tape stores for records and headers, for stores that are not files (the Redis
 * backend keeps exactly these, so `tapedeck push`/`pull` move tapes byte for byte).
 *
 * @example
 * const payload = recordBytes.payload({ v: 1, key, value }, 'redis://cache:6379/0');
 * const tape = Buffer.concat([recordBytes.header(), recordBytes.frame(payload)]);
 */
export const recordBytes = {
  /** A record's payload (what a frame holds after its 12-byte header); throws E_TYPE / E_TOO_LARGE. */
  payload: (value: unknown, where: string, index = 0): Uint8Array => encodeValue(value, index, where),
  /** A frame around a payload: magic, length, CRC-32, payload. */
  frame,
  /** A fresh tape header (created now, this tapedeck version, a new redaction salt). */
  header: (meta: { created?: string; salt?: string } = {}): Buffer =>
    encodeHeader({ created: meta.created ?? new Date().toISOString(), tapedeckVersion: VERSION, ...saltField(meta.salt) }),
};

// ---------------------------------------------------------------------------------------------
// File helpers
// ---------------------------------------------------------------------------------------------

/** A file-system error while reading a tape, as a tapedeck error (internal: src/store/tape-stream.ts). */
export const tapeIoError = (e: unknown, file: string, doing: string): TapedeckError => ioError(e, file, doing);

function ioError(e: unknown, file: string, doing: string): TapedeckError {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'ENOENT') {
    return new TapedeckError('E_TAPE_NOT_FOUND', `Tape ${file} does not exist (${doing}).`, {
      file,
      hint: 'Create it first with createTape(), or check the path.',
    });
  }
  // The system's words name neither the mistake nor the fix (tape-path-errors.ts).
  if (err.code === 'EISDIR') return tapeIsDirectory(file);
  if (err.code === 'EROFS') return tapeReadOnly(file, doing);
  return new TapedeckError('E_TAPE_IO', `Tape ${file}: ${doing} failed: ${err.message}`, {
    file,
    cause: err.code,
    hint: 'Check permissions and free disk space.',
  });
}

/**
 * The whole file, with file-system errors as tapedeck errors (missing -> E_TAPE_NOT_FOUND).
 *
 * Read into one buffer of the size the file has when opened, with as few reads as the system
 * allows: fs.promises.readFile reads 512 KiB at a time, one thread-pool round trip each (~200
 * for a 100 MB tape: scanTape of a 100,000-record tape took ~10% longer). What it reads is the
 * file as it was when opened: a record appended meanwhile is read by the next open or refresh,
 * and a torn last record is the torn tail every reader already survives.
 */
async function readTapeFile(path: string, doing: string): Promise<Buffer> {
  refuseNonTapeFile(path);
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    return await readRange(fh, 0, (await fh.stat()).size);
  } catch (e) {
    throw ioError(e, path, doing);
  } finally {
    await fh?.close().catch(() => {});
  }
}

/**
 * `n` bytes of an open file from `p` (fewer if it ends first: it shrank while it was read), in a
 * buffer of their own, with as few reads as the system allows. File-system errors are thrown as
 * they come. Internal: readTapeFile, and src/store/tape-stream.ts for its windows.
 */
export async function readRange(fh: FileHandle, p: number, n: number): Promise<Buffer> {
  return readRangeInto(fh, Buffer.allocUnsafeSlow(n), p, n);
}

/**
 * readRange into `out` (at least `n` bytes long), from its start; returns the part of `out`
 * read. Internal: src/store/tape-stream.ts reads each window into the same buffer.
 */
export async function readRangeInto(fh: FileHandle, out: Buffer, p: number, n: number): Promise<Buffer> {
  let got = 0;
  while (got < n) {
    const { bytesRead } = await fh.read(out, got, Math.min(n - got, READ_MAX), p + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === out.length ? out : out.subarray(0, got);
}

/**
 * Turns on msgpackr's native string extraction (msgpackr-extract, where it is installed) before a
 * tape of `size` bytes is decoded. It decodes a large tape ~15% faster, but loading it costs
 * ~15 ms (it probes which C library the process runs on), as much as a small tape's whole
 * export: it is loaded once, the first time a tape of NATIVE_STRINGS_MIN bytes or more is read
 * whole (readTape, src/store/tape-stream.ts; not scanTape, whose readers decode the few records
 * they serve). msgpackr's Node entry installs it into the decoder every entry shares.
 */
export function nativeStringsFor(size: number): Promise<unknown> | undefined {
  if (size < NATIVE_STRINGS_MIN) return undefined;
  return (nativeStrings ??= import('msgpackr').catch(() => undefined));
}
let nativeStrings: Promise<unknown> | undefined;
/** Where the extractor's ~15% starts paying for its load: ~8 MB decode in ~100 ms. */
const NATIVE_STRINGS_MIN = 8 << 20;

/** The longest single read (node:fs refuses lengths of 2 GiB and more). */
const READ_MAX = 1 << 30;

/**
 * Make a rename, creation or removal durable; directories cannot be fsynced on every platform.
 *
 * @example
 * await unlink(path); await syncDir(dirname(path))
 */
export async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, fsConstants.O_RDONLY);
    await fh.sync();
  } catch {
    // Windows and some network filesystems refuse; the rename is still atomic there.
  } finally {
    await fh?.close().catch(() => {});
  }
}

async function writeAll(fh: FileHandle, data: Uint8Array): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done);
    done += bytesWritten;
  }
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/**
 * Create an empty tape (header only). Refuses to replace an existing file, so two workers racing
 * to create the same tape cannot wipe each other's records: the loser gets `E_TAPE_EXISTS` and
 * can simply append. Pass `created` to make the file reproducible byte for byte; `more` holds
 * other metadata keys (another writer's, which readers keep), written after tapedeck's own.
 *
 * The tape appears whole: its header is written to a temp file beside it, which is then linked
 * into place. A reader racing the creation finds either no tape or a tape with its header, never
 * the empty file a crash before the header was written leaves (and warns about).
 *
 * @example
 * await createTape('test/__tapes__/chat.tape', { created: '2026-01-01T00:00:00.000Z' });
 */
export async function createTape(path: string, meta: { created?: string; tapedeckVersion?: string; salt?: string | null; more?: Record<string, unknown> } = {}): Promise<void> {
  if (typeof path !== 'string' || path === '') throw new TapedeckError('E_ARG', `createTape takes the path of the tape to make; got ${describeArgument(path)}.`, { hint: "createTape('test/__tapes__/chat.tape')" });
  checkOptionsObject(meta, 'createTape', "createTape('chat.tape', { created: '2026-01-01T00:00:00.000Z' })", 'its header fields as its second argument');
  const own = { created: meta.created ?? new Date().toISOString(), tapedeckVersion: meta.tapedeckVersion ?? VERSION, ...saltField(meta.salt) };
  // `more`: metadata keys another writer put in a header (an import keeps them), after ours.
  const header = encodeHeader({ ...own, ...Object.fromEntries(Object.entries(meta.more ?? {}).filter(([k]) => !['created', 'tapedeckVersion', 'salt'].includes(k))) });
  // A device or FIFO at the path is said as what it is, not as a tape that exists.
  refuseNonTapeFile(path);
  // Through a symbolic link to a tape not made yet: the file is made where the link leads.
  const file = tapeTarget(path);
  try {
    if (file !== path) await mkdir(dirname(file), { recursive: true });
  } catch (e) {
    throw ioError(e, path, 'create');
  }
  // A tape being built in a temp file of its own (an import's, a migration's) is read by no one
  // until it is moved into place: made where it is, not through a temp file of a temp file.
  if (isTapeTemp(file)) {
    await writeNewTapeFile(file, header, path);
  } else {
    // Named as an import's temp file (the host in its name, as no lock is held while it
    // exists): left by a process killed here, the next writer of the tape removes it.
    const tmp = importTempPath(file, 'create');
    try {
      await writeNewTapeFile(tmp, header, path);
      await linkIntoPlace(tmp, file, header, path);
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }
  await syncDir(dirname(file));
}

/** Writes `header` to a new file at `file`, fsynced; an existing file is E_TAPE_EXISTS for `path`. */
async function writeNewTapeFile(file: string, header: Buffer, path: string): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw await tapeExists(path);
    throw ioError(e, path, 'create');
  }
  try {
    await writeAll(fh, header);
    await fh.sync();
  } catch (e) {
    throw ioError(e, path, 'write header');
  } finally {
    await fh.close();
  }
}

/**
 * Links the header-only tape at `tmp` to `file`: a hard link fails on an existing file, as
 * opening with `wx` does, so an existing tape is never replaced. On a file system without hard
 * links (some network and FAT file systems), the tape is made in place instead.
 */
async function linkIntoPlace(tmp: string, file: string, header: Buffer, path: string): Promise<void> {
  try {
    await link(tmp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw await tapeExists(path);
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return writeNewTapeFile(file, header, path);
    throw ioError(e, path, 'create');
  }
}

/** What creating a tape where a file already is says: E_TAPE_EXISTS, or a directory's mistake. */
async function tapeExists(path: string): Promise<TapedeckError> {
  // A directory there is no tape that exists: said as the mistake it is.
  if ((await stat(path).catch(() => undefined))?.isDirectory()) return tapeIsDirectory(path);
  return new TapedeckError('E_TAPE_EXISTS', `Tape ${path} already exists; createTape never overwrites.`, {
    file: path,
    hint: 'Append to it with appendRecords(), or delete it first to start over.',
  });
}

/**
 * Read a whole tape. Damage never throws past the header: a torn tail (crash mid-append) and
 * corrupt records come back as `warnings` with their byte offsets, and every intact record is
 * returned. Reading takes no lock, so it never waits for writers; an append in progress may show
 * up as a transient `E_TAPE_TORN_TAIL`.
 *
 * @example
 * const { header, records, warnings } = await readTape('chat.tape');
 * for (const w of warnings) console.warn(w.code, w.offset, w.message);
 * const values = records.map((r) => r.value);
 */
export async function readTape(path: string): Promise<TapeContents> {
  // Without it, "Tape undefined: read failed ... Check permissions and free disk space".
  if (typeof path !== 'string' || path === '') throw new TapedeckError('E_ARG', `readTape takes the path of a tape; got ${describeArgument(path)}.`, { hint: "readTape('test/__tapes__/chat.tape')" });
  const buf = await readTapeFile(path, 'read');
  // Every record is decoded: with the native string extractor when the tape is large.
  await nativeStringsFor(buf.length);
  const { headerEnd: _, ...contents } = parseTape(buf, path);
  return contents;
}

/** A tape checked frame by frame but not decoded: see {@link scanTape}. */
export interface TapeScan {
  header: TapeHeader;
  /** The file as read. Record payloads are slices of it. */
  bytes: Buffer;
  /** Frame offsets and lengths, in file order (every frame's CRC matched). */
  frames: { offset: number; length: number }[];
  warnings: TapeWarning[];
  size: number;
}

/**
 * Reads a tape and checks every frame (magic, length, CRC-32) without decoding any payload:
 * opening a 100,000-record tape costs one read and one CRC pass. Decode a frame when it is
 * needed with {@link decodeFrame}; read a record's leading scalar fields (say its `key`) without
 * decoding the rest with {@link peekFrame}. Damage is reported exactly as by readTape, except that
 * a payload whose CRC matches but which is not valid msgpack (only a buggy writer makes one)
 * shows up when it is decoded.
 *
 * @example
 * const scan = await scanTape('chat.tape');
 * const keys = scan.frames.map((f) => peekFrame(scan.bytes, f).key);
 */
export async function scanTape(path: string): Promise<TapeScan> {
  return scanTapeIn(path, SCAN_CHUNK);
}

/** The bytes scanTape reads at a time, checking what came while the next part arrives. */
const SCAN_CHUNK = 4 << 20;

/**
 * {@link scanTape}, reading `chunk` bytes at a time. Opening a large tape is a read (the system
 * copying it into a fresh buffer, page by page) and a CRC pass over it; they overlap: one read
 * is in flight while the frames already read are checked. A sound tape gives exactly what
 * parseTape lists; at the first fault the whole file, once read, goes to parseTape, so damage
 * is reported as readTape reports it. Internal (tests vary `chunk`).
 */
export async function scanTapeIn(path: string, chunk: number): Promise<TapeScan> {
  let fh: FileHandle | undefined;
  let bytes: Buffer;
  let reading: Promise<{ bytesRead: number }> | undefined;
  const at: ArrivedCheck = { pos: 0, frames: [], sound: true };
  refuseNonTapeFile(path);
  try {
    fh = await open(path, 'r');
    const size = (await fh.stat()).size;
    const buf = Buffer.allocUnsafeSlow(size);
    let got = 0;
    reading = size > 0 ? fh.read(buf, 0, Math.min(chunk, size), 0) : undefined;
    while (reading) {
      const { bytesRead } = await reading;
      // The file shrank while it was read: what was there is the tape.
      if (bytesRead === 0) break;
      got += bytesRead;
      // The next read goes out before this part is checked (the two touch different bytes).
      reading = got < size ? fh.read(buf, got, Math.min(chunk, size - got), got) : undefined;
      checkArrived(buf.subarray(0, got), path, at, reading === undefined);
    }
    bytes = got < size ? buf.subarray(0, got) : buf;
  } catch (e) {
    throw ioError(e, path, 'read');
  } finally {
    // A read still in flight (something threw while a part was checked) ends before the file
    // closes, and its failure is not left unhandled.
    await reading?.catch(() => {});
    await fh?.close().catch(() => {});
  }
  if (at.sound && at.header !== undefined && at.pos === bytes.length) return { header: at.header, bytes, frames: at.frames, warnings: [], size: bytes.length };
  const parsed = parseTape(bytes, path, false);
  return { header: parsed.header, bytes, frames: parsed.records, warnings: parsed.warnings, size: bytes.length };
}

// Where the last string found by stringSpan starts and ends (saves allocating a result pair).
let peekAt = 0;
let peekEnd = 0;

/** A leading scalar field of a record: what {@link peekFrame} can read without decoding. */
export type PeekedScalar = string | number | boolean | null;

/**
 * The leading scalar fields of a record whose payload is a msgpack map with string keys: the
 * entries before the first container (map, array, binary, extension) value. Writers put the
 * fields an index needs first (ReplayCache records start with `v` and `key`), so an index is
 * built without decoding requests and responses. Returns {} for anything else.
 *
 * With `deep` (and `fields`), scalar fields that follow containers are read too: each container
 * is stepped over by its msgpack lengths (no value is made), and reading stops once every field
 * asked for is found. HTTP records keep their `route`, `match` and `trace` after the request
 * and response, and the proxy indexes a tape by them without decoding either. `deep` a number:
 * only that many of `fields` (the first ones) are looked for past a container, the others
 * among the leading scalars alone (an HTTP record's `origin`, which records written before it
 * lack: looking for it would step over every container of theirs).
 *
 * @example
 * peekFrame(scan.bytes, scan.frames[0]) // { v: 1, key: '9f86d0…' }
 */
export function peekFrame(bytes: Buffer, frame: { offset: number; length: number }, fields?: readonly string[], deep: boolean | number = false): Record<string, PeekedScalar> {
  return peekPayload(bytes, frame.offset, frame.length, fields, deep);
}

/** {@link peekFrame} of the frame at `offset`, `length` bytes long (no frame object needed). */
export function peekPayload(bytes: Buffer, offset: number, length: number, fields?: readonly string[], deep: boolean | number = false): Record<string, PeekedScalar> {
  // With `fields` (ASCII names), only those are read: the others are skipped without making a
  // string of their name or value. An index of 100,000 records then makes one string per
  // record (its key) instead of one per field name and value.
  // A plain object: a null-prototype one is a slow dictionary from the start. A "__proto__"
  // field cannot do harm here: assigning a scalar to it is ignored.
  const out: Record<string, PeekedScalar> = {};
  const end = offset + length;
  const count = mapHeader(bytes, offset + FRAME_HEADER_SIZE, end);
  if (count < 0) return out;
  let p = peekEnd;
  let found = 0;
  // How many found fields end the read: all of them, until a container is passed with `deep` a
  // number (then the first `deep` ones, and those of the rest found before it).
  let need = fields ? fields.length : 0;
  const lead = typeof deep === 'number' ? deep : -1;
  let leading = 0;
  let past = false;
  // Plain assignments, no tuple destructuring: this runs once per record when a tape opens.
  for (let i = 0; i < count && p < end; i++) {
    if (deep && fields && found === need) break;
    if (!stringSpan(bytes, p, end)) break;
    let name = fields ? fieldAt(bytes, peekAt, peekEnd, fields) : textAt(bytes, peekAt, peekEnd);
    // One of the fields read among the leading scalars alone: not past a container.
    let late = false;
    if (lead >= 0 && name !== undefined && fieldIndex >= lead) {
      if (past) name = undefined;
      else late = true;
    }
    p = peekEnd;
    if (p >= end) break;
    const t = bytes[p]!;
    // Fixed-size scalars by their width; a string by its span; anything else ends the head.
    let width: number;
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) width = 1;
    else if (t === 0xcc || t === 0xd0) width = 2;
    else if (t === 0xcd || t === 0xd1) width = 3;
    else if (t === 0xce || t === 0xd2 || t === 0xca) width = 5;
    else if (t === 0xcb) width = 9;
    else if (stringSpan(bytes, p, end)) {
      if (name !== undefined) {
        out[name] = deep ? sameText(bytes, peekAt, peekEnd) : textAt(bytes, peekAt, peekEnd);
        found++;
        if (late) leading++;
      }
      p = peekEnd;
      continue;
    } else if (deep && fields) {
      if (lead >= 0 && !past) {
        past = true;
        need = lead + leading;
        // Every field looked for past here is found already (the usual record): nothing is stepped over.
        if (found === need) break;
      }
      p = skipValue(bytes, p, end);
      if (p < 0) break;
      continue;
    } else break;
    if (p + width > end) break;
    if (name !== undefined) {
      out[name] = scalarAt(bytes, p, t);
      found++;
      if (late) leading++;
    }
    p += width;
  }
  return out;
}

/**
 * The member `name` (ASCII) of the record framed at `offset`, `length` bytes long, decoded on its
 * own: the members before it are stepped over by their msgpack lengths, none after it is read.
 * A proxy keys a large tape's recordings at its first miss from their requests alone, and
 * decodes a whole record when it serves it. undefined when the record has no such member.
 * Throws E_TAPE_CORRUPT, as decodeFrame() does, when the payload is not a map with string keys
 * up to that member, or the member does not decode.
 *
 * @example
 * payloadMember(scan.bytes, frame.offset, frame.length, 'request', 'chat.tape') // { method: 'POST', url: '/v1/chat/completions', body: {...}, ... }
 */
export function payloadMember(bytes: Buffer, offset: number, length: number, name: string, file: string): unknown {
  const end = offset + length;
  const fields = [name];
  const count = mapHeader(bytes, offset + FRAME_HEADER_SIZE, end);
  let p = peekEnd;
  for (let i = 0; i < count && p >= 0 && p < end; i++) {
    if (!stringSpan(bytes, p, end)) break;
    const found = fieldAt(bytes, peekAt, peekEnd, fields) !== undefined;
    const at = peekEnd;
    const next = at < end ? skipValue(bytes, at, end) : -1;
    if (found && next > at) return decodeFrame(bytes, { offset, length }, file, { start: at, end: next });
    p = next;
  }
  // Not a map found whole up to the member (or none of that name): the whole payload decides,
  // as decoding it would (it throws E_TAPE_CORRUPT for bytes that are not msgpack).
  const whole = decodeFrame(bytes, { offset, length }, file);
  return whole !== null && typeof whole === 'object' && !Array.isArray(whole) && Object.hasOwn(whole, name) ? (whole as Record<string, unknown>)[name] : undefined;
}

/**
 * The JSON text (UTF-8) of the value at `path` (member names, ASCII, of nested maps) in the
 * record framed at `offset`, `length` bytes long, made from its bytes without decoding it
 * (src/store/msgpack-json.ts), or undefined when the caller must decode it to know: a map on the
 * path that is not one, lacks the member or has it twice, or a value that is not plain JSON data.
 * The first miss of a proxy on a large tape keys each recording from its body's text this way.
 *
 * @example
 * payloadJson(scan.bytes, frame.offset, frame.length, ['request', 'body']) // the bytes of {"model":"gpt-4o",...}
 */
export function payloadJson(bytes: Buffer, offset: number, length: number, path: readonly string[]): Uint8Array | undefined {
  const end = offset + length;
  let at = offset + FRAME_HEADER_SIZE;
  for (const name of path) {
    const count = mapHeader(bytes, at, end);
    if (count < 0) return undefined;
    const fields = [name];
    let p = peekEnd;
    let found = -1;
    // Every member is stepped over: a name given twice is left to the decode, which keeps one.
    for (let i = 0; i < count; i++) {
      if (p >= end || !stringSpan(bytes, p, end)) return undefined;
      const hit = fieldAt(bytes, peekAt, peekEnd, fields) !== undefined;
      if (hit && found >= 0) return undefined;
      if (hit) found = peekEnd;
      p = peekEnd < end ? skipValue(bytes, peekEnd, end) : -1;
      if (p < 0) return undefined;
    }
    if (found < 0) return undefined;
    at = found;
  }
  return jsonOfMsgpack(bytes, at, end);
}

/**
 * Where the msgpack value at p ends, stepping over nested maps and arrays by their counts
 * (iteratively: a deep value cannot overflow the stack), or -1 when it runs past `end` or uses
 * the one type byte msgpack never writes (0xc1).
 */
function skipValue(bytes: Buffer, p: number, end: number): number {
  // Values still to step over: one for the value at p, plus each container's members.
  let pending = 1;
  while (pending > 0) {
    if (p >= end) return -1;
    pending--;
    const t = bytes[p]!;
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) p += 1;
    else if (t <= 0x8f) (pending += (t & 0x0f) * 2), (p += 1);
    else if (t <= 0x9f) (pending += t & 0x0f), (p += 1);
    else if (t <= 0xbf) p += 1 + (t & 0x1f);
    else if (t === 0xc4 || t === 0xd9) p += p + 1 < end ? 2 + bytes[p + 1]! : end;
    else if (t === 0xc5 || t === 0xda) p += p + 2 < end ? 3 + bytes.readUInt16BE(p + 1) : end;
    else if (t === 0xc6 || t === 0xdb) p += p + 4 < end ? 5 + bytes.readUInt32BE(p + 1) : end;
    else if (t === 0xc7) p += p + 1 < end ? 3 + bytes[p + 1]! : end;
    else if (t === 0xc8) p += p + 2 < end ? 4 + bytes.readUInt16BE(p + 1) : end;
    else if (t === 0xc9) p += p + 4 < end ? 6 + bytes.readUInt32BE(p + 1) : end;
    else if (t === 0xca || t === 0xce || t === 0xd2) p += 5;
    else if (t === 0xcb || t === 0xcf || t === 0xd3) p += 9;
    else if (t === 0xcc || t === 0xd0) p += 2;
    else if (t === 0xcd || t === 0xd1) p += 3;
    else if (t >= 0xd4 && t <= 0xd8) p += 2 + (1 << (t - 0xd4));
    else if (t === 0xdc || t === 0xde) {
      if (p + 2 >= end) return -1;
      pending += bytes.readUInt16BE(p + 1) * (t === 0xde ? 2 : 1);
      p += 3;
    } else if (t === 0xdd || t === 0xdf) {
      if (p + 4 >= end) return -1;
      pending += bytes.readUInt32BE(p + 1) * (t === 0xdf ? 2 : 1);
      p += 5;
    } else return -1; // 0xc1
  }
  return p <= end ? p : -1;
}

/**
 * The member count of the msgpack map whose header is at p (fixmap, map 16, map 32), with
 * peekEnd set to its first member; -1 when p holds no map header that fits before `end`.
 */
function mapHeader(bytes: Buffer, p: number, end: number): number {
  if (p >= end) return -1;
  const m = bytes[p]!;
  if (m >= 0x80 && m <= 0x8f) return (peekEnd = p + 1), m & 0x0f;
  if (m === 0xde && p + 3 <= end) return (peekEnd = p + 3), bytes.readUInt16BE(p + 1);
  if (m === 0xdf && p + 5 <= end) return (peekEnd = p + 5), bytes.readUInt32BE(p + 1);
  return -1;
}

/** The span of a msgpack string at p (sets peekAt and peekEnd), or false. */
function stringSpan(bytes: Buffer, p: number, end: number): boolean {
  const t = bytes[p]!;
  let len: number;
  if (t >= 0xa0 && t <= 0xbf) (len = t & 0x1f), (peekAt = p + 1);
  else if (t === 0xd9) (len = bytes[p + 1]!), (peekAt = p + 2);
  else if (t === 0xda) (len = bytes.readUInt16BE(p + 1)), (peekAt = p + 3);
  else if (t === 0xdb) (len = bytes.readUInt32BE(p + 1)), (peekAt = p + 5);
  else return false;
  peekEnd = peekAt + len;
  return peekEnd <= end;
}

// The last short ASCII texts sameText made, by length: records of one tape repeat their route
// and match kind, and one string each serves every record (no string, and no garbage, per
// record). Compared with the string itself, so a text that differs each time (a key) costs
// no copy of its bytes.
const recent: (string | undefined)[] = [];

/** textAt, returning the same string as the last time these bytes were read when they are short ASCII. */
function sameText(bytes: Buffer, at: number, end: number): string {
  const n = end - at;
  if (n > 96) return textAt(bytes, at, end);
  const last = recent[n];
  if (last !== undefined) {
    let i = 0;
    while (i < n && last.charCodeAt(i) === bytes[at + i]) i++;
    if (i === n) return last;
  }
  const text = textAt(bytes, at, end);
  // A text with non-ASCII characters has more bytes than characters: never compared as above.
  if (text.length === n) recent[n] = text;
  return text;
}

/** The UTF-8 text at..end; field names and hex keys are ASCII, for which latin1 is the cheap exact path. */
function textAt(bytes: Buffer, at: number, end: number): string {
  for (let i = at; i < end; i++) if (bytes[i]! > 0x7f) return bytes.toString('utf8', at, end);
  // Buffer's own slicer, without toString()'s argument handling: one call per record's key at
  // open (100,000 64-byte texts: 24-32 ms against 35-53 ms through toString, one process).
  return (bytes as Buffer & { latin1Slice(from: number, to: number): string }).latin1Slice(at, end);
}

/** The index in `fields` of the last name fieldAt found (saves a search of the list for it). */
let fieldIndex = -1;

/** Which of `fields` the bytes at..end spell, compared byte by byte (no string is made). */
function fieldAt(bytes: Buffer, at: number, end: number, fields: readonly string[]): string | undefined {
  const n = end - at;
  for (let j = 0; j < fields.length; j++) {
    const f = fields[j]!;
    if (f.length !== n) continue;
    let i = 0;
    while (i < n && bytes[at + i] === f.charCodeAt(i)) i++;
    if (i === n) {
      fieldIndex = j;
      return f;
    }
  }
  return undefined;
}

/** The fixed-size scalar value at p whose type byte is t. */
function scalarAt(bytes: Buffer, p: number, t: number): PeekedScalar {
  if (t <= 0x7f) return t;
  if (t >= 0xe0) return t - 0x100;
  if (t === 0xc0) return null;
  if (t === 0xc2 || t === 0xc3) return t === 0xc3;
  if (t === 0xcc) return bytes[p + 1]!;
  if (t === 0xcd) return bytes.readUInt16BE(p + 1);
  if (t === 0xce) return bytes.readUInt32BE(p + 1);
  if (t === 0xd0) return bytes.readInt8(p + 1);
  if (t === 0xd1) return bytes.readInt16BE(p + 1);
  if (t === 0xd2) return bytes.readInt32BE(p + 1);
  if (t === 0xcb) return bytes.readDoubleBE(p + 1);
  return bytes.readFloatBE(p + 1); // 0xca, the last width peekFrame reads
}

/**
 * Append records, one frame each, in a single write under the tape lock, and resolve only after
 * fsync: once this resolves, a `kill -9` or power loss cannot lose these records. All values are
 * encoded before the lock is taken, so an unencodable value fails the call without writing
 * anything. Returns each new frame's byte offset.
 *
 * @example
 * await appendRecords('chat.tape', [{ request, response }]);
 */
export async function appendRecords(path: string, values: unknown[], options: AppendOptions = {}): Promise<{ offsets: number[] }> {
  return appendFrames(
    path,
    values.map((v, i) => recordFrame(v, i, path)),
    options,
  );
}

/**
 * One record as the frame {@link appendFrames} writes (what appendRecords writes for it).
 * `index` and `file` only name the record in an error. A bulk writer frames each record as it
 * builds it, so the record's objects are garbage at once instead of surviving to the append.
 *
 * @example
 * await appendFrames('chat.tape', [recordFrame({ request, response }, 0, 'chat.tape')]);
 */
export function recordFrame(
  value: unknown,
  index: number,
  file: string,
  options: {
    /**
     * The value is plain data: objects, arrays, strings, numbers, booleans, null and byte
     * arrays, with no Map, Set or cycle (a bulk import of JSON recordings). Skips the walk that
     * boxes Maps and rejects cycles; a Map would then be written as an empty map. Default false.
     */
    plain?: boolean;
  } = {},
): Buffer {
  // Framed straight from Packr's buffer: one copy of each payload, not two.
  return frame(packed(value, index, file, options.plain === true));
}

/**
 * Appends frames made by {@link recordFrame}, as {@link appendRecords} appends records. The
 * frames' bytes are read when they are written: leave them unchanged until this settles.
 *
 * @example
 * await appendFrames('chat.tape', [recordFrame(record, 0, 'chat.tape')], { durable: true });
 */
export async function appendFrames(path: string, frames: Buffer[], options: AppendOptions = {}): Promise<{ offsets: number[] }> {
  // One buffer (an import's batch, megabytes of frames) is written as it is: concat would copy it.
  const data = frames.length === 1 ? frames[0]! : Buffer.concat(frames);
  // Before the lock: no lock file is made beside a device.
  refuseNonTapeFile(path);
  return withTapeLock(
    path,
    async (lock) => {
      // Synchronous calls on purpose: each is a few microseconds on a local disk, while the
      // promise API pays a thread-pool round trip per call; only fsync, which can take
      // milliseconds, goes to the thread pool so it never blocks the event loop.
      let fd = openForAppend(path);
      try {
        let size = fstatSync(fd).size;
        // Never append to something that is not a tape: check the header first.
        let header = headerAt(fd, size, path);
        if (header === undefined) {
          // A lost header (a 0-byte file, damaged header bytes): rewrite the tape with a fresh
          // header (the salt the records were masked under, when no salt survived), keeping
          // every record, then append. Something that is not a tape at all makes the rewrite
          // throw, and is left alone.
          closeSync(fd);
          fd = -1;
          await rewriteTapeFrames(path, () => [], { ...options, lock }, options.salt);
          fd = openForAppend(path);
          size = fstatSync(fd).size;
          header = headerAt(fd, size, path);
        }
        if (options.salt !== undefined && (isRedactionSalt(header?.salt) ? header.salt : null) !== options.salt) throw saltChanged(path);
        const offsets: number[] = [];
        let at = size;
        for (const f of frames) {
          offsets.push(at);
          at += f.length;
        }
        if (data.length === 0) return { offsets };
        try {
          let done = 0;
          while (done < data.length) done += writeSync(fd, data, done, data.length - done);
          if (options.durable !== false) await new Promise<void>((ok, fail) => fsync(fd, (e) => (e ? fail(e) : ok())));
        } catch (e) {
          // Leave no torn frame behind if we can help it.
          try {
            ftruncateSync(fd, size);
          } catch {
            // the reader's torn-tail handling covers what we could not undo
          }
          throw ioError(e, path, 'append');
        }
        return { offsets };
      } finally {
        if (fd >= 0) closeSync(fd);
      }
    },
    options,
  );
}

/** Append mode without O_CREAT: a missing tape is an error, never silently a header-less file. */
function openForAppend(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDWR | fsConstants.O_APPEND);
  } catch (e) {
    throw ioError(e, path, 'open for append');
  }
  // Made a device or FIFO since it was checked: its 0 bytes are no lost header to repair.
  const bad = nonTapeFile(path, fstatSync(fd));
  if (bad !== undefined) {
    closeSync(fd);
    throw bad;
  }
  return fd;
}

/**
 * E_TAPE_CHANGED for an append whose records were masked under another salt than the tape's
 * header holds (see {@link AppendOptions.salt}).
 */
function saltChanged(path: string): TapedeckError {
  return new TapedeckError(
    'E_TAPE_CHANGED',
    `Tape ${path} was replaced since this writer read it (another tape was moved or copied over it): its header holds another redaction salt than the one this writer masked secrets with, so the new recordings would never match there; nothing was appended.`,
    {
      file: path,
      hint: 'Run the recording again (restart `tapedeck serve`, or rerun the tests in record or update mode): the next run opens the tape as it is now and masks under its salt.',
    },
  );
}

/**
 * The header of the tape file at `path`, if it has a sound one (see headerAt); undefined when the
 * file is missing or its header is lost. Throws what parseHeader throws for a newer format.
 *
 * @example
 * readTapeFileHeader('tapes/agent.tape')?.salt
 */
export function readTapeFileHeader(path: string): TapeHeader | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    return headerAt(fd, fstatSync(fd).size, path);
  } finally {
    closeSync(fd);
  }
}

/**
 * The header the file starts with, if sound: read the fixed part, then exactly the metadata it
 * announces (not a worst-case MiB). Undefined for a lost header (0 bytes or damaged); throws what
 * parseHeader throws for anything else (a newer format).
 */
function headerAt(fd: number, size: number, path: string): TapeHeader | undefined {
  if (size === 0) return undefined;
  const fixed = Buffer.alloc(Math.min(size, HEADER_FIXED));
  readSync(fd, fixed, 0, fixed.length, 0);
  let head = fixed;
  if (fixed.length === HEADER_FIXED) {
    head = Buffer.alloc(Math.min(headerSpan(fixed), size));
    readSync(fd, head, 0, head.length, 0);
  }
  try {
    return parseHeader(head, path).header;
  } catch (e) {
    if (e instanceof TapedeckError && e.code === 'E_TAPE_CORRUPT') return undefined;
    throw e;
  }
}


/**
 * Rewrite a tape keeping only the records `keep` accepts (compaction, pruning unused
 * recordings). Under the lock it re-reads the file, so records another writer appended while we
 * waited are judged too, never lost; it writes a temp file beside the tape, fsyncs it, renames it
 * over the tape atomically and fsyncs the directory, so a crash leaves either the old tape or
 * the new one. The header is kept byte for byte, and kept frames are copied verbatim. Damaged
 * regions (see `warnings`) are not carried over: rewriting is also how a damaged tape is cleaned.
 *
 * @example
 * const used = new Set(usedKeys);
 * await rewriteTape('chat.tape', (r) => used.has((r.value as { key: string }).key));
 */
export async function rewriteTape(
  path: string,
  keep: (entry: TapeRecordEntry) => boolean,
  options: LockedCallOptions = {},
): Promise<{ kept: number; dropped: number; warnings: TapeWarning[]; damageBytes: number; freshHeader: 'damaged' | 'empty' | undefined }> {
  const r = await rewriteTapeFrames(
    path,
    (scan) => {
      const drop: number[] = [];
      scan.frames.forEach((f, i) => {
        let value: unknown;
        try {
          value = decodeFrame(scan.bytes, f, path);
        } catch {
          return; // dropped with a warning by the rewrite itself
        }
        if (!keep({ offset: f.offset, length: f.length, value })) drop.push(i);
      });
      return drop;
    },
    options,
  );
  return { kept: r.kept, dropped: r.dropped.length, warnings: r.warnings, damageBytes: r.damageBytes, freshHeader: r.freshHeader };
}

/**
 * The rewrite under {@link rewriteTape}, choosing from the whole current tape at once: `select`
 * gets the tape as read under the lock (frames checked, not decoded) and returns the indexes of
 * the frames to drop. For choices that need every record first (latest per key, used or not).
 * Returns the dropped frames' decoded values. Frames that do not decode are dropped too. Also
 * what the rewrite cleaned, as read under the lock: `damageBytes`, the bytes that were neither
 * the header kept nor a record that decodes (damaged regions, undecodable records, a lost
 * header's bytes), and `freshHeader`, why a new header was written (`damaged`; `empty`, a
 * 0-byte file), if one was.
 */
export async function rewriteTapeFrames(
  path: string,
  select: (scan: TapeScan) => Iterable<number>,
  options: LockedCallOptions = {},
  /** Internal: the salt a fresh header gets when the lost one held none that still reads. */
  freshSalt?: string | null,
): Promise<{ kept: number; dropped: unknown[]; warnings: TapeWarning[]; damageBytes: number; freshHeader: 'damaged' | 'empty' | undefined }> {
  refuseNonTapeFile(path);
  return withTapeLock(
    path,
    async () => {
      await removeDeadTemps(path);
      const buf = await readTapeFile(path, 'read for rewrite');
      const parsed = parseTape(buf, path, false);
      const scan: TapeScan = { header: parsed.header, bytes: buf, frames: parsed.records, warnings: parsed.warnings, size: buf.length };
      const drop = new Set(select(scan));
      // A lost header (damaged, or a 0-byte file) is replaced by a fresh one: the rewrite is how
      // `tapedeck prune` repairs a tape. A salt the damaged header still held whole is kept in it:
      // the records' keyed masks were made under it.
      const head = parsed.header.headerLost === true ? encodeHeader({ created: new Date().toISOString(), tapedeckVersion: VERSION, ...saltField(isRedactionSalt(parsed.header.salt) ? parsed.header.salt : freshSalt) }) : buf.subarray(0, parsed.headerEnd);
      const parts: Uint8Array[] = [head];
      const dropped: unknown[] = [];
      let kept = 0;
      let damageBytes = buf.length - (parsed.header.headerLost === true ? 0 : parsed.headerEnd);
      parsed.records.forEach((r, i) => {
        let value: unknown;
        let decodes = true;
        try {
          value = decodeFrame(buf, r, path);
        } catch {
          decodes = false;
          parsed.warnings.push({ code: 'E_TAPE_CORRUPT', offset: r.offset, message: `${path}: record at byte ${r.offset} does not decode; dropped by the rewrite.` });
        }
        if (decodes) damageBytes -= r.length;
        if (decodes && !drop.has(i)) {
          parts.push(buf.subarray(r.offset, r.offset + r.length));
          kept++;
        } else if (decodes) dropped.push(value);
      });
      // Nothing dropped and nothing damaged: the file already is what the rewrite would write.
      // Left alone (a prune of a sound tape changes no inode, time or hard link).
      if (dropped.length === 0 && damageBytes === 0 && parsed.header.headerLost !== true) return { kept, dropped, warnings: parsed.warnings, damageBytes, freshHeader: undefined };
      await replaceTapeBytes(path, parts);
      const freshHeader = parsed.header.headerLost !== true ? undefined : buf.length === 0 ? 'empty' : 'damaged';
      return { kept, dropped, warnings: parsed.warnings, damageBytes, freshHeader };
    },
    options,
  );
}

/**
 * Rewrites a tape from what `build` makes of it as read under the lock (frames checked, not
 * decoded, with where its header ends): the parts it returns become the whole file, written as
 * {@link rewriteTapeFrames} writes (a temp file beside the tape, fsynced, renamed over it), so a
 * crash leaves the old tape or the new one. `build` returning undefined leaves the tape as it is. For rewrites that add
 * records as well as drop them (`tapedeck merge`); the caller's parts must form a whole tape.
 *
 * @example
 * await rewriteTapeWith('chat.tape', (scan) => [scan.bytes.subarray(0, scan.frames[0]?.offset ?? scan.size), extraFrame]);
 */
export async function rewriteTapeWith(path: string, build: (scan: TapeScan & { headerEnd: number }) => Uint8Array[] | undefined, options: LockedCallOptions = {}): Promise<boolean> {
  refuseNonTapeFile(path);
  return withTapeLock(
    path,
    async () => {
      await removeDeadTemps(path);
      const buf = await readTapeFile(path, 'read for rewrite');
      const parsed = parseTape(buf, path, false);
      const parts = build({ header: parsed.header, bytes: buf, frames: parsed.records, warnings: parsed.warnings, size: buf.length, headerEnd: parsed.headerEnd });
      if (parts === undefined) return false;
      await replaceTapeBytes(path, parts);
      return true;
    },
    options,
  );
}

/**
 * A rewrite or an import killed midway left its temp file beside the tape: the next rewrite
 * removes it, even one that finds nothing to change. Under the lock, which a live rewrite holds
 * while its temp file exists, so only a dead writer's goes (./rewrite-temps.ts).
 */
function removeDeadTemps(path: string): Promise<string[]> {
  return removeDeadTapeTemps(tapeTarget(path), deadHere);
}

/**
 * Removes the temp files that a rewrite or an import killed midway left beside the tape at
 * `path`, once their process is dead on this host (./rewrite-temps.ts): for a writer opening
 * the tape and an import about to build one. Looked for without the lock (one directory read);
 * removed under it, waited for briefly: a live rewrite holds it (and then none of its files is
 * dead), and opening or importing never waits long on tidying. Never throws.
 *
 * @example
 * await removeDeadTempsSoon('tapes/chat.tape')
 */
export async function removeDeadTempsSoon(path: string, timing: TapeLockOptions = {}): Promise<void> {
  const file = tapeTarget(path);
  if ((await deadTapeTemps(file, deadHere)).length === 0) return;
  await withTapeLock(path, () => removeDeadTapeTemps(file, deadHere), { ...timing, timeoutMs: 200 }).catch(() => {});
}

/**
 * Replaces the file at `path` with `parts` atomically: a temp file beside it (named as init's
 * .gitignore expects), fsynced, given the tape's mode, renamed over it, the directory fsynced.
 * The caller holds the tape's lock.
 */
async function replaceTapeBytes(path: string, parts: Uint8Array[]): Promise<void> {
  // Over the file a symbolic link leads to, not over the link (which would become a copy).
  const file = tapeTarget(path);
  const dir = dirname(file);
  const tmp = rewriteTempPath(file);
  let fh: FileHandle | undefined;
  try {
    const was = await stat(file).catch(() => undefined);
    // The last check before a rename over the path: a device is never replaced.
    const bad = was === undefined ? undefined : nonTapeFile(path, was);
    if (bad !== undefined) throw bad;
    fh = await open(tmp, 'wx');
    await writeAll(fh, Buffer.concat(parts));
    if (was !== undefined) {
      // The tape keeps its owner and group, not the rewriter's: a root CI container re-recording
      // a mounted checkout left a root-owned tape its owner could no longer read. Allowed to
      // root (and to a member of the group for the group); otherwise the rewriter's, as before.
      await fh.chown(was.uid, was.gid).catch(() => fh!.chown(-1, was.gid).catch(() => {}));
      // After chown, which may clear set-id bits: the tape's mode, as it was.
      await fh.chmod(was.mode & 0o7777).catch(() => {});
    }
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, file);
  } catch (e) {
    await fh?.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e instanceof TapedeckError ? e : ioError(e, path, 'rewrite');
  }
  await syncDir(dir);
}

// ---------------------------------------------------------------------------------------------
// Locking
// ---------------------------------------------------------------------------------------------

interface LockInfo {
  pid?: number;
  host?: string;
  time?: string;
  token?: string;
  /** When the holder's process started (Linux: clock ticks since boot), to tell a reused pid. */
  start?: string;
}

const HOST = hostname();
const TOKEN_PREFIX = randomBytes(6).toString('hex');
let lockCounter = 0;

// Reentrancy is an explicit handle rather than AsyncLocalStorage: once used, that turns on
// promise hooks for the whole process (every promise of the user's program pays for them on
// Node 20), and a recording proxy or test run would carry that cost from its first append on.

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface HeldLock {
  info: LockInfo;
  raw: string;
  /** Whether the content is a complete lock record (pid and host). */
  complete: boolean;
  ageMs: number;
}

async function readLock(lockPath: string): Promise<HeldLock | undefined> {
  try {
    const [raw, st] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath)]);
    let info: LockInfo = {};
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (parsed !== null && typeof parsed === 'object') info = parsed as LockInfo;
    } catch {
      // Being written right now, or left empty by a holder killed between create and write.
    }
    return { info, raw, complete: typeof info.pid === 'number' && typeof info.host === 'string', ageMs: Date.now() - st.mtimeMs };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether a process of this host is alive (EPERM: alive, another user's). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started (Linux: field 22 of /proc/<pid>/stat, clock ticks since boot), or
 * undefined where there is no /proc. Two processes that had the same pid never share a start.
 */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

let ownStart: string | undefined | null = null;

/**
 * This process as a holder of a lock or a writer's file names itself: pid, host and, where the
 * system says, when it started (so a later process given the same pid is not taken for it).
 */
export function holderId(): { pid: number; host: string; start?: string } {
  if (ownStart === null) ownStart = processStart(process.pid);
  return { pid: process.pid, host: HOST, ...(ownStart === undefined ? {} : { start: ownStart }) };
}

/**
 * Whether process `pid` of this host is gone (what a rewrite temp file's name says of its
 * writer), as the lock judges a holder.
 *
 * @example
 * deadHere(process.pid) // false
 */
export function deadHere(pid: number): boolean {
  return holderGone({ pid, host: HOST }) === true;
}

/**
 * Whether the holder a lock or writer file names is gone for good: on this host its pid is dead,
 * or names a process that started at another time (the pid was reused). Undefined for a holder
 * on another host: its pid says nothing here.
 */
export function holderGone(info: { pid?: unknown; host?: unknown; start?: unknown }): boolean | undefined {
  if (typeof info.pid !== 'number' || info.host !== HOST) return undefined;
  if (!pidAlive(info.pid)) return true;
  if (typeof info.start !== 'string') return false;
  const now = processStart(info.pid);
  return now !== undefined && now !== info.start;
}

/**
 * How long a lock file may stay empty or unparseable. Writing ~100 bytes right after creating
 * the file takes microseconds, so an incomplete lock older than this belongs to a holder killed
 * in between (found by the SIGKILL test), not to a slow one.
 */
const INCOMPLETE_LOCK_GRACE_MS = 2000;

function isStale(lock: HeldLock, staleMs: number): boolean {
  if (!lock.complete) return lock.ageMs > Math.min(staleMs, INCOMPLETE_LOCK_GRACE_MS);
  // A pid only means something on its own host, and there it decides: a holder paused past
  // staleMs (its heartbeat stopped with it) is alive and may still write, so only its death
  // (or its pid now naming a process that started at another time) frees the lock.
  return holderGone(lock.info) ?? lock.ageMs > staleMs;
}

/**
 * Remove a stale lock without racing other waiters: two waiters that both saw the same stale
 * lock must not let the slower one delete the lock the faster one just took. A short-lived
 * `<tape>.lock.takeover` file serializes takeovers, and under it we re-check that the lock is
 * still the stale one we judged.
 */
async function takeOverStale(lockPath: string, staleRaw: string, staleMs: number): Promise<void> {
  const guard = `${lockPath}.takeover`;
  let fh: FileHandle;
  try {
    fh = await open(guard, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // A takeover takes microseconds; a guard older than a few seconds belongs to a dead process.
    const st = await stat(guard).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > 5000) await unlink(guard).catch(() => {});
    return;
  }
  try {
    await fh.close();
    const now = await readLock(lockPath);
    if (now && now.raw === staleRaw && isStale(now, staleMs)) await unlink(lockPath).catch(() => {});
  } finally {
    await unlink(guard).catch(() => {});
  }
}

/**
 * Run `fn` while holding the tape's exclusive lock file `<tape>.lock` (created with `wx`; it holds
 * pid, host, process start, time and a random token). Waits with jittered exponential backoff;
 * takes over a lock whose process is gone on this host, or from another host whose file is
 * older than `staleMs`; gives up after
 * `timeoutMs` with `E_TAPE_LOCKED` naming the holder. `fn` gets the held lock: passed as
 * `{ lock }` to appendRecords or rewriteTapeFrames on the same tape, they write under it, which
 * is what makes a check-then-append atomic; every other call, in this process or another,
 * queues on the lock file.
 *
 * @example
 * await withTapeLock('chat.tape', async (lock) => {
 *   const { records } = await readTape('chat.tape');
 *   if (!records.some((r) => (r.value as { key: string }).key === key)) await appendRecords('chat.tape', [rec], { lock });
 * });
 */
export async function withTapeLock<T>(path: string, fn: (lock: HeldTapeLock) => Promise<T>, options: LockedCallOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  // Beside the file the tape's links lead to: writers that name it by another path share it.
  const lockPath = `${tapeTarget(path)}.lock`;
  const key = resolve(lockPath);
  if (options.lock !== undefined) {
    if (options.lock.lockFile !== key || !options.lock.held) {
      throw new TapedeckError('E_ARG', `The lock passed for tape ${path} is not held: ${options.lock.lockFile} (${options.lock.held ? 'held' : 'released'}).`, {
        file: path,
        hint: "Pass the lock withTapeLock gave this tape's callback, and only while that callback runs.",
      });
    }
    return fn(options.lock);
  }
  // Unique per acquisition: a per-process random prefix plus a counter (no syscall each time).
  const token = `${TOKEN_PREFIX}${(lockCounter++).toString(16).padStart(4, '0')}`;
  const me = holderId();
  const content = `${JSON.stringify({ pid: me.pid, host: me.host, time: new Date().toISOString(), token, ...(me.start === undefined ? {} : { start: me.start }) })}\n`;
  const deadline = Date.now() + timeoutMs;
  let delay = 2;
  let last: HeldLock | undefined;
  for (;;) {
    // Synchronous: creating and writing a 100-byte file takes microseconds, and keeping the
    // create and the write in one tick shrinks the window in which the lock has no owner.
    let fd: number | undefined;
    try {
      fd = openSync(lockPath, 'wx');
    } catch (e) {
      // Named by the tape, the lock file in what failed: the fix (copy the tape elsewhere, a
      // path to give) is about the tape, never its lock file.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw ioError(e, path, `create its lock file ${lockPath}`);
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, content);
        closeSync(fd);
      } catch (e) {
        try {
          closeSync(fd);
        } catch {
          // already closed
        }
        try {
          unlinkSync(lockPath); // ours, and useless without an owner
        } catch {
          // nothing left to clean
        }
        throw ioError(e, path, `write its lock file ${lockPath}`);
      }
      break;
    }
    const held = await readLock(lockPath).catch(() => undefined);
    if (held) {
      last = held;
      if (isStale(held, staleMs)) {
        // No `continue`: if the takeover cannot happen (another waiter is doing it, or the
        // file cannot be removed) we still back off and honour the deadline.
        await takeOverStale(lockPath, held.raw, staleMs).catch(() => {});
        delay = 2;
      }
    }
    if (Date.now() >= deadline) {
      const who = !last
        ? 'another process'
        : last.complete
          ? `pid ${last.info.pid} on ${last.info.host} since ${last.info.time ?? '?'}`
          : 'a lock file that names no owner (being created, or left by a killed process)';
      throw new TapedeckError('E_TAPE_LOCKED', `Tape ${path} is locked by ${who}; gave up after ${timeoutMs} ms.`, {
        file: path,
        lockFile: lockPath,
        holder: last?.info,
        hint: `If that process is gone, delete ${lockPath}; otherwise run again once it is done (from the library, a longer lock timeoutMs waits for it).`,
      });
    }
    await sleep(Math.min(delay, Math.max(1, deadline - Date.now())) * (0.5 + Math.random()));
    delay = Math.min(delay * 2, 100);
  }
  const acquiredAt = Date.now();
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockPath, now, now).catch(() => {});
  }, Math.max(10, Math.floor(staleMs / 3)));
  heartbeat.unref();
  const handle = { lockFile: key, held: true };
  try {
    return await fn(handle);
  } finally {
    handle.held = false;
    clearInterval(heartbeat);
    // Only remove the lock if it is still ours. Others take a lock over only when it looks
    // stale, which a lock held (and touched) for less than staleMs / 3 never does, so the
    // read-back is needed only after a long hold.
    try {
      if (Date.now() - acquiredAt < staleMs / 3 || readFileSync(lockPath, 'utf8').includes(token)) unlinkSync(lockPath);
    } catch {
      // already gone
    }
  }
}
