// `tapedeck import` of a tapedeck JSON export larger than the 64 MiB it reads as one JSON
// document. That limit is the hashing core's (one request body is hashed as one document); an
// export is never hashed whole, its records are read one by one (importTapeJSON), so the limit
// refused the round trip docs/tape-format.md promises (tape -> export -> import, same bytes) for
// any tape over ~30 MB. Other inputs keep the limit.
import { constants, isUtf8 } from 'node:buffer';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { readBounded } from '../read-bounded.ts';

/** How much of the file's start tells a tapedeck export: its first member is "header". */
const SNIFF_BYTES = 4096;
/** A tapedeck export's start (`tapedeck export` writes "header" first), after an optional byte order mark. */
const EXPORT_START = /^(?:\uFEFF)?[ \t\r\n]*\{[ \t\r\n]*"header"[ \t\r\n]*:/;

/**
 * The text of `src` when it is a regular file over MAX_INPUT_BYTES (64 MiB) that starts as a
 * tapedeck JSON export, read whole (without a byte order mark); undefined for anything else (a
 * smaller file, stdin, a pipe, another format over the limit), which import reads as before.
 * The file is read into one buffer of its size and decoded once; the buffer is dropped before
 * the caller parses the text. Bytes that are not UTF-8 are E_IMPORT_FORMAT; an export longer
 * than the longest string JavaScript makes (~512 MiB on Node 20) is E_TOO_LARGE.
 *
 * @example
 * const text = largeExportText('big.export.json') // the export's JSON text, or undefined
 * if (text !== undefined) await importTapeJSON(text, 'big.tape')
 */
export function largeExportText(src: string): string | undefined {
  if (src === '-') return undefined;
  const st = statSync(src, { throwIfNoEntry: false });
  if (st?.isFile() !== true || st.size <= MAX_INPUT_BYTES) return undefined;
  const head = Buffer.alloc(SNIFF_BYTES);
  const fd = openSync(src, 'r');
  let got: number;
  try {
    got = readSync(fd, head, 0, SNIFF_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  if (!EXPORT_START.test(head.toString('utf8', 0, got))) return undefined;
  const bytes = readBounded(src, {
    limit: MAX_INPUT_BYTES,
    fileLimit: Infinity,
    most: 'the most tapedeck reads',
    hint: 'Give a tapedeck JSON export.',
  });
  if (!isUtf8(bytes)) {
    throw new TapedeckError('E_IMPORT_FORMAT', `${src} starts as a tapedeck JSON export but is not UTF-8 text; no tape written.`, {
      file: src,
      hint: 'Export the tape again (tapedeck export <tape> > <file>.json); a JSON export is UTF-8.',
    });
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  try {
    return bytes.toString('utf8', bom);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_STRING_TOO_LONG') throw e;
    throw new TapedeckError('E_TOO_LARGE', `${src} holds ${bytes.length} bytes, more text than the longest string this JavaScript runtime makes (${constants.MAX_STRING_LENGTH} characters); no tape written.`, {
      file: src,
      hint: 'Copy the .tape file itself (it needs no export), or export and import smaller tapes.',
    });
  }
}
