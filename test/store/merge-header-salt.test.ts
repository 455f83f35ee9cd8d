// A side whose header fails only its metadata CRC still holds its redaction salt (the reader keeps
// it: headerLost with salt), yet tapedeck merge refused it as "salt unknown". A salt read whole is
// used as the salt; a salt that is really lost only matters for records holding keyed masks.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { mergeTapeFiles } from '../../src/store/tape-merge.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-merge-header-salt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rec = (q: string, value = `answer to ${q}`) => ({ v: 1, kind: 'demo', key: q, value });
const keys = async (tape: string) => (await readTape(tape)).records.map((r) => (r.value as { key: string }).key);

async function sides(name: string): Promise<{ base: string; ours: string; theirs: string; salt: string }> {
  const base = join(dir, `${name}-base.tape`);
  await createTape(base);
  await appendRecords(base, [rec('a'), rec('b')]);
  const ours = join(dir, `${name}-ours.tape`);
  const theirs = join(dir, `${name}-theirs.tape`);
  copyFileSync(base, ours);
  copyFileSync(base, theirs);
  const salt = (await readTape(base)).header.salt as string;
  expect(salt).toMatch(/^[0-9a-f]{32}$/);
  return { base, ours, theirs, salt };
}

/** Flips one bit in the header's metadata: in `created` (the salt reads whole) or in the salt. */
function damageHeader(tape: string, where: 'created' | 'salt'): void {
  const bytes = readFileSync(tape);
  const at = where === 'created' ? bytes.indexOf('created') + 'created'.length + 4 : bytes.indexOf('salt') + 'salt'.length + 3;
  bytes[at] = bytes[at]! ^ 0x40;
  writeFileSync(tape, bytes);
}

describe('tapedeck merge with a side whose header is damaged', () => {
  it('merges theirs whose damaged header still holds the salt', async () => {
    const { base, ours, theirs, salt } = await sides('theirs-kept');
    await appendRecords(ours, [rec('ours 1')]);
    await appendRecords(theirs, [rec('theirs 1'), rec('theirs 2')]);
    damageHeader(theirs, 'created');
    expect((await readTape(theirs)).header).toMatchObject({ headerLost: true, salt });
    const s = await mergeTapeFiles(base, ours, theirs);
    expect(await keys(ours)).toEqual(['a', 'b', 'ours 1', 'theirs 1', 'theirs 2']);
    expect(s.damage.map((d) => `${d.label} ${d.warning.code}`)).toEqual(['theirs E_TAPE_HEADER']);
    const merged = await readTape(ours);
    expect(merged.header.salt).toBe(salt);
    expect(merged.header.headerLost).toBeUndefined();
  });

  it('merges into ours whose damaged header still holds the salt, writing a sound header with it', async () => {
    const { base, ours, theirs, salt } = await sides('ours-kept');
    await appendRecords(ours, [rec('ours 1')]);
    await appendRecords(theirs, [rec('theirs 1')]);
    damageHeader(ours, 'created');
    await mergeTapeFiles(base, ours, theirs);
    const merged = await readTape(ours);
    expect(merged.warnings).toEqual([]);
    expect(merged.header.headerLost).toBeUndefined();
    expect(merged.header.salt).toBe(salt);
    expect(merged.records.map((r) => (r.value as { key: string }).key)).toEqual(['a', 'b', 'ours 1', 'theirs 1']);
  });

  it('a salt lost with theirs header: merged when theirs adds no keyed mask, refused when it does', async () => {
    const plain = await sides('theirs-lost');
    await appendRecords(plain.theirs, [rec('theirs 1')]);
    damageHeader(plain.theirs, 'salt');
    expect((await readTape(plain.theirs)).header.salt).toBeUndefined();
    await mergeTapeFiles(plain.base, plain.ours, plain.theirs);
    expect(await keys(plain.ours)).toEqual(['a', 'b', 'theirs 1']);

    const masked = await sides('theirs-lost-mask');
    await appendRecords(masked.theirs, [rec('theirs 1', 'token [REDACTED:0123456789abcdef]')]);
    damageHeader(masked.theirs, 'salt');
    const before = readFileSync(masked.ours);
    const e = await mergeTapeFiles(masked.base, masked.ours, masked.theirs).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_TAPE_MERGE');
    expect((e as TapedeckError).message).toMatch(/salt is unknown/);
    expect(readFileSync(masked.ours).equals(before)).toBe(true);
  });
});
