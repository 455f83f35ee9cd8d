// createFetch stands in for fetch, so an undici `dispatcher` in a call's init carries the call
// to the API as it does with fetch: the OpenAI SDK's own advice for a proxy or a private CA is
// `fetchOptions: { dispatcher }`, which reaches the custom fetch in every call's init. Dropped,
// the recording call went around it (here: to an HTTPS API whose CA only the dispatcher trusts,
// refused as a self-signed certificate).
import OpenAI from 'openai';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/index.ts';
import { tlsMaterial } from '../../src/proxy/tls.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('fetch-dispatcher');
let api: { url: string; ca: string; paths: string[]; close(): Promise<void> };

beforeAll(async () => {
  const tls = await tlsMaterial({});
  const paths: string[] = [];
  // An OpenAI-shaped API on HTTPS, with a redirect as FastAPI gives for a trailing slash.
  const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/chat/completions/') {
        res.writeHead(307, { location: '/v1/chat/completions' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'over TLS' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  api = { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, ca: tls.ca!, paths, close: () => new Promise((r) => server.close(() => r())) };
});
afterAll(() => api.close());

describe('createFetch and a dispatcher in the call', () => {
  it("the OpenAI SDK's fetchOptions.dispatcher carries the recording call, and it replays", async () => {
    const tape = join(suite.dir, 'sdk.tape');
    const dispatcher = new Agent({ connect: { ca: api.ca } });
    const rec = createFetch({ tape, mode: 'record', summary: false });
    const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', fetch: rec, fetchOptions: { dispatcher } as never, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe('over TLS');
    await rec.close();
    const replay = createFetch({ tape, mode: 'replay', summary: false });
    const again = await new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', fetch: replay, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(again.choices[0]!.message.content).toBe('over TLS');
    await replay.close();
    await dispatcher.close();
  });

  it("a redirect's next hop goes through the same dispatcher", async () => {
    const dispatcher = new Agent({ connect: { ca: api.ca } });
    const f = createFetch({ tape: join(suite.dir, 'hop.tape'), mode: 'record', summary: false });
    const before = api.paths.length;
    const res = await f(`${api.url}/v1/chat/completions/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hop' }] }), dispatcher } as RequestInit);
    expect(res.status).toBe(200);
    expect(res.redirected).toBe(true);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('over TLS');
    expect(api.paths.slice(before)).toEqual(['/v1/chat/completions/', '/v1/chat/completions']);
    await f.close();
    await dispatcher.close();
  });
});
