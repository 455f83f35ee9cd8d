// A base record damaged in base, held whole by both sides, was kept once but appended with ours'
// additions: repeats of one key (answered in tape order) then answered their first call with the
// second recording. It stays where base had it.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeTapeFiles } from '../../src/store/tape-merge.ts';
import { appendRecords, createTape, readTape, rewriteTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-merge-damaged-base-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rec = (q: string, n: number) => ({ v: 1, kind: 'demo', key: q, repeat: n, value: `answer ${n} to ${q} ${'.'.repeat(40)}` });
const answers = async (tape: string) => (await readTape(tape)).records.map((r) => (r.value as { value: string }).value.split(' .')[0]);

async function sides(name: string): Promise<{ base: string; ours: string; theirs: string }> {
  const base = join(dir, `${name}-base.tape`);
  await createTape(base, { salt: null });
  await appendRecords(base, [rec('same', 0), rec('same', 1), rec('same', 2)]);
  const ours = join(dir, `${name}-ours.tape`);
  const theirs = join(dir, `${name}-theirs.tape`);
  copyFileSync(base, ours);
  copyFileSync(base, theirs);
  return { base, ours, theirs };
}

async function damage(tape: string, record: number): Promise<void> {
  const { records } = await readTape(tape);
  const bytes = readFileSync(tape);
  const at = records[record]!.offset + records[record]!.length - 5;
  bytes[at] = bytes[at]! ^ 0x40;
  writeFileSync(tape, bytes);
}

describe('tapedeck merge with a base record damaged in base', () => {
  it('keeps a damaged first base record both sides hold in its place, before the later repeats', async () => {
    const { base, ours, theirs } = await sides('first');
    await appendRecords(ours, [rec('other', 0)]);
    await damage(base, 0);
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await answers(ours)).toEqual(['answer 0 to same', 'answer 1 to same', 'answer 2 to same', 'answer 0 to other']);
    expect(s).toMatchObject({ base: 2, ours: 1, theirs: 0, duplicates: 1, removed: 0 });
    expect(s.damage.map((d) => d.label)).toEqual(['base']);
  });

  it('drops a damaged base record the other side re-recorded, so its replaced answer never comes back', async () => {
    const { base, ours, theirs } = await sides('rerecorded');
    await appendRecords(ours, [rec('other', 0)]);
    // Theirs re-records the request: its three recordings replaced by three new ones.
    await rewriteTape(theirs, () => false);
    await appendRecords(theirs, [rec('same', 5), rec('same', 6), rec('same', 7)]);
    await damage(base, 0);
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await answers(ours)).toEqual(['answer 0 to other', 'answer 5 to same', 'answer 6 to same', 'answer 7 to same']);
    expect(s).toMatchObject({ base: 0, ours: 1, theirs: 3, duplicates: 0, removed: 3 });
  });

  it('the same with the sides swapped: ours re-recorded, theirs holds the damaged record', async () => {
    const { base, ours, theirs } = await sides('rerecorded-ours');
    await rewriteTape(ours, () => false);
    await appendRecords(ours, [rec('same', 5), rec('same', 6)]);
    await appendRecords(theirs, [rec('other', 0)]);
    await damage(base, 1);
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await answers(ours)).toEqual(['answer 5 to same', 'answer 6 to same', 'answer 0 to other']);
    expect(s).toMatchObject({ base: 0, ours: 2, theirs: 1, removed: 3 });
  });

  it('keeps a damaged middle base record in its place, with both sides adding records', async () => {
    const { base, ours, theirs } = await sides('middle');
    await appendRecords(ours, [rec('ours', 0)]);
    await appendRecords(theirs, [rec('theirs', 0)]);
    await damage(base, 1);
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await answers(ours)).toEqual(['answer 0 to same', 'answer 1 to same', 'answer 2 to same', 'answer 0 to ours', 'answer 0 to theirs']);
    expect(s).toMatchObject({ base: 2, ours: 1, theirs: 1, duplicates: 1, removed: 0 });
  });
});
