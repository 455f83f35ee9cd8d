// tapedeck serve used as a forward proxy (HTTP_PROXY / HTTPS_PROXY, curl -x): a CONNECT was
// dropped without a word ("Proxy CONNECT aborted"), and an absolute-form request went on to
// --upstream as `//host/path` and was recorded so. Both are answered 400 E_FORWARD_PROXY, saying
// to set the client's base URL to the proxy, and the proxy logs it.
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { forwardProxyError, isAbsoluteForm } from '../../src/proxy/server-forward.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-forward-'));
let upstream: Server;
const seen: string[] = [];
let proxy: ProxyServer;
const warnings: string[] = [];

/** Sends raw bytes to the proxy and reads all it answers until it closes. */
function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(proxy.port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (c) => (out += c.toString('utf8')));
    s.on('end', () => resolve(out));
    s.on('error', reject);
    setTimeout(() => {
      s.destroy();
      resolve(out);
    }, 3000);
  });
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  proxy = await startProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, tape: join(dir, 'fwd.tape'), mode: 'record', port: 0, onWarning: (m) => warnings.push(m) });
});
afterAll(async () => {
  await proxy.close();
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck serve taken for a forward proxy', () => {
  it('a CONNECT (HTTPS_PROXY) is answered 400 E_FORWARD_PROXY with how to point the client at the proxy, and logged', async () => {
    const answer = await raw('CONNECT api.groq.com:443 HTTP/1.1\r\nHost: api.groq.com:443\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toMatch(/x-tapedeck-error: E_FORWARD_PROXY/i);
    expect(answer).toContain('tapedeck serve is not a forward proxy');
    expect(answer).toContain(`base URL to the proxy instead, e.g. baseURL: '${proxy.url}`);
    expect(warnings.join('\n')).toMatch(/refused CONNECT api\.groq\.com:443 with 400 E_FORWARD_PROXY: not a forward proxy .*set its base URL to the proxy/);
  });

  it('an absolute-form request (HTTP_PROXY) is answered 400 in its provider shape, never sent upstream nor recorded', async () => {
    const body = '{"model":"m","messages":[{"role":"user","content":"fwd"}]}';
    const answer = await raw(`POST http://api.groq.example/openai/v1/chat/completions HTTP/1.1\r\nHost: api.groq.example\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
    expect(json.error.code).toBe('E_FORWARD_PROXY');
    expect(json.error.message).toContain(`baseURL: '${proxy.url}/openai/v1'`);
    expect(seen).toEqual([]);
    expect(proxy.handler.stats().recorded).toBe(0);
    expect(warnings.join('\n')).toContain('refused POST http://api.groq.example/openai/v1/chat/completions with 400 E_FORWARD_PROXY');
  });

  it('an ordinary request still goes through', async () => {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[{"role":"user","content":"hi"}]}' });
    expect(res.status).toBe(200);
    await res.text();
    expect(seen).toEqual(['POST /v1/chat/completions']);
  });

  it('isAbsoluteForm and the error', () => {
    expect(isAbsoluteForm('https://api.openai.com/v1/models')).toBe(true);
    expect(isAbsoluteForm('/v1/models')).toBe(false);
    expect(isAbsoluteForm('//host/v1/models')).toBe(false);
    expect(forwardProxyError('CONNECT', 'api.openai.com:443', 'http://127.0.0.1:8080').message).toMatch(/HTTPS_PROXY.*baseURL: 'http:\/\/127\.0\.0\.1:8080\/v1'/);
  });
});
