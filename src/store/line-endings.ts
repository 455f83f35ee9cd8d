/**
 * A tape whose line endings were converted (git's core.autocrlf, an editor, an archiver), read
 * off its magic bytes or, for git's conversion, which leaves them alone, off its records, and
 * the error that says so. Browser builds take line-endings.browser.ts:
 * a page reads tapes it fetched, and its bundle has a budget.
 */
import { TapedeckError } from '../errors.ts';

/** The magic bytes' first five, before the line ending (`\x89TAPE`, see tape-codec.ts). */
const TAPE_START = [0x89, 0x54, 0x41, 0x50, 0x45];

/**
 * How a tape's line endings were converted, read off its magic bytes (`\x89TAPE\r\n\x1a`, made
 * to show it as PNG's are): `LF to CRLF` (git's core.autocrlf, an editor, an archiver) turns
 * its `\r\n` into `\r\r\n`, `CRLF to LF` into `\n`. undefined when neither.
 *
 * @example
 * convertedLineEndings(Buffer.from('\x89TAPE\r\r\n\x1a', 'latin1')) // 'LF to CRLF'
 */
export function convertedLineEndings(buf: Uint8Array): 'LF to CRLF' | 'CRLF to LF' | undefined {
  for (let i = 0; i < 5; i++) if (buf[i] !== TAPE_START[i]) return undefined;
  if (buf[5] === 0x0d && buf[6] === 0x0d && buf[7] === 0x0a && buf[8] === 0x1a) return 'LF to CRLF';
  if (buf[5] === 0x0a && buf[6] === 0x1a) return 'CRLF to LF';
  return undefined;
}

/**
 * The `n` bytes from `from` as they were before git's LF-to-CRLF conversion, and where they end
 * in `buf`; undefined when `buf` ends first. git (`*.tape text eol=crlf`, core.autocrlf) puts a
 * CR only before an LF that had none, so the magic bytes' own CR LF stay as they were and show
 * nothing: the records holding an LF byte are what changed, each CR before an LF is dropped to
 * read them back. (A CR LF of the record's own is dropped too: that record then does not read
 * back, another one may.)
 *
 * @example
 * withoutAddedCRs(Buffer.from('a\r\nb'), 0, 3) // { bytes: 'a\nb', end: 4 }
 */
export function withoutAddedCRs(buf: Uint8Array, from: number, n: number): { bytes: Uint8Array; end: number } | undefined {
  if (n > buf.length - from) return undefined;
  const bytes = new Uint8Array(n);
  let o = 0;
  let i = from;
  for (; o < n && i < buf.length; i++) {
    const b = buf[i]!;
    if (b === 0x0d && buf[i + 1] === 0x0a) continue;
    bytes[o++] = b;
  }
  return o === n ? { bytes, end: i } : undefined;
}

/**
 * The error for a tape whose line endings were converted: every frame changed alike; pruning
 * would drop most records. `at`: the byte of a record that reads back whole once the conversion
 * is undone, when the magic bytes did not show it (git's LF to CRLF).
 *
 * @example
 * throw convertedTape('chat.tape', 'LF to CRLF')
 * throw convertedTape('chat.tape', 'LF to CRLF', 113)
 */
export function convertedTape(file: string, how: string, at?: number): TapedeckError {
  const shown =
    at === undefined
      ? 'its magic bytes show it'
      : `the record at byte ${at} reads back whole once the CR put before each LF is dropped (git adds one only where an LF had none, so the magic bytes do not show it)`;
  return new TapedeckError('E_TAPE_CORRUPT', `${file} had its line endings converted (${how}): ${shown}, and every record holding such a byte was changed the same way.`, {
    file,
    offset: at ?? 5,
    what: `line endings converted (${how})`,
    converted: true,
    hint: `${how === 'CRLF to LF' ? committedHint(file) : RESTORE_HINT} Do not prune it: that would drop every changed record.`,
  });
}

/** LF to CRLF: git puts no CR into what it commits, so the committed copy is intact and restoring works. */
const RESTORE_HINT = 'Undo the conversion: restore the tape from version control with "*.tape -text" in .gitattributes (npx llm-tapedeck init adds it), or unpack it again without text conversion.';

/**
 * CRLF to LF is what `git add` does under a `text` rule (`* text eol=lf`), to the committed copy
 * itself: restoring that one brings the conversion back. An editor or archiver does it too, to
 * the working copy only, where restoring works; the bytes do not tell which, so both, in order.
 * The recording machine's own copy is intact, but `git add` alone sees it unchanged and adds
 * nothing: --renormalize adds it again under the new attribute.
 */
function committedHint(file: string): string {
  return (
    `Restore it from version control with "*.tape -text" in .gitattributes (npx llm-tapedeck init adds it). ` +
    `If it stays converted, git converted the copy it committed (a "text" rule such as "* text eol=lf" was in force when it was added): ` +
    `with "*.tape -text" committed, add the tape again from the machine that recorded it, whose copy is intact (git add --renormalize ${file}, then commit), or record it again.`
  );
}

/** The tape codec's readers that {@link framesReadWithoutAddedCRs} and {@link headerReadsWithoutAddedCRs} read with. */
export interface FrameCodec {
  magic: Readonly<Uint8Array>;
  headerFixed: number;
  frameHeader: number;
  maxRecord: number;
  hasFrameMagic(buf: Uint8Array, at: number): boolean;
  frameChecks(frame: Uint8Array): boolean;
  headerSpan(fixed: Uint8Array): number;
  parseHeader(buf: Uint8Array, file: string): unknown;
}

/**
 * Whether the bytes from `pos` (a frame that did not check) up to `stop` are frames git's LF to
 * CRLF conversion changed: one of them, read with each CR before an LF dropped, checks (magic,
 * length, CRC). A frame holding a CR LF of its own does not read back: the next one is tried.
 * `c`: the tape codec's readers (passed in: the codec imports this module).
 *
 * @example
 * if (framesReadWithoutAddedCRs(buf, pos, next, codec)) throw convertedTape(file, 'LF to CRLF', pos)
 */
export function framesReadWithoutAddedCRs(buf: Uint8Array, pos: number, stop: number, c: FrameCodec): boolean {
  for (let p = pos; p < stop; ) {
    const head = withoutAddedCRs(buf, p, c.frameHeader);
    if (head === undefined || !c.hasFrameMagic(head.bytes, 0)) return false;
    const len = new DataView(head.bytes.buffer).getUint32(4);
    const frame = len > c.maxRecord ? undefined : withoutAddedCRs(buf, p, c.frameHeader + len);
    if (frame === undefined) return false;
    if (c.frameChecks(frame.bytes)) return true;
    p = frame.end;
  }
  return false;
}

/**
 * Whether a header that did not check reads whole with each CR before an LF dropped (git's LF to
 * CRLF). The magic's own CR LF is git's to keep (it adds no CR there): read past it.
 *
 * @example
 * if (headerReadsWithoutAddedCRs(buf, file, codec)) throw convertedTape(file, 'LF to CRLF', 18)
 */
export function headerReadsWithoutAddedCRs(buf: Uint8Array, file: string, c: FrameCodec): boolean {
  const m = c.magic.length;
  for (let i = 0; i < m; i++) if (buf[i] !== c.magic[i]) return false;
  const undone = (n: number): Uint8Array | undefined => {
    const rest = withoutAddedCRs(buf, m, n - m);
    if (rest === undefined) return undefined;
    const out = new Uint8Array(n);
    out.set(buf.subarray(0, m));
    out.set(rest.bytes, m);
    return out;
  };
  const fixed = undone(c.headerFixed);
  const whole = fixed && undone(c.headerSpan(fixed));
  if (whole === undefined) return false;
  try {
    c.parseHeader(whole, file);
    return true;
  } catch {
    return false;
  }
}
