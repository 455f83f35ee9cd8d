// Values the argument parser itself used to answer for: a negative number given to a flag that
// takes a value (`--width -5`: "argument is ambiguous", the parser's words, not the flag's rule),
// and `scan --staged` outside a git repository (git's whole usage text pasted into the error;
// bad input, exit 1, as tapedeck init outside one).
// Each now gets one line from tapedeck saying what the value must be, or where to run it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../../dist/cli.js');
// Not in any git repository (tmpdir is not inside one here).
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-flag-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', GIT_CEILING_DIRECTORIES: tmpdir() } });

describe('flag values the parser used to answer for', () => {
  it.each([
    [['tree', 'x.tape', '--width', '-5'], /^tapedeck: E_ARG --width must be a non-negative integer; got "-5"\.\nhint: /],
    [['rerecord', 'x.tape', '--upstream', 'http://127.0.0.1:9', '--budget', '-1'], /^tapedeck: E_ARG --budget: "-1" is not valid\.\nhint: e\.g\. --budget 0\.50\n$/],
    [['push', 'x.tape', 'redis://127.0.0.1:9/0', '--ttl', '-5'], /^tapedeck: E_ARG tapedeck push: --ttl must be a number of seconds, 0 or more \(0 keeps the records forever\), not "-5"\.\nhint: /],
  ])('tapedeck %j: one line saying what is wrong, exit 2', (args, want) => {
    const r = cli(...args);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(want);
    expect(r.stderr).not.toMatch(/ambiguous|usage: git/);
  });

  // Where it runs, not how it is called: bad input (exit 1), as for tapedeck init.
  it('tapedeck scan --staged outside a git repository: one line saying where to run it, exit 1', () => {
    const r = cli('scan', '--staged');
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_GIT \S+ is not in a git repository, so there is nothing staged to scan\.\nhint: Run tapedeck scan --staged inside your repository, or name the tapes: tapedeck scan tapes\/\n$/);
    expect(r.stderr).not.toMatch(/usage: git/);
  });
});
