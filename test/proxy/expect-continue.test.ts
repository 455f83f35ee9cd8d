// A client that sends `Expect: 100-continue` waits for the server's word before it uploads its
// body. One that declares a body over the proxy's limit must hear 413 then, not 100 Continue
// followed by 413 after it has uploaded everything; a body within the limit is asked for.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-continue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sends a request head with Expect: 100-continue and no body; the first status line the server answers with. */
function firstAnswer(port: number, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`);
    });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => {
      text += c;
      const line = text.indexOf('\r\n');
      if (line >= 0) {
        socket.destroy();
        resolve(text.slice(0, line));
      }
    });
    socket.on('error', reject);
  });
}

describe('Expect: 100-continue', () => {
  it('a body declared over --max-body is refused with 413 before it is sent; one within it is asked for', async () => {
    const proxy = await startProxy({ tape: join(dir, 'continue.tape'), mode: 'replay', port: 0, maxBodyBytes: 1024 * 1024 });
    try {
      expect(await firstAnswer(proxy.port, 5 * 1024 * 1024)).toBe('HTTP/1.1 413 Payload Too Large');
      expect(await firstAnswer(proxy.port, 1000)).toBe('HTTP/1.1 100 Continue');
    } finally {
      await proxy.close();
    }
  });
});
