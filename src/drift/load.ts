// The tapes a drift report compares: a tape file, a folder of tapes (every *.tape below it,
// named by their path inside the folder), or the version of either committed in git
// (`git show REV:path`, so `tapedeck diff tapes/` after a re-record compares with HEAD).

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { catFileBatch } from '../store/git-blobs.ts';
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
  if (kind === 'dir') {
    // The folder's committed tapes, listed with their object ids and read in one git process
    // (one `git show` each made a folder of a thousand tapes wait for a thousand processes).
    const listed = git(cwd, ['ls-tree', '-r', '-z', rev, '--', '.'])
      .toString('utf8')
      .split('\0')
      .map((entry) => ({ head: entry.slice(0, entry.indexOf('\t')).split(' '), name: entry.slice(entry.indexOf('\t') + 1) }))
      .filter((e) => e.head[1] === 'blob' && e.name.endsWith('.tape'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const blobs = catFileBatch(cwd, listed.map((e) => e.head[2]!));
    for (let i = 0; i < listed.length; i++) {
      const name = listed[i]!.name;
      await readOne(before, name, () => parseTape(blobs[i]!, `${rev}:${name}`), `${rev}:${name}`);
    }
    return settled(before, after);
  }
  const name = basename(path);
  let bytes: Buffer;
  try {
    bytes = git(cwd, ['show', `${rev}:./${name}`]);
  } catch (e) {
    // Not committed at rev: a new tape, every recording added.
    if (/does not exist|exists on disk, but not in/.test(gitMessage(e) ?? '')) return { before, after };
    throw new TapedeckError('E_GIT', `git show ${rev}:${name} failed: ${gitMessage(e)}`, { file: join(cwd, name), hint: '--git takes a commit, branch or tag, e.g. --git HEAD' });
  }
  await readOne(before, name, () => parseTape(bytes, `${rev}:${name}`), `${rev}:${name}`);
  return settled(before, after);
}

/** What loadGit gives for one tape, or the TapedeckError it would throw. */
export type LoadedGitTape = { before: LoadedSide; after: LoadedSide } | TapedeckError;

/** The folder holding the `.git` nearest above `dir` (the repository git would find), or undefined. */
function repoDirOf(dir: string, seen: Map<string, string | undefined>): string | undefined {
  const walked: string[] = [];
  let found: string | undefined;
  for (let d = dir; ; d = dirname(d)) {
    if (seen.has(d)) {
      found = seen.get(d);
      break;
    }
    walked.push(d);
    if (existsSync(join(d, '.git'))) {
      found = d;
      break;
    }
    if (dirname(d) === d) break;
  }
  for (const d of walked) seen.set(d, found);
  return found;
}

/**
 * Tape files each as now and as committed at `rev`: what loadGit gives for each, read with a few
 * git processes per repository (one `ls-tree`, one `cat-file --batch`) instead of three per tape,
 * which made a run that wrote a thousand tapes wait minutes for its drift lines. A tape `rev` does
 * not have is read from disk alone: all its recordings are added.
 *
 * @example
 * const loaded = await loadGitTapes(['tapes/a.tape', 'tapes/b.tape'], 'HEAD')
 * const a = loaded.get('tapes/a.tape') // { before, after } or the TapedeckError that kept it out
 */
export async function loadGitTapes(paths: readonly string[], rev: string): Promise<Map<string, LoadedGitTape>> {
  const out = new Map<string, LoadedGitTape>();
  const attempt = async (path: string, load: () => Promise<{ before: LoadedSide; after: LoadedSide }>): Promise<void> => {
    try {
      out.set(path, await load());
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      out.set(path, e);
    }
  };
  // git told where the repository is by its environment: asked tape by tape, as it would be.
  const byEnv = process.env.GIT_DIR !== undefined || process.env.GIT_WORK_TREE !== undefined;
  const seen = new Map<string, string | undefined>();
  const groups = new Map<string, string[]>();
  for (const path of paths) {
    const st = statSync(path, { throwIfNoEntry: false });
    const repo = st?.isFile() && !byEnv ? repoDirOf(resolve(dirname(path)), seen) : undefined;
    if (repo === undefined) await attempt(path, () => loadGit(path, rev));
    else groups.set(repo, [...(groups.get(repo) ?? []), path]);
  }
  for (const [repo, group] of groups) {
    let failed: ((path: string) => TapedeckError) | undefined;
    let unborn = false;
    try {
      git(repo, ['rev-parse', '--show-toplevel']);
      try {
        git(repo, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
      } catch {
        if (rev !== 'HEAD') failed = (path) => new TapedeckError('E_GIT', `git has no commit ${JSON.stringify(rev)} (${path}).`, { file: path, hint: '--git takes a commit, branch or tag, e.g. --git HEAD or --git origin/main' });
        unborn = true;
      }
    } catch {
      // Not a repository after all (a stray .git): each tape as loadGit finds it.
      for (const path of group) await attempt(path, () => loadGit(path, rev));
      continue;
    }
    if (failed) {
      for (const path of group) out.set(path, failed(path));
      continue;
    }
    const rel = group.map((p) => relative(repo, resolve(p)).split(sep).join('/'));
    const oids = new Map<string, string>();
    if (!unborn) {
      // One listing for the folder holding them all, limited to it.
      const parts = rel.map((r) => r.split('/').slice(0, -1));
      const common: string[] = [];
      for (let i = 0; parts.every((p) => i < p.length && p[i] === parts[0]![i]); i++) common.push(parts[0]![i]!);
      const wanted = new Set(rel);
      for (const entry of git(repo, ['--literal-pathspecs', 'ls-tree', '-r', '-z', rev, '--', common.length ? common.join('/') : '.']).toString('utf8').split('\0')) {
        const tab = entry.indexOf('\t');
        const [, type, oid] = entry.slice(0, tab).split(' ');
        const name = entry.slice(tab + 1);
        if (type === 'blob' && wanted.has(name)) oids.set(name, oid!);
      }
    }
    const ids = [...new Set(oids.values())];
    const read = catFileBatch(repo, ids);
    const blobs = new Map(ids.map((id, i) => [id, read[i]!]));
    for (let i = 0; i < group.length; i++) {
      const path = group[i]!;
      const oid = oids.get(rel[i]!);
      await attempt(path, async () => {
        const after = await readSide(path, undefined);
        const before: LoadedSide = { tapes: [], warnings: [], unreadable: [] };
        if (oid === undefined) return { before, after };
        const name = basename(path);
        await readOne(before, name, () => parseTape(blobs.get(oid)!, `${rev}:${name}`), `${rev}:${name}`);
        return settled(before, after);
      });
    }
  }
  return out;
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
