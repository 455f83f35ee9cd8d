// A realtime connect whose upstream cannot be reached, or refuses the handshake: the SDK shows
// only "Unexpected server response: 502" (or the upstream's status), so the proxy says on its
// warning channel (serve's stderr) which upstream URL failed and why, once per connect. Before,
// it said nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-upstream-down-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Connects and resolves with the HTTP status the handshake was answered with. */
function connect(proxyUrl: string): Promise<number | undefined> {
  return new Promise((r) => {
    const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
    ws.on('unexpected-response', (_q, res) => {
      res.resume();
      r(res.statusCode);
    });
    ws.on('error', () => r(undefined));
    ws.on('open', () => {
      ws.close();
      r(101);
    });
  });
}

describe('a realtime connect whose upstream cannot be reached', () => {
  it('is answered 502 and said on the warning channel with the upstream URL and the error, once per connect', async () => {
    const port = await closedPort();
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: `http://127.0.0.1:${port}`, tape: join(dir, 'down.tape'), mode: 'record', port: 0, onWarning: (w) => warnings.push(w) });
    try {
      expect(await connect(proxy.url)).toBe(502);
      expect(await connect(proxy.url)).toBe(502);
    } finally {
      await proxy.close();
    }
    const said = warnings.filter((w) => w.includes('realtime connect to the upstream'));
    expect(said).toHaveLength(2);
    expect(said[0]).toContain(`ws://127.0.0.1:${port}/v1/realtime failed: connect ECONNREFUSED`);
  });
});
