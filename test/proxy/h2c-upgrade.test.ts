// A plain-http request that offers an upgrade to HTTP/2 (`Connection: Upgrade, HTTP2-Settings`,
// `Upgrade: h2c`), as Java's java.net.http.HttpClient sends every request by default and
// `curl --http2` does: tapedeck serve answered it 404 with an empty body (its WebSocket path took
// it), so nothing was recorded and every call failed. It is answered in HTTP/1.1 like the same
// request without the offer, recorded, and replayed with the upstream gone; over --tls too.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { asksWebSocket, headWithoutOffer } from '../../src/proxy/server-upgrade.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-h2c-'));
let upstream: Server;
let upstreamUrl = '';
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  let n = 0;
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      n++;
      const answer = req.url === '/v1/models' ? `{"object":"list","data":[{"id":"m${n}"}]}` : `{"id":"chatcmpl-${n}","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"answer ${n}"},"finish_reason":"stop"}]}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads HTTP/1.1 answers with a content-length off a socket, one per call, in order. */
function answers(socket: Socket): () => Promise<Answer> {
  let buf = Buffer.alloc(0);
  const waiting: (() => void)[] = [];
  socket.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    waiting.splice(0).forEach((w) => w());
  });
  socket.on('close', () => waiting.splice(0).forEach((w) => w()));
  return async () => {
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const length = Number(headers['content-length'] ?? 0);
        if (buf.length >= end + 4 + length) {
          const body = buf.subarray(end + 4, end + 4 + length).toString('utf8');
          buf = buf.subarray(end + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), headers, body };
        }
      }
      if (socket.destroyed) throw new Error(`connection closed; got: ${buf.toString('latin1')}`);
      await new Promise<void>((r) => waiting.push(r));
    }
  };
}

const chat = (text: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

/** A request as Java's HttpClient sends it over http:// (its default version is HTTP_2). */
function h2cOffer(method: string, path: string, body = ''): string {
  return (
    `${method} ${path} HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nContent-Length: ${Buffer.byteLength(body)}\r\nHost: 127.0.0.1\r\n` +
    `HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\nUpgrade: h2c\r\nUser-Agent: Java-http-client/17.0.15\r\nContent-Type: application/json\r\n\r\n${body}`
  );
}

describe('a request offering Upgrade: h2c', () => {
  it('is recorded and answered in HTTP/1.1, keeps its connection, and replays with the upstream gone', async () => {
    const tape = join(dir, 'h2c.tape');
    const rec = await startProxy({ upstream: upstreamUrl, tape, mode: 'record', port: 0, onWarning: () => {} });
    const socket = connectTcp(rec.port, '127.0.0.1');
    const next = answers(socket);
    await new Promise((r) => socket.once('connect', r));
    // The body split from its head, as a client writing them apart does.
    const offer = h2cOffer('POST', '/v1/chat/completions', chat('hello from java'));
    socket.write(offer.slice(0, offer.indexOf('\r\n\r\n') + 10));
    await new Promise((r) => setTimeout(r, 20));
    socket.write(offer.slice(offer.indexOf('\r\n\r\n') + 10));
    const first = await next();
    expect(first.status).toBe(200);
    expect(first.headers['x-tapedeck-match']).toBe('recorded');
    expect(first.body).toContain('answer 1');
    // The upstream got the request without the offer.
    expect(seen.at(-1)!.headers.upgrade).toBeUndefined();
    expect(seen.at(-1)!.headers['http2-settings']).toBeUndefined();
    expect(seen.at(-1)!.body).toBe(chat('hello from java'));
    // The same connection takes the next request (Java offers on each one), and a GET.
    socket.write(h2cOffer('GET', '/v1/models'));
    const second = await next();
    expect([second.status, second.headers['x-tapedeck-match']]).toEqual([200, 'recorded']);
    expect(second.body).toContain('"m2"');
    socket.destroy();
    const t0 = performance.now();
    await rec.close();
    // Nothing of the declined upgrade holds the shutdown.
    expect(performance.now() - t0).toBeLessThan(1500);

    await new Promise((r) => upstream.close(r));
    const rep = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      const s2 = connectTcp(rep.port, '127.0.0.1');
      const again = answers(s2);
      s2.write(h2cOffer('POST', '/v1/chat/completions', chat('hello from java')) + h2cOffer('GET', '/v1/models'));
      const a = await again();
      const b = await again();
      expect([a.status, a.headers['x-tapedeck-match'], a.body]).toEqual([200, 'exact', first.body]);
      expect([b.status, b.headers['x-tapedeck-match'], b.body]).toEqual([200, 'exact', second.body]);
      s2.destroy();
    } finally {
      await rep.close();
    }
  });

  it('is answered in HTTP/1.1 over --tls too', async () => {
    const tls = await makeLocalCertificate();
    const proxy = await startProxy({ tape: join(dir, 'tls.tape'), mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const socket = connectTls({ port: proxy.port, host: '127.0.0.1', ca: tls.ca, servername: 'localhost' });
      const next = answers(socket);
      await new Promise((r) => socket.once('secureConnect', r));
      socket.write(h2cOffer('POST', '/v1/chat/completions', chat('over tls')));
      const a = await next();
      // A miss (the tape is empty), in the OpenAI shape: the request reached the proxy.
      expect(a.status).toBe(400);
      expect(a.headers['x-tapedeck-error']).toBe('E_MISS');
      socket.destroy();
    } finally {
      await proxy.close();
    }
  });

  it('takes the offer out of the request head and nothing else', () => {
    const head = headWithoutOffer({
      method: 'POST',
      url: '/v1/chat/completions?x=1',
      httpVersion: '1.1',
      rawHeaders: ['Host', 'h', 'Connection', 'keep-alive, Upgrade, HTTP2-Settings', 'HTTP2-Settings', 'AAA', 'Upgrade', 'h2c', 'X-Title', 'Caf\u00e9'],
    });
    expect(head.toString('latin1')).toBe('POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\nX-Title: Caf\u00e9\r\n\r\n');
    expect(asksWebSocket({ headers: { upgrade: 'WebSocket' } })).toBe(true);
    expect(asksWebSocket({ headers: { upgrade: 'h2c' } })).toBe(false);
  });
});
