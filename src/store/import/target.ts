/**
 * Where an import's new tape goes (a recording file, a tapedeck JSON export, a cache.json or a
 * directory of recordings alike): written whole beside the target, then moved into place.
 *
 * - The target's directory is made as a recording makes it (createFetch and `tapedeck serve`
 *   create missing directories), and removed again when the import writes nothing, so a refused
 *   import leaves nothing behind.
 * - An existing tape is replaced only with force, and then as `tapedeck prune` rewrites one:
 *   under the tape's lock, so no append is in flight. A tape a writer has open (createFetch or a
 *   proxy recording in record or update mode, registered in `<tape>.writers/`) is refused: what
 *   it has appended was acknowledged to its caller, and a replacement would take it away (and
 *   its later appends would land among records keyed under another salt).
 */
import { statSync, type Stats } from 'node:fs';
import { link, mkdir, rename, rmdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { TapedeckError } from '../../errors.ts';
import { importTempPath } from '../rewrite-temps.ts';
import { removeDeadTempsSoon, withTapeLock } from '../tape-file.ts';
import { tapeIsDirectory } from '../tape-path-errors.ts';
import { openWriters, type WriterInfo } from '../tape-writers.ts';
import { tapeTarget } from '../tape-target.ts';

/**
 * A temporary path beside `out` for the tape being built (the same directory, so the move into
 * place is a rename), after making the directories `out` needs. `removeDirs` removes the
 * directories made here again (those still empty), for an import that wrote nothing. An
 * import or rewrite of `out` killed midway left its temp file there: removed first, once its
 * process is dead (src/store/rewrite-temps.ts); this one's, named with this process and host,
 * is removed the same way if this import is killed.
 *
 * @example
 * const { tmp, removeDirs } = await besideTarget('tapes/new/app.tape', 'import')
 */
export async function besideTarget(out: string, what: string): Promise<{ tmp: string; removeDirs: () => Promise<void> }> {
  // A directory where the tape goes is refused before anything is made beside it.
  targetExists(out);
  // Beside the file a symbolic link at `out` leads to, where intoPlace moves it.
  const dir = dirname(tapeTarget(out));
  let first: string | undefined;
  try {
    first = await mkdir(dir, { recursive: true });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new TapedeckError('E_TAPE_IO', `Cannot make the directory ${dir} for tape ${out}: ${err.code === 'ENOTDIR' || err.code === 'EEXIST' ? 'a part of the path is a file' : err.message}; no tape written.`, {
      file: out,
      dir,
      cause: err.code,
      hint: 'Check the path of the tape, and that its directory can be written.',
    });
  }
  await removeDeadTempsSoon(out);
  const tmp = importTempPath(tapeTarget(out), what);
  const removeDirs = async (): Promise<void> => {
    if (first === undefined) return;
    const top = resolve(first);
    // Deepest first, up to the first one made; rmdir removes only an empty directory.
    for (let d = resolve(dir); ; d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return;
      }
      if (d === top || dirname(d) === d) return;
    }
  };
  return { tmp, removeDirs };
}

/**
 * An error about the temporary tape beside `out` (made by {@link besideTarget}) as one about
 * `out`: the user named `out`, and the temporary file's name (`.app.tape.1234.ab12.import.tmp`)
 * tells them nothing; nor does "does not exist", for a directory that takes no new files (a
 * file system like /proc). Other errors are returned as they are.
 *
 * @example
 * catch (e) { throw asTargetError(e, tmp, 'tapes/app.tape') }
 */
export function asTargetError(e: unknown, tmp: string, out: string): unknown {
  if (!(e instanceof TapedeckError) || e.details.file !== tmp) return e;
  const cause = typeof e.details.cause === 'string' ? e.details.cause : e.code === 'E_TAPE_NOT_FOUND' ? 'ENOENT' : e.code;
  return new TapedeckError('E_TAPE_IO', `Cannot write tape ${out}: a new file in ${dirname(out)} could not be written (${cause}); no tape written.`, {
    file: out,
    cause,
    hint: 'Give a path in a directory you can write to, with free space (the tape is written beside its path, then moved into place).',
  });
}

/**
 * Whether a tape is at `out` already (to refuse without force, or replace with it). A directory
 * there is no tape to replace, with force or without: E_TAPE_IO saying so, with a file path
 * that would do (not "already exists ... Add --force", then a rename's EISDIR); nor is a
 * device, a named pipe or a socket: E_ARG naming what it is.
 *
 * @example
 * if (targetExists('tapes/app.tape') && !force) throw tapeExists('tapes/app.tape')
 */
export function targetExists(out: string): boolean {
  const st = statSync(out, { throwIfNoEntry: false });
  if (st?.isDirectory()) throw tapeIsDirectory(out);
  // A device, a pipe or a socket is no tape to replace: moving the new tape into place would
  // put a regular file where the node was (as root, `import x.har /dev/null --force` would
  // break /dev/null). A symbolic link is followed: one to a tape is written through.
  if (st !== undefined && !st.isFile()) throw notTapeFile(out, st);
  return st !== undefined;
}

/** What a file that is not a regular file is, for messages. */
function fileKind(st: Stats): string {
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** E_ARG for a tape path that names a device, a pipe or a socket (see targetExists). */
function notTapeFile(out: string, st: Stats): TapedeckError {
  return new TapedeckError('E_ARG', `${out} is ${fileKind(st)}, not a tape file; an import replaces only a tape (a regular file), with --force or without; no tape written.`, {
    file: out,
    hint: 'Give the path of a tape file to write (such as tapes/app.tape): --force replaces a tape, never a device, a pipe or a socket.',
  });
}

/**
 * Refuses an import whose source and target are one file (the same path, a link to it, a hard
 * link: the same device and inode): the tape would be written over the recording it is made
 * from, and with --force the recording would be gone. E_ARG, before anything is written. A
 * source that is stdin (`-`) or a target that does not exist yet is never the same file.
 *
 * @example
 * refuseSameFile('cassettes/chat.yaml', 'tapes/chat.tape') // returns; refuseSameFile('a.yaml', 'a.yaml') throws E_ARG
 */
export function refuseSameFile(src: string, out: string): void {
  if (src === '-') return;
  // A path that cannot be looked at is no file to compare: the import's read or write says why.
  const stat = (p: string): Stats | undefined => {
    try {
      return statSync(p, { throwIfNoEntry: false });
    } catch {
      return undefined;
    }
  };
  const a = stat(src);
  const b = stat(out);
  if (a === undefined || b === undefined || a.dev !== b.dev || a.ino !== b.ino) return;
  throw new TapedeckError('E_ARG', `${src} is both the recording to import and the tape to write${src === out ? '' : ` (${out} is the same file)`}: the tape would replace the recording it is made from; no tape written.`, {
    file: out,
    source: src,
    hint: `Give the tape a path of its own: tapedeck import ${src} ${tapeBeside(out)}.`,
  });
}

/**
 * A tape path beside a recording file, named after it (`chat.yaml` -> `chat.tape`), for hints.
 *
 * @example
 * tapeBeside('cassettes/chat.yaml') // 'cassettes/chat.tape'
 */
export function tapeBeside(file: string): string {
  const stem = basename(file).replace(/\.[^.]*$/, '') || basename(file);
  const tape = join(dirname(file), `${stem}.tape`);
  return resolve(tape) === resolve(file) ? join(dirname(file), `${stem}.imported.tape`) : tape;
}

/**
 * Moves the tape built at `tmp` to `out`. Without force an existing `out` is never replaced
 * (a hard link fails instead: `exists()` is thrown); with force, under the tape's lock and only
 * while no writer has it open (E_TAPE_IN_USE; `verb` names the command in its hint: `import`,
 * `pull`). The caller removes `tmp` afterwards.
 *
 * @example
 * await intoPlace(tmp, 'tapes/app.tape', true, () => new TapedeckError('E_TAPE_EXISTS', '...'))
 */
export async function intoPlace(tmp: string, out: string, force: boolean, exists: () => TapedeckError, verb: ReplacingCommand = 'import'): Promise<void> {
  // Where a symbolic link at `out` leads: the shared tape is replaced, and the link stays one.
  const file = tapeTarget(out);
  if (!force) {
    try {
      await link(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw exists();
      throw e;
    }
    return;
  }
  await withTapeLock(out, async () => {
    await refuseOpenWriters(out, verb);
    // Checked again as it is replaced: a device or pipe put there since is not renamed over.
    targetExists(out);
    await rename(tmp, file);
  });
}

/** The commands that replace a whole tape with --force, as the fix in E_TAPE_IN_USE's hint names them. */
export type ReplacingCommand = 'import' | 'pull';

/**
 * Throws E_TAPE_IN_USE when a writer has the tape at `out` open: to check before an import's
 * (or a pull's) work, and again under the lock as it replaces the tape.
 *
 * @example
 * await refuseOpenWriters('tapes/app.tape')
 */
export async function refuseOpenWriters(out: string, verb: ReplacingCommand = 'import'): Promise<void> {
  const open = await openWriters(out);
  if (open.length === 0) return;
  const who = open.map(writerNamed).join('; ');
  throw new TapedeckError(
    'E_TAPE_IN_USE',
    `Tape ${out} is open for recording by ${open.length === 1 ? 'a writer' : `${open.length} writers`} (${who}, registered in ${out}.writers/); replacing it would lose what ${open.length === 1 ? 'it has' : 'they have'} recorded; no tape written.`,
    {
      file: out,
      writers: open,
      hint: `Let the run that records to it finish (a test run, tapedeck serve, a program with a tapedeck fetch in record or update mode), then ${verb} again; or ${verb} to another path.`,
    },
  );
}

/** A writer as a reader of the message knows it: its process and host, and its run. */
function writerNamed(w: WriterInfo): string {
  const pid = typeof w.pid === 'number' ? `pid ${w.pid}` : 'a process';
  const host = typeof w.host === 'string' ? ` on ${w.host}` : '';
  const run = typeof w.run === 'string' ? `, run ${w.run}` : '';
  return `${pid}${host}${run}`;
}
