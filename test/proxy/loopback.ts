// A fake provider's server on 127.0.0.1 and a free port: each request's body read whole and kept
// in `calls`, a per-server call counter for answers that tell a live call from a replay, and a
// close() that drops open (keep-alive, streaming) connections.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeCall {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FakeServer {
  url: string;
  /** Requests received, in order. */
  calls: FakeCall[];
  close(): Promise<void>;
}

/** Starts a fake on 127.0.0.1, port 0; `handle` answers each request, given its body text and its number (from 1). */
export async function startFake(handle: (req: IncomingMessage, res: ServerResponse, body: string, count: number) => unknown): Promise<FakeServer> {
  const calls: FakeCall[] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = Buffer.concat(parts).toString('utf8');
    calls.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    await handle(req, res, body, ++n);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
