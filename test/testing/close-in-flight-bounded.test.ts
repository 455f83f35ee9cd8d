// A test tape closed while a call of its test still waits for the upstream (a test that timed
// out, a call it did not await) gives that call the shutdown timeout (shutdownTimeoutMs), then
// aborts it unrecorded, as createFetch's own close() does. Before, the tape's close waited for
// every call in flight without bound: a hanging upstream held the test's worker (and the run)
// until its answer came, up to the 10-minute idle timeout. Here the upstream never answers: the
// close must still end, with the call answered by the shutdown error and nothing recorded.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hungUpstream } from '../hung-upstream.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-close-bounded-'));
const upstream = hungUpstream();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a test tape closed with a call still waiting for the upstream', () => {
  it('ends after the shutdown timeout, the call aborted and not recorded', { timeout: 30_000 }, async () => {
    const tape = join(dir, 'hangs.tape');
    const t = openTestTape({ tape, test: 'hangs', mode: 'record', shutdownTimeoutMs: 200, failOnMiss: false, env: {} });
    const call = t.fetch(`${upstream.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] }),
    });
    // The upstream has the request: the call is in flight when the tape closes.
    while (upstream.held === 0) await new Promise((r) => setImmediate(r));
    const report = await t.close();
    expect(report.added).toBe(0);
    const res = await call;
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await res.text()).toContain('closed before the upstream finished answering');
    expect(existsSync(tape) ? (await readTape(tape)).records.length : 0).toBe(0);
  });
});
