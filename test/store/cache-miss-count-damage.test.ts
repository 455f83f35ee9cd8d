// The "past the end" miss of a request one of whose recordings is damaged counted without it:
// with four recordings, the second damaged, the fifth call was told "recorded 3 times and this
// is call 4", numbers the user could not match with their own loop. It now counts the damaged
// one the caller was told about, and says so.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { scanTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-count-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = { model: 'm', messages: [{ role: 'user', content: 'roll a die' }] };

it('counts a damaged recording the call before was told of', async () => {
  const tape = join(dir, 'dice.tape');
  const rec = await ReplayCache.open(tape, { mode: 'record' });
  try {
    for (let i = 1; i <= 4; i++) await rec.put(q, `answer-${i}`);
  } finally {
    await rec.close();
  }
  const { frames } = await scanTape(tape);
  const bytes = readFileSync(tape);
  bytes[frames[1]!.offset + frames[1]!.length - 3] ^= 0xff;
  writeFileSync(tape, bytes);
  const warn = () => {};
  process.on('warning', warn);
  const c = await ReplayCache.open(tape, { mode: 'replay' });
  process.off('warning', warn);
  try {
    const got: string[] = [];
    for (let call = 1; call <= 5; call++) {
      got.push(
        await c.get(q).then(
          (v) => String(v),
          (e: { code: string; message: string }) => `${e.code} ${e.message.split('\n')[0]}`,
        ),
      );
    }
    expect(got[0]).toBe('answer-1');
    expect(got[1]).toMatch(/^E_TAPE_DAMAGED The 2nd recording/);
    expect(got.slice(2, 4)).toEqual(['answer-3', 'answer-4']);
    expect(got[4]).toBe('E_MISS tapedeck miss: this request was recorded 4 times (1 of them damaged) and this is call 5');
  } finally {
    await c.close();
  }
});
