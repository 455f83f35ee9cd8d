// `tapedeck verify` took one tape: `tapedeck verify tapes/` (what a CI step or a pre-commit hook
// runs, as it runs `tapedeck scan tapes/`) was refused ("tapes/ is a directory; verify reads a
// tape file") and two tapes were "one argument too many", so a project checked its tapes with a
// shell loop or not at all. It now takes tapes and folders: each tape under them is checked and
// reported as one tape is, one that cannot be read is said and counted without stopping the
// others, and a last line names the tapes with problems (exit 1 if any).
// The tapes are written by ReplayCache; the CLI runs from dist (build first).
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-verify-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

async function tape(path: string, answer: string): Promise<void> {
  mkdirSync(join(path, '..'), { recursive: true });
  const c = await ReplayCache.open(path, { mode: 'record' });
  await c.put({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: answer }] }, answer);
  await c.close();
}

beforeAll(async () => {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  await tape(join(dir, 'good/a.tape'), 'a');
  await tape(join(dir, 'good/nested/b.tape'), 'b');
  await tape(join(dir, 'mixed/ok.tape'), 'ok');
  await tape(join(dir, 'mixed/torn.tape'), 'torn');
  appendFileSync(join(dir, 'mixed/torn.tape'), 'garbage after the last record');
  writeFileSync(join(dir, 'mixed/notes.tape'), 'not a tape at all\n');
  mkdirSync(join(dir, 'empty'), { recursive: true });
});

describe('tapedeck verify of folders and several tapes', () => {
  it('checks every tape under a folder, nested ones too, and says ok for all (exit 0)', () => {
    const r = cli('verify', 'good/');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^good\/a\.tape: format 1, [^\n]+, 1 record, \d+ bytes\nok\ngood\/nested\/b\.tape: format 1, [^\n]+, 1 record, \d+ bytes\nok\n2 tapes verified: ok\n$/);
  });

  it('a damaged tape and a file that is no tape are each reported; the others are still checked; exit 1 naming them', () => {
    const r = cli('verify', 'mixed');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^mixed\/notes\.tape: E_TAPE_CORRUPT /m);
    expect(r.stdout).toMatch(/^mixed\/ok\.tape: [^\n]+\nok\n/m);
    expect(r.stdout).toMatch(/^mixed\/torn\.tape: [^\n]+\nE_TAPE_[A-Z_]+ at byte \d+: /m);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('3 tapes verified: 2 with problems (mixed/notes.tape, mixed/torn.tape)');
  });

  it('takes several tapes and folders at once', () => {
    const r = cli('verify', 'good/a.tape', 'mixed/ok.tape', 'good/nested');
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('3 tapes verified: ok');
    expect(cli('verify', 'good/a.tape', 'mixed/torn.tape').status).toBe(1);
  });

  it('an empty path among them is a usage error (exit 2), as for one tape', () => {
    const r = cli('verify', 'good/a.tape', '');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck: E_USAGE /);
  });

  it('a folder with no tapes is an error, not a pass', () => {
    const r = cli('verify', 'empty');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_FILE empty holds no \.tape files; verify found nothing to check there\.\nhint: /);
  });

  it('one tape is reported as before, with no summary line', () => {
    const r = cli('verify', 'good/a.tape');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^good\/a\.tape: format 1, [^\n]+\nok\n$/);
  });
});
