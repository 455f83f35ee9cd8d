// A request asked more often than it was recorded gets its last recording again (the proxy is
// shared by many clients; strictOrder makes it a miss). A loop that now runs longer than when it
// was recorded passed silently: the stats now count those calls (`repeats`), on every path a
// recording is found by (an LLM body through the matcher and its fast path, a tape indexed by its
// stored keys, a plain JSON body), and a run summary says it. Through createFetch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-repeats-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

const bodies = {
  llm: ['/v1/chat/completions', JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'next step?' }] })],
  json: ['/v1/echo', JSON.stringify({ query: 'same lookup' })],
} as const;

describe.each(['llm', 'json'] as const)('a %s request asked more often than recorded', (kind) => {
  it.each([1, 2])('recorded %i times, asked 4 times: the calls past the recordings are counted', async (recorded) => {
    const [path, body] = bodies[kind];
    const tape = join(dir, `${kind}-${recorded}.tape`);
    const call = async (f: typeof fetch) => (await f(`${up.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text();
    const rec = createFetch({ tape, mode: 'record' });
    const answers: string[] = [];
    try {
      for (let i = 0; i < recorded; i++) answers.push(await call(rec));
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const got: string[] = [];
      for (let i = 0; i < 4; i++) got.push(await call(play));
      // The premise: the last recording again.
      expect(got).toEqual([...answers, ...Array(4 - recorded).fill(answers.at(-1))]);
      expect((await play.stats()).repeats).toBe(4 - recorded);
    } finally {
      await play.close();
    }
    // Within the recordings: none.
    const exact = createFetch({ tape, mode: 'replay', summary: false });
    try {
      for (let i = 0; i < recorded; i++) await call(exact);
      expect((await exact.stats()).repeats).toBeUndefined();
    } finally {
      await exact.close();
    }
  });
});
