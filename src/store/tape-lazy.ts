/**
 * A large tape opened without holding its file in memory: the frames are checked as the file
 * streams through one reused buffer, and a record's bytes are read again from the open file when
 * someone asks for them.
 *
 * Why: holding the file means touching every page of a buffer as large as the tape. On some
 * machines that is most of the open: on a virtual machine measured here, reading a 98 MB tape
 * into a fresh buffer took ~390 ms and the first pass over those bytes ~190 ms more, while the
 * same file streamed through one 4 MiB buffer with every frame's CRC checked took 49-83 ms. It
 * also keeps an open tape's memory flat as tapes grow.
 *
 * What it keeps sound: the file stays open (its descriptor names the file as it was at the
 * open, whatever is renamed over the path since), and every read checks that a frame is there
 * (magic and length); whatever is decoded or digested is checked against its CRC again. A frame
 * that is no longer there throws E_TAPE_CHANGED instead of serving other bytes. A tape with any
 * damage takes the whole-file path (tape-file.ts scanTape), which reports it.
 */
import { closeSync, fstatSync, openSync, read as readCb, readSync } from 'node:fs';
import { TapedeckError } from '../errors.ts';
import { checkFrame, crc32, FRAME_HEADER_SIZE, FRAME_MAGIC, HEADER_FIXED, headerSpan, MAX_RECORD_BYTES, parseHeader, type TapeHeader } from './tape-codec.ts';

/** The bytes read at a time while a tape is checked. */
const SCAN_CHUNK = 4 << 20;
/** The bytes read at a time for records asked for later (a window: neighbours come with it). */
const WINDOW = 256 << 10;

/** What {@link scanTapeFile} found: the frames of a sound tape and the file they are read from. */
export interface FileScan {
  header: TapeHeader;
  /** Each frame's offset and length, in file order (numbers, not an object per frame). */
  offsets: Int32Array | Float64Array;
  lengths: Uint32Array;
  size: number;
  /** The open file the frames are read from. */
  source: FileFrames;
}

/**
 * Checks the tape at `path` as {@link scanTape} does, through one reused buffer, and keeps the
 * file open for its records: undefined (the file closed) when the file is smaller than `min`
 * bytes or anything is not sound (a damaged header or frame, a torn tail), for the caller to
 * take the whole-file path, which reports it. Internal (tests vary `chunk` and `min`).
 *
 * @example
 * const scan = await scanTapeFile('big.tape', 16 << 20);
 * if (scan) peekPayload(scan.source.read(scan.offsets[0], scan.lengths[0], false), scan.source.at, scan.lengths[0]);
 */
export async function scanTapeFile(path: string, min: number, chunk = SCAN_CHUNK): Promise<FileScan | undefined> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined; // the whole-file path reports it
  }
  let kept = false;
  try {
    const st = fstatSync(fd);
    const size = st.size;
    if (size < min || size < HEADER_FIXED) return undefined;
    let buf = Buffer.allocUnsafeSlow(Math.min(chunk, size));
    // buf[0, have) holds the file's bytes from `base` on.
    let base = 0;
    let have = 0;
    let header: TapeHeader | undefined;
    // Typed arrays grown by doubling: plain arrays grown by push took ~15 ms more per 100,000
    // frames (fresh processes), each growth copying into memory touched for the first time.
    // Offsets as 32-bit integers where they fit: a double read from a Float64Array and stored
    // in a record's field gives each record a boxed number.
    const Offsets = size < 2 ** 31 ? Int32Array : Float64Array;
    let offsets: Int32Array | Float64Array = new Offsets(4096);
    let lengths = new Uint32Array(4096);
    let count = 0;
    let pos = 0; // the next frame's start in buf
    while (base + have < size) {
      // Keep what is not yet checked (a frame cut by the last read), then fill up.
      if (pos > 0) {
        buf.copyWithin(0, pos, have);
        base += pos;
        have -= pos;
        pos = 0;
      }
      if (have === buf.length) {
        // The header or one frame is longer than the buffer: room for all of it (what it
        // declares is checked once it is in).
        let need: number;
        if (header === undefined) need = have < HEADER_FIXED ? HEADER_FIXED : headerSpan(buf);
        else need = have < FRAME_HEADER_SIZE ? FRAME_HEADER_SIZE : FRAME_HEADER_SIZE + buf.readUInt32BE(4);
        if (need > MAX_RECORD_BYTES + FRAME_HEADER_SIZE || need <= have) return undefined;
        const grown = Buffer.allocUnsafeSlow(Math.min(need, size - base));
        buf.copy(grown, 0, 0, have);
        buf = grown;
        if (have === buf.length) return undefined; // it runs past the end of the file
      }
      const got = await readAt(fd, buf, have, Math.min(buf.length - have, size - base - have), base + have);
      if (got === 0) return undefined; // the file shrank while it was read
      have += got;
      const final = base + have >= size;
      if (header === undefined) {
        if (have < HEADER_FIXED || have < headerSpan(buf.subarray(0, have))) {
          if (final) return undefined;
          continue;
        }
        try {
          const h = parseHeader(buf.subarray(0, have), path);
          header = h.header;
          pos = h.end;
        } catch {
          return undefined;
        }
      }
      const view = new DataView(buf.buffer, buf.byteOffset, have);
      const bytes = buf.subarray(0, have);
      while (pos < have) {
        const c = checkFrame(bytes, pos, view);
        if (typeof c !== 'number') {
          if (c.torn && !final) break;
          return undefined;
        }
        if (count === offsets.length) {
          const o = new Offsets(count * 2);
          o.set(offsets);
          offsets = o;
          const l = new Uint32Array(count * 2);
          l.set(lengths);
          lengths = l;
        }
        offsets[count] = base + pos;
        lengths[count++] = c;
        pos += c;
      }
    }
    if (header === undefined || base + pos !== size) return undefined;
    kept = true;
    return { header, offsets: offsets.subarray(0, count), lengths: lengths.subarray(0, count), size, source: new FileFrames(path, fd, st.dev, st.ino) };
  } catch {
    return undefined;
  } finally {
    if (!kept) closeSync(fd);
  }
}

function readAt(fd: number, buf: Buffer, at: number, n: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => readCb(fd, buf, at, n, position, (e, got) => (e ? reject(e) : resolve(got))));
}

// A tape's file is closed when its records are no longer reachable, if close() did not come first.
const unreachable = new FinalizationRegistry<{ fd: number | undefined }>((held) => {
  if (held.fd !== undefined) closeSync(held.fd);
  held.fd = undefined;
});

/**
 * The frames of a tape read from its open file on demand, through a window that is reused:
 * bytes handed out by {@link FileFrames.read} are valid until the next read.
 */
export class FileFrames {
  private readonly fd: { fd: number | undefined };
  private win: Buffer = Buffer.alloc(0);
  private winStart = 0;
  private winEnd = 0;
  /** Where the frame asked for last starts in the bytes {@link read} returned. */
  at = 0;

  constructor(
    readonly file: string,
    fd: number,
    private readonly dev: number,
    private readonly ino: number,
  ) {
    this.fd = { fd };
    unreachable.register(this, this.fd, this);
  }

  /**
   * The bytes holding the frame at `offset` (`length` bytes, header included), which starts at
   * {@link at} in them: its magic and length checked, and with `crc` its CRC. Valid until the
   * next read; copy what is kept (msgpack decoding keeps views of binary values).
   */
  read(offset: number, length: number, crc: boolean): Buffer {
    this.at = this.load(offset, length, crc);
    return this.win;
  }

  /** Closes the file; a record read later opens it again for that read, if it is still the same file. */
  close(): void {
    unreachable.unregister(this);
    if (this.fd.fd !== undefined) closeSync(this.fd.fd);
    this.fd.fd = undefined;
  }

  /** Where the frame at `offset` starts in the window, read into it if it is not there. */
  private load(offset: number, length: number, crc: boolean): number {
    let at: number;
    if (offset >= this.winStart && offset + length <= this.winEnd) {
      at = offset - this.winStart;
    } else {
      // Reading on from the window (an index built at open) takes a large one; a record asked
      // for alone (a replay) only its own bytes (a read costs the same ~3 us up to 8 KiB).
      const onward = offset >= this.winStart && offset <= this.winEnd + WINDOW && this.winEnd > 0;
      const want = Math.max(length, onward ? WINDOW : 0);
      if (this.win.length < want) this.win = Buffer.allocUnsafeSlow(Math.max(want, WINDOW));
      const fd = this.open();
      let got: number;
      try {
        got = readSync(fd, this.win, 0, want, offset);
      } catch (e) {
        if (fd !== this.fd.fd) closeSync(fd);
        this.winEnd = this.winStart = 0;
        throw new TapedeckError('E_TAPE_IO', `Tape ${this.file}: reading the record at byte ${offset} failed: ${(e as Error).message}`, {
          file: this.file,
          offset,
          cause: (e as NodeJS.ErrnoException).code,
          hint: 'Check that the tape is still readable, then open it again.',
        });
      }
      if (fd !== this.fd.fd) closeSync(fd);
      this.winStart = offset;
      this.winEnd = offset + got;
      at = 0;
      if (got < length) throw this.changed(offset);
    }
    const w = this.win;
    for (let i = 0; i < FRAME_MAGIC.length; i++) if (w[at + i] !== FRAME_MAGIC[i]) throw this.changed(offset);
    if (w.readUInt32BE(at + 4) !== length - FRAME_HEADER_SIZE) throw this.changed(offset);
    if (crc && crc32(new Uint8Array(w.buffer, w.byteOffset + at + FRAME_HEADER_SIZE, length - FRAME_HEADER_SIZE)) !== w.readUInt32BE(at + 8)) throw this.changed(offset);
    return at;
  }

  /**
   * The open file; after close(), the file opened again for one read (closed by the caller) if
   * the path still names the same file.
   */
  private open(): number {
    if (this.fd.fd !== undefined) return this.fd.fd;
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      throw this.changed(undefined);
    }
    const st = fstatSync(fd);
    if (st.dev !== this.dev || st.ino !== this.ino) {
      closeSync(fd);
      throw this.changed(undefined);
    }
    return fd;
  }

  private changed(offset: number | undefined): TapedeckError {
    return new TapedeckError(
      'E_TAPE_CHANGED',
      offset === undefined
        ? `Tape ${this.file} was removed or replaced after it was opened, and a record of it was asked for.`
        : `Tape ${this.file} changed after it was opened: the record at byte ${offset} is no longer there as it was checked.`,
      { file: this.file, ...(offset === undefined ? {} : { offset }), hint: 'Open the tape again (start the run again): tapedeck writes tapes by appending or by replacing the file, never in place.' },
    );
  }
}
