// One tape, the same chat request recorded through two gateways: OpenRouter's /api/v1 on one
// host, and Cloudflare AI Gateway's Azure route (with `?api-version=`) on another. When the app
// bumps api-version, its request misses. The miss named the OpenRouter recording ("recorded at
// POST /api/v1/chat/completions on <other host> ... the base URL changed?"), a host this call
// must never go to, and hid what changed. The same request recorded on its own host and path
// under another query explains it: the query is named first.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { createServer } from 'node:http';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-qmoved-'));
let upstream: Awaited<ReturnType<typeof listenLoopback>>;
let n = 0;
beforeAll(async () => {
  // A gateway answers Chat Completions under any path prefix, with or without a query.
  upstream = await listenLoopback(
    createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `Hi ${n} from ${req.url}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } }));
      });
    }),
  );
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The same chat call through a gateway's base URL (hosts told apart: localhost and 127.0.0.1). */
async function ask(f: typeof fetch, baseURL: string, apiVersion?: string): Promise<string> {
  const client = new OpenAI({ apiKey: 'sk-replay', baseURL, fetch: f, maxRetries: 0, ...(apiVersion ? { defaultQuery: { 'api-version': apiVersion } } : {}) });
  const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi' }] });
  return r.choices[0]!.message.content ?? '';
}

describe('a changed query on a gateway route', () => {
  it('is named, not a recording of the same body on another host and path', async () => {
    const port = new URL(upstream.url).port;
    const openrouter = `http://localhost:${port}/api/v1`;
    const cloudflare = `http://127.0.0.1:${port}/v1/acct/gw/azure-openai/res/dep`;
    const tape = join(dir, 'gateways.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      await ask(rec, openrouter);
      await ask(rec, cloudflare, '2024-10-21');
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const miss = await ask(play, cloudflare, '2025-01-01').then(
        (t) => new Error(`served ${t}`),
        (e: Error) => e,
      );
      expect(miss).toBeInstanceOf(OpenAI.APIError);
      expect(miss.message).toContain('api-version=2025-01-01 vs api-version=2024-10-21');
      expect(miss.message).not.toContain('/api/v1/chat/completions');
    } finally {
      await play.close();
    }
  });
});
