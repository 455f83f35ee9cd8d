// An empty argument where a file goes (`tapedeck hash ""`, a shell variable that was not set)
// read as the path "", and the error said "No such file or directory: the path." (the core
// commands) or "Tape  does not exist" (tree). verify, inspect, prune and export already said the
// command needs a tape; every command now says it was given an empty path, as usage (exit 2).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-empty-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000, input: '', env: { ...process.env, TAPEDECK_MODE: '' } });

describe.skipIf(!existsSync(bin))('an empty path argument', () => {
  it.each(['canonical', 'hash', 'paths', 'key', 'tree'])('tapedeck %s ""', (cmd) => {
    const r = cli(cmd, '');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck: E_USAGE /);
    expect(r.stderr).toMatch(/empty|needs/);
    expect(r.stderr).not.toContain('the path.');
    expect(r.stderr).not.toContain('does not exist');
  });
});
