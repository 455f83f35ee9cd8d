// The drift lines of a run read every tape it wrote against git HEAD. Read with three git
// processes per tape, a first record run of a large suite waited minutes for them; loadGitTapes
// reads them all with a few git processes per repository. It must give, tape by tape, what
// loadGit gives: committed and changed, new (not in HEAD), in a nested repository, outside git,
// gone, and in a repository without a first commit.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { loadGit, loadGitTapes } from '../../src/drift/load.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';

const git = (root: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.org', '-c', 'user.name=t', ...args], { cwd: root, stdio: 'pipe' });
const rec = (key: string, text: string) => ({ kind: 'recording', key, recordedAt: '2026-01-01T00:00:00.000Z', answer: { text } });

async function tape(path: string, ...values: unknown[]): Promise<string> {
  await createTape(path);
  await appendRecords(path, values);
  return path;
}

/** What loadGit gives, or its error's code and message. */
async function one(path: string, rev: string): Promise<unknown> {
  try {
    return await loadGit(path, rev);
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    return { code: e.code, message: e.message };
  }
}
const plain = (v: unknown) => (v instanceof TapedeckError ? { code: v.code, message: v.message } : v);

describe('loadGitTapes', () => {
  it('gives for every tape what loadGit gives', async () => {
    const base = mkdtempSync(join(tmpdir(), 'tapedeck-load-git-'));
    try {
      await check(base);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

async function check(base: string): Promise<void> {
    const root = join(base, 'proj');
    mkdirSync(join(root, 'tapes/a [x]'), { recursive: true });
    git(root, 'init', '-q');
    const changed = await tape(join(root, 'tapes/a [x]/changed.tape'), rec('k1', 'one'));
    const same = await tape(join(root, 'tapes/same.tape'), rec('k2', 'two'));
    writeFileSync(join(root, 'tapes/broken.tape'), 'not a tape\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'tapes');
    await appendRecords(changed, [rec('k3', 'three')]);
    const fresh = await tape(join(root, 'tapes/new.tape'), rec('k4', 'four'), rec('k5', 'five'));
    // A nested repository (its own HEAD) and one without a first commit.
    const nested = join(root, 'tapes/inner');
    mkdirSync(nested);
    git(nested, 'init', '-q');
    const inner = await tape(join(nested, 'inner.tape'), rec('k6', 'six'));
    git(nested, 'add', '-A');
    git(nested, 'commit', '-qm', 'inner');
    await appendRecords(inner, [rec('k7', 'seven')]);
    const unbornDir = join(base, 'unborn');
    mkdirSync(unbornDir);
    git(unbornDir, 'init', '-q');
    const unborn = await tape(join(unbornDir, 'u.tape'), rec('k8', 'eight'));
    const outside = await tape(join(base, 'outside.tape'), rec('k9', 'nine'));
    const paths = [changed, same, join(root, 'tapes/broken.tape'), fresh, inner, unborn, outside, join(root, 'tapes/gone.tape')];

    for (const rev of ['HEAD', 'nosuchbranch']) {
      const all = await loadGitTapes(paths, rev);
      for (const p of paths) expect(plain(all.get(p)), `${rev} ${p}`).toEqual(await one(p, rev));
    }
    // The cases are what they are meant to be.
    const all = await loadGitTapes(paths, 'HEAD');
    const got = (p: string) => all.get(p) as Exclude<ReturnType<typeof all.get>, TapedeckError | undefined>;
    expect(got(changed).before.tapes[0]!.records).toHaveLength(1);
    expect(got(changed).after.tapes[0]!.records).toHaveLength(2);
    expect(got(fresh).before.tapes).toEqual([]);
    expect(got(inner).before.tapes[0]!.records).toHaveLength(1);
    expect(got(unborn).before.tapes).toEqual([]);
    expect(all.get(outside)).toBeInstanceOf(TapedeckError);
    expect(all.get(join(root, 'tapes/gone.tape'))).toBeInstanceOf(TapedeckError);
  // A folder's committed tapes (read in one git process too): each as committed, by its path in the folder.
  const folder = await loadGit(join(root, 'tapes'), 'HEAD');
  expect(folder.before.tapes.map((t) => [t.name, t.records.length])).toEqual([
    ['a [x]/changed.tape', 1],
    ['same.tape', 1],
  ]);
  expect(folder.before.unreadable.map((u) => u.name)).toEqual(['broken.tape']);
  expect(folder.after.tapes.find((t) => t.name === 'a [x]/changed.tape')!.records).toHaveLength(2);
}
