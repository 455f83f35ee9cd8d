// The textconv tapedeck init writes runs the project's installed command
// (node_modules/.bin/llm-tapedeck, from the top of the work tree, where git runs textconv) and
// goes through npx only when it is not installed there: git runs the textconv twice per changed
// tape, and npx spent most of a second finding the package each time. Real git and sh; a fake npx
// on PATH says whether it was used.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEXTCONV } from '../../src/store/git-diff.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-textconv-bin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A script on PATH named npx that says it ran, with its arguments, in place of a tape's text. */
const fakeBin = join(dir, 'bin');
mkdirSync(fakeBin);
writeFileSync(join(fakeBin, 'npx'), '#!/bin/sh\necho "npx ran: $*"\n');
chmodSync(join(fakeBin, 'npx'), 0o755);
const env = { ...process.env, PATH: `${fakeBin}${delimiter}${process.env.PATH}` };
const git = (repo: string, ...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, encoding: 'utf8', env });

async function repoWithChangedTape(name: string): Promise<string> {
  const repo = join(dir, name);
  execFileSync('git', ['init', '-q', repo]);
  execFileSync(process.execPath, [CLI, 'init', '--no-hook'], { cwd: repo });
  writeFileSync(join(repo, '.gitignore'), 'node_modules/\n', { flag: 'a' });
  const tape = join(repo, 'tapes', 'chat.tape');
  mkdirSync(join(repo, 'tapes'));
  await createTape(tape);
  await appendRecords(tape, [chatRecord(1)]);
  git(repo, 'add', '.');
  expect(git(repo, 'commit', '-qm', 'first').status).toBe(0);
  await appendRecords(tape, [chatRecord(2)]);
  return repo;
}

describe('the textconv tapedeck init writes', () => {
  it('is the one init sets', async () => {
    const repo = await repoWithChangedTape('set');
    expect(git(repo, 'config', '--get', 'diff.tapedeck.textconv').stdout.trim()).toBe(DEFAULT_TEXTCONV);
  });

  it('runs node_modules/.bin/llm-tapedeck when the project has it, from any folder, without npx', async () => {
    const repo = await repoWithChangedTape('installed');
    mkdirSync(join(repo, 'node_modules', '.bin'), { recursive: true });
    const bin = join(repo, 'node_modules', '.bin', 'llm-tapedeck');
    writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(bin, 0o755);
    for (const cwd of [repo, join(repo, 'tapes')]) {
      const r = git(cwd, 'diff', '--', '.');
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).not.toContain('npx ran');
      expect(r.stdout).toMatch(/^\+.*question 2/m);
    }
  });

  it('goes through npx --no-install llm-tapedeck when the project does not have it', async () => {
    const repo = await repoWithChangedTape('not-installed');
    const r = git(repo, 'diff', '--', 'tapes/chat.tape');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\+npx ran: --no-install llm-tapedeck export --review --textconv tapes\/chat\.tape$/m);
    expect(r.stdout).toMatch(/^-npx ran: --no-install llm-tapedeck export --review --textconv \S+chat\.tape$/m);
  });
});
