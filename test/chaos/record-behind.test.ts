// A test of a fallback path: `tape.chaos({ faults: { 429: 1 } })`, the 429 caught, a fallback
// used. Locally (update mode) it passed and recorded nothing, since no attempt reached the API;
// in CI the fault found no recording to stand in for and the call missed, and the printed record
// command recorded nothing again: red in CI for good. Update mode now records the call's real
// answer behind the fault (the caller still gets the fault), so the replay has what the fault
// stands in for. With the real openai SDK.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { MODEL, openai, tempDir } from './record.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const tmp = tempDir('record-behind');
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  tmp.remove();
});

/**
 * One run of the fallback test: every call rate-limited; the fallback answers. `serve`: through
 * the test's proxy (tape.serve()) rather than its fetch.
 */
async function fallbackTest(tape: string, env: Record<string, string>, serve = false, o: { maxRetries?: number; calls?: number; attempts?: number } = {}): Promise<{ answer: string; failure?: unknown }> {
  const t = openTestTape({ tape, env, test: 'falls back on rate limit' });
  t.chaos({ faults: { 429: 1 }, seed: 1, ...(o.maxRetries ? { attempts: o.attempts ?? 1, retryAfterMs: 10 } : {}) });
  const answers: string[] = [];
  try {
    const c = serve ? openai((await t.serve({ upstream: up.url, tls: false })).url, { maxRetries: o.maxRetries ?? 0 }) : openai(up.url, { fetch: t.fetch, maxRetries: o.maxRetries ?? 0 });
    for (let i = 0; i < (o.calls ?? 1); i++) {
      answers.push(
        await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'summarize' }] }).then(
          (r) => r.choices[0]!.message.content ?? '',
          (e: { status?: number }) => (e.status === 429 ? 'fallback' : `ERR ${e.status}`),
        ),
      );
    }
  } catch (e) {
    return { answer: answers.join(' | '), failure: e };
  }
  const answer = answers.join(' | ');
  const failure = await t.close().then(() => undefined, (e: unknown) => e);
  return { answer, ...(failure ? { failure } : {}) };
}

describe('a fault in update mode on a call the tape has no recording of', () => {
  it('records the real answer behind the fault: the test falls back locally and in CI alike', async () => {
    const tape = join(tmp.dir, 'fallback.tape');
    const local = await fallbackTest(tape, {});
    expect(local).toEqual({ answer: 'fallback' });
    const records = (await readTape(tape)).records;
    expect(records).toHaveLength(1);
    const ci = await fallbackTest(tape, { CI: 'true' });
    expect(ci).toEqual({ answer: 'fallback' });
    // A second local run records nothing more: the tape has it.
    await fallbackTest(tape, {});
    expect((await readTape(tape)).records).toHaveLength(1);
  });

  // The test's proxy recorded nothing behind the fault (only createFetch did): the fallback test
  // through tape.serve() passed locally and missed in CI for good.
  it('through the test proxy (tape.serve()) too', async () => {
    const tape = join(tmp.dir, 'fallback-serve.tape');
    const calls = up.calls.length;
    expect(await fallbackTest(tape, {}, true)).toEqual({ answer: 'fallback' });
    expect((await readTape(tape)).records).toHaveLength(1);
    expect(up.calls.length - calls).toBe(1);
    expect(await fallbackTest(tape, { CI: 'true' }, true)).toEqual({ answer: 'fallback' });
    await fallbackTest(tape, {}, true);
    expect((await readTape(tape)).records).toHaveLength(1);
    expect(up.calls.length - calls).toBe(1);
  });
});

// Record mode (TAPEDECK_MODE=record, `tapedeck record`) recorded nothing behind a fault: a call
// the app never retried had no recording, so its replay in CI missed; and a retried call was
// sent again, so its recording was the retry's (a second identical call then replayed it).
describe('a fault in record mode', () => {
  const record = { TAPEDECK_MODE: 'record' };

  it.each([false, true])('records the answer behind the fault of a call never retried (through the proxy: %s)', async (serve) => {
    const tape = join(tmp.dir, `record-fallback-${serve}.tape`);
    expect(await fallbackTest(tape, record, serve)).toEqual({ answer: 'fallback' });
    expect((await readTape(tape)).records).toHaveLength(1);
    expect(await fallbackTest(tape, { CI: 'true' }, serve)).toEqual({ answer: 'fallback' });
  });

  it.each([false, true])('answers the retry with the recording made behind the fault, once per call (through the proxy: %s)', async (serve) => {
    const tape = join(tmp.dir, `record-retry-${serve}.tape`);
    const calls = up.calls.length;
    const recorded = await fallbackTest(tape, record, serve, { maxRetries: 1, calls: 2 });
    // Each call's first attempt is faulted; its retry gets the answer recorded behind it.
    expect(recorded.failure).toBeUndefined();
    expect(recorded.answer).toMatch(/^Echo \d+: summarize \| Echo \d+: summarize$/);
    expect(up.calls.length - calls).toBe(2);
    expect((await readTape(tape)).records).toHaveLength(2);
    // The replay gives each call the answer the recording run gave it.
    expect(await fallbackTest(tape, { CI: 'true' }, serve, { maxRetries: 1, calls: 2 })).toEqual({ answer: recorded.answer });
    expect(up.calls.length - calls).toBe(2);
  });

  // Failed before: the retry faulted again (attempts: 2) was recorded behind its fault a second
  // time, so the API was called twice per call and the tape held two answers of which the
  // recording run showed the second and every replay the first.
  it.each([false, true])('a retry faulted again (attempts: 2) takes the recording already made behind the first fault (through the proxy: %s)', async (serve) => {
    const tape = join(tmp.dir, `record-retry2-${serve}.tape`);
    const calls = up.calls.length;
    const recorded = await fallbackTest(tape, record, serve, { maxRetries: 2, attempts: 2, calls: 2 });
    expect(recorded.failure).toBeUndefined();
    expect(recorded.answer).toMatch(/^Echo \d+: summarize \| Echo \d+: summarize$/);
    expect(up.calls.length - calls).toBe(2);
    expect((await readTape(tape)).records).toHaveLength(2);
    expect(await fallbackTest(tape, { CI: 'true' }, serve, { maxRetries: 2, attempts: 2, calls: 2 })).toEqual({ answer: recorded.answer });
  });
});
