// A client that sends its request body slowly (1 byte a second) is cut once the request
// timeout passes (tapedeck serve --request-timeout, option requestTimeoutMs), as slow header
// senders are, instead of holding a socket for Node's 300 s default.
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
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

it('--request-timeout is parsed and checked', () => {
  expect(serveOptions(['--tape', 'a.tape', '--request-timeout', '5000']).requestTimeoutMs).toBe(5000);
  expect(() => serveOptions(['--tape', 'a.tape', '--request-timeout', 'soon'])).toThrow(/--request-timeout/);
});
