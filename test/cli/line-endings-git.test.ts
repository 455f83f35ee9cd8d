// git's LF to CRLF conversion (`*.tape text eol=crlf`, core.autocrlf) puts a CR only before an LF
// that had none, so the magic's \r\n stays as it was and the tape was reported as ordinary damage
// ("1684 damaged bytes … payload CRC-32 mismatch", "tapedeck prune keeps them and drops the
// damage"): prune dropped every record holding an LF byte for good, and update re-recorded them.
// The records give it away: one read with each CR before an LF dropped checks. It is now refused
// as the conversion it is (docs/tape-format.md), by every reader, prune and writers included.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-eol-git-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tapedeck = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });

/** git's eol=crlf checkout: a CR before each LF that has none (a CR LF stays as it is). */
const gitCrlf = (b: Buffer) => Buffer.from(b.toString('latin1').replace(/(?<!\r)\n/g, '\r\n'), 'latin1');
/** Undone: each CR before an LF dropped, past the magic's own CR LF. */
const undo = (b: Buffer) => Buffer.concat([b.subarray(0, 8), Buffer.from(b.subarray(8).toString('latin1').replace(/\r\n/g, '\n'), 'latin1')]);

async function tapeWithLineBreaks(name: string, opts: { created?: string } = {}): Promise<string> {
  const tape = join(dir, name);
  await createTape(tape, { salt: '00112233445566778899aabbccddeeff', ...opts });
  await appendRecords(tape, [1, 2, 3, 4].map((i) => chatRecord(i, new TextEncoder().encode(`{"answer":"line one\\nline two ${i}"}\n`))));
  return tape;
}

/** Reading, verify, prune and an update run all refuse it as converted, and leave it as it is. */
async function refusedEverywhere(tape: string): Promise<void> {
  const converted = readFileSync(tape);
  const err = await readTape(tape).then(() => undefined, (e: { code?: string; message: string }) => e);
  expect(err?.code).toBe('E_TAPE_CORRUPT');
  expect(err?.message).toContain('had its line endings converted (LF to CRLF)');

  const v = tapedeck('verify', tape);
  expect(v.status).toBe(1);
  expect(v.stderr + v.stdout).toContain('line endings converted (LF to CRLF)');
  expect(v.stderr + v.stdout).toContain('*.tape -text');
  expect(v.stderr + v.stdout).not.toMatch(/damaged bytes|keeps them|keeps every record/);

  const p = tapedeck('prune', tape);
  expect(p.status).toBe(1);
  expect(p.stderr + p.stdout).toContain('line endings converted (LF to CRLF)');
  expect(readFileSync(tape).equals(converted)).toBe(true);

  const rec = createFetch({ tape, mode: 'update', onWarning: () => {} });
  await expect(rec.ready).rejects.toThrow(/line endings converted \(LF to CRLF\)/);
  await rec.close().catch(() => {});
  expect(readFileSync(tape).equals(converted)).toBe(true);
}

describe("a tape git checked out with LF to CRLF (its magic unchanged)", () => {
  it('is refused as converted, not as damage to prune', async () => {
    const tape = await tapeWithLineBreaks('git.tape');
    const original = readFileSync(tape);
    const converted = gitCrlf(original);
    // The magic keeps its one CR LF: nothing in it shows the conversion.
    expect(converted.subarray(0, 8).equals(original.subarray(0, 8))).toBe(true);
    expect(converted.length).toBeGreaterThan(original.length);
    writeFileSync(tape, converted);
    await refusedEverywhere(tape);
    // Undone, it reads whole again.
    writeFileSync(tape, undo(converted));
    expect((await readTape(tape)).records).toHaveLength(4);
  });

  it('a header holding an LF byte is converted too: said so, not a lost header', async () => {
    // The LF in the metadata itself: the header's CRC no longer matches, as for a damaged header.
    const tape = await tapeWithLineBreaks('header.tape', { created: '2026-01-01T00:00:00.000Z\n' });
    writeFileSync(tape, gitCrlf(readFileSync(tape)));
    const err = await readTape(tape).then(() => undefined, (e: { code?: string; message: string }) => e);
    expect(err?.code).toBe('E_TAPE_CORRUPT');
    expect(err?.message).toContain('had its line endings converted (LF to CRLF)');
  });

  it('a real git checkout with "*.tape text eol=crlf"', async () => {
    const tape = await tapeWithLineBreaks('repo.tape');
    const repo = join(dir, 'repo');
    const clone = join(dir, 'clone');
    mkdirSync(repo);
    const git = (cwd: string, ...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=t', '-c', 'core.autocrlf=false', ...args], { cwd, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    };
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'chat.tape'), readFileSync(tape));
    git(repo, 'add', 'chat.tape');
    git(repo, 'commit', '-qm', 't');
    git(dir, 'clone', '-q', repo, clone);
    writeFileSync(join(clone, '.gitattributes'), '*.tape text eol=crlf\n');
    rmSync(join(clone, 'chat.tape'));
    git(clone, 'checkout', '-q', 'chat.tape');
    const out = readFileSync(join(clone, 'chat.tape'));
    expect(out.length).toBeGreaterThan(readFileSync(tape).length);
    await refusedEverywhere(join(clone, 'chat.tape'));
  });

  it('ordinary damage is still damage', async () => {
    const tape = await tapeWithLineBreaks('damaged.tape');
    const bytes = readFileSync(tape);
    const second = (await readTape(tape)).records[1]!;
    bytes[second.offset + 20] ^= 0xff;
    writeFileSync(tape, bytes);
    const t = await readTape(tape);
    expect(t.records).toHaveLength(3);
    expect(t.warnings.map((w) => w.code)).toEqual(['E_TAPE_CORRUPT']);
    expect(t.warnings[0]!.message).toContain('damaged bytes');
  });
});

describe('a tape git committed with CRLF to LF (a "text" rule in force when it was added)', () => {
  it('committed under "* text eol=lf": the advice says the committed copy is converted, and following it gives a clone that reads', async () => {
    // git add converts CRLF to LF in the commit itself: restoring that copy brings the conversion
    // back, so the advice must not stop at "restore it from version control".
    const tape = await tapeWithLineBreaks('lf.tape');
    const repo = join(dir, 'lf-repo');
    mkdirSync(repo);
    const git = (cwd: string, ...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=t', '-c', 'core.autocrlf=false', ...args], { cwd, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    };
    git(repo, 'init', '-q');
    writeFileSync(join(repo, '.gitattributes'), '* text eol=lf\n');
    writeFileSync(join(repo, 'chat.tape'), readFileSync(tape));
    git(repo, 'add', '.gitattributes', 'chat.tape');
    git(repo, 'commit', '-qm', 't');
    const cloneA = join(dir, 'lf-clone-a');
    git(dir, 'clone', '-q', repo, cloneA);
    const err = await readTape(join(cloneA, 'chat.tape')).then(() => undefined, (e: { code?: string; message: string; hint?: string }) => e);
    expect(err?.code).toBe('E_TAPE_CORRUPT');
    expect(err?.message).toContain('had its line endings converted (CRLF to LF)');
    expect(err?.hint).toContain('git converted the copy it committed');
    expect(err?.hint).toContain(`git add --renormalize ${join(cloneA, 'chat.tape')}`);
    expect(err?.hint).toContain('record it again');
    const cloned = join(cloneA, 'chat.tape');
    const v = spawnSync(process.execPath, [CLI, 'verify', cloned], { cwd: cloneA, encoding: 'utf8' });
    expect(v.stderr + v.stdout).toContain(`git add --renormalize ${cloned}`);
    // scan lists only the error's first line: its hint sends to verify, not to restoring alone.
    const sc = spawnSync(process.execPath, [CLI, 'scan', cloned], { cwd: cloneA, encoding: 'utf8' });
    expect(sc.stderr).toContain(`tapedeck verify ${cloned} says how to undo it`);

    // The advice, on the machine that recorded it (its working copy is intact).
    expect((await readTape(join(repo, 'chat.tape'))).records).toHaveLength(4);
    writeFileSync(join(repo, '.gitattributes'), '* text eol=lf\n*.tape -text\n');
    git(repo, 'add', '--renormalize', 'chat.tape');
    git(repo, 'add', '.gitattributes');
    git(repo, 'commit', '-qm', 'tape committed as recorded');
    const cloneB = join(dir, 'lf-clone-b');
    git(dir, 'clone', '-q', repo, cloneB);
    expect((await readTape(join(cloneB, 'chat.tape'))).records).toHaveLength(4);
  });
});
