/**
 * Requests node:http refuses before the handler sees them. Its own answer to headers over its
 * limit (16 KB by default: a large cookie, a long gateway header) is a bare `431` and a closed
 * connection, and nothing in the proxy's log, so the user could not tell the proxy refused the
 * request, not the API, nor what to do. That one is said, in the answer and once in the log;
 * every other client error is answered as node:http answers it (the request timeout's 408 too).
 */
import type { Socket } from 'node:net';
import { maxHeaderSize } from 'node:http';

const HEADERS_TOO_LARGE = 'E_HEADERS_TOO_LARGE';

/** node:http's own answers to the errors it answers (lib/_http_server.js). */
function nodeAnswer(code: string | undefined): string {
  const status = code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? '413 Payload Too Large' : '400 Bad Request';
  return `HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`;
}

/**
 * A `clientError` listener for the proxy's HTTP/1.1 server: `warnOnce` hears of headers over the
 * limit.
 *
 * @example
 * server.on('clientError', clientErrorAnswer((m) => process.stderr.write(`tapedeck: ${m}\n`)))
 */
export function clientErrorAnswer(warnOnce: (m: string) => void): (err: NodeJS.ErrnoException, socket: Socket) => void {
  let told = false;
  return (err, socket) => {
    if (socket.writable && socket.bytesWritten === 0) {
      if (err.code === 'HPE_HEADER_OVERFLOW') {
        const message = `The request's headers are larger than this proxy takes (${maxHeaderSize} bytes, Node's limit): nothing was sent upstream.`;
        const hint = 'Send smaller headers, or start tapedeck serve with a larger limit: NODE_OPTIONS=--max-http-header-size=65536.';
        const body = JSON.stringify({ object: 'error', message: `${message} ${hint}`, type: 'invalid_request_error', param: '', code: HEADERS_TOO_LARGE, error: { message: `${message} ${hint}`, type: 'invalid_request_error', param: null, code: HEADERS_TOO_LARGE } });
        socket.write(`HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-tapedeck-error: ${HEADERS_TOO_LARGE}\r\nx-should-retry: false\r\nconnection: close\r\n\r\n${body}`);
        if (!told) {
          told = true;
          warnOnce(`${HEADERS_TOO_LARGE}: ${message} ${hint}`);
        }
      } else socket.write(nodeAnswer(err.code));
    }
    socket.destroy(err);
  };
}
