// A test tape's close gives the calls still waiting for the upstream one shutdown timeout in
// all: the wait for the test's calls and the fetch's own close share one deadline. Before, the
// fetch's close started a second full shutdown timeout after the first had passed, so a hung
// call held the close for twice shutdownTimeoutMs. Observed here by the bound the fetch's close
// arms for aborting what is left (its timer's delay), not by measuring time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hungUpstream } from '../hung-upstream.ts';
import { openTestTape } from '../../src/testing/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-close-deadline-'));
const upstream = hungUpstream();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a test tape closed with a call that never gets its answer', () => {
  it("leaves the fetch's close none of the shutdown timeout the wait for the calls used up", { timeout: 30_000 }, async () => {
    const shutdownTimeoutMs = 1000;
    const t = openTestTape({ tape: join(dir, 'hangs.tape'), test: 'hangs', mode: 'record', shutdownTimeoutMs, failOnMiss: false, env: {} });
    const call = t.fetch(`${upstream.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] }),
    });
    while (upstream.held === 0) await new Promise((r) => setImmediate(r));
    // The bounds the fetch's close arms to abort what is still in flight, by their delay.
    const shutdownBounds: number[] = [];
    const real = globalThis.setTimeout;
    globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
      if (typeof fn === 'function' && String(fn).includes('link.shutdown')) shutdownBounds.push(ms ?? 0);
      return real(fn, ms, ...rest);
    }) as typeof setTimeout;
    try {
      await t.close();
    } finally {
      globalThis.setTimeout = real;
    }
    const res = await call;
    expect(await res.text()).toContain('closed before the upstream finished answering');
    expect(shutdownBounds).toHaveLength(1);
    // The wait for the call took the whole shutdown timeout: what is left to the fetch is next
    // to nothing (before: a whole shutdown timeout again).
    expect(shutdownBounds[0]).toBeLessThan(shutdownTimeoutMs / 2);
  });
});
