// ReplayCache.put's options object took misspelt names without a word: `{ metadata }` for
// `meta`, `{ durationMS }`, `{ rawBody }` were dropped, and the record was stored without what
// the caller meant to keep. They are now E_ARG with the name it meant, before anything is stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-put-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });

it.each([
  ['metadata', 'meta'],
  ['durationMS', 'durationMs'],
  ['ignoreArgs', 'ignoredArgs'],
])('put({ %s }) is E_ARG naming %s; nothing stored', async (wrong, meant) => {
  const tape = join(dir, `${wrong}.tape`);
  const c = await ReplayCache.open(tape, { mode: 'record' });
  try {
    const e = await c.put(q(wrong), 'v', { [wrong]: wrong === 'ignoreArgs' ? ['seed'] : 1 } as never).then(
      () => undefined,
      (x: unknown) => x as { code: string; message: string; hint: string },
    );
    expect(e?.code).toBe('E_ARG');
    expect(e?.message).toContain(`Unknown ReplayCache.put option ${JSON.stringify(wrong)}`);
    expect(e?.hint).toMatch(new RegExp(`\\b${meant}\\b`));
    // The right names still work.
    await c.put(q('right'), 'v', { meta: { run: 1 }, durationMs: 5, ignoredArgs: ['seed'] });
  } finally {
    await c.close();
  }
  const r = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    await expect(r.get(q(wrong))).rejects.toMatchObject({ code: 'E_MISS' });
    expect((await r.getRecord(q('right')))?.meta).toEqual({ run: 1 });
  } finally {
    await r.close();
  }
});
