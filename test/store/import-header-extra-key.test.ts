// A tape header may carry metadata keys tapedeck does not write (docs/tape-format.md: readers keep
// unknown keys; another implementation may add its own). Such a tape exported, but its export did
// not import ("header field ... cannot be written", with a hint to export again that loops). The
// key is now written back, so the round trip gives the same bytes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { Packr, Unpackr } from 'msgpackr';
import { afterAll, describe, expect, it } from 'vitest';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-header-extra-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The tape's header rewritten with `extra` after its own keys, the CRC made right, its frames kept. */
function withHeaderKeys(tape: string, extra: Record<string, unknown>): void {
  const b = readFileSync(tape);
  const m = b.readUInt32BE(10);
  const meta = new Unpackr({ mapsAsObjects: true }).unpack(b.subarray(18, 18 + m)) as Record<string, unknown>;
  const packed = new Packr({ useRecords: false, variableMapSize: true }).pack({ ...meta, ...extra });
  const head = Buffer.alloc(18);
  b.copy(head, 0, 0, 10);
  head.writeUInt32BE(packed.length, 10);
  head.writeUInt32BE(crc32(packed) >>> 0, 14);
  writeFileSync(tape, Buffer.concat([head, packed, b.subarray(18 + m)]));
}

describe('a tape header with a key tapedeck does not write', () => {
  it('exports and imports back byte for byte, the key kept', async () => {
    const tape = join(dir, 'extra.tape');
    await createTape(tape, { created: '2026-01-01T00:00:00.000Z' });
    await appendRecords(tape, [{ v: 1, kind: 'demo', key: 'k', value: 'answer' }]);
    withHeaderKeys(tape, { build: 7, generator: 'tapedeck-py 0.1' });
    const { header, warnings } = await readTape(tape);
    expect(warnings).toEqual([]);
    expect(header.generator).toBe('tapedeck-py 0.1');
    const json = await exportTapeJSON(tape);
    expect(json).toContain('"generator": "tapedeck-py 0.1"');
    const back = join(dir, 'back.tape');
    await importTapeJSON(json, back);
    expect((await readTape(back)).header).toMatchObject({ generator: 'tapedeck-py 0.1', build: 7 });
    expect(readFileSync(back).equals(readFileSync(tape))).toBe(true);
  });
});
