// A call whose SDK retries ran out on injected faults (the openai SDK, maxRetries 3: four 500s)
// is over: the app catches the error and goes on. Its next call of the same request is numbered
// 0 by the SDK (x-stainless-retry-count) and is a new call: it gets the next recording. Before,
// it was taken for the failed call's retry and served the failed call's recording, and every
// later call got the one before its own (`#1 | ERR | #2 | #3` where a replay without the fault
// gives `#1 | ERR | #3 | #4`). An app's own retry loop around an SDK that retries nothing (every
// attempt numbered 0) is still a retry of the call. With the real openai SDK.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { chatText, MODEL, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';
import type OpenAI from 'openai';

const tmp = tempDir('exhausted-retries');
const tape = join(tmp.dir, 'same.tape');
const recorded: string[] = [];

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (let i = 0; i < 4; i++) recorded.push(await chatText(c, 'sample'));
  });
  await up.close();
});
afterAll(() => tmp.remove());

/** One call; `fault` forces that fault on every attempt of it. */
const ask = (c: OpenAI, fault?: string) =>
  c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'sample' }] }, fault ? { headers: { 'x-tapedeck-chaos': fault } } : {}).then(
    (r) => r.choices[0]!.message.content ?? '',
    (e: { status?: number }) => `ERR ${e.status}`,
  );

describe('a call whose SDK retries ran out on faults', () => {
  it('with seeded faults: each call that succeeds gets its own recording, as without the faults', async () => {
    const f = createFetch({ tape, mode: 'replay', chaos: { faults: { 429: 0.5, 500: 0.3 }, seed: 4, retryAfterMs: 5 } });
    try {
      const c = openai(REPLAY_BASE, { maxRetries: 3, fetch: f });
      const got: string[] = [];
      for (let i = 0; i < 4; i++) got.push(await ask(c));
      // Seed 4 makes the 2nd call exhaust its retries (the premise).
      expect(got[1]).toMatch(/^ERR /);
      got.forEach((g, i) => expect(g.startsWith('ERR') ? g : recorded[i], `call ${i + 1}`).toBe(g));
    } finally {
      await f.close();
    }
  });

  it('the next call of the request is a new call and gets the next recording', async () => {
    expect(new Set(recorded).size).toBe(4);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const c = openai(REPLAY_BASE, { maxRetries: 3, fetch: f });
      const got = [await ask(c), await ask(c, '500'), await ask(c), await ask(c)];
      expect(got).toEqual([recorded[0], 'ERR 500', recorded[2], recorded[3]]);
      expect((await f.stats()).faults).toEqual({ 500: 4 });
    } finally {
      await f.close();
    }
  });

  it("an app's own retry loop around an SDK that retries nothing (each attempt numbered 0) is still the call's retry", async () => {
    const f = createFetch({ tape, mode: 'replay', chaos: { faults: { 429: 1 }, attempts: 1, seed: 3 } });
    try {
      const c = openai(REPLAY_BASE, { maxRetries: 0, fetch: f });
      // Each call fails once and the app tries it again itself: the retry gets the call's own recording.
      const withRetry = async () => {
        for (let i = 0; ; i++) {
          const got = await ask(c);
          if (!got.startsWith('ERR') || i === 2) return got;
        }
      };
      expect([await withRetry(), await withRetry(), await withRetry()]).toEqual(recorded.slice(0, 3));
      expect((await f.stats()).faults).toEqual({ 429: 3 });
    } finally {
      await f.close();
    }
  });
});
