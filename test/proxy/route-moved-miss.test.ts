// A base URL given with or without `/v1` (DeepSeek answers at both) moves every call to another
// path: the miss says the same request is recorded at the other path, not that the model differs
// from an unrelated recording on the new one.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { pathOnOtherRoute } from '../../src/proxy/other-route.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-moved-'));
const tape = join(dir, 'route.tape');
let server: Server;
let upstream: string;

const ask = (c: OpenAI, model: string, content: string) => c.chat.completions.create({ model, messages: [{ role: 'user', content }] }).catch((e: unknown) => e);

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: JSON.parse(raw).model, choices: [{ index: 0, message: { role: 'assistant', content: `at ${req.url}` }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rec = createFetch({ tape, mode: 'record', summary: false });
  try {
    await ask(new OpenAI({ apiKey: 'k', baseURL: upstream, fetch: rec, maxRetries: 0 }), 'deepseek-chat', 'Say hi');
    await ask(new OpenAI({ apiKey: 'k', baseURL: `${upstream}/v1`, fetch: rec, maxRetries: 0 }), 'mistral-small-latest', 'Other call');
  } finally {
    await rec.close();
  }
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('a request recorded at another path of its operation', () => {
  it('createFetch: the miss names the path it was recorded at, not the model of another recording', async () => {
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const e = (await ask(new OpenAI({ apiKey: 'k', baseURL: `${upstream}/v1`, fetch: play, maxRetries: 0 }), 'deepseek-chat', 'Say hi')) as Error;
      expect(e.message).toMatch(/^400 tapedeck miss: this request was recorded at POST \/chat\/completions and is sent to POST \/v1\/chat\/completions/);
      expect(e.message).not.toMatch(/model differs/);
    } finally {
      await play.close();
    }
  });

  it('tapedeck serve: the same, also when the new path has no recordings', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      const e = (await ask(new OpenAI({ apiKey: 'k', baseURL: `${proxy.url}/v1`, maxRetries: 0 }), 'deepseek-chat', 'Say hi')) as Error;
      expect(e.message).toMatch(/this request was recorded at POST \/chat\/completions and is sent to POST \/v1\/chat\/completions/);
      const back = (await ask(new OpenAI({ apiKey: 'k', baseURL: `${proxy.url}/api`, maxRetries: 0 }), 'mistral-small-latest', 'Other call')) as Error;
      expect(back.message).toMatch(/this request was recorded at POST \/v1\/chat\/completions and is sent to POST \/api\/chat\/completions/);
    } finally {
      await proxy.close();
    }
  });

  it('pathOnOtherRoute: only for the same method, operation and filing headers', () => {
    expect(pathOnOtherRoute('POST /v1/chat/completions', 'POST /chat/completions')).toMatch(/recorded at POST \/chat\/completions/);
    expect(pathOnOtherRoute('POST /v1/chat/completions', 'POST /v1/embeddings')).toBeUndefined();
    expect(pathOnOtherRoute('POST /v1/chat/completions', 'POST /v1/chat/completions?x=1')).toBeUndefined();
    expect(pathOnOtherRoute('POST /v1/messages (anthropic-beta: a)', 'POST /api/v1/messages')).toBeUndefined();
  });
});
