// A temperature sweep (the same prompt at 0.2, 0.7, 1) shares one request key: a sampling
// temperature is not in the key (docs/matching.md, "Options"), so the recording made at one
// temperature answers the others. That stays the rule (a test that nudges 0.7 to 0.8 keeps
// replaying), but it must not be silent: an eval that sweeps temperature would report one
// temperature's answer as three. Every entry point that serves such a recording says so once.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/index.ts';
import { ReplayCache } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tsweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The fake answer names the temperature it was asked at, so a replay from another one shows.
let server: http.Server;
let url: string;
let calls = 0;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls++;
      const b = JSON.parse(Buffer.concat(chunks).toString()) as { model: string; temperature?: number };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `chatcmpl-${calls}`, object: 'chat.completion', created: 1, model: b.model, choices: [{ index: 0, message: { role: 'assistant', content: `at ${String(b.temperature)}`, refusal: null }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const body = (temperature?: number) => ({ model: 'gpt-4o-mini', ...(temperature === undefined ? {} : { temperature }), messages: [{ role: 'user' as const, content: 'Write a haiku' }] });

describe('a sampling temperature answered by a recording made at another one', () => {
  it('createFetch in update mode says so, once per pair of temperatures', async () => {
    const warnings: string[] = [];
    const f = createFetch({ tape: join(dir, 'fetch.tape'), mode: 'update', onWarning: (m) => warnings.push(m) });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    const got: string[] = [];
    for (const t of [0.2, 0.7, 0.7, 0.2]) got.push((await openai.chat.completions.create(body(t))).choices[0]!.message.content!);
    await f.close();
    // The rule itself is unchanged: one live call, its answer replayed.
    expect(got).toEqual(['at 0.2', 'at 0.2', 'at 0.2', 'at 0.2']);
    const about = warnings.filter((w) => /temperature/.test(w));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatch(/temperature 0\.7 .*recording made at temperature 0\.2/);
    expect(about[0]).toMatch(/tape of its own/);
  });

  it('createFetch in replay mode says so for a temperature the tape has none of, and for none given', async () => {
    const warnings: string[] = [];
    const f = createFetch({ tape: join(dir, 'fetch.tape'), mode: 'replay', onWarning: (m) => warnings.push(m) });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    const r = await openai.chat.completions.create(body(1)).withResponse();
    expect(r.data.choices[0]!.message.content).toBe('at 0.2');
    expect(r.response.headers.get('x-tapedeck-warning')).toMatch(/temperature 1 .*temperature 0\.2/);
    await openai.chat.completions.create(body());
    await f.close();
    expect(warnings.filter((w) => /temperature/.test(w))).toEqual([expect.stringMatching(/temperature 1 .*0\.2/), expect.stringMatching(/no temperature .*0\.2/)]);
  });

  it('the same temperature, or greedy decoding, says nothing', async () => {
    const warnings: string[] = [];
    const f = createFetch({ tape: join(dir, 'fetch.tape'), mode: 'update', onWarning: (m) => warnings.push(m) });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    await openai.chat.completions.create(body(0.2));
    await openai.chat.completions.create(body(0));
    await openai.chat.completions.create(body(0));
    await f.close();
    expect(warnings.filter((w) => /temperature/.test(w))).toEqual([]);
  });

  it('the proxy says so on stderr and in x-tapedeck-warning', async () => {
    const warnings: string[] = [];
    const proxy = await startProxy({ tape: join(dir, 'fetch.tape'), mode: 'replay', port: 0, onWarning: (m: string) => warnings.push(m) });
    try {
      const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
      const r = await openai.chat.completions.create(body(0.9)).withResponse();
      expect(r.data.choices[0]!.message.content).toBe('at 0.2');
      expect(r.response.headers.get('x-tapedeck-warning')).toMatch(/temperature 0\.9 .*temperature 0\.2/);
    } finally {
      await proxy.close();
    }
    expect(warnings.filter((w) => /temperature/.test(w))).toHaveLength(1);
  });

  it('ReplayCache says so when a sweep is replayed in another order', async () => {
    const tape = join(dir, 'cache.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    for (const t of [0.3, 1]) await rec.put(body(t), { text: `at ${t}` });
    await rec.close();
    // ReplayCache reports through process warnings, as its other notes.
    const warnings: string[] = [];
    const listen = (w: Error & { code?: string }) => {
      if (w.code === 'TAPEDECK_SAMPLING') warnings.push(w.message);
    };
    process.on('warning', listen);
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    expect(await cache.get(body(1))).toEqual({ text: 'at 0.3' });
    expect(await cache.get(body(0.3))).toEqual({ text: 'at 1' });
    await cache.close();
    await new Promise((r) => setImmediate(r));
    process.off('warning', listen);
    expect(warnings.filter((w) => /temperature/.test(w))).toEqual([expect.stringMatching(/temperature 1 .*temperature 0\.3/), expect.stringMatching(/temperature 0\.3 .*temperature 1\b/)]);
  });
});
