// Update mode with recordErrors: a transient error (a 429) is recorded, and the SDK's retry of
// the same request came back to the tape, which answered it with that 429 again ("a request asked
// again in the run replays the answer recorded first"): the retries never reached the API, the
// call failed in the run that records it, and its replay served the 429 forever. A retry past an
// error recording goes to the API again, so the answer the retry got is recorded after it.
import OpenAI from 'openai';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch, startProxy } from '../../src/proxy/index.ts';
import { listenLoopback } from './fake-upstream.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('update-retry-after-error');
let api: Awaited<ReturnType<typeof listenLoopback>>;
/** Calls per prompt: the first of each is refused with a rate limit, the next ones answered. */
const calls = new Map<string, number>();

beforeAll(async () => {
  api = await listenLoopback(
    createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const prompt = (JSON.parse(body) as { messages: { content: string }[] }).messages[0]!.content;
        const n = (calls.get(prompt) ?? 0) + 1;
        calls.set(prompt, n);
        if (n === 1) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '1' });
          res.end(JSON.stringify({ error: { message: 'Rate limit reached for gpt-4o-mini', type: 'requests', code: 'rate_limit_exceeded' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${prompt}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
      });
    }),
  );
});
afterAll(() => api.close());

const ask = (client: OpenAI, prompt: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }] });

describe('update mode, recordErrors, a retried rate limit', () => {
  it('createFetch: the retry reaches the API and both answers are recorded, in order', async () => {
    const tape = join(suite.dir, 'fetch.tape');
    const f = createFetch({ tape, mode: 'update', recordErrors: true, summary: false });
    const r = await ask(new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', fetch: f, maxRetries: 2 }), 'fetch prompt');
    expect(r.choices[0]!.message.content).toBe('answer to fetch prompt');
    expect(calls.get('fetch prompt')).toBe(2);
    await f.close();
    // Replayed: the 429 first, then the answer its retry got.
    const replay = createFetch({ tape, mode: 'replay', summary: false });
    const seen: number[] = [];
    const counting = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await replay(input, init);
      seen.push(res.status);
      return res;
    }) as typeof fetch;
    const again = await ask(new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', fetch: counting, maxRetries: 2 }), 'fetch prompt');
    expect(again.choices[0]!.message.content).toBe('answer to fetch prompt');
    expect(seen).toEqual([429, 200]);
    await replay.close();
  });

  it('tapedeck serve: the same', async () => {
    const tape = join(suite.dir, 'serve.tape');
    const proxy = await startProxy({ tape, mode: 'update', recordErrors: true, upstream: api.url, port: 0 });
    try {
      const r = await ask(new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 2 }), 'serve prompt');
      expect(r.choices[0]!.message.content).toBe('answer to serve prompt');
      expect(calls.get('serve prompt')).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
