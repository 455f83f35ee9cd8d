// A store URL whose port is served by something that is not Redis (an HTTP server, an SSH
// daemon): the error said `Unknown RESP type 72 "H"` with the hint "Start Redis there", though
// something was running there. It says the service there is not Redis (an HTTP server, when its
// answer starts with HTTP/) and to check the port.
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { rejectedWith } from './setup.ts';

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

describe('a store URL whose port is not Redis', () => {
  const http = createHttpServer((_req, res) => res.end('hello'));
  // Talks first, as SSH does.
  const ssh = createServer((sock) => sock.end('SSH-2.0-OpenSSH_9.6\r\n'));
  let httpPort = 0;
  let sshPort = 0;
  beforeAll(async () => {
    httpPort = await listen(http);
    sshPort = await listen(ssh);
  });
  afterAll(() => {
    http.closeAllConnections();
    http.close();
    ssh.close();
  });

  it('an HTTP server: says it is HTTP, not Redis, and to check the port', async () => {
    const err = await rejectedWith(RedisRecords.open(`redis://127.0.0.1:${httpPort}/0`, { connect: { connectTimeoutMs: 1500 } }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(err.message).toContain(`the service at 127.0.0.1:${httpPort} answered as an HTTP server, not Redis`);
    expect(err.message).not.toContain('Unknown RESP type');
    expect(err.details.hint).toContain(`Check the port`);
    expect(err.details.hint).not.toContain('Start Redis there');
  });

  it('another service: says it is not Redis, with the first bytes it sent', async () => {
    const err = await rejectedWith(RedisRecords.open(`redis://127.0.0.1:${sshPort}/0`, { connect: { connectTimeoutMs: 1500 } }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(err.message).toContain(`the service at 127.0.0.1:${sshPort} answered something that is not Redis (its first bytes: "SSH-2.0-OpenSSH_9.6")`);
    expect(err.details.hint).toContain(`Check the port`);
    expect(err.details.hint).not.toContain('Start Redis there');
  });

  // A user trial: as a 503 the AI SDK retried it for about 6 s (any 5xx), and a vitest test
  // timed out before the error showed. No retry changes it: a 400, which no SDK retries.
  it('createFetch answers it with a 400, not a 503 an SDK would retry', async () => {
    const f = createFetch({ store: `redis://127.0.0.1:${httpPort}/0?namespace=nr`, mode: 'replay' });
    try {
      const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
      const body = (await r.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('E_STORE_UNAVAILABLE');
      expect(body.error.message).toContain('answered as an HTTP server, not Redis');
      expect(r.status).toBe(400);
    } finally {
      await f.close().catch(() => {});
    }
  });
});
