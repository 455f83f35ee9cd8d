// A tape read a window at a time (src/store/tape-stream.ts) against the whole-file parser
// (tape-codec.ts parseTape, readTape's): the same header, frames and damage on sound and damaged
// tapes of every kind, whatever the window.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { outcome, tapeArb, tapeFrame as frame, tapeHeader as header } from './damage.ts';
import { TapedeckError } from '../../src/errors.ts';
import { parseTape } from '../../src/store/tape-codec.ts';
import { pack } from 'msgpackr';
import { readTape } from '../../src/store/tape-file.ts';
import { decodedRecords, withTapeStream } from '../../src/store/tape-stream.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-stream-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** What the stream reads from a file: header, frames (offset and payload) and warnings. */
async function streamed(file: string, window: number) {
  return withTapeStream(
    file,
    async (s) => {
      const frames: { offset: number; payload: string; buffer: ArrayBufferLike }[] = [];
      for await (const f of s.frames()) frames.push({ offset: f.offset, payload: hex(f.payload), buffer: f.payload.buffer });
      return { header: s.header, frames, warnings: s.warnings };
    },
    { window },
  );
}

/** What the whole-file parser reads from the same bytes. */
function whole(bytes: Uint8Array, file: string) {
  const t = parseTape(bytes, file, false);
  return { header: t.header, frames: t.records.map((r) => ({ offset: r.offset, payload: hex(bytes.subarray(r.offset + 12, r.offset + r.length)) })), warnings: t.warnings };
}

describe('a tape read a window at a time', () => {
  it('finds what the whole-file parser finds, on sound and damaged tapes, for any window', async () => {
    await fc.assert(
      fc.asyncProperty(
        tapeArb,
        fc.constantFrom(1, 13, 64, 257, 4096, 1 << 22),
        async ({ bytes, sound }, window) => {
          const file = join(root, `p${n++}.tape`);
          writeFileSync(file, bytes);
          const want = outcome(() => whole(bytes, file));
          if (want instanceof TapedeckError) {
            await expect(streamed(file, window)).rejects.toMatchObject({ code: want.code, message: want.message });
            return;
          }
          const got = await streamed(file, window);
          expect(got.header).toEqual(want.header);
          expect(got.frames.map(({ offset, payload }) => ({ offset, payload }))).toEqual(want.frames);
          expect(got.warnings).toEqual(want.warnings);
          if (sound) {
            // A sound tape never falls back to reading the file whole: each payload lies in a
            // window of its own size or the window's.
            for (const f of got.frames) expect(f.buffer.byteLength).toBeLessThanOrEqual(Math.max(window, f.payload.length / 2 + 12));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reads a sound tape in windows, not whole', async () => {
    const payloads = Array.from({ length: 200 }, (_, i) => new TextEncoder().encode(`record ${i} `.repeat(20)));
    const bytes = Buffer.concat([header, ...payloads.map(frame)]);
    const file = join(root, 'windows.tape');
    writeFileSync(file, bytes);
    const got = await streamed(file, 4096);
    expect(got.frames.map((f) => f.payload)).toEqual(payloads.map(hex));
    expect(got.warnings).toEqual([]);
    const buffers = new Set(got.frames.map((f) => f.buffer));
    // ~50 KB of frames in 4 KB windows, every window read into the same buffer; no buffer holds
    // the file.
    expect(buffers.size).toBe(1);
    for (const b of buffers) expect(b.byteLength).toBeLessThan(bytes.length / 4);
  });

  it('decodes byte strings that outlive the window they were read from', async () => {
    // 300 records of 200 distinct bytes each in 4 KB windows: the window is read over ~15 times
    // while the records decoded from it are kept.
    const records = Array.from({ length: 300 }, (_, i) => ({ i, body: Uint8Array.from({ length: 200 }, (_, j) => (i * 7 + j) & 0xff) }));
    const bytes = Buffer.concat([header, ...records.map((r) => frame(pack(r)))]);
    const file = join(root, 'bytes.tape');
    writeFileSync(file, bytes);
    const want = await readTape(file);
    const got = await withTapeStream(
      file,
      async (s) => {
        const out: unknown[] = [];
        for await (const r of decodedRecords(s, file)) out.push(r.value);
        return out;
      },
      { window: 4096 },
    );
    expect(got).toEqual(want.records.map((r) => r.value));
    // The same kind of bytes as readTape's (a Buffer: the export tags Buffers apart).
    const kinds = (values: unknown[]) => values.map((r) => (r as { body: Uint8Array }).body.constructor.name);
    expect(kinds(got)).toEqual(kinds(want.records.map((r) => r.value)));
    expect(kinds(got)[0]).toBe('Buffer');
    expect(got.map((r) => Buffer.from((r as { body: Uint8Array }).body).toString('hex'))).toEqual(records.map((r) => Buffer.from(r.body).toString('hex')));
  });

  it('decodes records as readTape does, a payload that does not decode listed among the damage in file order', async () => {
    const good = (i: number) => frame(pack({ i, text: `record ${i}` }));
    // Damage, then a frame whose CRC holds around cut msgpack (an array of two with one item),
    // then a torn tail: the damage and the torn tail are found when the stream falls back to
    // the whole file, the payload when it is decoded later.
    const bytes = Buffer.concat([header, good(0), Buffer.from('not a frame'), good(1), frame(Uint8Array.of(0x92, 0x01)), good(2), good(3).subarray(0, 20)]);
    const file = join(root, 'decoded.tape');
    writeFileSync(file, bytes);
    const want = await readTape(file);
    expect(want.warnings.map((w) => w.code)).toEqual(['E_TAPE_CORRUPT', 'E_TAPE_CORRUPT', 'E_TAPE_TORN_TAIL']);
    const got = await withTapeStream(
      file,
      async (s) => {
        const records: { offset: number; length: number; value: unknown }[] = [];
        for await (const r of decodedRecords(s, file)) records.push(r);
        return { records, warnings: s.warnings, size: s.size, header: s.header };
      },
      { window: 16 },
    );
    expect(got.records).toEqual(want.records);
    expect(got.warnings).toEqual(want.warnings);
    expect(got.size).toBe(want.size);
    expect(got.header).toEqual(want.header);
  });

  it('says a missing tape is missing, as readTape does', async () => {
    await expect(streamed(join(root, 'none.tape'), 4096)).rejects.toMatchObject({ code: 'E_TAPE_NOT_FOUND' });
  });
});
