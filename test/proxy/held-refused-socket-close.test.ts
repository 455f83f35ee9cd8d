// A client that keeps its socket open after tapedeck serve refused it: a WebSocket upgrade to a
// path with no realtime route (404), a CONNECT (400 E_FORWARD_PROXY). node:http's close() does
// end such a socket (it handed it over) but waits for it, so close() waited until the client hung
// up, however long: Ctrl-C or a CI job's SIGTERM did not exit. They are ended after the 2 s grace
// a keep-alive connection held after its last answer gets.
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-held-socket-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sends a request, reads the first bytes of the answer, and keeps the socket open. */
function askAndHold(port: number, text: string): Promise<{ socket: Socket; first: string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    // allowHalfOpen: the client does not end its side when the proxy ends its own (a Python
    // socket, a client holding it in a pool); only a close from the proxy ends it.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(text));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('data', (c: Buffer) => resolve({ socket, first: c.toString('latin1'), closed }));
    socket.on('error', reject);
  });
}

describe('close() with a refused socket still held by its client', () => {
  it('ends it after the grace period instead of waiting for the client', async () => {
    const proxy = await startProxy({ tape: join(dir, 'x.tape'), mode: 'replay', port: 0, onWarning: () => {} });
    const ws = await askAndHold(proxy.port, 'GET /v1/not-realtime HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    const tunnel = await askAndHold(proxy.port, 'CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n');
    expect(ws.first).toMatch(/^HTTP\/1\.1 404 /);
    expect(tunnel.first).toMatch(/^HTTP\/1\.1 400 /);
    const t0 = performance.now();
    const closed = await Promise.race([proxy.close().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 6000))]);
    const took = performance.now() - t0;
    ws.socket.destroy();
    tunnel.socket.destroy();
    if (!closed) await proxy.close();
    expect(closed).toBe(true);
    // The 2 s grace for connections held after their last answer, as for keep-alive ones.
    expect(took).toBeLessThan(4000);
    await Promise.all([ws.closed, tunnel.closed]);
  }, 15_000);
});
