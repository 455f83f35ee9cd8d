// `--upstream 'https://gateway.example/base?api_key=KEY'`: the client's path goes after the
// upstream's path, the upstream's query stays a query; and a key in that query is the proxy's own
// credential as much as `user:password@` is, so it is not served beyond loopback either.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { upstreamUrl } from '../../src/proxy/upstream.ts';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe('an upstream with a query', () => {
  it("joins the client's path to the upstream's path and keeps both queries", () => {
    expect(upstreamUrl('http://gw.example/base?api_key=K1', '/v1/echo')).toBe('http://gw.example/base/v1/echo?api_key=K1');
    expect(upstreamUrl('http://gw.example/?api_key=K1', '/v1/echo?stream=1')).toBe('http://gw.example/v1/echo?stream=1&api_key=K1');
    expect(upstreamUrl('http://gw.example?api_key=K1', '/v1/echo')).toBe('http://gw.example/v1/echo?api_key=K1');
    expect(upstreamUrl('http://gw.example/base/', '/v1/echo?a=1')).toBe('http://gw.example/base/v1/echo?a=1');
  });

  it('forwards a request to the joined URL', async () => {
    const seen: string[] = [];
    const up = createServer((req: IncomingMessage, res) => {
      seen.push(req.url!);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => up.close(() => r())));
    const proxy: ProxyServer = await startProxy({ upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}/base?api_key=QkeySecretValue1234567`, mode: 'passthrough', port: 0, onWarning: () => {} });
    closers.push(() => proxy.close());
    const res = await fetch(`${proxy.url}/v1/echo?x=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
    await res.text();
    expect(seen).toEqual(['/base/v1/echo?x=1&api_key=QkeySecretValue1234567']);
  });

  it('refuses to serve a key in the query beyond loopback', async () => {
    await expect(startProxy({ upstream: 'http://127.0.0.1:9/base?api_key=QkeySecretValue1234567', mode: 'passthrough', host: '0.0.0.0', port: 0 })).rejects.toMatchObject({ code: 'E_ARG' });
    await expect(startProxy({ upstream: 'http://127.0.0.1:9/?token=abc', mode: 'passthrough', host: '0.0.0.0', port: 0 })).rejects.toThrow(/credentials/);
  });
});
