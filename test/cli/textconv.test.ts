// git's textconv for tapes (tapedeck init) is never fatal: a tape the exporter cannot read (a
// truncated file committed long ago) is shown as the error's text, and git diff, git show and
// git log -p go on. Before, the export's exit 1 made git die ("fatal: unable to read files to
// diff") and git log -p hid all older history. Real git, in a temporary repository.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEXTCONV } from '../../src/store/git-diff.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-textconv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const repo = join(dir, 'repo');
const tape = join(repo, 'chat.tape');

const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, encoding: 'utf8' });
const commit = (message: string) => {
  git('add', '.');
  expect(git('commit', '-qm', message).status).toBe(0);
};

beforeAll(async () => {
  execFileSync('git', ['init', '-q', repo]);
  // The command tapedeck init writes, the built CLI installed as the project's.
  execFileSync(process.execPath, [CLI, 'init', '--no-hook'], { cwd: repo });
  expect(execFileSync('git', ['config', '--get', 'diff.tapedeck.textconv'], { cwd: repo, encoding: 'utf8' }).trim()).toBe(DEFAULT_TEXTCONV);
  mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(repo, 'node_modules', '.bin', 'llm-tapedeck'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  writeFileSync(join(repo, '.gitignore'), 'node_modules/\n', { flag: 'a' });
  await createTape(tape);
  await appendRecords(tape, [chatRecord(1)]);
  commit('first');
  writeFileSync(tape, readFileSync(tape).subarray(0, 5)); // a truncated file committed
  commit('truncated');
  rmSync(tape);
  await createTape(tape);
  const { offsets } = await appendRecords(tape, [chatRecord(2), chatRecord(3), chatRecord(4)]);
  const b = readFileSync(tape);
  b[offsets[1]! + 8]! ^= 0xff; // a record whose checksum fails: damage the export reads past
  writeFileSync(tape, b);
  commit('damaged');
});

describe('git textconv of tapes', () => {
  it('tapedeck init configures the export as textconv', () => {
    expect(DEFAULT_TEXTCONV).toMatch(/llm-tapedeck "\$@"; fi; }; tapedeck export --review --textconv$/);
  });

  it('git log -p goes on past a tape the exporter cannot read, showing the error as its text', () => {
    const r = git('log', '-p', '--format=commit %s', '--', 'chat.tape');
    expect(r.stderr).not.toContain('fatal');
    expect(r.status).toBe(0);
    // Every commit's diff is there, the oldest (before the truncated one) included.
    expect(r.stdout).toMatch(/commit damaged[\s\S]*commit truncated[\s\S]*commit first/);
    expect(r.stdout).toMatch(/commit first[\s\S]*^\+.*question 1/m);
    // The truncated tape reads as the problem: what, which file, how to fix.
    expect(r.stdout).toMatch(/^[-+ ]tapedeck export could not read this tape; git shows this text in its place\.$/m);
    expect(r.stdout).toMatch(/^[-+ ]tapedeck: E_TAPE_CORRUPT \S*chat\.tape is not a readable tape: only 5 bytes/m);
    expect(r.stdout).toMatch(/^[-+ ]hint: /m);
  });

  it('git show and git diff of that commit exit 0', () => {
    const show = git('show', 'HEAD~1', '--', 'chat.tape');
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('only 5 bytes');
    const diff = git('diff', 'HEAD~2', 'HEAD', '--', 'chat.tape');
    expect(diff.status).toBe(0);
    expect(diff.stdout).toMatch(/^-.*question 1/m);
  });

  it('a damaged tape diffs as what it reads, its damage listed, and exit 0', () => {
    const r = git('show', 'HEAD', '--', 'chat.tape');
    expect(r.stderr).not.toContain('fatal');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\+.*question 2/m);
    expect(r.stdout).toMatch(/^\+.*question 4/m);
    expect(r.stdout).toMatch(/^\+ +"code": "E_TAPE_CORRUPT"/m);
  });

  it('export --textconv of an unreadable tape: the error on stdout, nothing on stderr, exit 0', () => {
    writeFileSync(join(dir, 'five.tape'), 'TAPE\n');
    const r = spawnSync(process.execPath, [CLI, 'export', '--review', '--textconv', join(dir, 'five.tape')], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`tapedeck: E_TAPE_CORRUPT ${join(dir, 'five.tape')} is not a readable tape`);
    // Without --textconv the same tape is an error, as before.
    expect(spawnSync(process.execPath, [CLI, 'export', '--review', join(dir, 'five.tape')]).status).toBe(1);
  });
});
