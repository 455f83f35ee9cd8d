/**
 * The standalone proxy server behind `tapedeck serve`: node:http around createHandler, bound to
 * loopback by default, with a shutdown that lets in-flight requests finish and closes the tape.
 * The same port speaks cleartext HTTP/2 to clients that open with its preface (prior knowledge,
 * as the AWS SDK's default HTTP/2 handler does for an http:// endpoint).
 */
import { existsSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { constants as h2constants, createServer as createHttp2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { TapedeckError } from '../errors.ts';
import { HANDLER_OPTION_NAMES, handlerFor, type HandlerOptions, type TapedeckHandler } from './handler.ts';
import { DECK_OPTION_NAMES, DEFAULT_MAX_BODY_BYTES } from './deck.ts';
import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import { REDACT_INNER } from '../store/redact-options.ts';
import { redactor } from '../store/redact.ts';
import { tapeTarget } from '../store/tape-target.ts';
import { lendsCredentials, refuseLentCredentials } from './lend-guard.ts';
import { refuseForeign, refuseForeignUpgrade } from './server-origin.ts';
import { checkPair, type TlsMaterial } from './tls.ts';
import { ForwardRefusal, isAbsoluteForm } from './server-forward.ts';
import { asksWebSocket, declineUpgrade } from './server-upgrade.ts';
import { clientErrorAnswer } from './client-error.ts';

// RFC 9113 section 3.4: a client with prior knowledge opens with these 24 bytes. No HTTP/1.x
// request starts with them ("PRI" is no method anyone sends).
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * Routes each connection of `server` by its first bytes: the HTTP/2 preface goes to `h2`,
 * anything else to node:http's own connection listener (so its parser, timeouts and
 * closeIdleConnections work as before). Returns the sockets still being told apart, which
 * close() must end itself (neither server knows them yet).
 */
function acceptHttp2(server: Server, h2: Http2Server, firstByteTimeoutMs: number, onTls: () => void): Set<Socket> {
  const http1 = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const undecided = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    undecided.add(socket);
    let seen: Buffer | undefined;
    const onError = () => socket.destroy();
    // Neither server times this socket out before it is theirs: a client that connects and
    // sends nothing is cut after the headers timeout, as node:http would cut it.
    socket.setTimeout(firstByteTimeoutMs, onError);
    const onData = (chunk: Buffer) => {
      seen = seen ? Buffer.concat([seen, chunk]) : chunk;
      const n = Math.min(seen.length, PREFACE.length);
      const h2ish = seen.compare(PREFACE, 0, n, 0, n) === 0;
      if (h2ish && seen.length < PREFACE.length) return; // a preface cut across packets
      // A TLS handshake record (a ClientHello) on the plain port: a client told https: or wss:
      // (OpenAI's Node realtime clients force wss:). The HTTP parser would only see garbage and
      // the client a handshake error: said once, where the user looks.
      if (seen[0] === 0x16 && (seen.length < 2 || seen[1] === 0x03)) {
        onTls();
        socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      socket.setTimeout(0, onError);
      undecided.delete(socket);
      // Put the bytes back and hand over the socket paused, so nothing flows to no listener.
      // The HTTP/2 session reads what is buffered itself, then takes the socket's handle; the
      // HTTP/1.1 parser gets the bytes from its 'data' listener once the socket flows again.
      socket.pause();
      socket.unshift(seen);
      if (h2ish) h2.emit('connection', socket);
      else {
        for (const l of http1) l.call(server, socket);
        socket.resume();
      }
    };
    const onClose = () => undecided.delete(socket);
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
  });
  return undecided;
}

/**
 * How often the request timeout is checked (node:http's connectionsCheckingInterval, and the same
 * for HTTP/2): a tenth of the timeout, at most a second, so a slow request is cut at most that
 * late (Node's default, 30 s, made a 120 s timeout up to 150 s). One pass over the open
 * connections a second costs nothing next to the requests themselves.
 */
export function requestCheckInterval(requestTimeoutMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(requestTimeoutMs / 10)));
}

/**
 * The request timeout for HTTP/2 streams, which node:http2 does not have: a stream whose client
 * has not ended its request (its body) `timeoutMs` after it opened is answered 408 and reset with NO_ERROR
 * (RFC 9113 §8.1: a complete answer, and the client may stop sending), as node:http answers an
 * HTTP/1.1 request. Checked every `everyMs` over the open streams, one timer for all of them, as
 * node:http checks its connections.
 */
function http2RequestTimeout(timeoutMs: number, everyMs: number) {
  const open = new Map<Http2ServerRequest, { res: Http2ServerResponse; since: number }>();
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [req, { res, since }] of open) {
      if (now - since < timeoutMs) continue;
      open.delete(req);
      const stream = res.stream;
      // Whether the client ended its side (END_STREAM), read or not: the handler may not have
      // consumed all of it yet, and a request it has is never cut for a slow answer.
      if (stream.destroyed || stream.state.remoteClose) continue;
      if (res.headersSent) {
        // As node:http ends the connection of a request still arriving after its answer began.
        stream.close(h2constants.NGHTTP2_CANCEL);
        continue;
      }
      res.writeHead(408, { 'content-length': 0 });
      // The reset once the answer is out: sent at once, it could pass the answer's HEADERS.
      res.end(() => stream.close(h2constants.NGHTTP2_NO_ERROR));
    }
  }, everyMs);
  timer.unref();
  return {
    watch(req: Http2ServerRequest, res: Http2ServerResponse) {
      open.set(req, { res, since: performance.now() });
      res.stream.once('close', () => open.delete(req));
    },
    stop: () => clearInterval(timer),
  };
}

/** Options of startProxy (tapedeck serve): createHandler's, and where and how the server listens. */
export interface ServeOptions extends HandlerOptions {
  /**
   * Port to listen on (default 8080; 0 picks a free one): an integer from 0 to 65535, or a string
   * of its digits, as read from the environment (`process.env.PORT ?? '8080'`).
   */
  port?: number | string;
  /** Interface to bind (default 127.0.0.1: recordings and live keys are not for the network). */
  host?: string;
  /**
   * Longest time a client may take to send its whole request, headers and body, over HTTP/1.1 or
   * HTTP/2 (default 120 000 ms): a client that trickles its body is answered 408 and cut, at
   * most a tenth of the timeout (and at most 1 s) after it passes, instead of holding a socket
   * for Node's 300 s default (tapedeck serve --request-timeout).
   */
  requestTimeoutMs?: number;
  /**
   * Serve HTTPS and WSS instead of HTTP (tapedeck serve --tls): every route, realtime sessions
   * included, over TLS 1.2+ with HTTP/1.1. Make the material with tlsMaterial() (src/proxy/tls.ts).
   */
  tls?: TlsMaterial;
}

/** Default of {@link ServeOptions.requestTimeoutMs}. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/** A running proxy (startProxy): its URL and servers, and close(). */
export interface ProxyServer {
  /** The listening server. HTTP/2 connections are handed from it to {@link http2}. */
  readonly server: Server;
  /** The cleartext HTTP/2 server that answers clients opening with the HTTP/2 preface. */
  readonly http2: Http2Server;
  readonly handler: TapedeckHandler;
  /** `http://host:port` (`https://` with TLS), with the port actually bound. */
  readonly url: string;
  /** The CA that signed the certificate (PEM), when tapedeck made it for --tls. */
  readonly ca?: string;
  readonly port: number;
  /** Stops accepting connections, finishes in-flight requests, writes the tape, closes. */
  close(): Promise<void>;
}

/**
 * Why the server could not listen, as E_LISTEN with what to do: the port taken, the address not
 * this machine's, a name that does not resolve, a port below 1024 without the right. Other
 * failures as they are.
 */
function listenError(e: unknown, host: string, port: number): unknown {
  const hint = 'Stop what listens there, or give another port: { port: 0 } takes any free one (tapedeck serve --port 0).';
  switch ((e as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new TapedeckError('E_LISTEN', `Port ${port} on ${host} is in use: the proxy cannot listen there.`, { host, port, hint });
    case 'EADDRNOTAVAIL':
      return new TapedeckError('E_LISTEN', `${host} is not an address of this machine: the proxy cannot listen there.`, { host, port, hint: 'Give an address of this machine: { host: "127.0.0.1" } (tapedeck serve --host 127.0.0.1).' });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      // listen() looks a name up first: a name no resolver knows (or an address spelt wrong,
      // such as 999.1.1.1, which is tried as a name) is the host's fault, not the proxy's.
      return new TapedeckError('E_LISTEN', `${host} does not resolve to an address: the proxy cannot listen there.`, { host, port, hint: 'Give an address of this machine or a name that resolves to one: { host: "127.0.0.1" } (tapedeck serve --host 127.0.0.1).' });
    case 'EACCES':
      return new TapedeckError('E_LISTEN', `Listening on port ${port} needs privileges this process lacks.`, { host, port, hint: 'Give a port from 1024 up: { port: 8080 } (tapedeck serve --port 8080).' });
    default:
      return e;
  }
}

/**
 * The port to listen on, checked before anything opens: Node's listen() takes a string that is
 * not a number for the path of a Unix socket (the proxy then "started" with no port or URL) and
 * refuses a number out of range with a bare RangeError. A string of digits (a port read from the
 * environment) is that number, as listen() took it.
 */
function listenPort(port: unknown): number {
  if (port === undefined) return 8080;
  const n = typeof port === 'string' && /^\d{1,5}$/.test(port) ? Number(port) : port;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 65535) return n;
  throw new TapedeckError('E_ARG', `Invalid port ${typeof port === 'string' ? JSON.stringify(port) : String(port)}: startProxy listens on a TCP port.`, {
    option: 'port',
    hint: 'Use an integer from 0 to 65535: { port: 8080 }, or { port: 0 } for any free one (tapedeck serve --port 8080).',
  });
}

/** startProxy's option names: createHandler's and the server's own. */
const SERVE_OPTIONS = optionNames<ServeOptions>()([...DECK_OPTION_NAMES, ...HANDLER_OPTION_NAMES, 'port', 'host', 'requestTimeoutMs', 'tls']);

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
  checkOptionsObject(opts, 'startProxy', "startProxy({ tape: 'app.tape', upstream: 'https://api.openai.com', port: 0 })");
  checkOptionNames(opts, SERVE_OPTIONS, 'startProxy', 'docs/proxy.md', REDACT_INNER);
  // A proxy that cannot start (the port is taken) leaves no trace: not the tape its open made,
  // nor its writer registration (`<tape>.writers/`).
  // An empty host makes Node listen on every interface: an unset variable (`--host "$HOST"`)
  // must not open the proxy to the network. Every interface is said as 0.0.0.0 or ::.
  if (typeof opts.host === 'string' && opts.host.trim() === '') {
    throw new TapedeckError('E_ARG', 'The host to listen on is empty: the proxy would listen on every interface.', {
      hint: 'Leave host out for loopback (127.0.0.1), or say every interface as { host: "0.0.0.0" } (tapedeck serve --host 0.0.0.0).',
    });
  }
  const port = listenPort(opts.port);
  refuseLentCredentials(opts.upstream, opts.host ?? '127.0.0.1');
  // Before the tape is opened: a pair that cannot serve leaves nothing behind.
  if (opts.tls) checkPair(opts.tls, 'tls.cert', 'tls.key');
  const madeTape = typeof opts.tape === 'string' && opts.mode !== 'passthrough' && !existsSync(opts.tape) ? opts.tape : undefined;
  const handler = handlerFor(opts);
  await handler.ready;
  const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const checkEvery = requestCheckInterval(requestTimeout);
  const serverOpts = { keepAliveTimeout: 65_000, requestTimeout, headersTimeout: Math.min(60_000, requestTimeout), connectionsCheckingInterval: checkEvery };
  // With TLS the port speaks HTTP/1.1 only (no HTTP/2 preface to tell apart on a TLS stream).
  // A client that takes the proxy for a forward one (HTTP_PROXY, curl -x) is told so, as is the log.
  let listening = '';
  const targetMask = redactor(opts.redact);
  const refusal = new ForwardRefusal(
    () => listening,
    (m) => (opts.onWarning ? opts.onWarning(m) : process.stderr.write(`tapedeck: ${m}\n`)),
    (u) => targetMask.url(u),
  );
  // An upstream that lends the proxy's own credentials is for programs on this machine, not for
  // the web pages its browser opens (./server-origin.ts). The port is known once bound.
  const listenHost = opts.host ?? '127.0.0.1';
  let boundPort = 0;
  const lends = opts.upstream !== undefined && lendsCredentials(opts.upstream);
  const foreign = (req: IncomingMessage, res: ServerResponse) => lends && refuseForeign(req, res, listenHost, boundPort);
  const front = (req: IncomingMessage, res: ServerResponse): void => {
    if (isAbsoluteForm(req.url)) refusal.request(req, res);
    else if (!foreign(req, res)) handler(req, res);
  };
  const server: Server = opts.tls ? createHttpsServer({ ...serverOpts, cert: opts.tls.cert, key: opts.tls.key }, front) : createServer(serverOpts, front);
  // Headers over node:http's limit are said (./client-error.ts), not a bare 431.
  server.on('clientError', clientErrorAnswer((m) => (opts.onWarning ? opts.onWarning(m) : process.stderr.write(`tapedeck: ${m}\n`))));
  // Sockets node:http handed over (CONNECT, upgrades): its close() waits for them, but
  // closeAllConnections() does not end them, so a client that held one open after its refusal
  // (a 404 for a WebSocket to no realtime route, a CONNECT) kept close() waiting for it.
  const handedOver = new Set<Socket>();
  const handOver = (socket: Socket) => {
    handedOver.add(socket);
    socket.once('close', () => handedOver.delete(socket));
  };
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    handOver(socket);
    refusal.connect(req, socket);
  });
  // Realtime sessions: WebSocket upgrades on a provider's realtime route (docs/realtime.md).
  // Any other upgrade offer (h2c: Java's HttpClient, curl --http2) is declined: the request goes
  // back to node:http's parser and is answered in HTTP/1.1 (./server-upgrade.ts).
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!asksWebSocket(req)) return declineUpgrade(req, socket, head, (s) => server.emit(opts.tls ? 'secureConnection' : 'connection', s));
    handOver(socket);
    if (!(lends && refuseForeignUpgrade(req, socket, listenHost, boundPort))) handler.upgrade(req, socket, head);
  });
  // A client that asks before it sends its body (Expect: 100-continue) and declares one over
  // the limit hears 413 at once (the handler's check): node:http on its own would first say
  // 100 Continue, and the client would upload it all for nothing.
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length']) > maxBody)) res.writeContinue();
    front(req, res);
  });
  const slowH2 = http2RequestTimeout(requestTimeout, checkEvery);
  // The compatibility API gives the handler request and response objects of the same shape.
  const h2 = createHttp2Server({}, (req: Http2ServerRequest, res: Http2ServerResponse) => {
    slowH2.watch(req, res);
    if (!foreign(req as never, res as never)) handler(req as never, res as never);
  });
  const sessions = new Set<Http2Session>();
  h2.on('session', (s: Http2Session) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  let toldTls = false;
  const onTls = () => {
    if (toldTls) return;
    toldTls = true;
    const m = 'a client spoke TLS (https:, wss:) to this plain HTTP port; serve TLS with --tls (startProxy({ tls })) and have the client trust its CA (--tls-ca FILE, then NODE_EXTRA_CA_CERTS=FILE), or point the client at http:// / ws://';
    if (opts.onWarning) opts.onWarning(m);
    else process.stderr.write(`tapedeck: ${m}\n`);
  };
  const undecided = opts.tls ? new Set<Socket>() : acceptHttp2(server, h2, server.headersTimeout, onTls);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, opts.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    await handler.close().catch(() => {});
    // The file, not a symbolic link leading to it.
    if (madeTape && handler.stats().recorded === 0) await unlink(tapeTarget(madeTape)).catch(() => {});
    throw listenError(e, opts.host ?? '127.0.0.1', port);
  }
  const addr = server.address() as AddressInfo;
  boundPort = addr.port;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  listening = `${opts.tls ? 'https' : 'http'}://${host}:${addr.port}`;
  let closing: Promise<void> | undefined;
  return {
    server,
    http2: h2,
    handler,
    port: addr.port,
    url: `${opts.tls ? 'https' : 'http'}://${host}:${addr.port}`,
    ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        for (const s of undecided) s.destroy();
        server.closeIdleConnections();
        // HTTP/2: GOAWAY now, so clients open no new streams; the session closes once its
        // streams in flight have ended.
        for (const s of sessions) s.close();
        await handler.close();
        // Keep-alive connections that carried the last requests are idle now.
        server.closeIdleConnections();
        // A client that holds its connection open after its last answer does not keep us up.
        const grace = setTimeout(() => {
          server.closeAllConnections();
          for (const s of sessions) s.destroy();
          for (const s of handedOver) s.destroy();
        }, 2000);
        await closed;
        clearTimeout(grace);
        slowH2.stop();
      })();
      return closing;
    },
  };
}
