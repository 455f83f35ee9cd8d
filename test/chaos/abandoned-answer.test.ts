// An answer its client gave up on before it had it (aborted during an injected `latency` delay, or
// in the middle of a `stall`) reached no one: the call's retry is the same call and gets the same
// recording, and a later call the next one. A stalled body stops when its caller aborts, as
// fetch's own bodies do. Through createFetch and the proxy, with the real openai SDK.
import OpenAI from 'openai';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Chaos, draw } from '../../src/chaos/decide.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { chatText, MODEL, openai, recordTape, REPLAY_BASE, streamText, tempDir } from './record.ts';

const tmp = tempDir('abandoned');
const tape = join(tmp.dir, 'late.tape');
const PROMPT = 'Late';
const STREAMED = 'Slow stream';
const recorded: string[] = [];
const streamed: string[] = [];

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (let i = 0; i < 3; i++) recorded.push(await chatText(c, PROMPT));
    for (let i = 0; i < 3; i++) streamed.push(await streamText(c, STREAMED));
  });
  await up.close();
  expect(new Set(recorded).size).toBe(3);
  expect(new Set(streamed).size).toBe(3);
});
afterAll(() => tmp.remove());

/** A chat call the app gives up on once `abortAfterMs` passed (its own timeout, not the SDK's). */
async function givenUp(c: OpenAI, abortAfterMs: number): Promise<unknown> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), abortAfterMs);
  try {
    await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: PROMPT }] }, { signal: ac.signal });
    return undefined;
  } catch (e) {
    return e;
  } finally {
    clearTimeout(timer);
  }
}

describe('an answer given up on during its latency', () => {
  it('createFetch: the app’s retry gets the same recording, the next call the next one', async () => {
    const f = createFetch({ tape, mode: 'replay', summary: false, chaos: { latencyMs: 400, seed: 1 } });
    try {
      const c = openai(REPLAY_BASE, { fetch: f, maxRetries: 0 });
      expect(await givenUp(c, 30)).toBeInstanceOf(OpenAI.APIUserAbortError);
      expect([await chatText(c, PROMPT), await chatText(c, PROMPT)]).toEqual(recorded.slice(0, 2));
    } finally {
      await f.close();
    }
  });

  it('createFetch: every attempt of a call past the SDK’s timeout; the next call gets the next recording', async () => {
    const f = createFetch({ tape, mode: 'replay', summary: false, chaos: { latencyMs: 400, seed: 1 } });
    try {
      const impatient = new OpenAI({ baseURL: `${REPLAY_BASE}/v1`, apiKey: 'sk-test', fetch: f, maxRetries: 1, timeout: 40 });
      await expect(chatText(impatient, PROMPT)).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      expect(await chatText(openai(REPLAY_BASE, { fetch: f }), PROMPT)).toBe(recorded[1]);
    } finally {
      await f.close();
    }
  });

  it('createFetch: the SDK’s retry after its timeout gets the same recording, the next calls the next ones', async () => {
    // The request's chaos key, as the decider sees it, to pick a seed whose first attempt of the
    // first call is late and whose retry is not.
    const spy = vi.spyOn(Chaos.prototype, 'decide');
    const probe = createFetch({ tape, mode: 'replay', summary: false, chaos: { latencyMs: 1, seed: 1 } });
    await chatText(openai(REPLAY_BASE, { fetch: probe }), PROMPT);
    await probe.close();
    const key = spy.mock.calls[0]![0];
    spy.mockRestore();
    let seed = 1;
    while (!(draw(seed, 'latency', key, 0, 0) < 0.5 && draw(seed, 'latency', key, 0, 1) >= 0.5)) seed++;
    const f = createFetch({ tape, mode: 'replay', summary: false, chaos: { latencyMs: 400, latencyRate: 0.5, seed } });
    try {
      const c = new OpenAI({ baseURL: `${REPLAY_BASE}/v1`, apiKey: 'sk-test', fetch: f, maxRetries: 3, timeout: 150 });
      const got: string[] = [];
      for (let i = 0; i < 3; i++) got.push(await chatText(c, PROMPT));
      expect(got).toEqual(recorded);
    } finally {
      await f.close();
    }
  });

  it('the proxy: the app’s retry gets the same recording, the next call the next one', async () => {
    const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { latencyMs: 400, seed: 1 } });
    try {
      const c = openai(p.url, { maxRetries: 0 });
      expect(await givenUp(c, 30)).toBeInstanceOf(OpenAI.APIUserAbortError);
      expect([await chatText(c, PROMPT), await chatText(c, PROMPT)]).toEqual(recorded.slice(0, 2));
    } finally {
      await p.close();
    }
  });
});

describe('a stall given up on', () => {
  it('createFetch: the body stops at the abort with its reason', async () => {
    const f = createFetch({ tape, mode: 'replay', summary: false, chaos: { faults: { stall: 1 }, stallMs: 200, seed: 1 } });
    try {
      const ac = new AbortController();
      const res = await f(`${REPLAY_BASE}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: STREAMED }] }),
        signal: ac.signal,
      });
      expect(res.headers.get('x-tapedeck-fault')).toBe('stall');
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      ac.abort();
      await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await f.close();
    }
  });

  it.each(['createFetch', 'the proxy'])('%s and the openai SDK: the app’s retry of a stream it gave up on gets the same recording', async (via) => {
    const chaos = { faults: { stall: 1 }, stallMs: 100, seed: 1 };
    const f = via === 'createFetch' ? createFetch({ tape, mode: 'replay', summary: false, chaos }) : await startProxy({ tape, mode: 'replay', port: 0, chaos });
    try {
      const c = 'url' in f ? openai(f.url, { maxRetries: 0 }) : openai(REPLAY_BASE, { fetch: f, maxRetries: 0 });
      const ac = new AbortController();
      let partial = '';
      // The SDK ends its stream quietly on its caller's abort: what came before the abort is all.
      try {
        for await (const chunk of await c.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: STREAMED }] }, { signal: ac.signal })) {
          partial += chunk.choices[0]?.delta.content ?? '';
          if (partial.length > 0) ac.abort();
        }
      } catch (e) {
        expect(e).toBeInstanceOf(OpenAI.APIUserAbortError);
      }
      expect(partial.length).toBeGreaterThan(0);
      expect(streamed[0]!.startsWith(partial) && partial !== streamed[0]).toBe(true);
      expect([await streamText(c, STREAMED), await streamText(c, STREAMED)]).toEqual(streamed.slice(0, 2));
    } finally {
      await f.close();
    }
  });
});
