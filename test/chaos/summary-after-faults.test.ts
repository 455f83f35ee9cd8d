// createFetch's closing summary after a run where injected faults stood in for recordings: a
// recording a fault replaced waits for a retry that may never come, so the summary judges no
// recording unused and says why, as the test runner's summary and pruneUnused do.
import OpenAI from 'openai';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { chatText, MODEL, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('summary-after-faults');
afterAll(() => tmp.remove());

describe('createFetch summary after faults in place of recordings', () => {
  it('counts no unused recordings, and says why', async () => {
    const tape = join(tmp.dir, 'three.tape');
    const up = await recordTape(tape, async (c) => {
      for (let i = 0; i < 3; i++) await chatText(c, 'Counted');
    });
    await up.close();
    const said: string[] = [];
    const f = createFetch({ tape, mode: 'replay', summary: (text) => said.push(text), chaos: { faults: {}, seed: 1 } });
    const c = new OpenAI({ baseURL: `${REPLAY_BASE}/v1`, apiKey: 'sk-test', fetch: f, maxRetries: 0 });
    await expect(c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Counted' }] }, { headers: { 'x-tapedeck-chaos': '429' } })).rejects.toMatchObject({ status: 429 });
    await f.close();
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('unused recordings not checked: 1 call was answered by injected faults (429 1)');
    expect(said[0]).not.toMatch(/\d+ unused recording/);
  });

  it('without such faults, unused recordings are counted as before', async () => {
    const tape = join(tmp.dir, 'two.tape');
    const up = await recordTape(tape, async (c) => {
      for (let i = 0; i < 2; i++) await chatText(c, 'Counted');
    });
    await up.close();
    const said: string[] = [];
    const f = createFetch({ tape, mode: 'replay', summary: (text) => said.push(text) });
    await chatText(new OpenAI({ baseURL: `${REPLAY_BASE}/v1`, apiKey: 'sk-test', fetch: f, maxRetries: 0 }), 'Counted');
    await f.close();
    expect(said[0]).toMatch(/, 1 unused recording$/m);
  });
});
