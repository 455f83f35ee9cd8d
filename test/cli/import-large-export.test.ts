// `tapedeck export` -> `tapedeck import` failed for any export over 64 MiB (a tape over ~30 MB):
// E_TOO_LARGE "holds more than 64 MiB … split a larger one", the limit of one JSON document the
// hashing core reads, though an export is never hashed whole. A tapedeck export is now read whole,
// and comes back byte for byte; other inputs keep the limit.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-large-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tapedeck = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26 });

const MIB = 1024 * 1024;

/** `text` with JSON white space after it, up to `bytes` (a large export without a large tape). */
function padded(file: string, text: string, bytes: number): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, text);
    const spaces = Buffer.alloc(MIB, 0x20);
    for (let left = bytes - Buffer.byteLength(text); left > 0; left -= MIB) writeSync(fd, spaces, 0, Math.min(MIB, left));
  } finally {
    closeSync(fd);
  }
}

describe('tapedeck import of a JSON export over 64 MiB', () => {
  it('imports it, as it imports the same export at its own size', async () => {
    const tape = join(dir, 'chat.tape');
    await createTape(tape, { salt: '00112233445566778899aabbccddeeff' });
    await appendRecords(tape, [1, 2, 3].map((i) => chatRecord(i)));
    const exported = tapedeck('export', tape);
    expect(exported.status, exported.stderr).toBe(0);
    const big = join(dir, 'big.export.json');
    // A byte order mark first, too (a Windows editor saved it).
    padded(big, `\ufeff${exported.stdout}`, 65 * MIB);
    const r = tapedeck('import', big, join(dir, 'back.tape'));
    expect(r.stderr).not.toContain('E_TOO_LARGE');
    expect(r.status, r.stderr).toBe(0);
    // The same tape as the export imported at its own size gives.
    const small = join(dir, 'small.export.json');
    padded(small, exported.stdout, 0);
    expect(tapedeck('import', small, join(dir, 'small.tape')).status).toBe(0);
    expect(readFileSync(join(dir, 'back.tape')).equals(readFileSync(join(dir, 'small.tape')))).toBe(true);
  });

  it('another input over 64 MiB is still refused as too large', () => {
    const big = join(dir, 'big.array.json');
    padded(big, '[1]', 65 * MIB);
    const r = tapedeck('import', big, join(dir, 'never.tape'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('E_TOO_LARGE');
  });
});
