// A tape that is a symbolic link (one recording shared by several test folders): re-recording
// through the link used to rename the new tape over the link, so the link became a copy and the
// shared tape kept its old answers; a link to a tape not recorded yet made record fail with
// E_TAPE_NOT_FOUND. Writes, locks and removals now go where the link leads, and the link stays.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { readTape, withTapeLock } from '../../src/store/tape-file.ts';
import { tapeTarget } from '../../src/store/tape-target.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-symlink-'));
let server: Server;
let base = '';
let calls = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ call: ++calls }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

let seq = 0;
/** A folder with `shared/real.tape` (not made) and `tests/link.tape` leading to it. */
function linked(): { real: string; link: string } {
  const dir = join(root, `case${++seq}`);
  mkdirSync(join(dir, 'tests'), { recursive: true });
  const link = join(dir, 'tests', 'link.tape');
  symlinkSync('../shared/real.tape', link);
  return { real: join(dir, 'shared', 'real.tape'), link };
}

async function ask(tape: string, mode: 'record' | 'replay' | 'update', paths: string[]): Promise<number[]> {
  const f = createFetch({ tape, mode, summary: false });
  try {
    const out: number[] = [];
    for (const p of paths) {
      const r = await f(`${base}/api/${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ p }) });
      expect(r.status).toBe(200);
      out.push(((await r.json()) as { call: number }).call);
    }
    return out;
  } finally {
    await f.close();
  }
}

const isLink = (p: string) => lstatSync(p).isSymbolicLink();

describe('a tape that is a symbolic link', () => {
  it('records through a link to a tape not made yet: the tape is made where it leads, and the link stays', async () => {
    const { real, link } = linked();
    const recorded = await ask(link, 'record', ['a']);
    expect(isLink(link)).toBe(true);
    expect(existsSync(real)).toBe(true);
    expect(await ask(real, 'replay', ['a'])).toEqual(recorded);
  });

  it('re-recording through the link rewrites the shared tape, and the link stays a link', async () => {
    const { real, link } = linked();
    await ask(link, 'record', ['a', 'b']);
    const again = await ask(link, 'record', ['a']); // replaces a's recording at close (a rewrite)
    expect(isLink(link)).toBe(true);
    expect(readlinkSync(link)).toBe('../shared/real.tape');
    // The shared tape has the new answer of a, and b's recording kept.
    expect(await ask(real, 'replay', ['a'])).toEqual(again);
    expect((await readTape(real)).records.length).toBe(2);
  });

  it('a record run through a link that records nothing removes the tape it made, not the link', async () => {
    const { real, link } = linked();
    await ask(link, 'record', []);
    expect(isLink(link)).toBe(true);
    expect(existsSync(real)).toBe(false);
  });

  it('takes the lock and the writer registry beside the file, so writers through either name share them', async () => {
    const { real, link } = linked();
    await ask(link, 'record', ['a']);
    await withTapeLock(link, async () => {
      expect(existsSync(`${real}.lock`)).toBe(true);
    });
    expect(tapeTarget(link)).toBe(real);
    expect(tapeTarget(real)).toBe(real);
  });

  it('an import with force onto a link replaces the shared tape and keeps the link', async () => {
    const { real, link } = linked();
    await ask(link, 'record', ['a']);
    const json = await exportTapeJSON(real);
    await ask(real, 'update', ['b']);
    expect((await readTape(real)).records.length).toBe(2);
    await importTapeJSON(json, link, { force: true });
    expect(isLink(link)).toBe(true);
    expect((await readTape(real)).records.length).toBe(1);
  });
});
