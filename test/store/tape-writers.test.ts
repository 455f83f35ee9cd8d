// Which writers of a tape are open (src/store/tape-writers.ts): on this host a writer's process
// decides, pid and start time; from another host, the file's age.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTapeWriter } from '../../src/store/tape-writers.ts';
import { rejectionOf } from '../helpers.ts';
import { canMountReadOnly, onReadOnly } from '../read-only-mount.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-writers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A tape path whose writers directory holds the given writer files. */
function tapeWithWriters(files: Record<string, unknown>, ageMs = 0): string {
  const tape = join(dir, `t${n++}.tape`);
  mkdirSync(`${tape}.writers`);
  for (const [name, info] of Object.entries(files)) {
    const file = join(`${tape}.writers`, `${name}.json`);
    writeFileSync(file, JSON.stringify(info));
    const t = new Date(Date.now() - ageMs);
    utimesSync(file, t, t);
  }
  return tape;
}

describe('open tape writers', () => {
  it('a live writer of this host stays open however old its file; a dead or reused pid is ended', async () => {
    const me = { pid: process.pid, host: hostname() };
    const tape = tapeWithWriters(
      {
        live: { run: 'live', ...me },
        reused: { run: 'reused', ...me, start: '1' },
        dead: { run: 'dead', pid: 2 ** 22 + 1, host: hostname() },
      },
      120_000,
    );
    const w = await openTapeWriter(tape, 'mine', 1000);
    try {
      expect([...w.live].sort()).toEqual(['live', 'mine']);
    } finally {
      await w.release();
    }
  });

  it('a writer of another host is open until its file is older than staleMs', async () => {
    const fresh = tapeWithWriters({ other: { run: 'other', pid: 1, host: 'elsewhere' } });
    const old = tapeWithWriters({ other: { run: 'other', pid: 1, host: 'elsewhere' } }, 5000);
    const a = await openTapeWriter(fresh, 'mine', 1000);
    const b = await openTapeWriter(old, 'mine', 1000);
    try {
      expect([...a.live].sort()).toEqual(['mine', 'other']);
      expect([...b.live]).toEqual(['mine']);
    } finally {
      await a.release();
      await b.release();
    }
  });

  it.runIf(canMountReadOnly())('on a read-only file system the registration fails at once saying EROFS and the directory, with the fix (not ENOENT after retries)', async () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    const tape = join(ro, 'chat.tape');
    await onReadOnly(
      ro,
      () => writeFileSync(tape, ''),
      async () => {
        const e = await rejectionOf(openTapeWriter(tape, 'mine'));
        expect(e.code, e.message).toBe('E_TAPE_IO');
        expect(e.details.cause).toBe('EROFS');
        expect(e.message).toContain(`Tape ${tape}: registering this writer in ${tape}.writers failed: the directory ${ro} is on a read-only file system (EROFS)`);
        expect(e.message).not.toContain('ENOENT');
        expect(e.hint).toMatch(/^Copy the tape to a writable directory/);
      },
    );
  });
});
