// A tape whose directory turned read-only: taking its lock fails with EROFS, and the error names
// the tape, with the lock file in what failed: the fix (copy the tape to a writable directory,
// give that path) was about `chat.tape.lock` before, a file that is no tape.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { withTapeLock } from '../../src/store/tape-file.ts';
import { rejectionOf } from '../helpers.ts';
import { canMountReadOnly, onReadOnly } from '../read-only-mount.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-lock-ro-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.runIf(canMountReadOnly())('the EROFS error of a tape lock names the tape and says to copy the tape, not its lock file', async () => {
  const ro = join(dir, 'ro');
  mkdirSync(ro);
  const tape = join(ro, 'chat.tape');
  await onReadOnly(
    ro,
    () => writeFileSync(tape, ''),
    async () => {
      const e = await rejectionOf(withTapeLock(tape, async () => undefined));
      expect(e.code, e.message).toBe('E_TAPE_IO');
      expect(e.details.cause).toBe('EROFS');
      expect(e.details.file).toBe(tape);
      expect(e.message).toContain(`Tape ${tape}: create its lock file ${tape}.lock failed: the directory ${ro} is on a read-only file system (EROFS)`);
      expect(e.hint).toContain(`(cp ${tape} <writable dir>/)`);
    },
  );
});
