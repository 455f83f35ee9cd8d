// A tape whose line endings were converted (git's core.autocrlf, an editor, a zip tool) was
// reported as a damaged header plus damaged records, with the advice to prune, which "keeps
// every record" and dropped half of them with the salt. The magic bytes (\x89TAPE\r\n\x1a) are
// made to show such a conversion: it is now said as what it is, with how to undo it, and
// neither prune nor a writer touches the tape. `tapedeck init` adds `*.tape -text`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-eol-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tapedeck = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });

/** unix2dos: every LF becomes CRLF; dos2unix: every CRLF becomes LF. */
const toCrlf = (b: Buffer) => Buffer.from(b.toString('latin1').replace(/\n/g, '\r\n'), 'latin1');
const toLf = (b: Buffer) => Buffer.from(b.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');

describe('a tape with converted line endings', () => {
  it.each([
    ['LF to CRLF', toCrlf],
    ['CRLF to LF', toLf],
  ] as const)('%s: said as a conversion with how to undo it; verify fails, prune and a record run leave it alone', async (how, convert) => {
    const tape = join(dir, `${how.replace(/ /g, '')}.tape`);
    await createTape(tape, { salt: '00112233445566778899aabbccddeeff' });
    await appendRecords(tape, [1, 2, 3, 4].map((i) => chatRecord(i, new TextEncoder().encode(`{"answer":"line one\\nline two ${i}"}\n`))));
    const converted = convert(readFileSync(tape));
    writeFileSync(tape, converted);

    const err = await readTape(tape).then(() => undefined, (e: { code?: string; message: string; hint?: string }) => e);
    expect(err?.code).toBe('E_TAPE_CORRUPT');
    expect(err?.message).toContain(`had its line endings converted (${how})`);
    // The package's name: `npx tapedeck` outside a project with it installed runs another package.
    expect(err?.hint).toContain('npx llm-tapedeck init');

    const v = tapedeck('verify', tape);
    expect(v.status).toBe(1);
    expect(v.stderr + v.stdout).toContain(`line endings converted (${how})`);
    expect(v.stderr + v.stdout).toContain('*.tape -text');
    expect(v.stderr + v.stdout).not.toContain('keeps every record');

    const p = tapedeck('prune', tape);
    expect(p.status).toBe(1);
    expect(readFileSync(tape).equals(converted)).toBe(true);

    const rec = createFetch({ tape, mode: 'update', onWarning: () => {} });
    await expect(rec.ready).rejects.toThrow(/line endings converted/);
    await rec.close().catch(() => {});
    expect(readFileSync(tape).equals(converted)).toBe(true);

    // Undone, it reads whole again (CRLF to LF cannot be undone blindly: LFs of its own were there).
    if (how === 'LF to CRLF') {
      writeFileSync(tape, toLf(converted));
      expect((await readTape(tape)).records).toHaveLength(4);
    }
  });
});

describe('tapedeck init', () => {
  it('adds *.tape -text to .gitattributes: git never converts a tape\'s line endings', () => {
    const repo = join(dir, 'repo');
    spawnSync('git', ['init', '-q', repo]);
    const r = spawnSync(process.execPath, [CLI, 'init', '--no-hook'], { cwd: repo, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8')).toContain('*.tape -text\n');
    // git's own reading of it.
    expect(spawnSync('git', ['check-attr', 'text', 'diff', 'merge', '--', 'a.tape'], { cwd: repo, encoding: 'utf8' }).stdout).toBe('a.tape: text: unset\na.tape: diff: tapedeck\na.tape: merge: tapedeck\n');
  });
});
