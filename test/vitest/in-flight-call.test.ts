// A call the test made but did not await, still in flight when the test ended (the tape was
// still opening: the OpenAI SDK calls fetch a few ticks after create()). Before, the tape's close
// refused it as "came after its test ended": the call got E_PROXY_CLOSED, no miss was counted,
// the run summary said nothing and the test passed in CI with a request that had no recording.
// Now close() lets it finish like any in-flight call: its miss fails the test.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-in-flight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a call in flight when the test ends', () => {
  it('is a miss of the test, not a late call nobody counts', async () => {
    const runDir = join(dir, 'run');
    const tape = openTestTape({ tape: join(dir, 'never.tape'), mode: 'replay', test: 'chat > fire and forget', file: 'chat.test.ts', runDir });
    const client = new OpenAI({ baseURL: 'http://api.test/v1', apiKey: 'sk-unused', maxRetries: 0, fetch: tape.fetch });
    const call = client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e as Error);
    // The test ends here without awaiting the call: the fixture closes the tape.
    await new Promise((r) => setImmediate(r));
    const closed = await tape.close().then(() => undefined, (e: unknown) => e as Error & { code?: string });
    expect(closed?.code).toBe('E_MISS');
    expect(closed?.message).toContain('this test was never recorded');
    expect((await call).message).not.toContain('came after its test ended');
    const text = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
    expect(text).toContain('1 miss');
    expect(text).not.toContain('made after the test ended');
  });

  it('createFetch: a call made before close() is answered, one made after is refused', async () => {
    const f = createFetch({ tape: join(dir, 'closing.tape'), mode: 'replay', summary: false });
    const before = f('http://api.test/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[{"role":"user","content":"Hi"}]}' });
    await f.close();
    const r = await before;
    expect(r.headers.get('x-tapedeck-match')).toBe('miss');
    const after = await f('http://api.test/v1/chat/completions', { method: 'POST', body: '{}' });
    expect(after.headers.get('x-tapedeck-error')).toBe('E_PROXY_CLOSED');
  });
});
