/**
 * Who may use the credentials a proxy lends. An upstream URL with credentials of the proxy's own
 * (`user:password@`, `?api_key=`) is served on loopback only (./lend-guard.ts), but loopback is
 * reached by every web page the user opens: a page of another origin can POST to it (a no-cors
 * request needs no preflight), and a page on a name the attacker re-points at 127.0.0.1 (DNS
 * rebinding) can even read the answer. Browsers say where a request comes from (`Origin`,
 * `Sec-Fetch-Site`) and which name it was sent to (`Host`); SDKs and curl send no Origin and name
 * the address they were given. So, as local development servers do, such a proxy refuses a
 * request from another origin, or to a name that is not its own, before anything goes upstream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TapedeckError } from '../errors.ts';
import { errorAnswer, showsWholeBody } from './http-errors.ts';
import { loopback } from './lend-guard.ts';

/** Whether a host name reaches only this machine: a loopback address (lend-guard.ts), or a name under `localhost`. */
function loopbackName(hostname: string): boolean {
  const h = hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  return loopback(h) || h.endsWith('.localhost');
}

/** The host name of a `Host` header value (`name:port`, `[v6]:port`), lower case. */
function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/** The first value of a header. */
function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Why a request must not be sent upstream with the proxy's own credentials, or undefined when it
 * may: a `Sec-Fetch-Site` other than `same-origin` or `none` (a page of another site, or of
 * another port of this one), an `Origin` that is not the proxy's own address, or a `Host` (HTTP/2:
 * `:authority`) that names neither this machine's loopback nor `listenHost`.
 *
 * @example
 * foreignCaller({ host: '127.0.0.1:8080', origin: 'http://localhost:5173' }, '127.0.0.1', 8080) // 'it comes from a page of http://localhost:5173'
 * foreignCaller({ host: '127.0.0.1:8080' }, '127.0.0.1', 8080) // undefined: an SDK, curl
 */
export function foreignCaller(headers: IncomingMessage['headers'], listenHost: string, port: number): string | undefined {
  const own = (hostname: string) => loopbackName(hostname) || hostname === hostnameOf(listenHost);
  const host = one(headers.host) ?? one(headers[':authority' as 'host']);
  if (host !== undefined && !own(hostnameOf(host))) return `it names the host ${JSON.stringify(host)}, which is not this proxy's address (a name pointed at this machine by a web page: DNS rebinding)`;
  const site = one(headers['sec-fetch-site'])?.toLowerCase();
  const origin = one(headers.origin);
  if (origin !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(origin);
    } catch {
      u = undefined;
    }
    const samePort = u !== undefined && Number(u.port || (u.protocol === 'https:' ? 443 : 80)) === port;
    if (!u || !own(hostnameOf(u.host)) || !samePort) return `it comes from a page of ${origin}`;
  }
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `the browser says it comes from a page of another ${site === 'same-site' ? 'port or name of this site' : 'site'} (Sec-Fetch-Site: ${site})`;
  return undefined;
}

/** The refusal, with what to do. */
function refusal(why: string): TapedeckError {
  return new TapedeckError('E_FOREIGN_ORIGIN', `Refused: this proxy sends requests upstream with credentials of its own (from --upstream), and ${why}; nothing was sent upstream.`, {
    hint: 'Call the proxy from a program (an SDK, curl) at its own address, e.g. --host 127.0.0.1; or take the credentials out of --upstream and let each client send its own.',
  });
}

/**
 * Answers 403 E_FOREIGN_ORIGIN and returns true when {@link foreignCaller} refuses the request;
 * false when it may go on.
 *
 * @example
 * if (refuseForeign(req, res, '127.0.0.1', 8080)) return
 */
export function refuseForeign(req: IncomingMessage, res: ServerResponse, listenHost: string, port: number): boolean {
  const why = foreignCaller(req.headers, listenHost, port);
  if (why === undefined) return false;
  const answer = errorAnswer(refusal(why), (req.url ?? '/').split('?')[0]!, req.headers, 403, showsWholeBody(req.headers), true);
  const body = Buffer.from(answer.body);
  req.resume();
  res.writeHead(403, { ...answer.headers, 'content-length': String(body.length) });
  res.end(body);
  return true;
}

/**
 * The same for a WebSocket upgrade: a 403 written on the socket, which is then closed.
 *
 * @example
 * server.on('upgrade', (req, socket, head) => refuseForeignUpgrade(req, socket, '127.0.0.1', 8080) || handler.upgrade(req, socket, head))
 */
export function refuseForeignUpgrade(req: IncomingMessage, socket: Socket, listenHost: string, port: number): boolean {
  const why = foreignCaller(req.headers, listenHost, port);
  if (why === undefined) return false;
  const body = Buffer.from(JSON.stringify({ error: { code: 'E_FOREIGN_ORIGIN', message: refusal(why).message } }));
  socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nx-tapedeck-error: E_FOREIGN_ORIGIN\r\nconnection: close\r\n\r\n${body.toString()}`);
  return true;
}
