// A rewrite (a record run's closing rewrite, `tapedeck prune`) renames a new file over the tape.
// That file was the rewriter's own: a root CI container re-recording a mounted checkout left a
// root-owned 0600 tape its owner could no longer read or append to. The new file now takes the
// tape's owner and group, as it already took its mode.
import { chownSync, chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape, readTape, rewriteTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-owner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const root = process.getuid?.() === 0;

describe('a rewrite by another user than the tape owner', () => {
  it.skipIf(!root)('keeps the tape owner, group and mode (run as root)', async () => {
    const tape = join(dir, 'own.tape');
    await createTape(tape);
    await appendRecords(tape, [{ key: 'a', n: 1 }, { key: 'b', n: 2 }]);
    chownSync(tape, 1234, 2345);
    chmodSync(tape, 0o600);
    const before = statSync(tape);
    // Drop one record: the rewrite writes a new file and renames it over the tape.
    const r = await rewriteTape(tape, (e) => (e.value as { key: string }).key === 'a');
    expect(r.dropped).toBe(1);
    const after = statSync(tape);
    expect(after.ino).not.toBe(before.ino); // it was replaced, not edited in place
    expect({ uid: after.uid, gid: after.gid, mode: after.mode & 0o7777 }).toEqual({ uid: 1234, gid: 2345, mode: 0o600 });
    expect((await readTape(tape)).records.map((x) => (x.value as { key: string }).key)).toEqual(['a']);
  });
});
