/**
 * The file a tape's path stands for. A tape may be a symbolic link (one recording shared by
 * several test folders, or kept outside the repository): appends follow the link as the system
 * does, but a rewrite renamed its new bytes over the link itself, so re-recording replaced the
 * link with a copy and left the shared tape as it was; and a link to a tape not yet recorded
 * made `record` fail, since creating the file refused the name the link held. Writes, locks and
 * removals go to the file the links lead to; messages keep the path the user gave.
 */
import { lstatSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TapedeckError } from '../errors.ts';

/** Longer chains than this are left to the system, which calls them a loop (ELOOP). */
const MAX_LINKS = 40;

/**
 * `path`, or where the symbolic links at it lead (the last one may not exist yet: then that is
 * where the tape is made).
 *
 * @example
 * // tapes/chat.tape -> ../../recordings/chat.tape
 * tapeTarget('tapes/chat.tape') // '/repo/recordings/chat.tape' (absolute once a link is followed)
 * tapeTarget('tapes/plain.tape') // 'tapes/plain.tape'
 */
export function tapeTarget(path: string): string {
  let p = path;
  for (let i = 0; i < MAX_LINKS; i++) {
    let link: boolean;
    try {
      link = lstatSync(p).isSymbolicLink();
    } catch {
      return p;
    }
    if (!link) return p;
    p = resolve(dirname(p), readlinkSync(p));
  }
  return p;
}

/** What a file that is not a regular file is, in words a user knows. */
function kindOf(st: Stats): string {
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * E_FILE for a tape path that exists and is neither a regular file nor a directory (whose
 * mistake is said where a tape is read or made), given what `stat` (links followed) found there;
 * undefined when it may hold a tape.
 *
 * A device reads as 0 bytes, so `/dev/null` passed for a tape was an empty tape, and the header
 * a writer or `prune` gives such a tape was renamed over it: run as root (a CI container) that
 * replaced the device with a regular file. A FIFO made every reader wait for a writer of the
 * pipe. Neither is touched: the check comes before any open.
 *
 * @example
 * nonTapeFile('/dev/null', statSync('/dev/null')) // E_FILE: /dev/null is a character device, not a tape file
 * nonTapeFile('tapes/chat.tape', statSync('tapes/chat.tape')) // undefined
 */
export function nonTapeFile(path: string, st: Stats): TapedeckError | undefined {
  if (st.isFile() || st.isDirectory()) return undefined;
  return new TapedeckError('E_FILE', `${path} is ${kindOf(st)}, not a tape file; it was left as it is.`, {
    file: path,
    hint: 'Give a tape file path such as recordings/chat.tape (--tape recordings/chat.tape); to keep nothing, replay from a tape or leave recording off rather than pointing the tape at a device.',
  });
}

/**
 * Throws {@link nonTapeFile}'s error for `path` (links followed); a missing path, a regular file
 * or a directory passes, for the caller's own error or read. Call it before opening a tape: a
 * FIFO opened for reading blocks until the pipe has a writer.
 *
 * @example
 * refuseNonTapeFile('/dev/null') // throws E_FILE
 * refuseNonTapeFile('tapes/new.tape') // returns (not there yet)
 */
export function refuseNonTapeFile(path: string): void {
  let st: Stats | undefined;
  try {
    st = statSync(path, { throwIfNoEntry: false });
  } catch {
    return; // unreadable: the open that follows says why, in the tape's words
  }
  const e = st === undefined ? undefined : nonTapeFile(path, st);
  if (e !== undefined) throw e;
}
