// msgpackr's native string extraction is loaded for large tapes only: a small tape's command
// does not pay its load (~15 ms, as much as the export itself), and a large tape still decodes
// with it (~15% faster). This file imports no msgpackr entry that loads it, so the state it
// reads is what the tape readers did. Its own worker gives it a fresh msgpackr.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as unpack from 'msgpackr/unpack';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape, readTape, scanTape } from '../../src/store/tape-file.ts';
import { decodedRecords, withTapeStream } from '../../src/store/tape-stream.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-native-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Whether msgpackr decodes strings with its native extractor now (read live: it is a `let`). */
const native = () => (unpack as { isNativeAccelerationEnabled: boolean }).isNativeAccelerationEnabled;

describe('native string extraction', () => {
  it('stays off for small tapes and scans, and comes on for the first tape of 8 MB or more read whole, decoding the same values', async () => {
    const small = join(root, 'small.tape');
    await createTape(small);
    await appendRecords(small, [{ v: 1, key: 'a', text: 'hello ✓' }], { durable: false });
    const big = join(root, 'big.tape');
    await createTape(big);
    // 10 MB of records with many strings: what the extractor is for.
    const records = Array.from({ length: 2_500 }, (_, i) => ({ v: 1, key: `k${i}`, parts: Array.from({ length: 100 }, (_, j) => `part ${j} of record ${i}: ${'ü'.repeat(j % 7)}`.padEnd(36, '.')) }));
    await appendRecords(big, records, { durable: false });

    expect(native()).toBe(false);
    expect((await readTape(small)).records.map((r) => r.value)).toEqual([{ v: 1, key: 'a', text: 'hello ✓' }]);
    await scanTape(small);
    await withTapeStream(small, async (s) => {
      for await (const _ of decodedRecords(s, small));
    });
    expect(native()).toBe(false);
    // Opening a large tape to serve a few records (scanTape: frames checked, nothing decoded)
    // does not load it either.
    expect((await scanTape(big)).frames).toHaveLength(records.length);
    expect(native()).toBe(false);

    const streamed: unknown[] = [];
    await withTapeStream(big, async (s) => {
      for await (const r of decodedRecords(s, big)) streamed.push(r.value);
    });
    expect(native()).toBe(true);
    expect(streamed).toEqual(records);
    expect((await readTape(big)).records.map((r) => r.value)).toEqual(records);
  }, 60_000);
});
