/**
 * The standalone proxy server behind `tapedeck serve`: node:http around createHandler, bound to
 * loopback by default, with a shutdown that lets in-flight requests finish and closes the tape.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHandler, type HandlerOptions, type TapedeckHandler } from './handler.ts';

export interface ServeOptions extends HandlerOptions {
  /** Port to listen on (default 8080; 0 picks a free one). */
  port?: number;
  /** Interface to bind (default 127.0.0.1: recordings and live keys are not for the network). */
  host?: string;
  /**
   * Longest time a client may take to send its whole request, headers and body (default
   * 120 000 ms): a client that trickles its body is answered 408 and cut, instead of holding a
   * socket for Node's 300 s default (tapedeck serve --request-timeout).
   */
  requestTimeoutMs?: number;
}

/** Default of {@link ServeOptions.requestTimeoutMs}. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export interface ProxyServer {
  readonly server: Server;
  readonly handler: TapedeckHandler;
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, finishes in-flight requests, writes the tape, closes. */
  close(): Promise<void>;
}

/**
 * Starts the proxy. Resolves once the tape is open and the port is bound; rejects with the
 * tape's error or the listen error (EADDRINUSE...).
 *
 * @example
 * const proxy = await startProxy({ upstream: 'https://api.openai.com', tape: 'app.tape', mode: 'record', port: 0 })
 * const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey })
 * await proxy.close()
 */
export async function startProxy(opts: ServeOptions): Promise<ProxyServer> {
  const handler = createHandler(opts);
  await handler.ready;
  const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // Node checks the request timeout on this interval: a fraction of it, so the cut comes on time.
  const server = createServer(
    { keepAliveTimeout: 65_000, requestTimeout, headersTimeout: Math.min(60_000, requestTimeout), connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(requestTimeout / 4))) },
    handler,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8080, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    handler,
    port: addr.port,
    url: `http://${host}:${addr.port}`,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        await handler.close();
        // Keep-alive connections that carried the last requests are idle now.
        server.closeIdleConnections();
        // A client that holds its connection open after its last answer does not keep us up.
        const grace = setTimeout(() => server.closeAllConnections(), 2000);
        await closed;
        clearTimeout(grace);
      })();
      return closing;
    },
  };
}
