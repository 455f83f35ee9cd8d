/**
 * A HAR file's `log.entries` read in chunks, entry by entry as they are found: no buffer of the
 * whole file is made (filling a fresh 42 MB buffer cost ~10,700 page faults, and a buffer that
 * large weighs on the collector's heuristics as external memory). One buffer is reused: the
 * entry that crosses a chunk's end is carried to the buffer's start before the next read, and
 * the buffer grows when one entry is larger than it.
 *
 * The split is the one of har-split.ts for entries laid out one a line, and it is trusted on
 * the same terms, checked as it goes and at the end:
 * - the text before the array (the first `entries` array of the first `log` object) is kept;
 *   the text after it is known only at the end of the file, and there the two, with the array
 *   replaced by a string no file holds, must parse with that string at `log.entries`
 *   ({@link splitRest}): the reader throws {@link SplitInDoubt} otherwise, before it says the
 *   entries are done;
 * - the redaction salt the document names ({@link harSalt}) is read from the text before the
 *   array, as the import needs it before the first entry, and the end of the file must confirm
 *   it: a salt named again after the array, which the whole parse would take, is doubt too;
 * - the elements are found by their separator (`}`, `,`, the whitespace before the first
 *   element, `{`) and each element's text must parse (a SyntaxError otherwise);
 * - texts are decoded as readFileSync(file, 'utf8') decodes the whole: every span starts and
 *   ends at an ASCII byte, where UTF-8 decoding starts afresh (a chunk of ASCII bytes only is
 *   decoded as Latin-1, which is the same text and a plain copy).
 * So an import that took every entry from here and was not stopped by a throw read exactly the
 * whole parse's entries; on a throw, {@link HarChunks.whole} says whether the file was what the
 * split took it for (then the error is the import's own) or not (then parse the whole file).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { elementEnd, harSalt, lineSeparator, members, skipWs, splitRest, valueEnd } from './har-split.ts';

/**
 * Bytes read at a time (and the buffer's size until an entry needs more): a buffer that stays
 * in the CPU's cache is filled faster (reading a 42 MB file: ~3 ms in 128-512 KB chunks, ~5 ms
 * in 2 MB, ~6 ms in 4 MB), and imports measured a few ms less CPU with it than with 2 MB.
 */
export const CHUNK_BYTES = 256 << 10;

/** The end of the file showed that the split is not the document's own: parse the whole file. */
export class SplitInDoubt extends Error {
  constructor() {
    super('the HAR split is in doubt: the whole file is to be parsed');
  }
}

/** A HAR's entries read chunk by chunk (see the module's comment). */
export interface HarChunks {
  /**
   * The entries, parsed, in file order; read once. Throws SyntaxError for an element that is no
   * JSON, {@link SplitInDoubt} when the end of the file does not confirm the split.
   */
  entries: Iterable<unknown>;
  /**
   * Whether the whole file is the split's: every element JSON and the end confirmed. Entries
   * not read yet are read and parsed now. False after any throw of {@link entries}.
   */
  whole(): boolean;
  /** Closes the file (also done when the entries are all read). */
  close(): void;
  /** The redaction salt the document names before its entries ({@link harSalt}). */
  readonly salt: string | undefined;
}

/** The end of the entries: nothing more to give. */
const DONE = Symbol('done');

/**
 * Opens a HAR file for reading its entries in chunks, or undefined when the file is no regular
 * file, cannot be opened, or is not laid out for it (no `log.entries` array found in the file's
 * opening members, an empty array, elements not one a line): then read the whole file.
 * `chunkBytes` is for tests (small chunks put entries across chunk ends).
 *
 * @example
 * const chunks = openHarChunks('network.har')
 * if (chunks) try { for (const e of chunks.entries) console.log(e) } finally { chunks.close() }
 */
export function openHarChunks(file: string, chunkBytes = CHUNK_BYTES): HarChunks | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const reader = fstatSync(fd).isFile() ? ChunkReader.open(fd, chunkBytes) : undefined;
    if (reader) return reader;
  } catch {
    // A read that failed: the whole file's read says why.
  }
  closeSync(fd);
  return undefined;
}

class ChunkReader implements HarChunks {
  /** The bytes [0, filled) of `buf` are the file's from some offset on. */
  private buf: Buffer;
  private view: Buffer;
  private filled = 0;
  private eof = false;
  /** Whether buf[0, filled) is ASCII. */
  private ascii = true;
  /** Where the next element starts, and where the search for its closing brace goes on. */
  private at = 0;
  private hop = 0;
  /** The text before the entries array, and the separator after an element (`,`, whitespace, `{`). */
  private before = '';
  private after = '';
  salt: string | undefined;
  private fd: number | undefined;
  private failed = false;
  private done = false;
  private started = false;

  private constructor(fd: number, size: number) {
    this.fd = fd;
    this.buf = Buffer.allocUnsafe(size);
    this.view = this.buf.subarray(0, 0);
  }

  /** A reader at the first element, or undefined when the file does not open as one a line. */
  static open(fd: number, size: number): ChunkReader | undefined {
    const r = new ChunkReader(fd, Math.max(size, 64));
    r.fill();
    // The opening members up to the entries array, read again with more bytes until they fit.
    for (;;) {
      const start = r.arrayStart();
      // The array's opening and its first element's first byte read: the layout is known.
      if (start >= 0 && skipWs(r.view, start + 1) < r.filled) return r.firstElement(start) ? r : undefined;
      if (r.eof) return undefined;
      r.fill();
    }
  }

  /** The offset of the `[` of the first `entries` array of the first `log` object in the bytes read, or -1. */
  private arrayStart(): number {
    const b = this.view;
    let start = -1;
    // Each scan stops (-1) at the array: what follows is read as it comes.
    const entries = (i: number): number => {
      start = i;
      return -1;
    };
    const i = skipWs(b, 0);
    if (b[i] === 0x7b) members(b, i, 'log', 0x7b, (at) => members(b, at, 'entries', 0x5b, entries));
    return start;
  }

  /** Whether the array at `start` opens with an object on a line of its own (then the reader is set at it). */
  private firstElement(start: number): boolean {
    const b = this.view;
    const j = skipWs(b, start + 1);
    const after = lineSeparator(b, start, j);
    if (after === undefined) return false;
    if (!isUtf8(b.subarray(0, start))) return false; // refused by the whole file's read
    this.before = b.toString('utf8', 0, start);
    this.after = after;
    // The members before the array, closed where the array would be: the root's first `log`
    // object is the one read, so `null` and two closing braces end the document.
    try {
      this.salt = harSalt((JSON.parse(`${this.before}null}}`) as { log?: unknown }).log);
    } catch {
      this.salt = undefined; // the end of the file decides (splitRest), or the whole parse
    }
    this.at = j;
    this.hop = j;
    return true;
  }

  /**
   * Reads on into the buffer: the bytes before the current element are dropped (the rest moved
   * to the start), and the buffer doubled when the element fills it.
   */
  private fill(): void {
    const keep = this.at;
    if (keep > 0) {
      this.buf.copyWithin(0, keep, this.filled);
      this.filled -= keep;
      this.hop -= keep;
      this.at = 0;
      if (!this.ascii) this.ascii = isAscii(this.buf.subarray(0, this.filled));
    }
    if (this.filled === this.buf.length) {
      const grown = Buffer.allocUnsafe(this.buf.length * 2);
      this.buf.copy(grown, 0, 0, this.filled);
      this.buf = grown;
    }
    const from = this.filled;
    while (this.filled < this.buf.length) {
      const n = readSync(this.fd!, this.buf, this.filled, this.buf.length - this.filled, null);
      if (n === 0) {
        this.eof = true;
        break;
      }
      this.filled += n;
    }
    this.view = this.buf.subarray(0, this.filled);
    if (this.ascii) this.ascii = isAscii(this.view.subarray(from));
  }

  /** The text of bytes [s, e) as readFileSync(file, 'utf8') has it. */
  private text(s: number, e: number): string {
    if (this.ascii) return this.view.toString('latin1', s, e);
    // A byte that is no UTF-8 would be decoded as U+FFFD: the whole file's read refuses the file
    // for it, naming the byte (refuseNotUtf8).
    if (!isUtf8(this.view.subarray(s, e))) throw new SplitInDoubt();
    return this.view.toString('utf8', s, e);
  }

  /** The next entry, parsed, or DONE after the last (once the end of the file confirmed the split). */
  private next(): unknown {
    if (this.done) return DONE;
    const after = this.after;
    for (;;) {
      const k = elementEnd(this.view, this.hop, after, this.filled);
      if (k >= 0) {
        const s = this.at;
        this.at = k + after.length;
        this.hop = this.at;
        return JSON.parse(this.text(s, k + 1));
      }
      if (this.eof) return this.last();
      // A separator that may run past the bytes read: read on first, then search from there.
      this.hop = ~k;
      this.fill();
    }
  }

  /** The last element, once the end of the file confirms the rest of the document; then DONE. */
  private last(): unknown {
    const b = this.view;
    const e = valueEnd(b, this.at);
    if (e < 0) throw new SplitInDoubt();
    const close = skipWs(b, e);
    if (b[close] !== 0x5d) throw new SplitInDoubt();
    const log = splitRest(this.before, this.text(close + 1, this.filled));
    if (log === undefined || harSalt(log) !== this.salt) throw new SplitInDoubt();
    const v: unknown = JSON.parse(this.text(this.at, e));
    this.done = true;
    this.close();
    return v;
  }

  private step(): unknown {
    try {
      return this.next();
    } catch (e) {
      this.failed = true;
      this.close();
      throw e;
    }
  }

  get entries(): Iterable<unknown> {
    return {
      [Symbol.iterator]: () => {
        if (this.started) throw new Error('openHarChunks: the entries of a file are read once');
        this.started = true;
        return { next: (): IteratorResult<unknown> => (this.failed ? { done: true, value: undefined } : this.stepResult()) };
      },
    };
  }

  private stepResult(): IteratorResult<unknown> {
    const v = this.step();
    return v === DONE ? { done: true, value: undefined } : { done: false, value: v };
  }

  whole(): boolean {
    try {
      while (!this.failed && this.step() !== DONE);
    } catch {
      // Marked failed.
    }
    return !this.failed;
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
