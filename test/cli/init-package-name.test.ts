// The commands `tapedeck init` writes (pre-commit hook, textconv, merge driver) ran
// `npx --no-install tapedeck`: before `npm install` (a fresh clone, a job that installs no dev
// dependencies) npm resolves `tapedeck` to an unrelated registry package, refusing every commit
// with "missing packages: tapedeck@…" and inviting its install. They name this package now
// (`llm-tapedeck`, whose bin of that name is ours), and the hook lets a commit with no staged
// tape through without running anything.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-init-name-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gitArgs = ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false'];
const git = (cwd: string, ...args: string[]) => execFileSync('git', [...gitArgs, ...args], { cwd, encoding: 'utf8' });

describe('the commands tapedeck init writes', () => {
  it('name the llm-tapedeck package, and the hook skips commits with no staged tape', () => {
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, encoding: 'utf8' });
    const textconv = git(repo, 'config', '--get', 'diff.tapedeck.textconv').trim();
    expect(textconv).toContain('node_modules/.bin/llm-tapedeck "$@"');
    expect(textconv).toContain('npx --no-install llm-tapedeck "$@"');
    expect(textconv).toMatch(/ export --review --textconv$/);
    expect(git(repo, 'config', '--get', 'merge.tapedeck.driver').trim()).toBe('npx --no-install llm-tapedeck merge %O %A %B %P');
    const hook = readFileSync(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8');
    expect(hook).toContain('exec npx --no-install llm-tapedeck scan --staged');
    expect(hook).not.toMatch(/npx --no-install tapedeck/);

    // An npx that records how it was called and fails, as npx does before `npm install`.
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const calls = join(dir, 'npx-calls.txt');
    writeFileSync(join(bin, 'npx'), `#!/bin/sh\necho "$@" >> "${calls}"\nexit 1\n`);
    chmodSync(join(bin, 'npx'), 0o755);
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    writeFileSync(join(repo, 'notes.txt'), 'no tape here\n');
    git(repo, 'add', 'notes.txt');
    const plain = spawnSync('git', [...gitArgs, 'commit', '-qm', 'notes'], { cwd: repo, env, encoding: 'utf8' });
    expect(plain.status).toBe(0);
    expect(() => readFileSync(calls, 'utf8')).toThrow();

    writeFileSync(join(repo, 'chat.tape'), 'x');
    git(repo, 'add', 'chat.tape');
    const tape = spawnSync('git', [...gitArgs, 'commit', '-qm', 'tape'], { cwd: repo, env, encoding: 'utf8' });
    expect(tape.status).not.toBe(0);
    expect(readFileSync(calls, 'utf8')).toBe('--no-install llm-tapedeck scan --staged\n');
  });

  it('running init again brings a hook an older init wrote up to date', () => {
    const repo = join(dir, 'old');
    execFileSync('git', ['init', '-q', repo]);
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    mkdirSync(join(repo, '.git', 'hooks'), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\n# Written by tapedeck init: refuse a commit whose staged tapes hold anything that looks like a\n# credential (tapedeck scan --help). Skip once with git commit --no-verify.\nexec npx --no-install tapedeck scan --staged\n');
    const out = execFileSync(process.execPath, [CLI, 'init'], { cwd: repo, encoding: 'utf8' });
    expect(out).toContain(`updated ${hook}`);
    expect(readFileSync(hook, 'utf8')).toContain('exec npx --no-install llm-tapedeck scan --staged');
  });
});
