/**
 * Requests that take `tapedeck serve` for a forward proxy (HTTP_PROXY / HTTPS_PROXY, `curl -x`):
 * a `CONNECT host:443` (HTTPS) or an absolute-form request line (`POST http://host/path`, plain
 * HTTP). tapedeck serve is a reverse proxy: the client's base URL points at it, and it sends what
 * it gets to its one --upstream. Left alone, a CONNECT was dropped with nothing said (curl:
 * "Proxy CONNECT aborted") and an absolute-form request went to --upstream as `//host/path`,
 * and was recorded under that route. Both are answered 400 E_FORWARD_PROXY instead, saying how
 * to point the client at the proxy, and the proxy says so on its log, once per target.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { TapedeckError } from '../errors.ts';
import { routeOf } from '../providers/index.ts';
import { errorAnswer, showsWholeBody } from './http-errors.ts';

/** The status of a forward-proxy request: the client's set-up, which no retry changes. */
const STATUS = 400;

/** How many refused targets are remembered so each is logged once (a client retrying repeats its own). */
const LOGGED_MAX = 100;

/**
 * Whether a request target is in absolute form (`http://host/path`), what a client sends to a
 * forward proxy; SDKs talking to a base URL send origin form (`/path`).
 *
 * @example
 * isAbsoluteForm('http://api.groq.com/openai/v1/chat/completions') // true
 * isAbsoluteForm('/v1/chat/completions') // false
 */
export function isAbsoluteForm(url: string | undefined): boolean {
  return url !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
}

/**
 * The error for a request sent to tapedeck serve as to a forward proxy: `target` is the CONNECT
 * authority or the absolute URL, `proxyUrl` the address the client should use as its base URL,
 * `mask` what hides the URL's secrets (a redactor's `url`) before the message quotes it.
 *
 * @example
 * forwardProxyError('CONNECT', 'api.groq.com:443', 'http://127.0.0.1:8080').code // 'E_FORWARD_PROXY'
 * forwardProxyError('POST', 'http://h/v1beta/x?key=AIza…', 'http://127.0.0.1:8080', redactor().url).details.target // 'http://h/v1beta/x?key=%5BREDACTED%5D'
 */
export function forwardProxyError(method: string, target: string, proxyUrl: string, mask: (url: string) => string = (u) => u): TapedeckError {
  // Masked before it is cut: the message goes to the proxy's log and the client's error (a CI
  // log both), and a Google REST call carries its key in the query (`?key=AIza…`).
  const masked = mask(target);
  const shown = masked.length > 200 ? `${masked.slice(0, 199)}…` : masked;
  const https = method === 'CONNECT';
  let path = '/v1';
  if (!https) {
    try {
      path = basePathOf(new URL(target).pathname) || '/';
    } catch {
      // not a URL after all: the generic base path
    }
  }
  return new TapedeckError('E_FORWARD_PROXY', `tapedeck serve is not a forward proxy: the client sent ${method} ${shown}, as to an ${https ? 'HTTPS_PROXY' : 'HTTP_PROXY'}.`, {
    method,
    target: shown,
    hint: `Unset HTTP_PROXY / HTTPS_PROXY (or curl -x) for this client and set its base URL to the proxy instead, e.g. baseURL: '${proxyUrl}${path === '/' ? '' : path}'; the proxy sends each call on to its --upstream.`,
  });
}

/** The provider modules whose SDKs take the host alone as their base URL. */
const HOST_ONLY: ReadonlySet<string> = new Set(['anthropic', 'gemini', 'ollama', 'bedrock']);

/**
 * The path of the base URL a client's SDK takes for a call to `path`: the SDK adds the rest.
 * Those of Anthropic, Gemini, Ollama, Bedrock, Cohere (`/v2`) and Azure's deployments add the
 * API's version themselves and take the host alone; OpenAI-shaped ones take everything up to
 * the version segment (`/v1`, `/openai/v1`); else the path less its endpoint.
 *
 * @example
 * basePathOf('/v1/models') // '/v1'
 * basePathOf('/api/chat') // ''
 */
function basePathOf(path: string): string {
  const provider = routeOf({ method: 'POST', url: path })?.provider.name;
  if ((provider !== undefined && HOST_ONLY.has(provider)) || /^\/(?:api|model|openai\/deployments|v1beta|v2)\//.test(path) || /^\/v1\/(?:messages|models\/[^/]+:)/.test(path)) return '';
  const version = /^(.*?\/v\d+[a-z0-9]*)(?:\/|$)/.exec(path);
  return version ? version[1]! : path.replace(/\/(?:chat\/completions|responses|embeddings|completions|messages)$/, '');
}

/** Refuses forward-proxy requests on a proxy's server, logging each target once. */
export class ForwardRefusal {
  private readonly logged = new Set<string>();

  /**
   * @param proxyUrl the proxy's own address, for the hint (known once it listens: a getter).
   * @param log where the proxy's warnings go.
   * @param mask hides the secrets of a target URL (a redactor's `url`) in the log and the answer.
   */
  constructor(
    private readonly proxyUrl: () => string,
    private readonly log: (message: string) => void,
    private readonly mask: (url: string) => string = (u) => u,
  ) {}

  /**
   * Answers an absolute-form request 400 in the error shape its client expects.
   *
   * @example
   * const refusal = new ForwardRefusal(() => proxy.url, console.warn)
   * if (isAbsoluteForm(req.url)) refusal.request(req, res)
   */
  request(req: IncomingMessage, res: ServerResponse): void {
    const e = forwardProxyError(req.method ?? 'GET', req.url ?? '', this.proxyUrl(), this.mask);
    this.tell(e);
    let path = '/';
    try {
      path = new URL(req.url ?? '/').pathname;
    } catch {
      // the refusal's shape is OpenAI's then
    }
    const answer = errorAnswer(e, path, req.headers, STATUS, showsWholeBody(req.headers), true);
    // The body is not read: the connection closes after the answer.
    const body = Buffer.from(answer.body, 'utf8');
    res.writeHead(STATUS, { ...answer.headers, 'content-length': String(body.length), connection: 'close' });
    res.end(body);
    req.resume();
  }

  /**
   * Answers a CONNECT 400 on its socket and closes it (node:http hands CONNECT to this listener
   * alone; with none it destroys the socket without a word).
   *
   * @example
   * server.on('connect', (req, socket) => refusal.connect(req, socket))
   */
  connect(req: IncomingMessage, socket: Duplex): void {
    const e = forwardProxyError('CONNECT', req.url ?? '', this.proxyUrl(), this.mask);
    this.tell(e);
    const answer = errorAnswer(e, '/', req.headers, STATUS, true, true);
    const body = Buffer.from(answer.body, 'utf8');
    const head = Object.entries({ ...answer.headers, 'content-length': String(body.length), connection: 'close' })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.on('error', () => {});
    socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${STATUS} Bad Request\r\n${head}\r\n`, 'latin1'), body]));
  }

  private tell(e: TapedeckError): void {
    const target = String(e.details.target);
    if (this.logged.has(target)) return;
    if (this.logged.size < LOGGED_MAX) this.logged.add(target);
    // The log's own prefix names tapedeck serve already.
    this.log(`refused ${String(e.details.method)} ${target} with ${STATUS} E_FORWARD_PROXY: not a forward proxy (HTTP_PROXY / HTTPS_PROXY, curl -x). ${String(e.details.hint)}`);
  }
}
