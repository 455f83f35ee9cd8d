// A ReplayCache miss on a tape with a damaged record: the miss blamed a prompt change ("text
// differs from the closest recording"), though the request's recording was the damaged one; the
// damage was only a process warning, which test runners often hide. The miss now says where the
// tape is damaged and how to see it, as createFetch's and the proxy's misses do.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { scanTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-miss-damage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const req = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

it('a miss on a tape with damage names the damage and the verify command', async () => {
  const tape = join(dir, 'flip.tape');
  const rec = await ReplayCache.open(tape, { mode: 'record' });
  try {
    for (const q of ['first question', 'second question', 'third question']) await rec.put(req(q), { answer: q.toUpperCase() });
  } finally {
    await rec.close();
  }
  // Three bytes in the middle of the second record, as a bad disk or a bad merge leaves them.
  const { frames } = await scanTape(tape);
  const bytes = readFileSync(tape);
  const mid = frames[1]!.offset + (frames[1]!.length >> 1);
  bytes[mid] ^= 0xff;
  bytes[mid + 1] ^= 0xff;
  bytes[mid + 2] ^= 0xff;
  writeFileSync(tape, bytes);
  // The damage is also a process warning at open (docs/api.md): taken here, so it is not printed.
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  const replay = await ReplayCache.open(tape, { mode: 'replay' });
  process.off('warning', onWarning);
  try {
    expect(await replay.get(req('first question'))).toEqual({ answer: 'FIRST QUESTION' });
    const e = (await replay.get(req('second question')).then(
      () => undefined,
      (x: unknown) => x,
    )) as { code: string; message: string };
    expect(e.code).toBe('E_MISS');
    expect(e.message).toMatch(/The tape is damaged at byte \d+: this request's recording may have been lost there; `tapedeck verify .*flip\.tape` shows the damage/);
  } finally {
    await replay.close();
  }
});
