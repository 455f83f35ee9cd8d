// A reader opening a tape while a writer is appending to it (the writer registered and alive)
// may meet the writer's record half written. It was warned "an incomplete record, probably from
// a crash during an append", though nothing crashed: a user could run `tapedeck prune` on a tape
// still being written. The half-written tail of a tape a live writer holds is now not reported;
// once no writer holds the tape, the same tail is told as before.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-reader-live-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });

it("is not warned of a crash for a live writer's record in flight; is once no writer holds the tape", async () => {
  const tape = join(dir, 'shared.tape');
  const rec = await ReplayCache.open(tape, { mode: 'record' });
  try {
    await rec.put(q('a'), 'A');
  } finally {
    await rec.close();
  }
  // A writer holds the tape (registered, its process alive: this one), and its next record is
  // half on disk: the frame's header says 1000 payload bytes, 10 are there.
  const writer = await new TapeBackend(tape).openWriter('run-live', 'update');
  const head = Buffer.alloc(12);
  head.write('\xC1TDR', 0, 'latin1');
  head.writeUInt32BE(1000, 4);
  appendFileSync(tape, Buffer.concat([head, Buffer.alloc(10, 0x90)]));
  const noted: string[] = [];
  const onWarning = (w: Error) => noted.push(w.message);
  process.on('warning', onWarning);
  try {
    const reader = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await reader.get(q('a'))).toBe('A');
      expect(reader.warnings.map((w) => w.code)).toEqual([]);
    } finally {
      await reader.close();
    }
    await writer.release();
    const after = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(after.warnings.map((w) => w.code)).toEqual(['E_TAPE_TORN_TAIL']);
      expect(after.warnings[0]!.message).toContain('crash');
    } finally {
      await after.close();
    }
  } finally {
    process.off('warning', onWarning);
  }
});
