// A recording put with `ignoredArgs` (`seed` left out of its key), read by a cache opened without
// the option: the identical request missed, told it "differs ... only in parts the key leaves
// out" (none were left out). docs/tape-format.md promises that changing the option never strands
// recordings, and it did not for another list (`['max_tokens']`): only for removing the option,
// the usual change. Now the record is filed under the key recomputed without it too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-ignored-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ask = (seed: number) => ({ model: 'gpt-4o-mini', seed, messages: [{ role: 'user', content: 'pick a number' }] });

it('a recording made with ignoredArgs is found by the identical request once the option is dropped', async () => {
  const tape = join(dir, 'seed.tape');
  const rec = await ReplayCache.open(tape, { mode: 'record', ignoredArgs: ['seed'] });
  try {
    await rec.put(ask(1), 'A');
  } finally {
    await rec.close();
  }
  for (const opts of [{}, { ignoredArgs: [] }, { ignoredArgs: ['max_tokens'] }, { ignoredArgs: ['seed'] }]) {
    const c = await ReplayCache.open(tape, { mode: 'replay', ...opts });
    try {
      expect(await c.get(ask(1)), JSON.stringify(opts)).toBe('A');
    } finally {
      await c.close();
    }
  }
  // Without the option, the seed counts again: another seed is another request.
  const strict = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    await expect(strict.get(ask(2))).rejects.toMatchObject({ code: 'E_MISS' });
  } finally {
    await strict.close();
  }
});
