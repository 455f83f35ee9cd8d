// git runs the merge driver on temporary copies of the three sides (.merge_file_…), gone when it
// ends. With a damaged side, `tapedeck merge` named those copies: "theirs (.merge_file_fsssqP):
// E_TAPE_CORRUPT ... .merge_file_fsssqP: 8 damaged bytes ..." and "the intact records were merged
// into .merge_file_6RHflh", files the user cannot find. Now each side is named by the tape's path
// (git's %P) and which branch it is, and the merge by the tape it goes to.
// Real git in a temporary repository, the driver being the built CLI (tapedeck init).
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-merge-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (cwd: string, ...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });

async function put(tape: string, q: string): Promise<void> {
  const c = await ReplayCache.open(tape, { mode: 'update' });
  await c.put({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }, `answer to ${q}`);
  await c.close();
}

describe('tapedeck merge under git, a side damaged', () => {
  it('names the tape and the branch, never git\u2019s temporary copies', async () => {
    expect(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    const init = spawnSync(process.execPath, [CLI, 'init', '--no-hook', '--textconv', `"${process.execPath}" "${CLI}" export`, '--merge-driver', `"${process.execPath}" "${CLI}" merge %O %A %B %P`], { cwd: repo, encoding: 'utf8' });
    expect(init.status, init.stderr).toBe(0);
    const tape = join(repo, 'tapes', 'chat.tape');
    execFileSync('mkdir', ['-p', join(repo, 'tapes')]);
    await put(tape, 'one');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape');
    git(repo, 'checkout', '-qb', 'feature');
    await put(tape, 'two');
    appendFileSync(tape, 'junkjunk'); // a torn write on that branch
    git(repo, 'commit', '-qam', 'feature');
    git(repo, 'checkout', '-q', 'main');
    await put(tape, 'three');
    git(repo, 'commit', '-qam', 'main');
    const m = git(repo, 'merge', '--no-edit', 'feature');
    expect(m.status).toBe(1);
    expect(m.stdout).not.toContain('.merge_file_');
    expect(m.stdout).toMatch(/\ntheirs \(tapes\/chat\.tape as the merged branch has it\): E_TAPE_CORRUPT at byte \d+: 8 damaged bytes at /);
    expect(m.stdout).toContain('the intact records were merged into tapes/chat.tape, the damaged bytes left out; git keeps the conflict: check the tape (tapedeck verify tapes/chat.tape), then git add it.');
  });
});
