// A HAR read entry by entry from a split of its bytes (har-split.ts) against the reader that
// parses the whole file (readHar): for random and adversarial HAR texts (duplicate `log` and
// `entries` members, escaped member names, brackets, quotes and backslashes inside strings,
// nested arrays in entries, non-ASCII and invalid UTF-8, CRLF, a BOM, odd separators,
// truncated and damaged files, bad entries), the split either declines (undefined, or an entry
// that is no JSON: the import then parses the whole file) or gives exactly the whole reader's
// exchanges and bad entries. And `tapedeck import` of the same files writes the same tape, or
// fails with the same error, as the whole-file path.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings, writeImport } from '../../src/proxy/import.ts';
import { splitHar } from '../../src/store/import/har-split.ts';
import { readHar, readHarSplit } from '../../src/store/import/har.ts';
import { readRecordingFile, refuseNotUtf8 } from '../../src/store/import/read.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { harBytes } from './har-texts.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-har-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A reader's result as plain data (errors by code, message and details). */
function outcome(read: () => ReturnType<typeof readHar>): unknown {
  try {
    const r = read();
    const exchanges = [...r.exchanges];
    return { exchanges, bad: r.bad.map((e) => ({ code: e.code, message: e.message, details: e.details })), unkeyable: r.unkeyable };
  } catch (e) {
    if (e instanceof TapedeckError) return { error: e.code, message: e.message, details: e.details };
    throw e;
  }
}

describe('a HAR split into its entries', () => {
  it('reads exactly what the whole-file reader reads, or declines, for random and adversarial HARs', () => {
    const tally = { split: 0, declined: 0, notJson: 0, wholeFails: 0 };
    for (let seed = 1; seed <= 1500; seed++) {
      const bytes = harBytes(seed);
      const file = join(dir, 'x.har');
      const whole = outcome(() => readHar(bytes.toString('utf8'), file));
      if ((whole as { error?: string }).error) tally.wholeFails++;
      const split = splitHar(bytes);
      if (!split) {
        tally.declined++;
        continue;
      }
      let got: unknown;
      try {
        got = outcome(() => readHarSplit(split, file));
      } catch (e) {
        // An entry that is no JSON: the import parses the whole file instead.
        expect(e, `seed ${seed}`).toBeInstanceOf(SyntaxError);
        expect(split.whole(), `seed ${seed}`).toBe(false);
        tally.notJson++;
        continue;
      }
      expect(split.whole(), `seed ${seed}`).toBe(true);
      expect(got, `seed ${seed}: ${bytes.toString('utf8').slice(0, 200)}`).toEqual(whole);
      tally.split++;
    }
    // The generator reaches every way: split and read, declined, an entry found no JSON.
    expect(tally.split).toBeGreaterThan(300);
    expect(tally.declined).toBeGreaterThan(100);
    expect(tally.notJson).toBeGreaterThan(5);
    expect(tally.wholeFails).toBeGreaterThan(100);
  });

  it('reads a pipe once: a HAR the split declines is parsed whole from the bytes already read', async () => {
    const entry = (path: string) => ({ request: { method: 'GET', url: `https://example.com/${path}`, headers: [] }, response: { status: 200, headers: [], content: { size: 2, text: 'ok' } } });
    // Entries one a line but for one separator: the split's first element spans two, is no JSON, and the whole file is parsed.
    const text = JSON.stringify({ log: { entries: [entry('a'), entry('b'), entry('c')] } }, null, 2).replace(/\},\n +\{/, '}, {');
    expect(text).toContain('}, {');
    const src = join(dir, 'piped.har');
    writeFileSync(src, text);
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // The file, then nothing: a second read of the pipe would find it empty (rather than wait).
    const writer = spawn('sh', ['-c', `cat "${src}" > "${fifo}"; sleep 1; : > "${fifo}"`]);
    try {
      const report = await importRecordings(fifo, join(dir, 'piped.tape'), { from: 'har', force: true, onWarning: () => {} });
      expect(report.records).toBe(3);
    } finally {
      writer.kill();
    }
  });

  // Read in chunks (a regular file laid out one entry a line) as the import reads it, and in
  // chunks small enough that entries cross their ends.
  it.each([{ chunkBytes: undefined }, { chunkBytes: 64 }])('imports to the same tape, or fails with the same error and leaves the target as it was, as the whole-file path (chunks of $chunkBytes bytes)', async ({ chunkBytes }) => {
    // The same salt for both imports, so their tapes compare byte for byte.
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(a: T): T => {
      if (a) new Uint8Array(a.buffer, a.byteOffset, a.byteLength).fill(7);
      return a;
    });
    try {
      let compared = 0;
      let failed = 0;
      for (let seed = 2001; seed <= 2120; seed++) {
        const src = join(dir, `s${seed}.har`);
        writeFileSync(src, harBytes(seed));
        const skipBad = seed % 3 === 0;
        const opts = { force: true, skipBad, recordedAt: '2026-01-01T00:00:00.000Z', onWarning: () => {} };
        const run = async (f: () => Promise<unknown>) => {
          const out = join(dir, 'out.tape');
          writeFileSync(out, 'the tape before');
          try {
            const report = await f();
            const t = await scanTape(out);
            return { report, frames: t.frames.map((x) => t.bytes.subarray(x.offset, x.offset + x.length).toString('base64')) };
          } catch (e) {
            if (!(e instanceof TapedeckError)) throw e;
            expect(readFileSync(out, 'utf8'), `seed ${seed}`).toBe('the tape before');
            failed++;
            return { error: e.code, message: e.message, details: e.details };
          }
        };
        const viaSplit = await run(() => importRecordings(src, join(dir, 'out.tape'), opts, { chunkBytes }));
        // The whole-file path refuses bytes that are no UTF-8 before decoding them (refuseNotUtf8).
        const viaWhole = await run(async () => {
          const bytes = readFileSync(src);
          refuseNotUtf8(src, bytes, 'har');
          return writeImport(readRecordingFile(src, bytes.toString('utf8'), 'har'), join(dir, 'out.tape'), opts);
        });
        expect(viaSplit, `seed ${seed}`).toEqual(viaWhole);
        if ('frames' in viaSplit && viaSplit.frames.length > 0) compared++;
      }
      expect(compared).toBeGreaterThan(10);
      expect(failed).toBeGreaterThan(10);
    } finally {
      spy.mockRestore();
    }
  });
});
