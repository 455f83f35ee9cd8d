/**
 * A connection to an upstream through the forward proxy the environment names (./env-proxy.ts):
 * an HTTP `CONNECT host:port` to the proxy, with its `user:password` as `Proxy-Authorization`,
 * then TLS to the upstream inside the tunnel for an https one, as curl and undici's
 * EnvHttpProxyAgent do. `tapedeck serve` records through it, so a proxy run behind a corporate
 * proxy reaches the API the way every other tool there does. Handed to the undici Agent behind
 * Node's fetch as its `connect` function.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** What undici's Agent hands its connect function for each new connection. */
interface ConnectOptions {
  hostname: string;
  port: string | number;
  protocol: string;
  servername?: string | null;
}

type Connector = (opts: ConnectOptions, done: (err: Error | null, socket?: Socket) => void) => void;

/**
 * An undici connect function that tunnels every connection through `proxyUrl` (the value of the
 * environment variable `variable`, named in errors instead of the URL, which may hold a
 * password). `timeoutMs` bounds the whole connect: the proxy, its answer and the TLS handshake;
 * past it the error's code is undici's connect timeout, so the failure reads as one.
 *
 * @example
 * const agent = new Agent({ connect: tunnelConnector(process.env.HTTPS_PROXY!, 'HTTPS_PROXY', 10_000) });
 */
export function tunnelConnector(proxyUrl: string, variable: string, timeoutMs: number): Connector {
  const proxy = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(proxyUrl) ? proxyUrl : `http://${proxyUrl}`);
  const auth = proxy.username || proxy.password ? `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}` : undefined;
  const send = proxy.protocol === 'https:' ? httpsRequest : httpRequest;
  return (opts, done) => {
    const target = `${opts.hostname.includes(':') && !opts.hostname.startsWith('[') ? `[${opts.hostname}]` : opts.hostname}:${opts.port || (opts.protocol === 'https:' ? 443 : 80)}`;
    let finished = false;
    let socket: Socket | undefined;
    const finish = (err: Error | null, s?: Socket) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (err) s?.destroy();
      done(err, s);
    };
    const timer = setTimeout(() => {
      req.destroy();
      socket?.destroy();
      finish(Object.assign(new Error(`connect through the proxy named by ${variable} timed out`), { code: 'UND_ERR_CONNECT_TIMEOUT' }));
    }, timeoutMs);
    const req = send({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: proxy.port || (proxy.protocol === 'https:' ? 443 : 80), method: 'CONNECT', path: target, headers: { host: target, ...(auth ? { 'proxy-authorization': auth } : {}) }, agent: false });
    req.once('connect', (res, s) => {
      socket = s;
      if (res.statusCode !== 200) {
        return finish(new Error(`the proxy named by ${variable} answered ${res.statusCode}${res.statusMessage ? ` ${res.statusMessage}` : ''} to CONNECT ${target}`), s);
      }
      if (opts.protocol !== 'https:') return finish(null, s);
      const tls = tlsConnect({ socket: s, servername: opts.servername || opts.hostname, ALPNProtocols: ['http/1.1'] });
      tls.once('secureConnect', () => finish(null, tls));
      tls.once('error', (e) => finish(e, tls));
    });
    req.once('error', (e: NodeJS.ErrnoException) => finish(Object.assign(new Error(`the proxy named by ${variable} is unreachable (${e.code ?? e.message})`), { code: e.code })));
    req.end();
  };
}
