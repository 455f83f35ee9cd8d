// `once` mode (VCR.py's default): a tape that does not exist is recorded, a tape that exists is
// replayed and never added to, whichever API opens it.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { createTape, readTape } from '../../src/store/tape-file.ts';
import { resolveMode, TAPE_MODES } from '../../src/store/mode.ts';
import { rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('once');
const q = (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

describe('once mode', () => {
  it('is a mode like the others (option and TAPEDECK_MODE)', () => {
    expect(TAPE_MODES).toContain('once');
    expect(resolveMode(undefined, { TAPEDECK_MODE: 'ONCE' })).toBe('once');
  });

  it('records a tape that does not exist, then replays it and never adds to it', async () => {
    const file = fresh();
    expect(existsSync(file)).toBe(false);
    const first = await ReplayCache.open(file, { mode: 'once' });
    expect(first.mode).toBe('record');
    expect(await first.get(q('a'))).toBeUndefined();
    await first.put(q('a'), 'answer a');
    await first.close();
    expect((await readTape(file)).records).toHaveLength(1);

    const second = await ReplayCache.open(file, { mode: 'once' });
    expect(second.mode).toBe('replay');
    expect(await second.get(q('a'))).toBe('answer a');
    // A new request is a miss, not a recording: the tape exists.
    const miss = await rejectionOf(second.get(q('b')));
    expect(miss.code).toBe('E_MISS');
    await second.put(q('b'), 'answer b'); // replay records nothing
    await second.close();
    expect((await readTape(file)).records).toHaveLength(1);
  });

  it('an existing empty tape counts as existing: replayed, not recorded into', async () => {
    const file = fresh();
    // A record run that stores nothing leaves no tape (it removes the one it made): made here.
    await (await ReplayCache.open(file, { mode: 'record' })).close();
    expect(existsSync(file)).toBe(false);
    await createTape(file);
    const c = await ReplayCache.open(file, { mode: 'once' });
    expect(c.mode).toBe('replay');
    await c.close();
  });
});
