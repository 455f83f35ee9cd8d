// What the commands say about a damaged tape is true of it: an empty (0-byte) file has no header
// to keep and no creation time to print, prune counts the damage it removed (never a negative
// number), a damaged header in front of sound records is a damaged header (not "not a tapedeck
// tape"), and every export of a damaged tape says on stderr what it left out, and exits 1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-damage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

/** A tape of three HTTP records; `at` (relative to record 1's frame) is changed. */
async function tapeWithDamage(name: string, at?: (offsets: number[]) => number): Promise<{ tape: string; offsets: number[] }> {
  const tape = join(dir, name);
  await createTape(tape);
  const { offsets } = await appendRecords(tape, [chatRecord(0), chatRecord(1), chatRecord(2)]);
  if (at) {
    const b = readFileSync(tape);
    b[at(offsets)]! ^= 0xff;
    writeFileSync(tape, b);
  }
  return { tape, offsets };
}

describe('an empty (0-byte) tape', () => {
  it('verify says it is empty: no creation time or version to print, no header to keep', () => {
    writeFileSync(join(dir, 'empty.tape'), '');
    const r = cli('verify', 'empty.tape');
    expect(r.status).toBe(1);
    expect(r.stdout).not.toMatch(/created ,|tapedeck ,/);
    expect(r.stdout).not.toContain('keeps the header');
    expect(r.stdout).toMatch(/^empty\.tape: empty \(0 bytes: no header, no records\)\n/);
    expect(r.stdout).toContain('E_TAPE_EMPTY at byte 0');
    expect(r.stdout.trim().split('\n').pop()).toBe('1 problem(s); the file is empty (tapedeck prune empty.tape writes a header, making it an empty tape).');
  });

  it('prune writes a header and removes no damage (not a negative count)', () => {
    writeFileSync(join(dir, 'empty2.tape'), '');
    const r = cli('prune', 'empty2.tape');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('empty2.tape: kept 0 records, removed 0 bytes of damage; wrote a header (the file was empty)\n');
    expect(cli('verify', 'empty2.tape').stdout.trim().split('\n').pop()).toBe('ok (no records)');
  });
});

describe('damage in records', () => {
  it('prune counts the bytes it removed: the damaged record, no more', async () => {
    const { tape, offsets } = await tapeWithDamage('records.tape', (o) => o[1]! + 8);
    const r = cli('prune', tape);
    expect(r.stdout).toBe(`${tape}: kept 2 records, removed ${offsets[2]! - offsets[1]!} bytes of damage\n`);
  });
});

describe('prune of a sound tape', () => {
  it('leaves the file as it is (no rewrite: same inode and modification time) and says nothing was removed', async () => {
    const { tape } = await tapeWithDamage('sound.tape');
    const before = statSync(tape);
    const r = cli('prune', tape);
    expect(r.stdout).toBe(`${tape}: kept 3 records, removed 0 bytes of damage\n`);
    const after = statSync(tape);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });
});

describe('record numbers after damage', () => {
  it('inspect numbers the frame damage took where it lies, as scan does, so both name a record alike', async () => {
    const { tape, offsets } = await tapeWithDamage('numbers.tape', (o) => o[1]! + 8);
    const rows = cli('inspect', tape).stdout.split('\n').filter((l) => /^\d+\t/.test(l)).map((l) => l.split('\t'));
    expect(rows.map((r) => [r[0], r[1]])).toEqual([['0', String(offsets[0])], ['1', String(offsets[1])], ['2', String(offsets[2])]]);
    expect(rows[1]![8]).toMatch(/^\[damaged, not read: E_TAPE_CORRUPT at byte \d+ below\]$/);
    expect(rows[1]![2]).toBe(String(offsets[2]! - offsets[1]!));
    // The sound records keep their place: record 2 is the last question.
    expect(rows[2]![8]).toBe('question 2');
    expect(cli('scan', tape).stdout).toContain(`damaged bytes ${offsets[1]}..${offsets[2]! - 1} (record 1)`);
  });
});

describe('a damaged header in front of sound records', () => {
  it('is described as a damaged header whose records are all read, not as a file that is no tape', async () => {
    const { tape, offsets } = await tapeWithDamage('header.tape', () => 20); // inside the metadata: its CRC fails
    const r = cli('verify', tape);
    expect(r.status).toBe(1);
    expect(r.stdout).not.toContain('not a readable tape');
    expect(r.stdout).not.toContain('not a tapedeck tape');
    expect(r.stdout).toContain(`E_TAPE_HEADER at byte 14: ${tape}: the header is damaged (byte 14: metadata CRC-32 mismatch); its metadata is lost, records are read from byte ${offsets[0]}; its redaction salt still reads whole and is kept (a fresh header carries it), so keyed masks made under it keep matching.`);
    expect(r.stdout).toMatch(new RegExp(`^${tape}: header damaged \\(creation time and tapedeck version unknown\\), 3 records, ${statSync(tape).size} bytes\\n`));
    expect(r.stdout.trim().split('\n').pop()).toBe(`1 problem(s); the 3 records counted above are intact (tapedeck prune ${tape} writes a fresh header, keeps them and drops the damage).`);
    const pruned = cli('prune', tape);
    expect(pruned.stdout).toBe(`${tape}: kept 3 records, removed ${offsets[0]} bytes of damage; wrote a fresh header (the old one was damaged)\n`);
    expect(cli('verify', tape).status).toBe(0);
  });
});

describe('export --har of a damaged tape', () => {
  it('exports the intact records, lists the damage in log._warnings as the JSON export does, says so on stderr and exits 1', async () => {
    const { tape, offsets } = await tapeWithDamage('har.tape', (o) => o[1]! + 8);
    const r = cli('export', tape, '--har');
    const json = cli('export', tape);
    // The JSON export's exit code: the damage is a problem found, as for verify and inspect.
    expect(r.status).toBe(json.status);
    expect(r.status).toBe(1);
    const har = JSON.parse(r.stdout) as { log: { entries: unknown[]; _warnings: { code: string; offset: number }[] } };
    expect(har.log.entries).toHaveLength(2);
    expect(har.log._warnings).toEqual((JSON.parse(json.stdout) as { warnings: unknown[] }).warnings);
    expect(har.log._warnings.map((w) => [w.code, w.offset])).toEqual([['E_TAPE_CORRUPT', offsets[1]]]);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: warning: ${tape} is damaged: the export leaves out what its damaged region held \\(listed in the HAR's log\\._warnings, which tapedeck import does not bring back\\):\n  E_TAPE_CORRUPT at byte ${offsets[1]}: [^\n]+\nhint: tapedeck verify ${tape} shows the damage; tapedeck prune ${tape} drops it`));
  });
});

describe('export of a damaged tape', () => {
  // Before, the JSON and review exports exited 0 with nothing on stderr: the damage was only in
  // the "warnings" member, which import ignores, so export -> import made a clean-looking tape.
  it.each([{ form: 'JSON', args: [] as string[] }, { form: 'review', args: ['--review'] }])('$form: writes what it reads, says on stderr what was lost, where, and the fix, and exits 1', async ({ form, args }) => {
    const { tape, offsets } = await tapeWithDamage(`export-${form}.tape`, (o) => o[1]! + 8);
    const r = cli('export', tape, ...args);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout) as { records: unknown[]; warnings: { code: string; offset: number }[] };
    expect(out.records).toHaveLength(2);
    expect(out.warnings.map((w) => [w.code, w.offset])).toEqual([['E_TAPE_CORRUPT', offsets[1]]]);
    const lines = r.stderr.split('\n');
    expect(lines[0]).toBe(`tapedeck: warning: ${tape} is damaged: the export leaves out what its damaged region held (listed in the "warnings" member, which tapedeck import does not bring back):`);
    expect(lines[1]).toMatch(new RegExp(`^  E_TAPE_CORRUPT at byte ${offsets[1]}: \\d+ damaged bytes at ${offsets[1]}\\.\\.${offsets[2]! - 1} skipped`));
    expect(lines[2]).toBe(`hint: tapedeck verify ${tape} shows the damage; tapedeck prune ${tape} drops it and keeps every intact record, or restore the tape from version control.`);
    expect(lines.slice(3)).toEqual(['']);
  });

  it('a sound tape: exit 0, nothing on stderr', async () => {
    const { tape } = await tapeWithDamage('export-sound.tape');
    const r = cli('export', tape);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
