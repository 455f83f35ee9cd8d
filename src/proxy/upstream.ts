/**
 * Calling the upstream with fetch (undici in Node), and collecting what was received for the
 * recording while it is passed on.
 */
import { TapedeckError } from '../errors.ts';
import { withoutTrailingSlashes } from '../store/upstream-prefix.ts';
import { hiddenUserinfo } from '../store/url-userinfo.ts';
import { forwardHeaders, NULL_BODY } from './fetch-headers.ts';
import { defaultUpstreamFetch, refusedByEnvironment, webAnswers } from './dom-fetch.ts';
import { nodeFetch } from './own-fetch.ts';
import { UNSTORED_RESPONSE_HEADERS, type DeckRequest } from './deck.ts';
import type { HttpRecord, StoredHeaders } from '../store/records.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, timeoutOption, type UpstreamTimeouts } from './timeouts.ts';
import { FINAL_EVENT_MARKERS } from '../providers/index.ts';
import { proxyVariableFor } from './env-proxy.ts';
import { tunnelConnector } from './env-proxy-tunnel.ts';

/**
 * An upstream URL split into the URL without credentials and, when it had `user:password@`, the
 * `Authorization: Basic …` header they stand for: fetch refuses URLs with credentials (and its
 * error quotes the whole URL), and no message may show the password.
 *
 * @example
 * upstreamTarget('https://me:pw@gateway.example/v1') // { base: 'https://gateway.example/v1', authorization: 'Basic bWU6cHc=' }
 */
export function upstreamTarget(upstream: string): { base: string; authorization?: string } {
  const u = new URL(upstream);
  if (u.username === '' && u.password === '') return { base: upstream };
  const user = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  const base = upstream.endsWith('/') ? u.href : u.href.replace(/\/$/, '');
  return { base, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/**
 * Joins the upstream base (which may carry a path prefix, and a query such as a gateway's
 * `?api_key=`) with a request's path and query: the path after the base's path, the base's
 * query after the request's own parameters (it is not the request's path's to end).
 *
 * @example
 * upstreamUrl('https://gw.example/base?api_key=k', '/v1/chat?x=1') // 'https://gw.example/base/v1/chat?x=1&api_key=k'
 */
export function upstreamUrl(upstream: string, url: string): string {
  const path = url.startsWith('/') ? url : `/${url}`;
  const q = upstream.search(/[?#]/);
  if (q < 0) return withoutTrailingSlashes(upstream) + path;
  // A fragment never goes on the wire; the query is the base's own.
  const query = upstream.slice(q + 1).replace(/#.*$/s, '');
  const head = withoutTrailingSlashes(upstream.slice(0, q)) + path;
  if (upstream[q] === '#' || query === '') return head;
  return head + (head.includes('?') ? `&${query}` : `?${query}`);
}

/** A fetch Response's headers as stored: without hop-by-hop, length and encoding headers. */
export function storedResponseHeaders(headers: Headers): StoredHeaders {
  const out: StoredHeaders = {};
  headers.forEach((value, name) => {
    if (UNSTORED_RESPONSE_HEADERS.has(name) || name === 'set-cookie') return;
    out[name] = value;
  });
  // Headers.forEach joins set-cookie values with ", ", which breaks cookies with dates in them.
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

/**
 * The URL as shown in messages: no credentials, no query (keys travel there), no fragment. A URL
 * that does not parse (a port out of range) or has no web origin (`admin:pw@host`, its `https://`
 * left out, reads as the scheme `admin:`) is shown as written with its userinfo's password, or a
 * user name alone (a token), as `***`: its error names what was given, never the secret in it.
 *
 * @example
 * safeUrl('https://admin:pw@gw.example/v1?api_key=k') // 'https://gw.example/v1'
 * safeUrl('https://admin:pw@gw.example:99999')        // 'https://admin:***@gw.example:99999'
 * safeUrl('admin:pw@gw.example')                      // 'admin:***@gw.example'
 */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.origin !== 'null') return u.origin + u.pathname;
  } catch {
    // shown as written, below
  }
  return hiddenUserinfo(url.replace(/[?#].*$/s, ''));
}

/**
 * For replay with `timing: 'recorded'`: a wait as long as the recorded stream's headers took to
 * come, or undefined for none. The record holds it: `durationMs` runs from sending the request to
 * the answer's end, and the last chunk's time counts from the headers. Only for an answer recorded
 * in more than one chunk (a stream, or a whole answer that came in pieces): one read in one piece
 * keeps no chunk times.
 *
 * @example
 * await headersWait({ durationMs: 2600, response: { chunks: [[3, 80], [2100, 900]] } }) // resolves after 500 ms
 */
export function headersWait(rec: Pick<HttpRecord, 'durationMs' | 'response'>): Promise<void> | undefined {
  const chunks = rec.response.chunks;
  const ms = chunks && chunks.length > 1 ? rec.durationMs - chunks[chunks.length - 1]![0] : 0;
  if (!(ms > 0)) return undefined;
  // Not unref'd: a replay in a script may be all the process waits on.
  return new Promise<void>((r) => setTimeout(r, ms));
}

/** Why a call ended early, kept so the failure it causes can be named (timeout, client, shutdown). */
type Stop = 'idle' | 'client' | 'shutdown';
// The abort reason given to fetch: never shown, the error comes from why the call was stopped.
const STOP = Symbol('tapedeck.stop');

// The undici Agent behind Node's fetch, built with our connect timeout and with undici's own
// header and body timers off (they fire at 300 s, under the idle default, and would cut a model
// that thinks for six minutes with a bare "fetch failed"). Node does not export the class; the
// global dispatcher, which undici registers under this symbol for other copies of undici to
// share, is an instance of it. It exists once fetch has been used, hence the data: URL fetch.
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
interface Dispatcher {
  destroy(): Promise<void>;
  close(): Promise<void>;
}
type AgentClass = new (opts: object) => Dispatcher;

/**
 * The Agent class of Node's fetch, but only while the global dispatcher is the one Node made
 * itself (an Agent built without options). A dispatcher the user installed (a proxy agent, a
 * mock, an Agent with a private CA) is left to do its job: an Agent of ours would drop its
 * settings. undici keeps an Agent's options under a symbol described 'options'; if that is not
 * found the dispatcher counts as the user's. Asked once per handler or tapedeck fetch, not once
 * per process: the user may install a dispatcher of their own at any time before.
 */
async function defaultAgentClass(): Promise<AgentClass | undefined> {
  // Not Node (a browser, a worker runtime): its fetch takes no undici dispatcher.
  if (typeof process === 'undefined' || !process.versions?.node) return undefined;
  const find = () => (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] as Record<symbol, unknown> | undefined;
  // Node's own fetch makes the dispatcher: a test's stub on the global would be called instead.
  if (!find()) await (nodeFetch ?? globalThis.fetch)('data:,').catch(() => undefined);
  const d = find();
  const C = d?.constructor;
  if (typeof C !== 'function' || C.name !== 'Agent') return undefined;
  const key = Object.getOwnPropertySymbols(d).find((k) => k.description === 'options');
  const options = key ? d![key] : undefined;
  if (options === null || typeof options !== 'object') return undefined;
  return Object.values(options).every((v) => v === undefined) ? (C as AgentClass) : undefined;
}

/**
 * Who is told what to do when the upstream fails: the proxy's user (its command's flags, with the
 * options' names) or createFetch's (its options; its upstream is the URL the client calls).
 */
export type LinkSurface = 'serve' | 'fetch';

const HINTS: Record<LinkSurface, { unreachable: string; connect: string; dispatcher: string; idle: string; shutdown: string; proxy: string; envProxy?: string }> = {
  serve: {
    unreachable: 'Check --upstream and the network, or replay from the tape (--mode replay).',
    connect: 'Check --upstream and the network, or raise the limit: tapedeck serve --connect-timeout <ms> (connectTimeoutMs).',
    dispatcher: 'Check --upstream and the network, or raise the connect timeout of the dispatcher you installed (setGlobalDispatcher).',
    idle: 'If the model needs longer to answer, raise the limit: tapedeck serve --idle-timeout <ms> (idleTimeoutMs).',
    shutdown: 'Retry against a running proxy; raise --shutdown-timeout <ms> (shutdownTimeoutMs) to let long answers finish at shutdown.',
    proxy: 'Check the proxy the variable names (and NO_PROXY) and --upstream, or replay from the tape (--mode replay).',
  },
  fetch: {
    unreachable: "Check the network and the client's base URL, or replay from the tape (TAPEDECK_MODE=replay, or createFetch mode 'replay').",
    connect: "Check the network and the client's base URL, or raise the limit: createFetch({ connectTimeoutMs }).",
    dispatcher: "Check the network and the client's base URL, or raise the connect timeout of the dispatcher you installed (setGlobalDispatcher).",
    idle: 'If the model needs longer to answer, raise the limit: createFetch({ idleTimeoutMs }).',
    shutdown: 'Wait for the answers before closing the fetch, or raise createFetch({ shutdownTimeoutMs }) to let long answers finish at close.',
    proxy: "Check the proxy the variable names (and NO_PROXY) and the client's base URL, or replay from the tape (TAPEDECK_MODE=replay).",
    envProxy:
      "createFetch connects to the API directly, as Node's fetch does. To go through the proxy, install a dispatcher that reads the variables before recording: setGlobalDispatcher(new EnvHttpProxyAgent()) from the undici package (or give the SDK a ProxyAgent as fetchOptions.dispatcher) (docs/proxy.md, \"Behind a forward proxy\").",
  },
};

/**
 * The way to one upstream for a handler or a tapedeck fetch: its fetch, timeouts, and the
 * calls in flight, so shutdown can abort them and close their connections.
 */
export class UpstreamLink {
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  private readonly calls = new Set<UpstreamCall>();
  private dispatcher: Promise<Dispatcher | undefined> | undefined;
  /** The agent that tunnels through the proxy the environment names (tapedeck serve only). */
  private tunnel: Promise<Dispatcher | undefined> | undefined;
  private readonly surface: LinkSurface;
  private shutdownMessage: string | undefined;
  private readonly fetchImpl: typeof fetch;
  /** Node's own fetch, which takes an undici dispatcher (the connect timeout lives there). */
  private readonly native: boolean;

  /** What its errors tell the user to do. @internal */
  readonly hints: (typeof HINTS)[LinkSurface];

  /**
   * `fetchImpl` undefined: Node's fetch as it was when llm-tapedeck was imported, not whatever a
   * test put on the global since (./own-fetch.ts). `surface`: whose options its errors' hints
   * name. Throws E_ARG for a bad timeout.
   */
  constructor(fetchImpl: typeof fetch | undefined, opts: UpstreamTimeouts, surface: LinkSurface = 'serve') {
    this.hints = HINTS[surface];
    this.surface = surface;
    // None given: Node's own fetch taken at import; under a DOM test environment its fetch,
    // wrapped, which takes no dispatcher; refused calls when the global was a stub already then
    // (./dom-fetch.ts).
    const given = fetchImpl ?? defaultUpstreamFetch();
    this.native = (nodeFetch !== undefined && given === nodeFetch) || given === globalThis.fetch;
    // A fetch given as an option may answer with a Node stream for a body (node-fetch 2).
    this.fetchImpl = fetchImpl === undefined || this.native ? given : webAnswers(given);
    this.connectTimeoutMs = timeoutOption(opts, 'connectTimeoutMs', DEFAULT_CONNECT_TIMEOUT_MS);
    this.idleTimeoutMs = timeoutOption(opts, 'idleTimeoutMs', DEFAULT_IDLE_TIMEOUT_MS);
  }

  /**
   * Starts a call. `client` is the caller's signal: its abort cancels the call (until
   * `call.detachClient()`), rejecting with the signal's reason. `init` is the caller's fetch
   * init (createFetch's): an undici `dispatcher` in it carries the call, in place of the link's own.
   */
  start(url: string, req: DeckRequest, client?: AbortSignal, init?: RequestInit): UpstreamCall {
    const call = new UpstreamCall(this, url, client, (init as { dispatcher?: Dispatcher } | undefined)?.dispatcher);
    this.calls.add(call);
    call.run(req);
    return call;
  }

  /** @internal */
  ended(call: UpstreamCall): void {
    this.calls.delete(call);
  }

  /**
   * @internal The fetch and extra init for one call to `url`; `own` is the caller's dispatcher.
   * `proxied`: the environment variable whose proxy the call goes through.
   */
  async fetchFor(own?: Dispatcher, url?: string): Promise<{ fetch: typeof fetch; dispatcher?: Dispatcher; own?: true; proxied?: string }> {
    // The caller's dispatcher (a ProxyAgent, an Agent with its CA, a unix socket) is how its
    // calls reach the API: fetch honours it, and so must a tapedeck fetch standing in for fetch,
    // or the call goes around the proxy the user routed it through. Its connect timeout counts.
    if (own !== undefined) return { fetch: this.fetchImpl, dispatcher: own, own: true };
    // Only Node's own fetch gets the agent: another fetch (a wrapper, undici from npm, a test
    // double) may not understand this undici's dispatcher. Without one (a global dispatcher the
    // user installed), the connect timeout is that dispatcher's; the idle timer still runs.
    if (!this.native) return { fetch: this.fetchImpl };
    // tapedeck serve is a command, run where curl is: behind a corporate proxy it goes out the
    // way the environment says (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), as Node's fetch never does.
    // createFetch stands in for the app's fetch, which connects directly: it only says so.
    const proxied = this.surface === 'serve' && url !== undefined ? proxyVariableFor(url) : undefined;
    if (proxied !== undefined) {
      this.tunnel ??= defaultAgentClass().then((A) =>
        A ? new A({ connect: tunnelConnector(process.env[proxied] ?? '', proxied, this.connectTimeoutMs), headersTimeout: 0, bodyTimeout: 0 }) : undefined,
      );
      const tunnel = await this.tunnel;
      if (tunnel) return { fetch: this.fetchImpl, dispatcher: tunnel, proxied };
    }
    this.dispatcher ??= defaultAgentClass().then((A) =>
      A ? new A({ connect: { timeout: this.connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0 }) : undefined,
    );
    const dispatcher = await this.dispatcher;
    return dispatcher ? { fetch: this.fetchImpl, dispatcher } : { fetch: this.fetchImpl };
  }

  /** @internal The message an exchange cut by shutdown() gets. */
  get closedMessage(): string | undefined {
    return this.shutdownMessage;
  }

  /** @internal What to do about it, when shutdown() was told (else the surface's shutdown hint). */
  closedHint: string | undefined;

  /**
   * Aborts every call in flight (their sockets are closed). Those still waiting for headers
   * fail with E_PROXY_CLOSED and `message` (and `hint`, when given); bodies being read error.
   */
  shutdown(message: string, hint?: string): void {
    this.shutdownMessage = message;
    if (hint !== undefined) this.closedHint = hint;
    for (const call of [...this.calls]) call.abort('shutdown');
  }

  /** Aborts what is left and closes the connections. */
  async close(): Promise<void> {
    this.shutdown(this.shutdownMessage ?? 'tapedeck was closed before the upstream answered.');
    for (const p of [this.dispatcher, this.tunnel]) {
      const d = await p?.catch(() => undefined);
      await d?.destroy().catch(() => {});
    }
  }
}

/**
 * One exchange with the upstream: the fetch, the idle timer (armed only while waiting for the
 * upstream: for headers, or for a body chunk the reader asked for, never while the client is
 * slow to take what came) and the abort that closes the socket.
 */
export class UpstreamCall {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private waiting = false;
  private stopped: Stop | undefined;
  private finished = false;
  private onClient: (() => void) | undefined;
  /** Resolves with the answer once its headers arrived (the body streams on). */
  response!: Promise<Response>;

  constructor(
    private readonly link: UpstreamLink,
    readonly url: string,
    private readonly client?: AbortSignal,
    private readonly via?: Dispatcher,
  ) {
    if (client) {
      this.onClient = () => this.abort('client');
      if (client.aborted) queueMicrotask(this.onClient);
      else client.addEventListener('abort', this.onClient, { once: true });
    }
  }

  /** @internal */
  run(req: DeckRequest): void {
    this.response = this.send(req);
    // The caller awaits it; an abort nobody waits for must not be unhandled.
    this.response.catch(() => {});
  }

  /** From now on the caller's signal no longer cancels the call (an answer being recorded). */
  detachClient(): void {
    if (this.onClient) this.client?.removeEventListener('abort', this.onClient);
    this.onClient = undefined;
  }

  /** Cancels the call and closes its upstream connection. */
  abort(why: 'client' | 'shutdown'): void {
    this.stop(why);
  }

  private stop(why: Stop): void {
    if (this.finished || this.stopped) return;
    this.stopped = why;
    this.clearTimer();
    this.controller.abort(STOP);
  }

  private arm(): void {
    this.waiting = true;
    // Node's timers restart in place (refresh); a browser's setTimeout returns a number, so
    // there (createReplayFetch in passthrough mode) a new timer replaces the old one.
    const node = this.timer as { refresh?: () => unknown } | undefined;
    if (node?.refresh) {
      node.refresh();
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.waiting) this.stop('idle');
    }, this.link.idleTimeoutMs);
    // The pending socket keeps the process alive as long as it must; the timer never does.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private disarm(): void {
    this.waiting = false;
  }

  private clearTimer(): void {
    this.waiting = false;
    if (this.timer) clearTimeout(this.timer);
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    this.clearTimer();
    this.detachClient();
    this.link.ended(this);
  }

  /** The error for a call that was stopped, or undefined when it failed by itself. */
  private stopError(phase: 'headers' | 'body'): unknown {
    const where = safeUrl(this.url);
    switch (this.stopped) {
      case 'idle': {
        const ms = this.link.idleTimeoutMs;
        const what = phase === 'headers' ? `sent no response headers within ${ms} ms` : `sent nothing for ${ms} ms in the middle of its answer`;
        return new TapedeckError('E_UPSTREAM_TIMEOUT', `Upstream ${where} ${what} (idle timeout); nothing was recorded.`, {
          upstream: where,
          timeout: 'idle',
          limitMs: ms,
          hint: this.link.hints.idle,
        });
      }
      case 'client':
        return this.client?.reason ?? new DOMException('The client went away.', 'AbortError');
      case 'shutdown':
        return new TapedeckError('E_PROXY_CLOSED', this.link.closedMessage ?? 'tapedeck was closed before the upstream answered.', {
          upstream: where,
          hint: this.link.closedHint ?? this.link.hints.shutdown,
        });
      default:
        return undefined;
    }
  }

  private async send(req: DeckRequest): Promise<Response> {
    const method = req.method.toUpperCase();
    const hasBody = method !== 'GET' && method !== 'HEAD' && req.body.length > 0;
    // The wait for headers counts as idle time: a hung upstream sends no byte at all.
    this.arm();
    let up: Response;
    let connectLimit: number | undefined;
    let proxied: string | undefined;
    try {
      const { fetch: f, dispatcher, own, proxied: via } = await this.link.fetchFor(this.via, this.url);
      proxied = via;
      if (dispatcher && !own) connectLimit = this.link.connectTimeoutMs;
      if (this.stopped) throw STOP;
      up = await f(this.url, {
        method,
        headers: forwardHeaders(req.headers),
        body: hasBody ? req.body : undefined,
        redirect: 'manual',
        signal: this.controller.signal,
        ...(dispatcher ? { dispatcher } : {}),
      } as RequestInit);
    } catch (e) {
      this.end();
      throw this.stopError('headers') ?? (refusedByEnvironment(e) ? e : unreachable(this.url, e, connectLimit, this.link.hints, proxied));
    }
    this.disarm();
    if (!up.body || NULL_BODY.has(up.status)) {
      this.end();
      return up;
    }
    const reader = up.body.getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        pull: async (c) => {
          this.arm();
          try {
            const { done, value } = await reader.read();
            this.disarm();
            if (done) {
              this.end();
              c.close();
            } else c.enqueue(value);
          } catch (e) {
            const err = this.stopError('body') ?? e;
            this.end();
            c.error(err);
          }
        },
        cancel: (reason) => {
          // The reader of the answer gave up: close the upstream connection too.
          this.stop('client');
          this.end();
          return reader.cancel(reason).catch(() => {});
        },
      },
      // No read-ahead: a chunk is asked of the upstream only when the reader wants one.
      { highWaterMark: 0 },
    );
    const out = new Response(body, { status: up.status, statusText: up.statusText, headers: up.headers });
    Object.defineProperty(out, 'url', { value: up.url, configurable: true });
    return out;
  }
}

/**
 * A failed fetch as E_UPSTREAM (502), or E_UPSTREAM_TIMEOUT when the connection timed out.
 * `connectTimeoutMs` is the limit when it was ours; undefined when the dispatcher the user
 * installed set it.
 */
function unreachable(url: string, e: unknown, connectTimeoutMs: number | undefined, hints: (typeof HINTS)[LinkSurface], proxied?: string): TapedeckError {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  // Through a proxy, the tunnel's own words say which hop failed (./env-proxy-tunnel.ts).
  const why = (proxied ? cause?.message : undefined) ?? cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // keep the URL as given
  }
  if (cause?.code === 'UND_ERR_CONNECT_TIMEOUT') {
    const within = connectTimeoutMs === undefined ? 'within the connect timeout of the global fetch dispatcher' : `within ${connectTimeoutMs} ms`;
    return new TapedeckError('E_UPSTREAM_TIMEOUT', `Could not connect to upstream ${safeUrl(url)} ${within} (connect timeout); nothing was recorded.`, {
      upstream: safeUrl(url),
      timeout: 'connect',
      ...(connectTimeoutMs === undefined ? {} : { limitMs: connectTimeoutMs }),
      hint: proxied ? `${proxied}: ${hints.proxy}` : connectTimeoutMs === undefined ? hints.dispatcher : (envProxyHint(url, hints) ?? hints.connect),
    });
  }
  // Reached, then dropped: the address is right, and "check the base URL" would mislead.
  if (cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET') {
    return new TapedeckError('E_UPSTREAM', `Upstream ${origin} closed the connection without answering (${why}); nothing was recorded.`, {
      upstream: origin,
      cause: why,
      // Reached: a retry may be answered, so update mode does not turn it into a miss (./unrecordable.ts).
      reached: true,
      hint: 'The upstream took the request and dropped it (a crash, a proxy in between, a body it refused): retry, or look at what the upstream logged.',
    });
  }
  // Behind a corporate proxy the variables name the way out, which our own agent does not take.
  const proxyVar = connectTimeoutMs === undefined || proxied || !hints.envProxy ? undefined : proxyVariableFor(url);
  return new TapedeckError('E_UPSTREAM', `Upstream ${origin} is unreachable (${why})${proxyVar ? `; ${proxyVar} is set, but was not used` : ''}.`, {
    upstream: origin,
    cause: why,
    hint: proxied ? `${proxied}: ${hints.proxy}` : ((proxyVar && envProxyHint(url, hints)) ?? hints.unreachable),
  });
}

/**
 * What to do when the environment names a forward proxy for `url` that tapedeck's own agent did
 * not take (see ./env-proxy.ts), or undefined when it names none.
 */
function envProxyHint(url: string, hints: (typeof HINTS)[LinkSurface]): string | undefined {
  const name = hints.envProxy === undefined ? undefined : proxyVariableFor(url);
  return name === undefined ? undefined : `${name} is set, but ${hints.envProxy}`;
}

/** Collects streamed chunks with their arrival times, for HttpRecord.response.chunks. */
export class ChunkLog {
  private readonly parts: Uint8Array[] = [];
  private readonly marks: [number, number][] = [];
  private total = 0;
  private readonly start = performance.now();

  add(chunk: Uint8Array): void {
    this.parts.push(chunk);
    this.total += chunk.length;
    this.marks.push([Math.round((performance.now() - this.start) * 1000) / 1000, this.total]);
  }

  body(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0]!;
    // A plain Uint8Array, as a body that came whole is: a tape keeps a Buffer as opaque bytes
    // (base64 in `export --review`), a Uint8Array of JSON as readable JSON.
    const joined = Buffer.concat(this.parts, this.total);
    return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
  }

  /** When the last chunk came (performance.now() time), or the log began if none came yet. */
  lastAt(): number {
    const last = this.marks[this.marks.length - 1];
    return last ? this.start + last[0] : this.start;
  }

  /** Chunk marks, only when the body came in more than one piece. */
  chunks(): [number, number][] | undefined {
    return this.marks.length > 1 ? this.marks : undefined;
  }
}

// Made when a stream is first recorded, not when this module loads: browser bundles include it
// (createFetch) and have no Buffer.
let MARKERS: Buffer[] | undefined;
let MARKER_SPAN = 0;
const NOTHING: readonly Uint8Array[] = Object.freeze([]);

function markers(): Buffer[] {
  if (!MARKERS) {
    MARKERS = FINAL_EVENT_MARKERS.map((m) => Buffer.from(m, 'latin1'));
    MARKER_SPAN = Math.max(...MARKERS.map((m) => m.length)) - 1;
  }
  return MARKERS;
}

const hasMarker = (b: Buffer): boolean => {
  for (const m of markers()) if (b.indexOf(m) >= 0) return true;
  return false;
};

/**
 * What of a stream being recorded may go to the client now. A chunk that may carry the
 * stream's final event (providers' FINAL_EVENT_MARKERS, also when one is split between two
 * chunks) is held until the next chunk comes, or, at the end, until the record is stored: a
 * client that stops reading at `data: [DONE]` must not take a stream whose record failed for a
 * whole answer. Every other chunk goes on as it comes, so nothing is delayed but the end.
 *
 * @example
 * const hold = new FinalEventHold()
 * for (const b of hold.push(chunk)) res.write(b)
 * // once the record is stored:
 * const last = hold.release(); if (last) res.write(last)
 */
export class FinalEventHold {
  private held: Uint8Array | undefined;
  private tail: Buffer | undefined;

  /** Takes the next chunk; returns the chunks to send now, in order. */
  push(chunk: Uint8Array): readonly Uint8Array[] {
    markers();
    this.tail ??= Buffer.alloc(0);
    const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const final = hasMarker(b) || (this.tail.length > 0 && hasMarker(Buffer.concat([this.tail, b.subarray(0, MARKER_SPAN)])));
    this.tail = b.length >= MARKER_SPAN ? b.subarray(b.length - MARKER_SPAN) : Buffer.concat([this.tail, b]).subarray(-MARKER_SPAN);
    const before = this.held;
    this.held = final ? chunk : undefined;
    if (final) return before ? [before] : NOTHING;
    return before ? [before, chunk] : [chunk];
  }

  /** The chunk held back, if any (the stream is over and its record stored, or not recorded at all). */
  release(): Uint8Array | undefined {
    const h = this.held;
    this.held = undefined;
    return h;
  }
}

const STREAM_TYPES = new Set(['text/event-stream', 'application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/vnd.amazon.eventstream']);

/**
 * Whether an answer is a stream the client reads as it comes (server-sent events, NDJSON, AWS
 * event streams, or a body of unknown length that is neither JSON nor text, such as a
 * download), rather than one body. A stream is passed on chunk by chunk while it is being
 * recorded; any other answer being recorded is held until its record is durable, so its status
 * can still say whether it was (docs/proxy.md).
 *
 * @example
 * streamsAnswer({ 'content-type': 'text/event-stream; charset=utf-8' }, null) // true
 * streamsAnswer({ 'content-type': 'application/json' }, null) // false
 */
export function streamsAnswer(headers: Record<string, string | string[]>, contentLength: string | null): boolean {
  const ct = headers['content-type'];
  const type = (Array.isArray(ct) ? ct[0] : ct)?.split(';')[0]?.trim().toLowerCase();
  if (type !== undefined && STREAM_TYPES.has(type)) return true;
  if (contentLength !== null) return false;
  return type === undefined || !(type === 'application/json' || type.endsWith('+json') || type.startsWith('text/'));
}

/**
 * Reads an upstream answer being recorded to its end into `log`. An upstream that breaks off
 * mid-body rejects with a TapedeckError (its own E_UPSTREAM_TIMEOUT, else E_UPSTREAM naming the
 * route): the caller answers with an error, never with a body that looks whole.
 *
 * @example
 * const log = new ChunkLog(); await readWhole(up.body, log, 'POST /v1/chat/completions'); log.body()
 */
export async function readWhole(body: ReadableStream<Uint8Array>, log: ChunkLog, route: string): Promise<void> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      log.add(value);
    }
  } catch (e) {
    if (e instanceof TapedeckError) throw e;
    throw new TapedeckError('E_UPSTREAM', `The upstream's answer to ${route} broke off before its end (${e instanceof Error ? e.message : String(e)}); nothing was recorded.`, { route, hint: 'Send the request again.' });
  }
}
