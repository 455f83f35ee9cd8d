// In front of the live API (`live: true` in record or update mode) `cut`, `stall` and
// `malformed` are not injected: they damage recorded answers only. A fault not injected is not
// announced: "first fault injected ... with seed N" is said only for a fault a client got.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { openai, streamText, tempDir } from './record.ts';

const tmp = tempDir('live');
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  tmp.remove();
});

const announced = (warnings: string[]) => warnings.filter((w) => w.includes('first fault injected'));

describe('a damaging fault skipped on a live answer', () => {
  it.each(['cut', 'stall', 'malformed'] as const)('createFetch, update mode: %s is neither injected, counted nor announced; the answer is recorded whole', async (fault) => {
    const warnings: string[] = [];
    const tape = join(tmp.dir, `fetch-${fault}.tape`);
    const f = createFetch({ tape, mode: 'update', chaos: { faults: { [fault]: 1 }, live: true, seed: 5, stallMs: 1 }, onWarning: (w) => warnings.push(w) });
    try {
      const text = await streamText(openai(up.url, { fetch: f }), `Live ${fault}`);
      expect(text).toMatch(new RegExp(`^Echo \\d+: Live ${fault} $`));
      expect((await f.stats()).faults ?? {}).toEqual({});
    } finally {
      await f.close();
    }
    expect(announced(warnings)).toEqual([]);

    // Replayed, the same fault is injected and announced once, with its seed.
    const again: string[] = [];
    const r = createFetch({ tape, mode: 'replay', chaos: { faults: { [fault]: 1 }, seed: 5, stallMs: 1 }, onWarning: (w) => again.push(w) });
    try {
      await streamText(openai(up.url, { fetch: r }), `Live ${fault}`).catch(() => '');
      expect((await r.stats()).faults).toEqual({ [fault]: 1 });
    } finally {
      await r.close();
    }
    expect(announced(again)).toHaveLength(1);
    expect(announced(again)[0]).toContain(`(${fault} on POST /v1/chat/completions) with seed 5`);
  });

  it('proxy, record mode: a cut is not announced; a 429 beside it is', async () => {
    const warnings: string[] = [];
    const p = await startProxy({ upstream: up.url, tape: join(tmp.dir, 'proxy.tape'), mode: 'record', port: 0, chaos: { faults: { cut: 1 }, live: true, seed: 5 }, onWarning: (w) => warnings.push(w) });
    try {
      expect(await streamText(openai(p.url), 'Live proxy')).toMatch(/^Echo \d+: Live proxy $/);
      expect(p.handler.stats().faults ?? {}).toEqual({});
      expect(announced(warnings)).toEqual([]);
      const forced = await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tapedeck-chaos': '429' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }) });
      expect(forced.status).toBe(429);
      await forced.arrayBuffer();
      expect(announced(warnings)).toHaveLength(1);
      expect(announced(warnings)[0]).toContain('(429 on POST /v1/chat/completions) with seed 5');
    } finally {
      await p.close();
    }
  });
});
