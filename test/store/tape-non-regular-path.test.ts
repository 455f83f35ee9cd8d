// A tape path that exists but is no regular file (a character device such as /dev/null, a FIFO)
// is no tape. It was read as an empty tape (a device reads 0 bytes) and then replaced by a
// regular file: `prune`, or a record/update run, turned /dev/null into a tape when run as root.
// A FIFO made every reader wait forever for a writer. Every open, read, rewrite and append now
// refuses such a path with E_FILE, naming what it is, and leaves it as it was.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { appendRecords, createTape, readTape, rewriteTape, scanTape } from '../../src/store/tape-file.ts';
import { withTapeStream } from '../../src/store/tape-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-nonregular-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fifo = join(dir, 'fifo.tape');
// A private null device (major 1, minor 3), so the real /dev/null is never at risk.
const device = join(dir, 'null.tape');
let haveDevice = false;
beforeAll(() => {
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  haveDevice = spawnSync('mknod', [device, 'c', '1', '3']).status === 0;
});

const kind = (s: Stats) => (s.isFIFO() ? 'fifo' : s.isCharacterDevice() ? 'char' : s.isFile() ? 'file' : 'other');

async function refused(p: Promise<unknown>, path: string, what: RegExp): Promise<void> {
  const e = (await p.then(
    () => undefined,
    (x: unknown) => x,
  )) as { code?: string; message?: string; details?: { file?: string; hint?: string } } | undefined;
  expect(e, 'expected a refusal').toBeDefined();
  expect(e!.code).toBe('E_FILE');
  expect(e!.message).toContain(path);
  expect(e!.message).toMatch(what);
  expect(e!.details?.hint).toMatch(/tape file/);
}

describe('a tape path that is a FIFO', () => {
  it('is refused by every reader, rewrite, append and writer without waiting for a writer of the pipe', async () => {
    await refused(readTape(fifo), fifo, /FIFO/);
    await refused(scanTape(fifo), fifo, /FIFO/);
    await refused(withTapeStream(fifo, async () => 0), fifo, /FIFO/);
    await refused(rewriteTape(fifo, () => true), fifo, /FIFO/);
    await refused(appendRecords(fifo, [{ a: 1 }]), fifo, /FIFO/);
    await refused(createTape(fifo), fifo, /FIFO/);
    await refused(ReplayCache.open(fifo, { mode: 'update' }), fifo, /FIFO/);
    expect(kind(statSync(fifo))).toBe('fifo');
  });
});

describe('a tape path that is a character device', () => {
  it('is not read as an empty tape and is never replaced by a tape', async (ctx) => {
    if (!haveDevice) ctx.skip(); // making a device node needs root
    await refused(readTape(device), device, /character device/);
    await refused(scanTape(device), device, /character device/);
    await refused(withTapeStream(device, async () => 0), device, /character device/);
    await refused(rewriteTape(device, () => true), device, /character device/);
    await refused(appendRecords(device, [{ a: 1 }]), device, /character device/);
    await refused(createTape(device), device, /character device/);
    await refused(ReplayCache.open(device, { mode: 'record' }), device, /character device/);
    const answer = (async () => new Response('{"id":"c1","object":"chat.completion","choices":[]}', { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const f = createFetch({ tape: device, mode: 'update', fetch: answer, summary: false });
    const res = await f('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(await res.text()).toContain('E_FILE');
    await f.close().catch(() => {});
    expect(kind(statSync(device))).toBe('char');
  });
});
