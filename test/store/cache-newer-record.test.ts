// A ReplayCache record of a newer record version (a newer tapedeck wrote it): the cache left it
// unfiled, so the call it answers was a miss ("recorded 1 time and this is call 2", with the
// advice to re-record with the older tapedeck), and after such a record run the next recording
// of the request was served in its place. Now that call gets E_TAPE_VERSION with the upgrade,
// as createFetch and the proxy give for an HTTP exchange, never another recording; and a record
// run of this tapedeck leaves the newer record where it is.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { inRecordOrder } from '../../src/store/record-order.ts';
import { appendRecords, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-newer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });

async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string; hint?: string }> {
  return p.then(
    () => ({ message: 'resolved' }),
    (e: { code?: string; message: string; hint?: string }) => e,
  );
}

it('answers its call with E_TAPE_VERSION and the upgrade, not a miss or another recording', async () => {
  const tape = join(dir, 'newer.tape');
  const rec = await ReplayCache.open(tape, { mode: 'record' });
  try {
    await rec.put(q('a'), 'A');
    await rec.put(q('c'), 'C');
  } finally {
    await rec.close();
  }
  // The second recording of `c`, as a newer tapedeck would write it.
  const { records } = await readTape(tape);
  await appendRecords(tape, [inRecordOrder({ ...(records[1]!.value as object), v: 9, value: 'C from a newer tapedeck' })]);

  const c = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    expect(await c.get(q('a'))).toBe('A');
    expect(await c.get(q('c'))).toBe('C');
    const e = await rejection(c.get(q('c')));
    expect(e.code).toBe('E_TAPE_VERSION');
    expect(e.message).toMatch(/is a ReplayCache record of record version 9; this tapedeck reads version 1 of it/);
    expect(e.hint).toContain('upgrade tapedeck');
  } finally {
    await c.close();
  }

  // This tapedeck re-records `c`: the newer record is not its to replace, and is not served past.
  const again = await ReplayCache.open(tape, { mode: 'record' });
  try {
    await again.put(q('c'), 'C2');
  } finally {
    await again.close();
  }
  const left = (await readTape(tape)).records.map((r) => (r.value as { v: number; value: unknown }).value);
  const after = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    const first = await after.get(q('c')).then(
      (v) => v,
      (e: { code?: string }) => e.code,
    );
    // Either the newer record is still first (and says so), or the record run replaced it.
    if (left.includes('C from a newer tapedeck')) expect(first).toBe('E_TAPE_VERSION');
    else expect(first).toBe('C2');
  } finally {
    await after.close();
  }
});
