// The waits of a test tape run on the timers captured when llm-tapedeck loaded, so fake timers a
// test installs and leaves (vi.useFakeTimers()) do not stop them; a wait that is stuck past its
// bound with fake timers installed fails saying so. And `llm-tapedeck/vitest` gives vitest's `vi`
// and hooks, so a test file needs one import line (before, `vi` from it was undefined).
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as entry from '../../src/vitest/index.ts';
import { failIfStuckOnFakeTimers, fakeTimersInstalled, isFakeTimer, nextTurn, realTimer } from '../../src/testing/real-timers.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { TapedeckError } from '../../src/errors.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { join } from 'node:path';

const suite = upstreamSuite('real-timers');

afterEach(() => {
  vi.useRealTimers();
});

describe('real timers under fake ones', () => {
  it('tells fakes from real timers, and waits a turn with fake timers installed', async () => {
    expect(fakeTimersInstalled()).toBe(false);
    vi.useFakeTimers();
    expect(fakeTimersInstalled()).toBe(true);
    expect(isFakeTimer(setImmediate)).toBe(true);
    expect(isFakeTimer(realTimer('setImmediate'))).toBe(false);
    expect(isFakeTimer(vi.fn())).toBe(true);
    await nextTurn();
  });

  it('a test tape records, replays and closes with fake timers left installed', async () => {
    const tape = join(suite.dir, 'fake.tape');
    for (const mode of ['record', 'replay'] as const) {
      vi.useFakeTimers();
      const t = openTestTape({ tape, mode, env: {} });
      const r = await suite.chat(t.fetch, 'hi');
      expect(r.status).toBe(200);
      await r.text();
      const report = await t.close();
      expect(mode === 'record' ? report.added : report.hits).toBe(1);
      vi.useRealTimers();
    }
  });

  it('a wait stuck past its bound fails with fake timers installed, and waits on without them', async () => {
    const never = new Promise<never>(() => {});
    vi.useFakeTimers();
    const e = await failIfStuckOnFakeTimers(never, 50, 'Closing the test tape t.tape').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_ARG');
    expect((e as TapedeckError).message).toMatch(/^Closing the test tape t\.tape has waited [\d.]+ s: fake timers are installed/);
    expect((e as TapedeckError).message).toContain('vi.useRealTimers()');
    vi.useRealTimers();
    // Real timers: no error, the work decides.
    let done = false;
    const slow = failIfStuckOnFakeTimers(new Promise((r) => setTimeout(() => r('ok'), 120)), 30, 'x').then((v) => ((done = true), v));
    await expect(slow).resolves.toBe('ok');
    expect(done).toBe(true);
  });
});

describe('llm-tapedeck/vitest re-exports', () => {
  it('vi, the hooks, describe and expect are vitest’s own', async () => {
    const vitest = await import('vitest');
    for (const name of ['vi', 'beforeEach', 'afterEach', 'beforeAll', 'afterAll', 'describe', 'expect'] as const) {
      expect(entry[name], name).toBe(vitest[name]);
    }
  });
});
