// A proxy whose upstream URL carries its own credentials (`http://user:pw@gateway`, `?api_key=`)
// is on loopback only, but any web page can make the user's browser reach loopback (a no-cors
// POST, or a DNS-rebound name). Requests from another origin, or naming a Host that is not the
// proxy's, are refused before anything goes upstream; SDKs and curl send no Origin and go on.
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A provider stand-in that answers every request and notes what it saw. */
async function fakeUpstream(): Promise<{ port: number; seen: { url: string; authorization?: string }[] }> {
  const seen: { url: string; authorization?: string }[] = [];
  const up = createServer((req: IncomingMessage, res) => {
    seen.push({ url: req.url!, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"x","object":"chat.completion","choices":[]}');
    });
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => up.close(() => r())));
  return { port: (up.address() as AddressInfo).port, seen };
}

/** A POST to the proxy with exactly these headers (node:http lets a test set Host, as a rebound browser does). */
function post(proxy: ProxyServer, path: string, headers: Record<string, string>): Promise<{ status: number; error?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxy.port, path, method: 'POST', headers: { 'content-type': 'text/plain', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, ...(typeof res.headers['x-tapedeck-error'] === 'string' ? { error: res.headers['x-tapedeck-error'] } : {}) }));
    });
    req.on('error', reject);
    req.end('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}');
  });
}

async function lendingProxy(upstream: (port: number) => string) {
  const up = await fakeUpstream();
  const proxy = await startProxy({ upstream: upstream(up.port), mode: 'passthrough', port: 0, onWarning: () => {} });
  closers.push(() => proxy.close());
  return { proxy, seen: up.seen };
}

describe('a proxy with credentials of its own', () => {
  it('refuses a page of another origin, and sends nothing upstream', async () => {
    const { proxy, seen } = await lendingProxy((p) => `http://gwuser:GwPassw0rdSecret99@127.0.0.1:${p}`);
    const r = await post(proxy, '/v1/chat/completions', { origin: 'http://localhost:47832', host: `127.0.0.1:${proxy.port}` });
    expect(r.status).toBe(403);
    expect(r.error).toBe('E_FOREIGN_ORIGIN');
    expect(r.body).toContain('http://localhost:47832');
    const s = await post(proxy, '/v1/chat/completions', { 'sec-fetch-site': 'cross-site', host: `127.0.0.1:${proxy.port}` });
    expect(s.status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('refuses a Host that is not its own (a DNS-rebound name)', async () => {
    const { proxy, seen } = await lendingProxy((p) => `http://gwuser:GwPassw0rdSecret99@127.0.0.1:${p}`);
    const r = await post(proxy, '/v1/echo', { host: 'evil.attacker.example', origin: 'http://evil.attacker.example' });
    expect(r.status).toBe(403);
    expect(r.error).toBe('E_FOREIGN_ORIGIN');
    const h = await post(proxy, '/v1/echo', { host: `evil.attacker.example:${proxy.port}` });
    expect(h.status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('refuses them for a key in the upstream query too', async () => {
    const { proxy, seen } = await lendingProxy((p) => `http://127.0.0.1:${p}/?api_key=QkeySecretValue1234567`);
    const r = await post(proxy, '/v1/chat/completions', { origin: 'http://localhost:47832', host: `127.0.0.1:${proxy.port}` });
    expect(r.status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('refuses a WebSocket upgrade from a page of another origin', async () => {
    const { proxy, seen } = await lendingProxy((p) => `http://gwuser:GwPassw0rdSecret99@127.0.0.1:${p}`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: proxy.port, path: '/v1/realtime?model=gpt-realtime', headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', origin: 'http://evil.attacker.example' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(seen).toEqual([]);
  });

  it('serves clients that send no Origin, and pages of its own origin', async () => {
    const { proxy, seen } = await lendingProxy((p) => `http://gwuser:GwPassw0rdSecret99@127.0.0.1:${p}`);
    expect((await post(proxy, '/v1/chat/completions', { host: `127.0.0.1:${proxy.port}` })).status).toBe(200);
    expect((await post(proxy, '/v1/chat/completions', { host: `localhost:${proxy.port}` })).status).toBe(200);
    expect((await post(proxy, '/v1/chat/completions', { host: `127.0.0.1:${proxy.port}`, origin: `http://127.0.0.1:${proxy.port}`, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect(seen.map((x) => x.authorization)).toEqual(['Basic Z3d1c2VyOkd3UGFzc3cwcmRTZWNyZXQ5OQ==', 'Basic Z3d1c2VyOkd3UGFzc3cwcmRTZWNyZXQ5OQ==', 'Basic Z3d1c2VyOkd3UGFzc3cwcmRTZWNyZXQ5OQ==']);
  });

  it('leaves a proxy without credentials of its own as it was', async () => {
    const { proxy, seen } = await lendingProxy((p) => `http://127.0.0.1:${p}`);
    expect((await post(proxy, '/v1/chat/completions', { origin: 'http://localhost:47832', host: `127.0.0.1:${proxy.port}` })).status).toBe(200);
    expect(seen).toHaveLength(1);
  });
});
