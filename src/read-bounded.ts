// A file read whole into memory, with a bound that holds while it is read. The size stat gives is
// no bound: a pipe, a device or /dev/stdin says 0 and then gives bytes without end, so the
// commands that checked the size (or nothing) before reading grew to gigabytes on
// `tapedeck hash /dev/zero` or `yes | tapedeck canonical /dev/stdin`. Here the bytes are counted
// as they come and the read stops one byte past the limit: E_TOO_LARGE naming the file, the
// limit and the fix.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { TapedeckError } from './errors.ts';

/** How much a read takes, and what to say when there is more. */
export interface ReadBound {
  /** The most bytes read from stdin, a pipe, a device: anything that is not a regular file. */
  limit: number;
  /**
   * The most bytes read from a regular file, whose size is known before reading (default
   * `limit`); `Infinity` reads it whole whatever its size (a HAR to import, a tape).
   */
  fileLimit?: number;
  /** What the limit is, for the message: `the most tapedeck reads as one JSON document`. */
  most: string;
  /** The fix, the error's hint. */
  hint: string;
}

/** The first buffer for a pipe or device, doubled as it fills (a pipe gives ~64 KiB a read). */
const FIRST = 64 << 10;
/** The largest single read: readSync takes at most 2 GiB - 1. */
const MAX_READ = 1 << 30;

/**
 * The bytes of `file` (`-`: stdin), read to the end or refused with E_TOO_LARGE as soon as more
 * than the bound's limit has come: a regular file known to be larger is refused before any read.
 * File-system errors (ENOENT, EISDIR...) are thrown as the system's.
 *
 * @example
 * const bytes = readBounded('request.json', { limit: MAX_INPUT_BYTES, most: 'the most tapedeck hash reads', hint: 'Give a JSON file of at most 64 MiB.' });
 * readBounded('/dev/zero', { limit: 1024, most: 'the most tapedeck hash reads', hint: '…' }); // E_TOO_LARGE after 1025 bytes
 */
export function readBounded(file: string, bound: ReadBound): Buffer {
  const stdin = file === '-';
  const fd = stdin ? 0 : openSync(file, 'r');
  try {
    const st = fstatSync(fd);
    const regular = st.isFile();
    const limit = regular ? (bound.fileLimit ?? bound.limit) : bound.limit;
    if (regular && st.size > limit) throw tooLarge(file, bound, limit, regular);
    // One byte more than the limit is room for, so a file of exactly the limit is read whole and
    // one larger is known to be so. A regular file is read into one buffer of its size (and the
    // byte that finds its end); anything else into one that doubles as it fills, each read
    // straight into it (a buffer per read would keep its unused room alive with the bytes).
    const most = limit + 1;
    let buf = Buffer.allocUnsafe(Math.min(most, regular ? st.size + 1 : FIRST));
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        if (total >= most) throw tooLarge(file, bound, limit, regular);
        const grown = Buffer.allocUnsafe(Math.min(most, Math.max(buf.length * 2, FIRST)));
        buf.copy(grown, 0, 0, total);
        buf = grown;
      }
      const n = readSome(fd, buf, total, Math.min(buf.length - total, MAX_READ));
      if (n === 0) break;
      total += n;
    }
    if (total > limit) throw tooLarge(file, bound, limit, regular);
    return total === buf.length ? buf : buf.subarray(0, total);
  } finally {
    if (!stdin) closeSync(fd);
  }
}

/**
 * One read into `buf` from `at`: the bytes read, 0 at the end. Stdin may be non-blocking (a
 * parent that set O_NONBLOCK on the pipe): EAGAIN then means "nothing yet", and the read waits a
 * little and tries again, as a blocking read would have waited.
 */
function readSome(fd: number, buf: Buffer, at: number, length: number): number {
  for (;;) {
    try {
      return readSync(fd, buf, at, length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** `64 MiB` for a whole number of MiB, else the bytes. */
function size(n: number): string {
  return n % (1 << 20) === 0 ? `${n / (1 << 20)} MiB` : `${n} bytes`;
}

function tooLarge(file: string, bound: ReadBound, limit: number, regular: boolean): TapedeckError {
  const name = file === '-' ? 'stdin' : file;
  // Said only when a regular file has another limit: then the kind is what the limit is about.
  const kind = !regular && (bound.fileLimit ?? bound.limit) !== bound.limit ? ` from ${file === '-' ? 'stdin' : 'a pipe or device'}` : '';
  return new TapedeckError('E_TOO_LARGE', `${name} holds more than ${size(limit)} (${limit} bytes), ${bound.most}${kind}; reading stopped there.`, {
    file,
    limit,
    hint: bound.hint,
  });
}
