// A fault never hides a miss. A request the tape has no recording for is a miss in replay, with
// or without chaos: a status fault (429, 5xx), a reset or a timeout answered in its place let a
// test pass (a fallback on errors, a rate of 1) although the tape had nothing for what it asked,
// the prompt having changed since the recording. Through createFetch, the proxy and the real
// openai SDK.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { chatText, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('fault-on-miss');
const tape = join(tmp.dir, 'one.tape');
const answers: string[] = [];

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    answers.push(await chatText(c, 'recorded prompt'));
  });
  await up.close();
});
afterAll(() => tmp.remove());

const missOf = async (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as { status?: number; message?: string });

describe('a faulted request the tape has no recording for', () => {
  it.each(['429', '503', 'reset'] as const)('createFetch, %s at a rate of 1: a miss (400, what differs, how to record), not the fault', async (fault) => {
    const f = createFetch({ tape, mode: 'replay', chaos: { faults: { [fault]: 1 }, seed: 1 } });
    try {
      const e = await missOf(chatText(openai(REPLAY_BASE, { fetch: f, maxRetries: 0 }), 'a prompt changed since'));
      expect(e?.status).toBe(400);
      expect(e?.message).toMatch(/tapedeck miss: /);
      const s = await f.stats();
      expect(s.misses).toBe(1);
      expect(s.faults ?? {}).toEqual({});
    } finally {
      await f.close();
    }
    // A request the tape has is still faulted, and its retry gets the recording.
    const g = createFetch({ tape, mode: 'replay', chaos: { faults: { [fault]: 1 }, attempts: 1, seed: 1 } });
    try {
      expect(await chatText(openai(REPLAY_BASE, { fetch: g, maxRetries: 1 }), 'recorded prompt')).toBe(answers[0]);
      expect((await g.stats()).faults).toEqual({ [fault]: 1 });
    } finally {
      await g.close();
    }
  });

  it('the proxy, 429 at a rate of 1: a miss too', async () => {
    const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { faults: { 429: 1 }, seed: 1 } });
    try {
      const e = await missOf(chatText(openai(`${p.url}/v1`, { maxRetries: 0 }), 'a prompt changed since'));
      expect(e?.status).toBe(400);
      expect(p.handler.stats().misses).toBe(1);
    } finally {
      await p.close();
    }
  });

  it('a miss prints no seed line and is neither delayed nor counted for latency (createFetch and the proxy)', async () => {
    // What a client got decides what is said: the miss (400 at once), never "first fault
    // injected (429 ...)" for a 429 no client got, nor a delay it never waited for.
    for (const chaos of [{ faults: { 429: 1 }, seed: 7 }, { faults: {}, latencyMs: 1500, seed: 7 }]) {
      const warnings: string[] = [];
      const f = createFetch({ tape, mode: 'replay', summary: false, chaos, onWarning: (m) => warnings.push(m) });
      try {
        const t0 = Date.now();
        const e = await missOf(chatText(openai(REPLAY_BASE, { fetch: f, maxRetries: 0 }), 'never recorded'));
        expect(e?.status).toBe(400);
        expect(Date.now() - t0).toBeLessThan(1000);
        const s = await f.stats();
        expect(s.misses).toBe(1);
        expect(s.faults ?? {}).toEqual({});
      } finally {
        await f.close();
      }
      expect(warnings.join('\n')).not.toMatch(/first fault injected/);
    }
    const warnings: string[] = [];
    const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { faults: { 429: 1 }, latencyMs: 1500, seed: 7 }, onWarning: (m) => warnings.push(m) });
    try {
      const t0 = Date.now();
      const e = await missOf(chatText(openai(`${p.url}/v1`, { maxRetries: 0 }), 'never recorded'));
      expect(e?.status).toBe(400);
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(p.handler.stats().faults ?? {}).toEqual({});
      expect(warnings.join('\n')).not.toMatch(/first fault injected/);
    } finally {
      await p.close();
    }
    // A request the tape has gets its fault, late, and the seed line once it is out.
    const said: string[] = [];
    const g = createFetch({ tape, mode: 'replay', summary: false, chaos: { faults: { 429: 1 }, latencyMs: 1500, seed: 7 }, onWarning: (m) => said.push(m) });
    try {
      const late = Date.now();
      await expect(chatText(openai(REPLAY_BASE, { fetch: g, maxRetries: 0 }), 'recorded prompt')).rejects.toMatchObject({ status: 429 });
      expect(Date.now() - late).toBeGreaterThanOrEqual(1400);
      expect((await g.stats()).faults).toEqual({ 429: 1, latency: 1 });
      expect(said.join('\n')).toMatch(/first fault injected \(429 on POST \/v1\/chat\/completions\) with seed 7/);
    } finally {
      await g.close();
    }
  });
});
