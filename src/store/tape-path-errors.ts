/**
 * What a tape path that cannot hold a tape says, wherever a tape is opened or written (serve,
 * add, import, pull, a test run): a directory given where the tape file goes, or a tape whose
 * directory is on a read-only file system. The system's own words (`EISDIR: illegal operation on
 * a directory, read`, `ENOENT` from a recursive mkdir on a read-only mount) name neither the
 * mistake nor the fix; these name both.
 */
import { dirname, join } from 'node:path';
import { TapedeckError } from '../errors.ts';

/**
 * E_TAPE_IO for a directory where a tape file was expected, with a file path that would do.
 *
 * @example
 * throw tapeIsDirectory('tapes') // tapes is a directory, not a tape file. Give a file path such as tapes/chat.tape.
 */
export function tapeIsDirectory(path: string): TapedeckError {
  return new TapedeckError('E_TAPE_IO', `${path} is a directory, not a tape file.`, {
    file: path,
    cause: 'EISDIR',
    hint: `Give a file path such as ${join(path, 'chat.tape')}.`,
  });
}

/**
 * E_TAPE_IO for a tape that cannot be written because its directory is on a read-only file
 * system (EROFS): `doing` says what failed (`registering this writer in ro/chat.tape.writers`).
 *
 * @example
 * throw tapeReadOnly('ro/chat.tape', 'create')
 */
export function tapeReadOnly(path: string, doing: string): TapedeckError {
  const dir = dirname(path);
  return new TapedeckError('E_TAPE_IO', `Tape ${path}: ${doing} failed: the directory ${dir} is on a read-only file system (EROFS), so nothing can be recorded to the tape there.`, {
    file: path,
    dir,
    cause: 'EROFS',
    hint: `Copy the tape to a writable directory and give that path (cp ${path} <writable dir>/), or make the file system writable; replaying the tape only reads it (--mode replay).`,
  });
}
