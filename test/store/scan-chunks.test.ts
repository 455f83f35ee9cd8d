// scanTape checks frames while the rest of the file is still being read (src/store/tape-file.ts
// scanTapeIn, tape-codec.ts checkArrived). Held to the whole-file parser (parseTape, what
// scanTape did before): the same header, frames, warnings and bytes on sound and damaged tapes,
// whatever the read size; and a sound tape is listed from the parts as they arrive, without a
// second pass.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { outcome, tapeArb, tapeFrame as frame, tapeHeader as header } from './damage.ts';
import { TapedeckError } from '../../src/errors.ts';
import { checkArrived, parseTape, type ArrivedCheck } from '../../src/store/tape-codec.ts';
import { scanTape, scanTapeIn } from '../../src/store/tape-file.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-scan-chunks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

describe('scanTape, checking frames as the file arrives', () => {
  it('lists what the whole-file parser lists, on sound and damaged tapes, for any read size', async () => {
    await fc.assert(
      fc.asyncProperty(
        tapeArb,
        fc.constantFrom(1, 7, 13, 64, 257, 4096, 4 << 20),
        async ({ bytes, sound }, chunk) => {
          const file = join(root, `p${n++}.tape`);
          writeFileSync(file, bytes);
          const want = outcome(() => parseTape(bytes, file, false));
          if (want instanceof TapedeckError) {
            await expect(scanTapeIn(file, chunk)).rejects.toMatchObject({ code: want.code, message: want.message });
            return;
          }
          const got = await scanTapeIn(file, chunk);
          expect(got.header).toEqual(want.header);
          expect(got.frames).toEqual(want.records);
          expect(got.warnings).toEqual(want.warnings);
          expect(got.size).toBe(bytes.length);
          expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('lists a sound tape from its parts as they arrive: every frame once, in order, none waiting at the end', () => {
    const payloads = Array.from({ length: 40 }, (_, i) => new TextEncoder().encode(`record ${i} `.repeat(1 + (i % 9))));
    const bytes = Buffer.concat([header, ...payloads.map(frame)]);
    const want = parseTape(bytes, 'sound.tape', false);
    for (const chunk of [1, 5, 12, 100, 333]) {
      const at: ArrivedCheck = { pos: 0, frames: [], sound: true };
      let listedBeforeTheEnd = 0;
      for (let got = Math.min(chunk, bytes.length); ; got = Math.min(got + chunk, bytes.length)) {
        const final = got === bytes.length;
        checkArrived(bytes.subarray(0, got), 'sound.tape', at, final);
        expect(at.sound).toBe(true);
        if (!final) listedBeforeTheEnd = at.frames.length;
        if (final) break;
      }
      expect(at.frames).toEqual(want.records);
      expect(at.pos).toBe(bytes.length);
      expect(at.header).toEqual(want.header);
      // Most frames were checked while later parts were still to come.
      expect(listedBeforeTheEnd).toBeGreaterThan(want.records.length / 2);
    }
  });

  it('gives scanTape of a real tape file what the whole-file parser gives', async () => {
    const file = join(root, 'real.tape');
    writeFileSync(file, Buffer.concat([header, ...Array.from({ length: 300 }, (_, i) => frame(new TextEncoder().encode(`r${i}`.repeat(i))))]));
    const got = await scanTape(file);
    const want = parseTape(readFileSync(file), file, false);
    expect(got.frames).toEqual(want.records);
    expect(got.warnings).toEqual([]);
  });

  it('says a missing tape is missing', async () => {
    await expect(scanTapeIn(join(root, 'none.tape'), 64)).rejects.toMatchObject({ code: 'E_TAPE_NOT_FOUND' });
  });
});
