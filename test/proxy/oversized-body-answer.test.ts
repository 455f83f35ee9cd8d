// A request body over the limit, from a client that writes its whole body before it reads the
// answer (Python's httpx and aiohttp): the proxy answered 413 at once and closed the connection,
// so the rest of the body hit a closed socket and the client got a broken pipe, never the 413
// and its hint. The rest is read and dropped first, then the 413 goes out.
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-oversized-'));
let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy({ tape: join(dir, 'x.tape'), mode: 'replay', port: 0, maxBodyBytes: 1024 * 1024, onWarning: () => {} });
});
afterAll(async () => {
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Writes a whole request without reading (the socket stays paused, as a client that reads only
 * once its body is out), then reads the answer: the write's error, if any, and what came back.
 */
function writeThenRead(request: Buffer): Promise<{ writeError?: string; answer: string }> {
  return new Promise((resolve) => {
    const s = connect(proxy.port, '127.0.0.1');
    s.pause();
    let writeError: string | undefined;
    let answer = '';
    s.on('error', (e: NodeJS.ErrnoException) => {
      writeError ??= e.code ?? e.message;
      resolve({ writeError, answer });
    });
    s.on('data', (c: Buffer) => (answer += c.toString('utf8')));
    s.on('end', () => resolve({ writeError, answer }));
    s.write(request, (err) => {
      if (err) return;
      s.resume();
    });
  });
}

const BODY = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'A'.repeat(8 * 1024 * 1024) }] }));

describe('a request body over maxBodyBytes', () => {
  it('with a content-length: the client that writes it all first reads 413 E_BODY_TOO_LARGE', async () => {
    const head = Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n`);
    const { writeError, answer } = await writeThenRead(Buffer.concat([head, BODY]));
    expect(writeError).toBeUndefined();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('E_BODY_TOO_LARGE');
    expect(answer).toContain('--max-body');
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it('sent chunked: the same', async () => {
    const head = Buffer.from('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunks: Buffer[] = [head];
    for (let i = 0; i < BODY.length; i += 65536) {
      const c = BODY.subarray(i, i + 65536);
      chunks.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from('0\r\n\r\n'));
    const { writeError, answer } = await writeThenRead(Buffer.concat(chunks));
    expect(writeError).toBeUndefined();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('E_BODY_TOO_LARGE');
  });

  it('asked with Expect: 100-continue: 413 at once, and no body is waited for', async () => {
    const t0 = performance.now();
    const answer = await new Promise<string>((resolve) => {
      const s = connect(proxy.port, '127.0.0.1', () => s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\nExpect: 100-continue\r\n\r\n`));
      let out = '';
      s.on('data', (c: Buffer) => (out += c.toString('utf8')));
      s.on('end', () => resolve(out));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
