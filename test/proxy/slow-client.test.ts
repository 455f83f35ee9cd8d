// A client that sends its request body slowly is cut once the request timeout passes (tapedeck
// serve --request-timeout, option requestTimeoutMs), as slow header senders are, instead of
// holding a socket for Node's 300 s default; over HTTP/1.1 and cleartext HTTP/2 alike, and
// within a tenth of the timeout after it.
import { createServer } from 'node:http';
import { connect as h2connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requestCheckInterval, startProxy } from '../../src/proxy/server.ts';
import { serveOptions } from '../../src/proxy/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-slow-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a body sent at 1 byte/s is cut with 408 once the request timeout passes', async () => {
  const proxy = await startProxy({ tape: join(dir, 'slow.tape'), mode: 'replay', port: 0, requestTimeoutMs: 1500 });
  try {
    const t0 = Date.now();
    const answer = await new Promise<string>((resolve) => {
      const sock = connect(proxy.port, '127.0.0.1');
      let out = '';
      sock.on('data', (d) => (out += d.toString('latin1')));
      sock.on('close', () => resolve(out));
      sock.on('error', () => {});
      sock.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n');
      const drip = setInterval(() => (sock.destroyed ? clearInterval(drip) : sock.write('{')), 1000);
      setTimeout(() => sock.destroy(), 20_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - t0).toBeLessThan(8000);
  } finally {
    await proxy.close();
  }
}, 30_000);

describe('HTTP/1.1 and HTTP/2 get the same bound', () => {
  const TIMEOUT = 1500;
  // A body of 100 bytes dripped a byte every 200 ms: 20 s if nothing cuts it.
  const h1 = (port: number) =>
    new Promise<{ status: number; closed: boolean }>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      let out = '';
      sock.on('data', (d) => (out += d.toString('latin1')));
      sock.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(out)?.[1] ?? 0), closed: true }));
      sock.on('error', () => {});
      sock.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n');
      const drip = setInterval(() => (sock.destroyed ? clearInterval(drip) : sock.write('{')), 200);
      setTimeout(() => sock.destroy(), 20_000).unref();
    });
  const h2 = (url: string) =>
    new Promise<{ status: number; closed: boolean }>((resolve) => {
      const session = h2connect(url);
      session.on('error', () => {});
      const req = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', 'content-length': '100' });
      let status = 0;
      req.on('response', (h) => (status = Number(h[':status'])));
      req.on('error', () => {});
      req.resume();
      // The answer's end (or the stream's close): a client still holding its side open (Node's,
      // here, until its body is written) sees the end of the answer and the reset, not a close.
      const done = () => {
        clearInterval(drip);
        session.destroy();
        resolve({ status, closed: true });
      };
      req.once('end', done);
      req.once('close', done);
      const drip = setInterval(() => (req.destroyed || req.closed ? clearInterval(drip) : req.write('{')), 200);
      setTimeout(() => session.destroy(), 20_000).unref();
    });

  for (const [name, send] of [['HTTP/1.1', (p: { port: number; url: string }) => h1(p.port)], ['HTTP/2 (h2c)', (p: { port: number; url: string }) => h2(p.url)]] as const) {
    it(`${name}: a body still arriving at the request timeout gets 408 and its stream or connection is ended`, async () => {
      const proxy = await startProxy({ tape: join(dir, 'bound.tape'), mode: 'replay', port: 0, requestTimeoutMs: TIMEOUT });
      try {
        const t0 = performance.now();
        const r = await send(proxy);
        const took = performance.now() - t0;
        expect(r).toEqual({ status: 408, closed: true });
        expect(took).toBeGreaterThanOrEqual(TIMEOUT - 50);
        // The check interval late at most, with room for a shared machine.
        expect(took).toBeLessThan(TIMEOUT + requestCheckInterval(TIMEOUT) + 1500);
      } finally {
        await proxy.close();
      }
    }, 30_000);
  }

  it('an HTTP/2 request sent whole is not cut while its answer takes longer than the timeout', async () => {
    // An upstream that answers after twice the timeout: the timeout is for the request only.
    const upstream = createServer((req, res) => {
      req.resume();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'c', object: 'chat.completion', choices: [] })), 700);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const proxy = await startProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, tape: join(dir, 'late.tape'), mode: 'record', port: 0, requestTimeoutMs: 300 });
    const session = h2connect(proxy.url);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json' });
        req.on('response', (h) => resolve(Number(h[':status'])));
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'late' }] }));
      });
      expect(status).toBe(200);
    } finally {
      session.destroy();
      await proxy.close();
      upstream.close();
    }
  });

  it('the check interval is a tenth of the timeout, at most 1 s: the 120 s default is cut by 121 s', () => {
    expect(requestCheckInterval(120_000)).toBe(1000);
    expect(requestCheckInterval(1500)).toBe(150);
  });
});

it('--request-timeout is parsed and checked', () => {
  expect(serveOptions(['--tape', 'a.tape', '--request-timeout', '5000']).requestTimeoutMs).toBe(5000);
  expect(() => serveOptions(['--tape', 'a.tape', '--request-timeout', 'soon'])).toThrow(/--request-timeout/);
});
