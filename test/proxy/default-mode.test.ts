// The default mode, one rule (docs/modes.md, "The default, in one rule"): code under test
// defaults to update, everything else to replay, and CI makes the test default replay.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { openTestTape } from '../../src/testing/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-default-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const saved: Record<string, string | undefined> = {};
beforeEach(() => {
  for (const k of ['TAPEDECK_MODE', 'CACHE_MODE', 'CI']) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
  else process.env[k] = v;
});

describe('the default mode', () => {
  it('createFetch and ReplayCache: replay, CI or not', async () => {
    for (const ci of [undefined, 'true']) {
      if (ci) process.env.CI = ci;
      const f = createFetch({ tape: join(dir, 'a.tape') });
      expect((await f.stats()).mode).toBe('replay');
      await f.close();
      const c = await ReplayCache.open(join(dir, 'b.tape'));
      expect(c.mode).toBe('replay');
      await c.close();
    }
  });

  it('test tapes: update, and replay under CI; TAPEDECK_MODE wins over both', async () => {
    expect(openTestTape({ tape: join(dir, 't.tape'), env: {} })).toMatchObject({ mode: 'update', modeSource: 'default' });
    expect(openTestTape({ tape: join(dir, 't.tape'), env: { CI: 'true' } })).toMatchObject({ mode: 'replay', modeSource: 'CI' });
    expect(openTestTape({ tape: join(dir, 't.tape'), env: { CI: '1', TAPEDECK_MODE: 'update' } })).toMatchObject({ mode: 'update', modeSource: 'TAPEDECK_MODE' });
    expect(openTestTape({ tape: join(dir, 't.tape'), mode: 'replay', env: {} })).toMatchObject({ mode: 'replay', modeSource: 'option' });
  });
});
