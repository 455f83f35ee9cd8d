// An HTTP/1.0 client (curl -0, or nginx in front with its default `proxy_http_version 1.0`)
// asking for a streamed answer in record mode: HTTP/1.0 has no chunked encoding and so no
// trailers. The answer must reach the client (delimited by the connection's close) and be
// recorded, as over HTTP/1.1; only the `x-tapedeck-recorded` trailer cannot be sent.
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-http10-'));
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends one HTTP/1.0 request on a raw socket and returns everything the server sent before it closed. */
function http10(base: string, path: string, body: string): Promise<{ head: string; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname);
    const parts: Buffer[] = [];
    s.on('data', (b) => parts.push(b));
    s.on('error', reject);
    s.on('close', () => {
      const all = Buffer.concat(parts).toString('utf8');
      const cut = all.indexOf('\r\n\r\n');
      resolve(cut < 0 ? { head: all, body: '' } : { head: all.slice(0, cut), body: all.slice(cut + 4) });
    });
    s.write(`POST ${path} HTTP/1.0\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-test\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

describe('a streamed answer asked over HTTP/1.0 in record mode', () => {
  it('reaches the client whole, is recorded, and replays', async () => {
    const tape = join(dir, 'h10.tape');
    const warnings: string[] = [];
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'http10 stream' }] });
    const rec = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0, onWarning: (m) => warnings.push(m) });
    let got: { head: string; body: string };
    try {
      got = await http10(rec.url, '/v1/chat/completions', body);
      expect(rec.handler.stats()).toMatchObject({ recorded: 1, errors: 0 });
    } finally {
      await rec.close();
    }
    expect(warnings).toEqual([]);
    expect(got.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(got.head.toLowerCase()).not.toMatch(/\r\ntrailer:|\r\ntransfer-encoding: chunked/);
    expect(got.body).toContain('data: [DONE]');
    expect(upstream.calls).toHaveLength(1);

    const play = await startProxy({ upstream: 'http://127.0.0.1:9', tape, mode: 'replay', port: 0 });
    try {
      const again = await http10(play.url, '/v1/chat/completions', body);
      expect(again.head).toMatch(/^HTTP\/1\.1 200 /);
      expect(again.body).toBe(got.body);
    } finally {
      await play.close();
    }
    expect(upstream.calls).toHaveLength(1);
  });
});
