// The tapes a drift report compares: a tape file, a folder of tapes (every *.tape below it,
// named by their path inside the folder), or the version of either committed in git
// (`git show REV:path`, so `tapedeck diff tapes/` after a re-record compares with HEAD).

import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { parseTape, type TapeWarning } from '../store/tape-codec.ts';
import { readTape } from '../store/tape-file.ts';
import type { TapeSide } from './pair.ts';

/** Tapes read for one side of a comparison, and the damage reading them survived. */
export interface LoadedSide {
  tapes: TapeSide[];
  warnings: { tape: string; warning: TapeWarning }[];
  /**
   * Tapes of a folder that could not be read at all (an unreadable header, a file that is not a
   * tape): left out, so one of them does not end the report on the others; the commands say so
   * and exit as for bad input.
   */
  unreadable: { tape: string; name: string; error: TapedeckError }[];
}

/** A folder's tape read, or set aside as unreadable when it is not a tape at all. */
async function readOne(side: LoadedSide, name: string, read: () => Promise<{ records: { value: unknown }[]; warnings: TapeWarning[] }> | { records: { value: unknown }[]; warnings: TapeWarning[] }, warnAs = name): Promise<void> {
  let t;
  try {
    t = await read();
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    side.unreadable.push({ tape: warnAs, name, error: e });
    return;
  }
  side.tapes.push({ name, records: t.records.map((r) => r.value) });
  for (const w of t.warnings) side.warnings.push({ tape: warnAs, warning: w });
}

const SKIP_DIRS = new Set(['node_modules', '.git']);
/**
 * What `tapedeck rerecord` writes beside a tape by default: a draft to review and move into
 * place, not one of the folder's tapes (counted, every re-record would add a tape to the next
 * `tapedeck diff tapes/`). Given by name, it is read like any tape.
 */
export const RERECORD_DRAFT = '.rerecorded.tape';

function tapeFiles(dir: string, root = dir): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) out.push(...tapeFiles(join(dir, e.name), root));
    } else if (e.name.endsWith('.tape') && !e.name.endsWith(RERECORD_DRAFT)) out.push(relative(root, join(dir, e.name)).split(sep).join('/'));
  }
  return out.sort();
}

function kindOf(path: string, flag: string): 'file' | 'dir' {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new TapedeckError('E_FILE', `No such file or directory: ${path}.`, { file: path, hint: `Check the path given to ${flag}.` });
  return st.isDirectory() ? 'dir' : 'file';
}

async function readSide(path: string, name: string | undefined): Promise<LoadedSide> {
  if (kindOf(path, 'tapedeck diff') === 'dir') {
    const side: LoadedSide = { tapes: [], warnings: [], unreadable: [] };
    for (const rel of tapeFiles(path)) await readOne(side, rel, () => readTape(join(path, rel)));
    return side;
  }
  const t = await readTape(path);
  const n = name ?? basename(path);
  return { tapes: [{ name: n, records: t.records.map((r) => r.value) }], warnings: t.warnings.map((w) => ({ tape: n, warning: w })), unreadable: [] };
}

/**
 * Two tapes, or two folders of tapes (paired by their path inside each folder).
 *
 * @example
 * const { before, after } = await loadPaths('tapes-old/', 'tapes/')
 */
export async function loadPaths(oldPath: string, newPath: string): Promise<{ before: LoadedSide; after: LoadedSide }> {
  const ko = kindOf(oldPath, '<old>');
  const kn = kindOf(newPath, '<new>');
  if (ko !== kn) {
    throw new TapedeckError('E_DIFF_INPUT', `${ko === 'dir' ? oldPath : newPath} is a folder and ${ko === 'dir' ? newPath : oldPath} a tape; compare two tapes or two folders.`, {
      file: ko === 'dir' ? oldPath : newPath,
      hint: 'tapedeck diff old.tape new.tape, tapedeck diff old-tapes/ tapes/, or tapedeck diff tapes/ --git HEAD',
    });
  }
  // Two single tapes are one tape before and after: they share the new one's name.
  const name = ko === 'file' ? basename(newPath) : undefined;
  return settled(await readSide(oldPath, name), await readSide(newPath, name));
}

/**
 * Both sides without the tapes either side could not read: compared with nothing, a tape
 * unreadable on one side would show as all its recordings added or removed.
 */
function settled(before: LoadedSide, after: LoadedSide): { before: LoadedSide; after: LoadedSide } {
  const gone = new Set([...before.unreadable, ...after.unreadable].map((u) => u.name));
  if (gone.size === 0) return { before, after };
  const keep = (s: LoadedSide): LoadedSide => ({ ...s, tapes: s.tapes.filter((t) => !gone.has(t.name)) });
  return { before: keep(before), after: keep(after) };
}

function git(cwd: string, args: string[]): Buffer {
  return execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
}

const gitMessage = (e: unknown) => String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim().split('\n')[0];

/**
 * A tape or folder as it is now (the new side) and as committed at `rev` (the old side). A tape
 * that is not in `rev` has no old side: its recordings are all added.
 *
 * @example
 * const { before, after } = await loadGit('tapes/', 'HEAD')
 */
export async function loadGit(path: string, rev: string): Promise<{ before: LoadedSide; after: LoadedSide }> {
  const kind = kindOf(path, '<tape or folder>');
  const cwd = kind === 'dir' ? path : dirname(path) || '.';
  try {
    git(cwd, ['rev-parse', '--show-toplevel']);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TapedeckError('E_GIT', 'git is not installed, so there is no committed version to compare with.', { file: path, hint: 'Give two tapes: tapedeck diff old.tape new.tape' });
    throw new TapedeckError('E_GIT', `${path} is not in a git repository: there is no committed version to compare with.`, { file: path, hint: 'Give two tapes or folders: tapedeck diff old.tape new.tape' });
  }
  let unborn = false;
  try {
    git(cwd, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
  } catch {
    // A repository without a first commit has nothing committed: every tape is new.
    if (rev !== 'HEAD') throw new TapedeckError('E_GIT', `git has no commit ${JSON.stringify(rev)} (${path}).`, { file: path, hint: '--git takes a commit, branch or tag, e.g. --git HEAD or --git origin/main' });
    unborn = true;
  }
  const after = await readSide(path, undefined);
  const before: LoadedSide = { tapes: [], warnings: [], unreadable: [] };
  if (unborn) return { before, after };
  let names: string[];
  if (kind === 'dir') {
    names = git(cwd, ['ls-tree', '-r', '--name-only', '-z', rev, '--', '.'])
      .toString('utf8')
      .split('\0')
      .filter((n) => n.endsWith('.tape'))
      .sort();
  } else {
    names = [basename(path)];
  }
  for (const name of names) {
    let bytes: Buffer;
    try {
      bytes = git(cwd, ['show', `${rev}:./${name}`]);
    } catch (e) {
      // Not committed at rev: a new tape, every recording added.
      if (/does not exist|exists on disk, but not in/.test(gitMessage(e) ?? '')) continue;
      throw new TapedeckError('E_GIT', `git show ${rev}:${name} failed: ${gitMessage(e)}`, { file: join(cwd, name), hint: '--git takes a commit, branch or tag, e.g. --git HEAD' });
    }
    await readOne(before, name, () => parseTape(bytes, `${rev}:${name}`), `${rev}:${name}`);
  }
  return settled(before, after);
}

/**
 * Every tape at the given paths (tape files, or folders searched for *.tape), as one side.
 *
 * @example
 * const { tapes } = await loadTapes(['tapes/', 'extra.tape'])
 */
export async function loadTapes(paths: readonly string[]): Promise<LoadedSide> {
  const out: LoadedSide = { tapes: [], warnings: [], unreadable: [] };
  for (const p of paths) {
    const isDir = kindOf(p, 'tapedeck stats') === 'dir';
    const side = await readSide(p, isDir ? undefined : p);
    for (const t of side.tapes) out.tapes.push(isDir ? { ...t, name: join(p, t.name) } : t);
    for (const w of side.warnings) out.warnings.push(isDir ? { ...w, tape: join(p, w.tape) } : w);
    for (const u of side.unreadable) out.unreadable.push(isDir ? { ...u, tape: join(p, u.tape) } : u);
  }
  return out;
}
