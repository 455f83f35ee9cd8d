// A provider key in the URL path (a gateway that takes it there, a typo that put it there): the
// stored URL was masked, but the record's route (`POST /v1/chat/completions/sk-…`) kept it in
// clear, and `tapedeck scan` found it on the tape the recorder had just written. The route is
// masked as the URL is, with keyed masks, so the same key replays its recording and another key
// misses. Through the proxy and createFetch, with the real openai SDK.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { secretsInRecords } from '../../src/store/secret-scan.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-path-secret-'));
const KEY = 'sk-proj-DDDDpathDDDDDDDDDDDDDDDDDDDDDDDD11';
const OTHER = 'sk-proj-EEEEpathEEEEEEEEEEEEEEEEEEEEEEEE22';
let server: Server;
let base = '';
let calls = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `c${calls}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `answer ${calls}` } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** A chat call whose base URL carries `key` in its path. */
async function ask(root: string, key: string, f?: typeof fetch): Promise<string> {
  const c = new OpenAI({ baseURL: `${root}/gw/${key}/v1`, apiKey: 'unused', maxRetries: 0, ...(f ? { fetch: f } : {}) });
  const r = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  return r.choices[0]!.message.content ?? '';
}

describe('a key in the URL path', () => {
  it('the proxy: neither the URL nor the route on the tape holds it; scan finds nothing', async () => {
    const tape = join(dir, 'proxy.tape');
    const rec = await startProxy({ upstream: base, tape, mode: 'record', port: 0 });
    let live;
    try {
      live = await ask(rec.url, KEY);
    } finally {
      await rec.close();
    }
    expect(readFileSync(tape).includes(Buffer.from('DDDDpathDDDD'))).toBe(false);
    const value = (await readTape(tape)).records[0]!.value as { route: string; request: { url: string } };
    expect(value.route).toMatch(/^POST \/gw\/\[REDACTED:[0-9a-f]+\]\/v1\/chat\/completions$/);
    expect(value.route.slice('POST '.length)).toBe(value.request.url);
    expect(secretsInRecords((await readTape(tape)).records.map((r) => ({ offset: r.offset, value: r.value })))).toEqual([]);
    const play = await startProxy({ upstream: base, tape, mode: 'replay', port: 0 });
    try {
      expect(await ask(play.url, KEY)).toBe(live);
      await expect(ask(play.url, OTHER)).rejects.toThrow(/tapedeck miss/);
    } finally {
      await play.close();
    }
  });

  it('createFetch: the same', async () => {
    const tape = join(dir, 'fetch.tape');
    const rec = createFetch({ tape, mode: 'record' });
    let live;
    try {
      live = await ask(base, KEY, rec);
    } finally {
      await rec.close();
    }
    expect(readFileSync(tape).includes(Buffer.from('DDDDpathDDDD'))).toBe(false);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await ask(base, KEY, play)).toBe(live);
      await expect(ask(base, OTHER, play)).rejects.toThrow(/tapedeck miss/);
    } finally {
      await play.close();
    }
  });
});
