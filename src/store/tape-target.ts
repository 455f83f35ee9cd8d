/**
 * The file a tape's path stands for. A tape may be a symbolic link (one recording shared by
 * several test folders, or kept outside the repository): appends follow the link as the system
 * does, but a rewrite renamed its new bytes over the link itself, so re-recording replaced the
 * link with a copy and left the shared tape as it was; and a link to a tape not yet recorded
 * made `record` fail, since creating the file refused the name the link held. Writes, locks and
 * removals go to the file the links lead to; messages keep the path the user gave.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

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
