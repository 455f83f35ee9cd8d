// Realtime sessions that open the same way and are recorded at the same time keep the order in
// which their clients connected: the k-th connect of a replay gets the session of the k-th
// connect of the recording, whichever upstream handshake finished first. Before, a session's
// place was taken when its upstream WebSocket opened: the first client, whose upstream answered
// last, was stored second, and its replay got the second client's session (a miss naming a
// prompt it never sent). The real openai client, through the proxy over TLS, against the loopback
// fake of the Realtime API; the fake's first handshake is held back by a TCP relay in front of it.
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { openRealtime } from './ask.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

/**
 * A TCP relay to `port` that holds the first connection's bytes until `release()` is called:
 * the upstream handshake of the first session finishes after the second's.
 */
async function relay(port: number): Promise<{ url: string; connections: () => number; release: () => void; close: () => Promise<void> }> {
  let n = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const first = n++ === 0;
    const up = createConnection(port, '127.0.0.1');
    sockets.add(client).add(up);
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
    up.pipe(client);
    if (!first) client.pipe(up);
    else {
      client.pause();
      void released.then(() => {
        client.pipe(up);
        client.resume();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => n,
    release,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const session = (url: string) => openRealtime(url, tls.ca);

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
};

describe('realtime sessions recorded at the same time', () => {
  it('replay in the order their clients connected, not the order their upstreams opened', async () => {
    const fake = await startFakeRealtime();
    const front = await relay(Number(new URL(fake.url).port));
    const tape = join(dir, 'order.tape');
    const proxy = await startProxy({ upstream: front.url, tape, mode: 'record', port: 0, tls });
    try {
      const first = session(proxy.url);
      // The second connects once the first's upstream handshake is under way (and held).
      await until(() => front.connections() === 1);
      const second = session(proxy.url);
      await second.opened;
      front.release();
      await first.opened;
      const [a, b] = await Promise.all([first.ask('first caller'), second.ask('second caller')]);
      expect(a.transcript).toBe('You said: first caller');
      expect(b.transcript).toBe('You said: second caller');
    } finally {
      await proxy.close();
      await front.close();
      await fake.close();
    }

    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      const first = session(replay.url);
      await first.opened;
      const second = session(replay.url);
      await second.opened;
      const [a, b] = await Promise.all([first.ask('first caller'), second.ask('second caller')]);
      expect(a.errors).toEqual([]);
      expect(a.transcript).toBe('You said: first caller');
      expect(b.errors).toEqual([]);
      expect(b.transcript).toBe('You said: second caller');
    } finally {
      await replay.close();
    }
  });
});
