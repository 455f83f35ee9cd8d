// The AI SDK's Mistral, Cohere and Cerebras providers read an error's message at the top level
// of the body (`{ object: 'error', message, type, param, code }`, `{ message }`,
// `{ message, type, param, code }`), not in OpenAI's `error`; when their schema fails they raise
// with the HTTP status text as the message, and nothing they send says which provider they are
// (their user agent is the AI SDK's). A replay miss must reach them as tapedeck's message,
// through createFetch and the proxy, and stay OpenAI's shape for OpenAI's SDKs.
import { createJsonErrorResponseHandler } from '@ai-sdk/provider-utils';
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { createFetch } from '../../src/proxy/fetch.ts';
import { showsWholeBody } from '../../src/proxy/http-errors.ts';
import { startProxy } from '../../src/proxy/server.ts';

// The providers' own error schemas (@ai-sdk/mistral 3, @ai-sdk/cohere 3, @ai-sdk/cerebras 2).
const SCHEMAS = {
  mistral: z.object({ object: z.literal('error'), message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
  cohere: z.object({ message: z.string() }),
  cerebras: z.object({ message: z.string(), type: z.string(), param: z.string(), code: z.string() }),
};
const PATHS = { mistral: '/v1/chat/completions', cohere: '/v2/chat', cerebras: '/v1/chat/completions' };
// What `generateText` sends with any of them (ai 6): no provider's name.
const AI_SDK_UA = 'ai/6.0.333 ai-sdk/provider-utils/4.0.56 runtime/node.js/v20.20.2';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-top-message-'));
const tape = join(dir, 'calls.tape');
let server: Server;
let upstream: string;

const body = (prompt: string) => JSON.stringify({ model: 'some-model', messages: [{ role: 'user', content: prompt }] });
const post = (f: typeof fetch, base: string, path: string, prompt: string, ua: string) =>
  f(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': ua }, body: body(prompt) });

/** What the AI SDK raises for an error answer, parsed with a provider's schema. */
async function sdkError(name: keyof typeof SCHEMAS, res: Response) {
  const handler = createJsonErrorResponseHandler({ errorSchema: SCHEMAS[name] as never, errorToMessage: (d: { message: string }) => d.message });
  return (await handler({ url: 'u', requestBodyValues: {}, response: res })).value;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'some-model', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rec = createFetch({ tape, mode: 'record', summary: false });
  try {
    for (const [name, path] of Object.entries(PATHS)) await (await post(rec, upstream, path, 'original', `ai-sdk/${name}/3.0.0`)).text();
    await (await post(rec, upstream, '/v1/chat/completions', 'original', 'OpenAI/JS 6.0.0')).text();
  } finally {
    await rec.close();
  }
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('a replay miss read by the AI SDK providers whose schema wants a top-level message', () => {
  it('createFetch: each provider raises with tapedeck miss as its message, and the status text is Bad Request', async () => {
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]) {
        const res = await post(play, 'http://127.0.0.1:9', PATHS[name], 'changed', AI_SDK_UA);
        expect(res.status).toBe(400);
        expect(res.statusText).toBe('Bad Request');
        const err = await sdkError(name, res);
        expect(err.message, name).toMatch(/^tapedeck miss: /);
      }
    } finally {
      await play.close();
    }
  });

  it('tapedeck serve: the same', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]) {
        const err = await sdkError(name, await post(fetch, proxy.url, PATHS[name], 'changed', AI_SDK_UA));
        expect(err.message, name).toMatch(/^tapedeck miss: /);
      }
    } finally {
      await proxy.close();
    }
  });

  it("OpenAI's SDK still reads error.message", async () => {
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const flat = (await (await post(play, 'http://127.0.0.1:9', '/v1/chat/completions', 'changed', 'OpenAI/JS 6.49.0')).json()) as Record<string, unknown>;
      expect(flat).toMatchObject({ object: 'error', message: expect.stringMatching(/^tapedeck miss: /), error: { message: flat.message, code: 'E_MISS' } });
      const client = new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, fetch: async () => new Response(JSON.stringify(flat), { status: 400, headers: { 'content-type': 'application/json' } }) });
      const e = await client.chat.completions.create({ model: 'some-model', messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
      expect((e as Error).message).toMatch(/^400 tapedeck miss: /);
      expect((e as { code?: string }).code).toBe('E_MISS');
    } finally {
      await play.close();
    }
  });
});

describe('a replay miss read by SDKs that show the whole error body', () => {
  // What each SDK sends (groq-sdk 1.6, together-ai 0.52, @mistralai/mistralai 2.7, cohere-ai 8.1).
  const clients: [string, Record<string, string>, string?][] = [
    // Groq's own path is Azure OpenAI's v1 path too.
    ['groq-sdk', { 'x-stainless-lang': 'js', 'user-agent': 'Groq/JS 1.6.0' }, '/openai/v1/chat/completions'],
    ['groq-sdk', { 'x-stainless-lang': 'js', 'user-agent': 'Groq/JS 1.6.0' }],
    ['together-ai', { 'x-stainless-lang': 'js', 'user-agent': 'Together/JS 0.52.0' }],
    ['@mistralai/mistralai', { 'user-agent': 'mistral-client-typescript/2.7.0' }],
    ['cohere-ai', { 'user-agent': 'cohere-ai/8.1.0', 'x-fern-language': 'JavaScript', 'x-fern-sdk-name': 'cohere-ai' }],
  ];

  it('gets the short body (a few hundred bytes, no report), through createFetch and the proxy', async () => {
    const play = createFetch({ tape, mode: 'replay', summary: false });
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      for (const [name, headers, path = '/v1/chat/completions'] of clients) {
        for (const [f, base] of [[play, 'http://127.0.0.1:9'], [fetch, proxy.url]] as const) {
          const res = await f(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body('changed') });
          const text = await res.text();
          expect(res.status).toBe(400);
          expect(text, name).toMatch(/tapedeck miss: /);
          expect(text.length, `${name}: ${text}`).toBeLessThan(700);
        }
      }
    } finally {
      await play.close();
      await proxy.close();
    }
  });

  it("OpenAI's and Anthropic's JS SDKs still get the full diagnosis", async () => {
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const res = await play('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-lang': 'js', 'user-agent': 'OpenAI/JS 6.49.0' }, body: body('changed') });
      const parsed = (await res.json()) as { error: { tapedeck: Record<string, unknown> } };
      expect(parsed.error.tapedeck.report).toBeDefined();
    } finally {
      await play.close();
    }
  });
});

describe('showsWholeBody', () => {
  it('a JavaScript Stainless SDK by the client its user agent names; in a page (a browser user agent) as OpenAI', () => {
    expect(showsWholeBody({ 'x-stainless-lang': 'js', 'user-agent': 'Groq/JS 1.6.0' })).toBe(true);
    expect(showsWholeBody({ 'x-stainless-lang': 'js', 'user-agent': 'AzureOpenAI/JS 6.49.0' })).toBe(false);
    expect(showsWholeBody({ 'x-stainless-lang': 'js', 'user-agent': 'Anthropic/JS 0.70.0' })).toBe(false);
    expect(showsWholeBody({ 'x-stainless-lang': 'js', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' })).toBe(false);
    expect(showsWholeBody({ 'x-stainless-lang': 'python', 'user-agent': 'OpenAI/Python 1.0.0' })).toBe(true);
    expect(showsWholeBody({ 'x-fern-language': 'JavaScript' })).toBe(true);
  });
});
