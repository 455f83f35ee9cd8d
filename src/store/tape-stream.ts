/**
 * A tape read front to back a window at a time, for the commands that visit every record once
 * (`tapedeck export`, `tree`, `inspect`, `verify`, `scan`): their memory then stays the same
 * whatever the tape's size, where reading the file whole (readTape, scanTape) holds all of it.
 *
 * What it finds is exactly what readTape finds. A sound tape (its header and every frame whole
 * and matching its CRC) is read window by window. At the first thing that is not a sound frame
 * (damage, a torn tail), and for a header that does not parse, it reads the rest of the file
 * whole through the same file handle and leaves the decision to the whole-file parser
 * (tape-codec.ts parseTape), so damage is reported with the same words and offsets; only a
 * damaged tape costs its size in memory. Like readTapeFile, it reads the file as it was opened:
 * a tape replaced by a rewrite meanwhile is read as the one that was opened.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { TapedeckError } from '../errors.ts';
import { checkFrame, decodePayloadOrWarn, FRAME_HEADER_SIZE, HEADER_FIXED, headerSpan, parseHeader, parseTape, type FrameFault, type TapeHeader, type TapeWarning } from './tape-codec.ts';
import { nativeStringsFor, readRange, readRangeInto, tapeIoError } from './tape-file.ts';
import { refuseNonTapeFile } from './tape-target.ts';

/** A window: ~4 MB of frames per read (a frame larger than that is read whole). */
const WINDOW = 4 * 1024 * 1024;

/** One sound frame: its offset in the file and its payload (the msgpack bytes after the frame header). */
export interface TapeFrame {
  offset: number;
  payload: Uint8Array;
}

/** A tape being read by {@link withTapeStream}. */
export interface TapeStream {
  readonly header: TapeHeader;
  /** The file's size as read (what readTape calls `size`). */
  readonly size: number;
  /** Damage found, in file order (the header's first); complete once `frames()` has ended. */
  readonly warnings: TapeWarning[];
  /**
   * The sound frames in file order; call it once. A payload is valid until the next frame is
   * asked for: the window is read over again (copy what you keep; {@link decodedRecords} does).
   */
  frames(): AsyncGenerator<TapeFrame>;
  /**
   * The file's bytes [start, end) as they were read: what a warning's damaged region holds, for
   * `tapedeck scan` to search. Call it before `withTapeStream`'s callback settles.
   */
  bytes(start: number, end: number): Promise<Uint8Array>;
}

/**
 * Opens a tape, hands it to `use` as a {@link TapeStream} and closes it when `use` settles.
 * Errors are readTape's: a missing tape is E_TAPE_NOT_FOUND, a file that is no tape E_TAPE_CORRUPT.
 *
 * @example
 * const n = await withTapeStream('chat.tape', async (t) => {
 *   let count = 0;
 *   for await (const _ of t.frames()) count++;
 *   return count;
 * });
 */
export async function withTapeStream<T>(path: string, use: (stream: TapeStream) => Promise<T>, opts: { window?: number } = {}): Promise<T> {
  // A device or FIFO is no tape (opening a FIFO would wait for a writer of the pipe).
  refuseNonTapeFile(path);
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw tapeIoError(e, path, 'read');
  }
  try {
    return await use(await start(fh, path, opts.window ?? WINDOW));
  } finally {
    await fh.close().catch(() => {});
  }
}

async function start(fh: FileHandle, path: string, window: number): Promise<TapeStream> {
  const size = await io(path, async () => (await fh.stat()).size);
  await nativeStringsFor(size);
  // The header: its fixed part says how long its metadata is.
  const fixed = await readAt(fh, path, 0, Math.min(size, HEADER_FIXED));
  const first = await readAt(fh, path, 0, Math.min(size, fixed.length === HEADER_FIXED ? headerSpan(fixed) : HEADER_FIXED));
  let parsed: { header: TapeHeader; end: number } | undefined;
  if (size > 0) {
    try {
      parsed = parseHeader(first, path);
    } catch (e) {
      if (!(e instanceof TapedeckError && e.code === 'E_TAPE_CORRUPT')) throw e;
    }
  }
  if (parsed === undefined) {
    // An empty file, or a header the whole-file reader resynchronizes past (or refuses).
    const bytes = await readAt(fh, path, 0, size);
    const whole = parseTape(bytes, path, false);
    return { header: whole.header, size: bytes.length, warnings: whole.warnings, frames: () => rest(whole.records, bytes), bytes: async (s, e) => bytes.subarray(s, e) };
  }
  const warnings: TapeWarning[] = [];
  const header = parsed.header;
  let sizeRead = size;
  let pos = parsed.end;
  // The window: bytes [at, at + buf.length) of the file, each read into the same buffer (`reused`).
  // A fresh 4 MB buffer per window made the reads and the CRCs 2-3x slower (100,000 frames, CRC
  // checks only: ~310 ms against ~100 ms; decoding them too: ~1.4 s against ~1.1 s): the system
  // maps and fills new pages for each, and the CRC reads bytes that are no longer in the cache.
  // A frame longer than the window is read into a buffer of its own.
  let buf: Buffer = first;
  let at = 0;
  let reused: Buffer | undefined;
  // The whole file, once damage made the whole-file reader read it: its bytes are the ones the
  // warnings describe (the file may have grown since the window was read).
  let whole: Buffer | undefined;
  async function* frames(): AsyncGenerator<TapeFrame> {
    while (pos < size) {
      const len = await frameAt(pos);
      if (len < 0) {
        // Not a sound frame: the whole-file reader says what it is and reads on from there.
        whole = await readAt(fh, path, 0, await io(path, async () => (await fh.stat()).size));
        sizeRead = whole.length;
        const parsedWhole = parseTape(whole, path, false);
        for (const w of parsedWhole.warnings) if (w.offset >= pos) warnings.push(w);
        yield* rest(parsedWhole.records.filter((r) => r.offset >= pos), whole);
        return;
      }
      yield { offset: pos, payload: buf.subarray(pos - at + FRAME_HEADER_SIZE, pos - at + len) };
      pos += len;
    }
  }
  /** Cut off by the window's end rather than the file's. */
  const cut = (c: number | FrameFault): boolean => typeof c !== 'number' && c.torn && at + buf.length < size;
  /**
   * The length of the sound frame at p, or -1 (the frame checks are the whole-file reader's). A
   * frame the window cuts off is looked at again from a window that starts at it: first for its
   * header, then, longer than a window, for all of it.
   */
  async function frameAt(p: number): Promise<number> {
    let c = checkFrame(buf, p - at);
    if (cut(c)) {
      await slide(p, FRAME_HEADER_SIZE);
      c = checkFrame(buf, 0);
    }
    if (cut(c)) {
      await slide(p, FRAME_HEADER_SIZE + buf.readUInt32BE(4));
      c = checkFrame(buf, 0);
    }
    return typeof c === 'number' ? c : -1;
  }
  /** Makes the window start at p and hold at least n bytes (fewer only at the end of the file). */
  async function slide(p: number, n: number): Promise<void> {
    const len = Math.min(size - p, Math.max(window, n));
    if (len > window) buf = await readAt(fh, path, p, len);
    else {
      reused ??= Buffer.allocUnsafeSlow(Math.min(window, size));
      buf = await io(path, () => readRangeInto(fh, reused!, p, len));
    }
    at = p;
  }
  return {
    header,
    warnings,
    frames,
    bytes: async (s, e) => (whole ? whole.subarray(s, e) : readAt(fh, path, s, Math.max(0, e - s))),
    get size() {
      return sizeRead;
    },
  };
}

/**
 * The records of a stream decoded, in file order, with their frames' offsets and lengths. A
 * payload whose CRC holds but which does not decode is a warning, as readTape says it: it is
 * added to `stream.warnings`, which is in file order once the records have all been read.
 *
 * @example
 * await withTapeStream('chat.tape', async (t) => {
 *   for await (const r of decodedRecords(t, 'chat.tape')) console.log(r.offset, r.value);
 *   console.log(t.warnings);
 * });
 */
export async function* decodedRecords(stream: TapeStream, file: string, onPayload?: (payload: Uint8Array) => void): AsyncGenerator<{ offset: number; length: number; value: unknown }> {
  let undecodable = false;
  for await (const f of stream.frames()) {
    onPayload?.(f.payload);
    // Copying byte strings out: the payload's window is read over again.
    const d = decodePayloadOrWarn(f.payload, f.offset, file, true);
    if ('warning' in d) {
      stream.warnings.push(d.warning);
      undecodable = true;
      continue;
    }
    yield { offset: f.offset, length: f.payload.length + FRAME_HEADER_SIZE, value: d.value };
  }
  if (undecodable) stream.warnings.sort((a, b) => a.offset - b.offset);
}

/** The frames the whole-file reader found, as payloads of `bytes`. */
async function* rest(records: readonly { offset: number; length: number }[], bytes: Uint8Array): AsyncGenerator<TapeFrame> {
  for (const r of records) yield { offset: r.offset, payload: bytes.subarray(r.offset + FRAME_HEADER_SIZE, r.offset + r.length) };
}

/** readRange, its errors as readTape's. */
function readAt(fh: FileHandle, path: string, p: number, n: number): Promise<Buffer> {
  return io(path, () => readRange(fh, p, n));
}

async function io<T>(path: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw tapeIoError(e, path, 'read');
  }
}
