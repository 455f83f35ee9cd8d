// Record mode on a tape file its user cannot write (0444, in a folder the user owns): the proxy
// must say so before it takes any request (E_TAPE_IO, exit 1), not start, call (and pay) the
// upstream on every request, then answer 503 because the answer could not be appended. Run as
// `nobody` through the built CLI: root writes any file, so the case only exists for another user.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTape } from '../../src/store/tape-file.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
// Under /tmp itself: `nobody` cannot enter the suite's own temporary folder (0700, root's).
const dir = mkdtempSync('/tmp/tapedeck-ro-tape-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const asRoot = userInfo().uid === 0 && spawnSync('setpriv', ['--version']).status === 0;
const NOBODY = 65534;

describe.runIf(asRoot)('record mode on a tape its user cannot write', () => {
  it('is refused at start with E_TAPE_IO and how to fix it, before any request', async () => {
    const tape = join(dir, 'ro.tape');
    await createTape(tape);
    chownSync(dir, NOBODY, NOBODY);
    chownSync(tape, NOBODY, NOBODY);
    chmodSync(tape, 0o444);
    const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, bin, 'serve', '--tape', 'ro.tape', '--mode', 'record', '--upstream', 'http://127.0.0.1:9', '--port', '0'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1' },
      timeout: 30_000,
    });
    expect(r.stderr).not.toContain('listening on');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('E_TAPE_IO');
    expect(r.stderr).toContain('ro.tape');
    expect(r.stderr).toMatch(/chmod u\+w ro\.tape/);
  });
});
