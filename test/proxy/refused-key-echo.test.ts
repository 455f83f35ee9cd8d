// Update mode, a request with no recording that the provider refuses (401): the miss quotes the
// provider's message, and some providers and gateways repeat the key they were sent in it. That
// quote goes to the client's error, to createFetch's summary and to tapedeck serve's miss line on
// stderr (a CI log), so it is masked as a recorded answer is: credential formats, and the values
// of the request's own secret headers.
import OpenAI from 'openai';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch, startProxy } from '../../src/proxy/index.ts';
import { listenLoopback } from './fake-upstream.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('refused-key-echo');
const KEY = 'sk-proj-Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9bN2mQ';
const GATEWAY_KEY = 'gw5Kq8Zt3Lm9Pw2RvX4n';

async function recorded(name: string): Promise<string> {
  const tape = join(suite.dir, name);
  const rec = createFetch({ tape, mode: 'record' });
  await new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-real', fetch: rec }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
  await rec.close();
  return tape;
}

/** A provider that refuses every key, repeating the bearer token and the gateway header it got. */
async function echoingRefusal() {
  return listenLoopback(
    createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Invalid API key: ${req.headers.authorization} (gateway key ${req.headers['x-api-key']})`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    }),
  );
}

const changed = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of Spain?' }] };

describe('a refused key quoted by an update-mode miss', () => {
  it('createFetch: the miss and the summary hold no key', async () => {
    const tape = await recorded('fetch.tape');
    const refusing = await echoingRefusal();
    const lines: string[] = [];
    try {
      const f = createFetch({ tape, mode: 'update', summary: (t) => lines.push(t) });
      const client = new OpenAI({ baseURL: `${refusing.url}/v1`, apiKey: KEY, fetch: f, maxRetries: 0, defaultHeaders: { 'x-api-key': GATEWAY_KEY } });
      const err = (await client.chat.completions.create(changed).catch((e: unknown) => e)) as Error & { status: number; error: unknown };
      await f.close();
      expect(err.status).toBe(400);
      expect(err.message).toContain('the upstream refused the API key (401: Invalid API key: [REDACTED');
      const seen = `${err.message}\n${JSON.stringify(err.error)}\n${lines.join('\n')}`;
      expect(seen).not.toContain(KEY.slice(8, 20));
      expect(seen).not.toContain(GATEWAY_KEY.slice(0, 12));
    } finally {
      await refusing.close();
    }
  });

  it('tapedeck serve: its miss line and the answer hold no key', async () => {
    const tape = await recorded('serve.tape');
    const refusing = await echoingRefusal();
    const logged: string[] = [];
    const proxy = await startProxy({ tape, mode: 'update', upstream: refusing.url, port: 0, onMiss: (line) => logged.push(line) });
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: KEY, maxRetries: 0, defaultHeaders: { 'x-api-key': GATEWAY_KEY } });
      const err = (await client.chat.completions.create(changed).catch((e: unknown) => e)) as Error & { status: number; error: unknown };
      expect(err.status).toBe(400);
      expect(logged.join('\n')).toContain('the upstream refused the API key (401: Invalid API key: [REDACTED');
      const seen = `${err.message}\n${JSON.stringify(err.error)}\n${logged.join('\n')}`;
      expect(seen).not.toContain(KEY.slice(8, 20));
      expect(seen).not.toContain(GATEWAY_KEY.slice(0, 12));
    } finally {
      await proxy.close();
      await refusing.close();
    }
  });
});
