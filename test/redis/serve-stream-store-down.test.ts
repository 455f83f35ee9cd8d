// The proxy in record mode with its Redis store gone: a streamed answer whose record fails
// before anything of it went out (the stream came in one read, its final event held for the
// record) got a bare dropped connection (curl: "Empty reply from server"; the SDK:
// APIConnectionError), while a plain answer got 503 E_RECORD_FAILED. It gets the same 503, in
// the provider's error shape. A stream whose head is already out is still cut (docs/modes.md
// rule 17), never ended cleanly.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const events = (n: number) => [
  `data: ${JSON.stringify({ id: `c${n}`, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] })}\n\n`,
  `data: ${JSON.stringify({ id: `c${n}`, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  'data: [DONE]\n\n',
];

redisDescribe('tapedeck serve (record) with Redis gone: a streamed answer', () => {
  const redis = useRedis();
  let upstream: Server;
  let upstreamUrl = '';
  let n = 0;
  beforeAll(async () => {
    // /v1/chat/completions: the whole stream in one write; /slow/v1/chat/completions: event by event.
    upstream = createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const ev = events(++n);
        if (!req.url!.startsWith('/slow/')) return res.end(ev.join(''));
        for (const e of ev) {
          res.write(e);
          await new Promise((r) => setTimeout(r, 30));
        }
        res.end();
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

  const ask = (base: string, path: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: `q${Math.random()}` }] }) });

  it('nothing sent yet: 503 in the provider error shape, not a dropped connection; a stream already started is cut', async () => {
    const warnings: string[] = [];
    const proxy = await startProxy({ store: `${redis.current.url}?namespace=${freshNamespace('serve-stream')}`, mode: 'record', upstream: upstreamUrl, port: 0, onWarning: (m) => warnings.push(m) });
    try {
      const first = await ask(proxy.url, '/v1/chat/completions');
      expect(first.status).toBe(200);
      expect(await first.text()).toContain('[DONE]');
      await redis.current.kill();

      const res = await ask(proxy.url, '/v1/chat/completions');
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error?: { message?: string } };
      expect(res.headers.get('x-tapedeck-error')).toBe('E_RECORD_FAILED');
      expect(body.error?.message).toContain('could not be recorded');

      // Upstream events arrive one by one: the head went out with the first, so the failure
      // can only cut the stream (no clean end, no [DONE]).
      const slow = await ask(`${proxy.url}/slow`, '/v1/chat/completions').catch((e: Error) => e);
      if (slow instanceof Response) {
        expect(slow.status).toBe(200);
        const read = await slow.text().then((t) => t, (e: Error) => e);
        expect(read instanceof Error || !read.includes('[DONE]')).toBe(true);
      }
    } finally {
      await proxy.close().catch(() => {});
      await redis.current.restart();
    }
  }, 60_000);
});
