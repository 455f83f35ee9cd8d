// A base record damaged on one side of a merge, intact in base and on the other side, is not a
// removal: the merge keeps it (and says so); a record one side really removed stays removed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeTapeFiles } from '../../src/store/tape-merge.ts';
import { appendRecords, createTape, readTape, rewriteTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-merge-damaged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rec = (q: string) => ({ v: 1, kind: 'demo', key: q, value: `answer to ${q} ${'.'.repeat(40)}` });
const questions = async (tape: string) => (await readTape(tape)).records.map((r) => (r.value as { key: string }).key);

describe('tapedeck merge with one side damaged', () => {
  it('keeps a base record damaged in ours but intact in base and theirs', async () => {
    const base = join(dir, 'base.tape');
    await createTape(base, { salt: null });
    await appendRecords(base, [rec('prompt 0'), rec('prompt 1'), rec('prompt 2')]);
    const ours = join(dir, 'ours.tape');
    const theirs = join(dir, 'theirs.tape');
    copyFileSync(base, ours);
    copyFileSync(base, theirs);
    await appendRecords(ours, [rec('prompt 10')]);
    await appendRecords(theirs, [rec('prompt 20')]);
    // One byte flipped inside prompt 1's record, in ours only.
    const { records } = await readTape(ours);
    const bytes = readFileSync(ours);
    const at = records[1]!.offset + records[1]!.length - 5;
    bytes[at] = bytes[at]! ^ 0x40;
    writeFileSync(ours, bytes);
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await questions(ours)).toEqual(['prompt 0', 'prompt 1', 'prompt 2', 'prompt 10', 'prompt 20']);
    expect(s.removed).toBe(0);
    expect(s.damage.map((d) => d.label)).toEqual(['ours']);
  });

  it('a record the damaged side removed (a re-record) is still removed', async () => {
    const base = join(dir, 'base2.tape');
    await createTape(base, { salt: null });
    await appendRecords(base, [rec('prompt 0'), rec('prompt 1'), rec('prompt 2')]);
    const ours = join(dir, 'ours2.tape');
    const theirs = join(dir, 'theirs2.tape');
    copyFileSync(base, ours);
    copyFileSync(base, theirs);
    // Ours re-records prompt 0 (drops it, appends a new one), then damage after the new one.
    await rewriteTape(ours, (e) => (e.value as { key: string }).key !== 'prompt 0');
    await appendRecords(ours, [rec('prompt 0 again')]);
    writeFileSync(ours, Buffer.concat([readFileSync(ours), readFileSync(ours).subarray(-30)]));
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await questions(ours)).toEqual(['prompt 1', 'prompt 2', 'prompt 0 again']);
    expect(s.removed).toBe(1);
  });
});
