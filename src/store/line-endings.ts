/**
 * A tape whose line endings were converted (git's core.autocrlf, an editor, an archiver), read
 * off its magic bytes, and the error that says so. Browser builds take line-endings.browser.ts:
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
 * The error for a tape whose line endings were converted: every frame changed alike; pruning
 * would drop most records.
 *
 * @example
 * throw convertedTape('chat.tape', 'LF to CRLF')
 */
export function convertedTape(file: string, how: string): TapedeckError {
  return new TapedeckError('E_TAPE_CORRUPT', `${file} had its line endings converted (${how}): its magic bytes show it, and every record holding such a byte was changed the same way.`, {
    file,
    offset: 5,
    what: `line endings converted (${how})`,
    converted: true,
    hint: 'Undo the conversion: restore the tape from version control with "*.tape -text" in .gitattributes (npx tapedeck init adds it), or unpack it again without text conversion. Do not prune it: that would drop every changed record.',
  });
}
