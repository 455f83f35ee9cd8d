// `x-tapedeck-chaos: none` asks for no fault at all: not a status fault, nor an injected delay
// (`latency`), and a request sending it is recorded as usual where chaos is refused (record and
// update mode without live chaos). With the real openai SDK, through createFetch and the proxy.
import OpenAI from 'openai';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { chatText, MODEL, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('none-header');
afterAll(() => tmp.remove());

const NONE = { 'x-tapedeck-chaos': 'none' };

describe('x-tapedeck-chaos: none', () => {
  it('createFetch: no latency either, nor any counted', async () => {
    const tape = join(tmp.dir, 'late.tape');
    const recorded: string[] = [];
    const up = await recordTape(tape, async (c) => {
      for (let i = 0; i < 2; i++) recorded.push(await chatText(c, 'On time'));
    });
    await up.close();
    const f = createFetch({ tape, mode: 'replay', summary: false, chaos: { faults: { 429: 0.5 }, latencyMs: 300, seed: 1 } });
    try {
      const c = new OpenAI({ baseURL: `${REPLAY_BASE}/v1`, apiKey: 'sk-test', fetch: f, maxRetries: 0, defaultHeaders: NONE });
      for (let i = 0; i < 2; i++) {
        const { data, response } = await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'On time' }] }).withResponse();
        expect(data.choices[0]!.message.content).toBe(recorded[i]);
        expect(response.headers.get('x-tapedeck-fault')).toBeNull();
      }
      expect((await f.stats()).faults ?? {}).toEqual({});
    } finally {
      await f.close();
    }
  });

  it.each(['record', 'update'] as const)('the proxy in %s mode without chaos: recorded as usual, the header left off', async (mode) => {
    const tape = join(tmp.dir, `${mode}.tape`);
    const up = await startUpstream();
    try {
      const p = await startProxy({ upstream: up.url, tape, mode, port: 0 });
      let live: string;
      try {
        live = await chatText(new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'sk-test', maxRetries: 0, defaultHeaders: NONE }), 'Opted out');
      } finally {
        await p.close();
      }
      expect(up.calls).toHaveLength(1);
      expect(up.calls[0]!.headers['x-tapedeck-chaos']).toBeUndefined();
      const r = await startProxy({ tape, mode: 'replay', port: 0 });
      try {
        expect(await chatText(new OpenAI({ baseURL: `${r.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), 'Opted out')).toBe(live);
      } finally {
        await r.close();
      }
    } finally {
      await up.close();
    }
  });
});
