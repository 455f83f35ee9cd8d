/**
 * Upgrades that are no WebSocket, on tapedeck serve's port. node:http sends every request with
 * `Connection: upgrade` to the server's 'upgrade' listener once it has one (tapedeck serve has:
 * realtime sessions), so a request offering `Upgrade: h2c` never reached the proxy: Java's
 * `java.net.http.HttpClient` offers it on every plain-http request by default (its version is
 * HTTP_2), as `curl --http2` does. A server may ignore an upgrade it does not take and answer in
 * HTTP/1.1 (RFC 9110, section 7.8); that is what clients offering h2c expect, and what the
 * upstreams behind the proxy do. So such a request is handed back to node:http's parser, without
 * its offer, and answered like any other.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Whether an upgrade request asks for a WebSocket: those go to the realtime sessions; any other
 * (h2c, TLS/1.0, a made-up protocol) is a plain request with an offer the proxy declines.
 *
 * @example
 * asksWebSocket({ headers: { upgrade: 'websocket' } }) // true
 * asksWebSocket({ headers: { upgrade: 'h2c' } }) // false
 */
export function asksWebSocket(req: Pick<IncomingMessage, 'headers'>): boolean {
  return /(?:^|,)\s*websocket\s*(?:,|$)/i.test(String(req.headers.upgrade ?? ''));
}

/** Headers that only carry the upgrade offer: the request without the offer has none of them. */
const OFFER_HEADERS: ReadonlySet<string> = new Set(['upgrade', 'http2-settings']);

/**
 * The request head as the client would have sent it without offering the upgrade: the same
 * request line and headers (names and order as sent), less `Upgrade` and `HTTP2-Settings` and
 * their tokens in `Connection`.
 *
 * @example
 * headWithoutOffer(req).toString('latin1') // 'POST /v1/chat/completions HTTP/1.1\r\nHost: …\r\n\r\n'
 */
export function headWithoutOffer(req: Pick<IncomingMessage, 'method' | 'url' | 'httpVersion' | 'rawHeaders'>): Buffer {
  let head = `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (OFFER_HEADERS.has(lower)) continue;
    let value = raw[i + 1]!;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '' && !OFFER_HEADERS.has(t.toLowerCase()))
        .join(', ');
      if (value === '') continue;
    }
    head += `${name}: ${value}\r\n`;
  }
  // latin1: node:http read the header bytes as latin1, so this writes back the bytes it read.
  return Buffer.from(`${head}\r\n`, 'latin1');
}

/**
 * Hands a declined upgrade request back to HTTP/1.1: its head (without the offer) and the bytes
 * read after it (`head`, the start of its body or of a pipelined request) are put back on the
 * socket, and `parse` gives the socket to node:http's connection listener, which reads the
 * request again and answers it as any other.
 *
 * @example
 * server.on('upgrade', (req, socket, head) => {
 *   if (!asksWebSocket(req)) return declineUpgrade(req, socket, head, (s) => server.emit('connection', s));
 *   handler.upgrade(req, socket, head);
 * });
 */
export function declineUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, parse: (socket: Duplex) => void): void {
  // Paused while the bytes go back, so none flows before the parser listens.
  socket.pause();
  socket.unshift(head.length > 0 ? Buffer.concat([headWithoutOffer(req), head]) : headWithoutOffer(req));
  // node:http hands the socket over as soon as it has parsed the offer, also when the offer
  // came pipelined behind a request still being answered. That answer belongs to the parser
  // being left; a new parser's answer would wait behind it for good (node:http queues answers
  // per parser). So the new parser takes the socket once that answer has gone.
  const answering = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  const go = () => {
    if (socket.destroyed) return;
    parse(socket);
    socket.resume();
  };
  if (answering && !answering.writableFinished) answering.once('finish', go);
  else go();
}
