/**
 * The proxy never lends its own credentials to clients it has not checked. `--upstream
 * https://user:password@gateway` adds the gateway's Basic credentials to requests that carry no
 * `Authorization` of their own (and a secret query parameter of the URL, `?api_key=`, goes with
 * every request), and nothing a client sends proves it may use them: on loopback
 * only this machine's processes reach the proxy, but bound to another interface anyone who
 * reaches the port would call the gateway as its owner. So that pairing is refused at start.
 */
import { isIP } from 'node:net';
import { TapedeckError } from '../errors.ts';
import { upstreamTarget } from './upstream.ts';
import { redactor } from '../store/redact.ts';

/**
 * Whether a bind address reaches only this machine: `localhost`, 127.0.0.0/8, ::1.
 *
 * @example
 * loopback('[::1]') // true
 */
export function loopback(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Whether an upstream URL carries credentials of the proxy's own that every request it forwards
 * may be sent with: `user:password@` (Basic auth), or a secret query parameter (`?api_key=`,
 * `?token=`: the names recordings mask) that goes with every request. False for a URL that does
 * not parse.
 *
 * @example
 * lendsCredentials('https://gw.example/base?api_key=k') // true
 * lendsCredentials('https://api.openai.com/v1')         // false
 */
export function lendsCredentials(upstream: string): boolean {
  if (!URL.canParse(upstream)) return false;
  const target = upstreamTarget(upstream);
  return target.authorization !== undefined || redactor().url(target.base) !== target.base;
}

/**
 * Throws E_ARG when an upstream with credentials in its URL would be served on an interface
 * other than loopback.
 *
 * @example
 * refuseLentCredentials('https://me:pw@gateway.example', '127.0.0.1') // fine
 * refuseLentCredentials('https://me:pw@gateway.example', '0.0.0.0')   // throws E_ARG
 */
export function refuseLentCredentials(upstream: string | undefined, host: string): void {
  // A URL that does not parse is the handler's to report (without the password).
  if (upstream === undefined || loopback(host) || !URL.canParse(upstream)) return;
  const target = upstreamTarget(upstream);
  if (!lendsCredentials(upstream)) return;
  throw new TapedeckError('E_ARG', `The upstream ${redactor().url(target.base)} has credentials in its URL, and the proxy would listen on ${host}: every client that reaches it there would be sent upstream with them, unchecked.`, {
    hint: 'Listen on loopback (--host 127.0.0.1, the default) to keep them to this machine, or take user:password and secret query parameters out of --upstream and let each client send its own credentials.',
  });
}
