// `attempts: N` holds for concurrent calls of one request too: every faulted call fails N times
// and its retry N+1 gets a recording, so a client with N retries always gets the recorded answer,
// however its identical calls interleave. A concurrent call is told from a retry: a call that
// arrives before a faulted answer went out cannot be its retry, and an SDK that numbers its
// retries (x-stainless-retry-count, amz-sdk-request) says which attempt a request is.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { ChaosOptions } from '../../src/chaos/options.ts';
import { chatText, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('concurrent');
const tape = join(tmp.dir, 'hello.tape');
const PROMPT = 'Hello';
const N = 3;
/** The N recordings of the same request. */
const recorded: string[] = [];
const aiTape = join(tmp.dir, 'ai.tape');
const recordedAi: string[] = [];
const aiModel = (base: string, f?: typeof fetch) => createOpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', ...(f ? { fetch: f } : {}) })('gpt-4o-mini');

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (let i = 0; i < N; i++) recorded.push(await chatText(c, PROMPT));
  });
  // The AI SDK's own recordings (its request differs from the openai SDK's).
  const rec = await startProxy({ upstream: up.url, tape: aiTape, mode: 'record', port: 0 });
  for (let i = 0; i < N; i++) recordedAi.push((await generateText({ model: aiModel(rec.url), prompt: PROMPT, maxRetries: 0 })).text);
  await rec.close();
  await up.close();
});
afterAll(() => tmp.remove());

/** The recording a call got, or its error. */
const outcome = (p: Promise<string>) => p.then((t) => (recorded.includes(t) ? t : `other ${t}`), (e: { status?: number; message?: string }) => `ERR ${e.status ?? e.message}`);
/** Each call got one of the recordings, each recording once. */
const everyRecording = () => [...recorded].sort();

async function concurrently(f: typeof fetch, maxRetries: number): Promise<string[]> {
  const c = openai(REPLAY_BASE, { fetch: f, maxRetries });
  return (await Promise.all(Array.from({ length: N }, () => outcome(chatText(c, PROMPT))))).sort();
}

describe('concurrent identical calls with attempts', () => {
  it('createFetch, openai SDK: attempts 1 and one retry: every call gets its recording, each faulted once, the same every run', async () => {
    const runs: unknown[] = [];
    for (let run = 0; run < 2; run++) {
      const f = createFetch({ tape, mode: 'replay', chaos: { faults: { 429: 1 }, attempts: 1, retryAfterMs: 5, seed: 1 } });
      try {
        const got = await concurrently(f, 1);
        expect(got).toEqual(everyRecording());
        const faults = (await f.stats()).faults;
        expect(faults).toEqual({ 429: N });
        runs.push({ got, faults });
      } finally {
        await f.close();
      }
    }
    expect(runs[1]).toEqual(runs[0]);
  });

  it('createFetch, openai SDK: attempts 2 and two retries; rates below 1 over several seeds', async () => {
    const cases: [ChaosOptions, number][] = [
      [{ faults: { 429: 1 }, attempts: 2, retryAfterMs: 5, seed: 1 }, 2],
      ...[1, 2, 3, 4].map((seed): [ChaosOptions, number] => [{ faults: { 429: 0.5, 503: 0.3 }, attempts: 1, retryAfterMs: 5, seed }, 1]),
    ];
    for (const [chaos, retries] of cases) {
      const f = createFetch({ tape, mode: 'replay', chaos });
      try {
        expect(await concurrently(f, retries), JSON.stringify(chaos)).toEqual(everyRecording());
      } finally {
        await f.close();
      }
    }
  });

  it('proxy, openai SDK: attempts 1 and one retry: every call gets its recording', async () => {
    for (const seed of [1, 2, 3]) {
      const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { faults: { 429: 1 }, attempts: 1, retryAfterMs: 5, seed } });
      try {
        const c = openai(p.url, { maxRetries: 1 });
        const got = await Promise.all(Array.from({ length: N }, () => outcome(chatText(c, PROMPT))));
        expect(got.sort(), `seed ${seed}`).toEqual(everyRecording());
      } finally {
        await p.close();
      }
    }
  });

  it('an app’s own retry (the SDK retries nothing and numbers nothing) still gets the recording, one call after another', async () => {
    const f = createFetch({ tape, mode: 'replay', chaos: { faults: { 503: 1 }, attempts: 1, seed: 1 } });
    try {
      const c = openai(REPLAY_BASE, { fetch: f, maxRetries: 0 });
      for (let i = 0; i < N; i++) {
        await expect(chatText(c, PROMPT)).rejects.toMatchObject({ status: 503 });
        expect(recorded).toContain(await chatText(c, PROMPT));
      }
    } finally {
      await f.close();
    }
  });

  it('createFetch, the AI SDK (its own retries, unnumbered), concurrently: every call gets its recording', async () => {
    const f = createFetch({ tape: aiTape, mode: 'replay', chaos: { faults: { 429: 1 }, attempts: 1, retryAfterMs: 5, seed: 1 } });
    try {
      const model = aiModel(REPLAY_BASE, f);
      const got = await Promise.all(Array.from({ length: N }, () => generateText({ model, prompt: PROMPT, maxRetries: 1 }).then((r) => r.text, (e: Error) => `ERR ${e.message}`)));
      expect(got.every((t) => recordedAi.includes(t)), got.join(' | ')).toBe(true);
      expect((await f.stats()).faults).toEqual({ 429: N });
    } finally {
      await f.close();
    }
  });
});
