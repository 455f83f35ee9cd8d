/**
 * Files that stand where a tape should and are something else, each with its own fix: a Git LFS
 * pointer (a clone that did not fetch the tape: "restore it from version control" gives back
 * the same pointer) and JSON text (a `tapedeck export` kept under the tape's name, which
 * `tapedeck import` turns back into a tape). Told by their first bytes, before the magic check
 * calls the header damaged.
 */
import { TapedeckError } from '../errors.ts';

const LFS = 'version https://git-lfs';

/** Where the import of JSON text found at `file` may write its tape: beside it, never over it. */
const tapeNameFor = (file: string): string => (/\.json$/i.test(file) ? `${file.replace(/(\.tape)?\.json$/i, '')}.tape` : `${file.replace(/\.tape$/i, '')}.imported.tape`);

/**
 * The error for a file that is not a tape but one of the above, or undefined.
 *
 * @example
 * notATape(new TextEncoder().encode('version https://git-lfs.github.com/spec/v1\n'), 'a.tape')?.hint // 'Fetch the tape: git lfs pull …'
 */
export function notATape(buf: Uint8Array, file: string): TapedeckError | undefined {
  let i = 0;
  // A UTF-8 byte order mark, then white space, may stand before JSON text.
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  // Text, as far as the first 512 bytes tell: a control byte other than white space is in no JSON
  // text and in almost any 512 random bytes (a damaged tape's first byte may be `{` too).
  let text = true;
  for (let k = i; k < Math.min(buf.length, i + 512) && text; k++) text = buf[k]! >= 0x20 || buf[k] === 0x0a || buf[k] === 0x0d || buf[k] === 0x09;
  if (text && (buf[i] === 0x7b || buf[i] === 0x5b)) {
    return new TapedeckError('E_TAPE_CORRUPT', `${file} is JSON text, not a tape.`, {
      file,
      offset: i,
      what: 'JSON text, not a tape',
      converted: true,
      hint: `If it is a tapedeck export (or a recording import reads), turn it into a tape: tapedeck import ${file} ${tapeNameFor(file)}; else give the path of the .tape file.`,
    });
  }
  if (buf.length >= LFS.length && LFS.split('').every((c, k) => buf[k] === c.charCodeAt(0))) {
    return new TapedeckError('E_TAPE_CORRUPT', `${file} is a Git LFS pointer, not the tape: the tape itself was not fetched.`, {
      file,
      offset: 0,
      what: 'a Git LFS pointer, not the tape',
      converted: true,
      hint: `Fetch the tape: git lfs pull --include "${file}" (git lfs install first, in a fresh clone).`,
    });
  }
  return undefined;
}
