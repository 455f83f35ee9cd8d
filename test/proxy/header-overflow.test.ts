// A request whose headers are over Node's limit (16 KB: a large cookie, a long gateway header)
// got a bare `431` with no body from tapedeck serve, and nothing in its log: the user could not
// tell the proxy refused it, not the API, nor what to do. It is now said in the answer (JSON in
// the shape of the other errors) and once in the log; the connection still closes.
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/index.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('header-overflow');

/** A raw HTTP/1.1 exchange: status, headers and body. */
function send(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const r = request({ host: u.hostname, port: u.port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    r.on('error', reject);
    r.end(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
  });
}

describe('request headers over the limit', () => {
  it('get a 431 that says what was too large and what to do, and a line in the log', async () => {
    const warned: string[] = [];
    const proxy = await startProxy({ tape: join(suite.dir, 'h.tape'), mode: 'record', upstream: suite.upstream.url, port: 0, onWarning: (m) => warned.push(m) });
    try {
      const r = await send(proxy.url, { 'x-big': 'b'.repeat(20_000) });
      expect(r.status).toBe(431);
      expect(r.headers['x-tapedeck-error']).toBe('E_HEADERS_TOO_LARGE');
      const e = (JSON.parse(r.body) as { error: { code: string; message: string } }).error;
      expect(e.code).toBe('E_HEADERS_TOO_LARGE');
      expect(e.message).toMatch(/headers .*larger than .*16384 bytes/);
      expect(e.message).toContain('--max-http-header-size');
      expect(warned.join('\n')).toContain('E_HEADERS_TOO_LARGE');
      // Headers within the limit go on as before.
      expect((await send(proxy.url, { 'x-big': 'b'.repeat(1000) })).status).toBe(200);
    } finally {
      await proxy.close();
    }
  });
});
