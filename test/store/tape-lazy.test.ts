// A large tape is opened without holding its file (src/store/tape-lazy.ts): the frames are
// checked through one reused buffer, and records read from the open file when they are asked
// for. Held to the whole-file readers: the same frames on every sound tape, for any read size,
// and no answer at all (the whole-file path then reports) on a damaged one; records that read
// the same heads, values, members and digests; and a changed file refused, never read as if it
// were the tape that was checked.
import { closeSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { outcome, tapeArb } from './damage.ts';
import { expectOpen } from '../open-files.ts';
import { TapedeckError } from '../../src/errors.ts';
import { lazyTape, TapeBackend } from '../../src/store/backends/tape.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { parseTape } from '../../src/store/tape-codec.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { scanTapeFile } from '../../src/store/tape-lazy.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-lazy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const defaultMin = lazyTape.min;
afterEach(() => {
  lazyTape.min = defaultMin;
});
let n = 0;


/** Records of every size around the reads' windows (8 KiB alone, 256 KiB onward) and binary values. */
function variedRecords(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    v: 1,
    key: `key-${i}`,
    run: i % 3 === 0 ? 'r1' : 'r2',
    text: 'x'.repeat([10, 900, 8_200, 70_000, 300_000][i % 5]! + i),
    bytes: Uint8Array.from({ length: 40 + (i % 7) }, (_, j) => (i * 31 + j) & 0xff),
    nested: { list: [i, `item ${i} ✓`, null, true] },
  }));
}

describe('scanTapeFile: frames checked through one reused buffer', () => {
  it('lists the frames the whole-file parser lists on a sound tape, and declines a damaged one, for any read size', async () => {
    await fc.assert(
      fc.asyncProperty(tapeArb, fc.constantFrom(1, 7, 13, 64, 257, 4096, 4 << 20), async ({ bytes }, chunk) => {
        const file = join(root, `p${n++}.tape`);
        writeFileSync(file, bytes);
        const want = outcome(() => parseTape(bytes, file, false));
        const got = await scanTapeFile(file, 0, chunk);
        try {
          if (want instanceof TapedeckError || want.warnings.length > 0) {
            expect(got).toBeUndefined();
            return;
          }
          expect(got).toBeDefined();
          expect(got!.header).toEqual(want.header);
          expect([...got!.offsets]).toEqual(want.records.map((r) => r.offset));
          expect([...got!.lengths]).toEqual(want.records.map((r) => r.length));
          expect(got!.size).toBe(bytes.length);
        } finally {
          got?.source.close();
        }
      }),
      { numRuns: 400 },
    );
  });

  it('lists every frame of a tape with more frames than its lists first hold (they grow as it is read)', async () => {
    const file = join(root, 'many.tape');
    await createTape(file);
    // 9,000 small records: past the first 4,096 and the 8,192 after one growth.
    await appendRecords(file, Array.from({ length: 9_000 }, (_, i) => ({ v: 1, key: `k${i}`, n: i })), { durable: false });
    const bytes = readFileSync(file);
    const want = parseTape(bytes, file, false);
    const got = await scanTapeFile(file, 0, 64 << 10);
    try {
      expect(got).toBeDefined();
      expect(got!.offsets.length).toBe(9_000);
      expect([...got!.offsets]).toEqual(want.records.map((r) => r.offset));
      expect([...got!.lengths]).toEqual(want.records.map((r) => r.length));
    } finally {
      got?.source.close();
    }
  });

  it('leaves a tape smaller than its threshold to the whole-file path, with the file closed', async () => {
    const file = join(root, 'small.tape');
    await createTape(file);
    await appendRecords(file, variedRecords(2), { durable: false });
    expect(await scanTapeFile(file, 10 << 20)).toBeUndefined();
    expect(await scanTapeFile(join(root, 'missing.tape'), 0)).toBeUndefined();
    expectOpen(file, 0);
  });
});

describe('TapeBackend reading a large tape from its file', () => {
  it('hands out records that read the same as the whole-file image: heads, values, members, digests', async () => {
    const file = join(root, 'varied.tape');
    await createTape(file);
    const records = variedRecords(40);
    await appendRecords(file, records, { durable: false });

    const whole = new TapeBackend(file);
    const a = (await whole.load({ create: false })).records;
    lazyTape.min = 0;
    const lazy = new TapeBackend(file);
    const loaded = await lazy.load({ create: false });
    // The same records by index, made when asked for (a collection keeps indexes, not objects).
    const table = loaded.table!;
    expect(table.length).toBe(records.length);
    // A wrapper that copies the result with records of its own does not pass the table on.
    expect({ ...loaded, records: [] }.table).toBeUndefined();
    for (let i = 0; i < table.length; i++) {
      expect(table.at(i)).toBe(a[i]!.at);
      expect(table.record(i).head()).toEqual(a[i]!.head());
      expect(table.record(i).id()).toBe(a[i]!.id());
    }
    const b = loaded.records;
    expect(whole.bytes).toBeDefined();
    expect(lazy.bytes).toBeUndefined(); // the file is not held
    expect(b.map((r) => r.at)).toEqual(a.map((r) => r.at));
    // In file order (the index at open), backwards, and jumping about (replays).
    const order = [...b.keys(), ...[...b.keys()].reverse(), ...[...b.keys()].map((i) => (i * 17) % b.length)];
    for (const i of order) {
      expect(b[i]!.head(['key', 'run'])).toEqual(a[i]!.head(['key', 'run']));
      expect(b[i]!.head()).toEqual(a[i]!.head());
      expect(b[i]!.value()).toEqual(records[i]);
      expect(b[i]!.member!('bytes')).toEqual(records[i]!.bytes);
      expect(b[i]!.id()).toBe(a[i]!.id());
    }
    // A value decoded earlier keeps its bytes when later reads reuse the window.
    const first = b[0]!.value() as { bytes: Uint8Array };
    for (const r of b) r.value();
    expect(first.bytes).toEqual(records[0]!.bytes);
    await whole.close();
    await lazy.close();
  });

  it('refuses a record whose bytes changed in place after the open (E_TAPE_CHANGED), instead of serving them', async () => {
    const file = join(root, 'changed.tape');
    await createTape(file);
    await appendRecords(file, variedRecords(6), { durable: false });
    lazyTape.min = 0;
    const backend = new TapeBackend(file);
    const recs = (await backend.load({ create: false })).records;
    const victim = recs[4]!;
    // One byte inside record 4's payload, changed on disk (an editor writing the file in place).
    const fd = openSync(file, 'r+');
    const at = victim.at + 40;
    const old = readFileSync(file)[at]!;
    writeSync(fd, Uint8Array.of(old ^ 0x20), 0, 1, at);
    closeSync(fd);
    let err: unknown;
    try {
      victim.value();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_TAPE_CHANGED', details: { file, offset: victim.at } });
    expect(() => victim.id()).toThrow(/changed after it was opened/);
    // The others still read as they were.
    expect(recs[1]!.value()).toEqual(variedRecords(6)[1]);
    await backend.close();
  });

  it('closes its file at close(); a record read later opens it again, unless another file took its path', async () => {
    const file = join(root, 'closed.tape');
    await createTape(file);
    const records = variedRecords(5);
    await appendRecords(file, records, { durable: false });
    lazyTape.min = 0;
    const backend = new TapeBackend(file);
    const recs = (await backend.load({ create: false })).records;
    expectOpen(file, 1);
    await backend.close();
    expectOpen(file, 0);
    expect(recs[2]!.value()).toEqual(records[2]);
    // Replaced by a tape with the same frames at the same places: still not the file checked.
    writeFileSync(`${file}.new`, readFileSync(file));
    renameSync(`${file}.new`, file);
    const fresh = new TapeBackend(file);
    await fresh.close();
    expect(() => recs[3]!.value()).toThrow(expect.objectContaining({ code: 'E_TAPE_CHANGED' }));
  });

  it('serves a ReplayCache: recorded, reopened from the file, replayed exactly, and closed', async () => {
    const file = join(root, 'cache.tape');
    const answers = variedRecords(30).map((r) => r.text);
    const w = await ReplayCache.open(file, { mode: 'record' });
    const ask = (i: number) => ({ model: 'm', messages: [{ role: 'user', content: `question ${i}` }] });
    for (let i = 0; i < answers.length; i++) await w.put(ask(i), { answer: answers[i] });
    await w.close();
    lazyTape.min = 0;
    const r = await ReplayCache.open(file, { mode: 'replay' });
    expectOpen(file, 1);
    for (const i of [29, 0, 14, 3, 28, 7]) expect(await r.get(ask(i))).toEqual({ answer: answers[i] });
    // A miss's diagnosis reads the recorded requests from the file too.
    await expect(r.get(ask(99))).rejects.toMatchObject({ code: 'E_MISS', message: expect.stringContaining('"question 99"') });
    await r.close();
    expectOpen(file, 0);
  });
});
