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
    const side: LoadedSide = { tapes: [], warnings: [] };
    for (const rel of tapeFiles(path)) {
      const t = await readTape(join(path, rel));
      side.tapes.push({ name: rel, records: t.records.map((r) => r.value) });
      for (const w of t.warnings) side.warnings.push({ tape: rel, warning: w });
    }
    return side;
  }
  const t = await readTape(path);
  const n = name ?? basename(path);
  return { tapes: [{ name: n, records: t.records.map((r) => r.value) }], warnings: t.warnings.map((w) => ({ tape: n, warning: w })) };
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
  return { before: await readSide(oldPath, name), after: await readSide(newPath, name) };
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
  const before: LoadedSide = { tapes: [], warnings: [] };
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
    const t = parseTape(bytes, `${rev}:${name}`);
    before.tapes.push({ name, records: t.records.map((r) => r.value) });
    for (const w of t.warnings) before.warnings.push({ tape: `${rev}:${name}`, warning: w });
  }
  return { before, after };
}

/**
 * Every tape at the given paths (tape files, or folders searched for *.tape), as one side.
 *
 * @example
 * const { tapes } = await loadTapes(['tapes/', 'extra.tape'])
 */
export async function loadTapes(paths: readonly string[]): Promise<LoadedSide> {
  const out: LoadedSide = { tapes: [], warnings: [] };
  for (const p of paths) {
    const isDir = kindOf(p, 'tapedeck stats') === 'dir';
    const side = await readSide(p, isDir ? undefined : p);
    for (const t of side.tapes) out.tapes.push(isDir ? { ...t, name: join(p, t.name) } : t);
    for (const w of side.warnings) out.warnings.push(isDir ? { ...w, tape: join(p, w.tape) } : w);
  }
  return out;
}
