// A folder where one tape cannot be read at all (a 5-byte prefix of a tape: its header is gone):
// `tapedeck diff`, `stats` and `scan` report on the other tapes, name the unreadable one, and
// do not pass. Before, the one file ended each command with its error alone: the keys in the
// folder's other tapes were never scanned, and the drift of the others never shown.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-unreadable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
const KEY = `sk-proj-${'A1b2C3d4'.repeat(6)}`;

beforeAll(async () => {
  for (const side of ['old', 'new', 'scan']) mkdirSync(join(dir, side));
  await recordVariant(join(dir, 'old', 'a.tape'), 'base');
  await recordVariant(join(dir, 'new', 'a.tape'), 'text');
  copyFileSync(join(dir, 'old', 'a.tape'), join(dir, 'old', 'b.tape'));
  // The new b.tape: the first 5 bytes of a tape, not readable as one.
  writeFileSync(join(dir, 'new', 'b.tape'), readFileSync(join(dir, 'old', 'a.tape')).subarray(0, 5));
  // For scan: an unreadable tape first (by name) with a key in its raw bytes, then a tape whose record holds one.
  writeFileSync(join(dir, 'scan', 'a.tape'), Buffer.concat([readFileSync(join(dir, 'old', 'a.tape')).subarray(0, 5), Buffer.from(` "${KEY}" `)]));
  await createTape(join(dir, 'scan', 'b.tape'));
  await appendRecords(join(dir, 'scan', 'b.tape'), [{ v: 1, kind: 'cache', key: 'k', value: { note: `the key is ${KEY}` } }]);
}, 120_000);

describe('a folder with a tape that cannot be read', () => {
  it('diff reports the other tapes, leaves the unreadable one out on both sides, and exits 2', () => {
    const r = cli(['diff', 'old', 'new', '--format', 'json']);
    expect(r.status, r.stderr).toBe(2);
    const report = JSON.parse(r.stdout) as { entries: { tape: string }[]; summary: { failing: number; removed: number } };
    // a.tape's drift is reported; b.tape, unreadable on the new side, is in neither (not "removed").
    expect([...new Set(report.entries.map((e) => e.tape))]).toEqual(['a.tape']);
    expect(report.summary.failing).toBeGreaterThan(0);
    expect(report.summary.removed).toBe(0);
    expect(r.stderr).toMatch(/tapedeck diff: b\.tape left out: E_TAPE_\w+/);
    expect(r.stderr).toContain('tapedeck verify');
  });

  it('stats reports the other tapes and exits 2', () => {
    const r = cli(['stats', 'new', '--format', 'json']);
    expect(r.status, r.stderr).toBe(2);
    const stats = JSON.parse(r.stdout) as { tapes: number; total: { calls: number } };
    // a.tape's 13 calls, counted; b.tape left out.
    expect(stats.tapes).toBe(1);
    expect(stats.total.calls).toBe(13);
    expect(r.stderr).toMatch(/tapedeck stats: new\/b\.tape left out: E_TAPE_\w+/);
  });

  it("scan reads on past it, finds the other tape's key and the key in its raw bytes, and exits 1", () => {
    const r = cli(['scan', 'scan']);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/scan\/a\.tape: unreadable as a tape, searched for key formats only: E_TAPE_\w+/);
    expect(r.stdout).toMatch(/scan\/a\.tape: \(byte \d+\) unreadable tape: key format "sk-p/);
    expect(r.stdout).toMatch(/scan\/b\.tape: record 0 .*"sk-p/);
    expect(r.stderr).toContain('2 possible credentials in 2 tapes');
  });
});
