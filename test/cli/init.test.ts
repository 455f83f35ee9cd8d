// `tapedeck init` with real git in a temporary repository: afterwards `git diff` shows a tape
// as its JSON export (the added recording, line by line), not "Binary files differ".
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addRecordings } from '../../src/proxy/hand-written.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-init-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
const tapedeck = (cwd: string, ...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
const written = (text: string) => ({ request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] } }, response: { body: { answer: text } } });

describe('tapedeck init', () => {
  it('makes git diff show tapes as their JSON export', async () => {
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const tape = join(repo, 'chat.tape');
    await addRecordings({ tape }, [written('first question')]);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape');
    await addRecordings({ tape }, [written('second question')]);
    expect(git(repo, 'diff')).toMatch(/Binary files .* differ/);

    // The test runs the built CLI directly instead of `npx tapedeck export`.
    const out = tapedeck(repo, 'init', '--textconv', `"${process.execPath}" "${CLI}" export`);
    expect(out).toContain('added "*.tape diff=tapedeck"');
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8')).toContain('*.tape diff=tapedeck\n');
    const diff = git(repo, 'diff', '--', 'chat.tape');
    expect(diff).not.toMatch(/Binary files/);
    expect(diff).toMatch(/^\+.*second question/m);
    // The first recording is context, not a change: the export is stable.
    expect(diff).not.toMatch(/^[-+].*first question/m);

    // Idempotent: nothing added twice; the default command is npx's.
    expect(tapedeck(repo, 'init', '--textconv', `"${process.execPath}" "${CLI}" export`)).toContain('already in');
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8').match(/diff=tapedeck/g)).toHaveLength(1);
    tapedeck(repo, 'init');
    expect(git(repo, 'config', '--get', 'diff.tapedeck.textconv').trim()).toBe('npx --no-install tapedeck export');
  });

  it('outside a git repository: exit 1 with a hint', () => {
    const plain = join(dir, 'plain');
    mkdirSync(plain, { recursive: true });
    writeFileSync(join(plain, 'x'), '');
    let err = '';
    let code = 0;
    try {
      execFileSync(process.execPath, [CLI, 'init'], { cwd: plain, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_CEILING_DIRECTORIES: dir } });
    } catch (e) {
      err = String((e as { stderr: string }).stderr);
      code = (e as { status: number }).status;
    }
    expect(code).not.toBe(0);
    expect(err).toContain('not inside a git repository');
    expect(err).toContain('hint');
  });
});
