// The byte-level tape decoder (src/store/tape-codec.ts) that Node and the browser share: its
// plain-JavaScript CRC-32 against node:zlib's, its parse of a tape image against readTape of the
// same file, and its freedom from Node built-ins (checked on the bundle a browser would get).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { build } from 'esbuild';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { crc32, crc32Js, parseTape } from '../../src/store/tape-codec.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-codec-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('crc32', () => {
  it('the JavaScript CRC-32 equals node:zlib on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), (bytes) => {
        expect(crc32Js(bytes)).toBe(zlibCrc32(bytes));
      }),
      { numRuns: 300 },
    );
    // The standard check value of CRC-32/ISO-HDLC.
    expect(crc32Js(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('on Node the native one is used', () => {
    expect(crc32).toBe(zlibCrc32);
  });
});

describe('parseTape from bytes', () => {
  it('gives what readTape gives for the same file, damage included', async () => {
    const file = join(root, 'a.tape');
    await createTape(file, { created: '2026-01-01T00:00:00.000Z', tapedeckVersion: '0.0.0-test' });
    const values = [{ a: 1 }, new Map<unknown, unknown>([[1, 'one']]), { body: new Uint8Array([1, 2, 3]), when: new Date(0) }, 'last'];
    await appendRecords(file, values);
    const bytes = new Uint8Array(readFileSync(file));
    // Flip a byte inside the second record's payload and cut the last record short.
    const whole = await readTape(file);
    const damaged = bytes.slice(0, bytes.length - 2);
    damaged[whole.records[1]!.offset + 14]! ^= 0xff;
    const parsed = parseTape(damaged, 'x.tape');
    expect(parsed.records.map((r) => r.value)).toEqual([values[0], values[2]]);
    expect(parsed.warnings.map((w) => [w.code, w.offset])).toEqual([
      ['E_TAPE_CORRUPT', whole.records[1]!.offset],
      ['E_TAPE_TORN_TAIL', whole.records[3]!.offset],
    ]);
    const copy = join(root, 'x.tape');
    writeFileSync(copy, damaged);
    expect(parseTape(damaged, copy)).toEqual({ ...(await readTape(copy)), headerEnd: whole.records[0]!.offset });
    // A Map survives through the shared decoder.
    expect(parseTape(bytes, 'a.tape').records[1]!.value).toEqual(values[1]);
  });
});

describe('browser bundle', () => {
  it('bundles for the browser with no Node built-in', async () => {
    const out = await build({
      entryPoints: [join(import.meta.dirname, '../../src/store/tape-codec.ts')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.some((f) => f.includes('msgpackr/unpack.js'))).toBe(true);
    // platform 'browser' fails the build on an unresolvable node: import; make sure none is
    // marked external either.
    const imports = Object.values(out.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
    expect(imports).toEqual([]);
  });
});
