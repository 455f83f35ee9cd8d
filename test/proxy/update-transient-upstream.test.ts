// Update mode, a request with no recording, and an upstream that was reached but failed this once:
// it took the connection and dropped it without answering (a keep-alive race, a load balancer's
// reset), or it sent no headers within the idle timeout. That is the transient upstream failure
// record mode answers (a retryable 502 / 504 the SDK retries), not the final miss that says
// recording needs the network and a real API key: only an upstream that cannot be reached at all
// (or that refuses the key) is that miss.
import OpenAI from 'openai';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch, startProxy } from '../../src/proxy/index.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-update-transient-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const completion = (n: number) => ({
  id: `chatcmpl-${n}`,
  object: 'chat.completion',
  created: 1767225600,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
});

/**
 * A provider whose first answer fails as `first` says (the connection dropped once the request
 * is read, or no answer at all until the caller gives up) and which answers every later request.
 */
async function flaky(first: 'drop' | 'hang') {
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      n++;
      if (n === 1 && first === 'drop') return req.socket.destroy();
      if (n === 1) return; // no headers, ever: the caller's idle timeout ends it
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(n)));
    });
  });
  const up = await listenLoopback(server);
  return { ...up, requests: () => n };
}

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of France?' }] };

describe('update mode: an upstream reached that fails once is retried, not a miss', () => {
  it('createFetch: a connection dropped without an answer is a retryable 502; the SDK retry records the answer', async () => {
    const up = await flaky('drop');
    const tape = join(dir, 'drop.tape');
    try {
      const f = createFetch({ tape, mode: 'update', summary: false });
      const r = await new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-real', fetch: f, maxRetries: 2 }).chat.completions.create(ask);
      expect(r.choices[0]!.message.content).toBe('answer 2');
      expect(up.requests()).toBe(2);
      await f.close();
      const replay = createFetch({ tape, mode: 'replay', summary: false });
      const again = await new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-real', fetch: replay, maxRetries: 0 }).chat.completions.create(ask);
      expect(again.choices[0]!.message.content).toBe('answer 2');
      await replay.close();
    } finally {
      await up.close();
    }
  });

  it('createFetch: without retries the SDK sees the drop as an upstream failure it may retry, not the miss', async () => {
    const up = await flaky('drop');
    try {
      const f = createFetch({ tape: join(dir, 'drop-once.tape'), mode: 'update', summary: false });
      const err = (await new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-real', fetch: f, maxRetries: 0 }).chat.completions.create(ask).catch((e: unknown) => e)) as Error & { status: number; headers: Headers };
      expect(err.status).toBe(502);
      expect(err.headers.get('x-should-retry')).toBe('true');
      expect(err.message).toContain('closed the connection without answering');
      expect(err.message).not.toContain('needs the network and a real API key');
      await f.close();
    } finally {
      await up.close();
    }
  });

  it('the proxy: no headers within --idle-timeout is a retryable 504 naming the option; the SDK retry records the answer', async () => {
    const up = await flaky('hang');
    const tape = join(dir, 'idle.tape');
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'update', port: 0, idleTimeoutMs: 300 });
    try {
      const first = (await new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-real', maxRetries: 0 }).chat.completions.create(ask).catch((e: unknown) => e)) as Error & { status: number; headers: Headers };
      expect(first.status).toBe(504);
      expect(first.headers.get('x-should-retry')).toBe('true');
      expect(first.message).toContain('--idle-timeout');
      expect(first.message).not.toContain('needs the network and a real API key');
      const r = await new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-real', maxRetries: 2 }).chat.completions.create(ask);
      expect(r.choices[0]!.message.content).toBe('answer 2');
    } finally {
      await proxy.close();
      await up.close();
    }
  });

  it('createFetch: the idle timeout with SDK retries gets the answer on the retry', async () => {
    const up = await flaky('hang');
    try {
      const f = createFetch({ tape: join(dir, 'idle-fetch.tape'), mode: 'update', summary: false, idleTimeoutMs: 300 });
      const r = await new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-real', fetch: f, maxRetries: 2 }).chat.completions.create(ask);
      expect(r.choices[0]!.message.content).toBe('answer 2');
      expect(up.requests()).toBe(2);
      await f.close();
    } finally {
      await up.close();
    }
  });
});
