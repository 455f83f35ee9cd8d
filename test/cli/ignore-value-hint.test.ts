// `--ignore` without its value: the hint shows the command that was typed. It showed an import
// command line whatever the command (`tapedeck hash request.json --ignore` was told
// `tapedeck import session.har app.tape --ignore user,metadata`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ignore-hint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000, input: '', env: { ...process.env, TAPEDECK_MODE: '' } });
const hintOf = (stderr: string) => /^hint: (.*)$/m.exec(stderr)?.[1];

it.each([
  [['hash', 'request.json', '--ignore'], 'tapedeck hash request.json --ignore '],
  [['canonical', '--ignore'], 'tapedeck canonical request.json --ignore '],
  [['paths', 'request.json', '--ignore', '--ignore'], 'tapedeck paths request.json --ignore '],
  [['key', 'request.json', '--ignore='], 'tapedeck key request.json --ignore '],
  // Before the command: the command is the first word that is not an option.
  [['--ignore', '--force', 'hash', 'request.json'], 'tapedeck hash request.json --ignore '],
  [['import', 'session.har', 'app.tape', '--ignore'], 'tapedeck import session.har app.tape --ignore '],
])('tapedeck %j: the hint is a %s command line', (args, start) => {
  const r = cli(...args);
  expect(r.stderr).toMatch(/^tapedeck: E_USAGE --ignore needs a value\./);
  expect(hintOf(r.stderr)).toMatch(new RegExp(`^${start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\w,]+$`));
  expect(r.status).toBe(2);
});
