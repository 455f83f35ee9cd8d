/**
 * MCP over Streamable HTTP, for `tapedeck serve`: tapedeck is the MCP endpoint the client talks
 * to (POST for its messages, answered as JSON or as an event stream; GET for the server's own
 * stream; DELETE to end the session), and, when live, a client of the real endpoint. Sessions
 * are tapedeck's own: the client gets a fresh `Mcp-Session-Id` in every mode, mapped to the
 * upstream's session when there is one, so nothing the client sees depends on a recorded id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorResponse, isNotification, isRequest, isResponse, MCP_ERROR, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.ts';
import { McpSession, type McpTiming, type McpUpstream } from './session.ts';
import { inProcessFix, McpTape, type McpTapeOptions } from './tape.ts';
import { servedSession } from './sessions.ts';
import { withoutTrailingSlashes } from '../store/upstream-prefix.ts';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

// `"jsonrpc"` after its `j`.
const SONRPC = [0x73, 0x6f, 0x6e, 0x72, 0x70, 0x63, 0x22];

/**
 * Whether the first `end` bytes hold `"jsonrpc"`. Every request through the proxy is asked, so
 * this finds each `j` with indexOf (memchr), which is rare in LLM request text, and compares the
 * bytes around it: a substring search costs ~15x more on a 2 KB chat body.
 */
function namesJsonRpc(body: Uint8Array, end: number): boolean {
  for (let j = body.indexOf(0x6a, 1); j >= 0 && j + SONRPC.length < end; j = body.indexOf(0x6a, j + 1)) {
    if (body[j - 1] !== 0x22) continue;
    let k = 0;
    while (k < SONRPC.length && body[j + 1 + k] === SONRPC[k]) k++;
    if (k === SONRPC.length) return true;
  }
  return false;
}

/**
 * Whether a request opens the legacy HTTP+SSE transport (MCP 2024-11-05): a GET of the event
 * stream at `…/sse` with no MCP session, or a POST to `…/message(s)?sessionId=…`. tapedeck serves
 * Streamable HTTP only; these get an error that says so (McpHttpEndpoint.handle) rather than
 * the upstream's or tapedeck's own "no session id".
 *
 * @example
 * isLegacySse({ accept: 'text/event-stream' }, { method: 'GET', url: '/sse' }) // true
 */
export function isLegacySse(headers: IncomingMessage['headers'], target: { method?: string; url?: string }): boolean {
  if (headers['mcp-session-id'] !== undefined) return false;
  const url = target.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (target.method === 'GET') return /\/sse\/?$/.test(path) && String(headers.accept ?? '').includes('text/event-stream');
  return target.method === 'POST' && /\/messages?\/?$/.test(path) && q >= 0 && /(?:^|&)sessionId=/.test(url.slice(q + 1));
}

/**
 * Whether a request is MCP traffic: it names an MCP session, or its body is JSON-RPC 2.0, or
 * (given the request's method and URL) it opens the legacy HTTP+SSE transport (isLegacySse).
 *
 * @example
 * isMcpRequest(req.headers, body) // true for { "jsonrpc": "2.0", "id": 1, "method": "tools/list" }
 */
export function isMcpRequest(headers: IncomingMessage['headers'], body: Uint8Array, target?: { method?: string; url?: string }): boolean {
  if (headers['mcp-session-id'] !== undefined) return true;
  if (target?.method === 'GET' && isLegacySse(headers, target)) return true;
  if (body.length === 0 || body.length > 64 * 1024 * 1024) return false;
  // Cheap test first, on the bytes (no string is made): LLM API bodies carry no jsonrpc member,
  // and a JSON-RPC message names it near its start.
  if (!namesJsonRpc(body, Math.min(body.length, 4096))) return false;
  try {
    const v: unknown = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
    const first = Array.isArray(v) ? v[0] : v;
    return isObject(first) && first.jsonrpc === '2.0';
  } catch {
    return false;
  }
}

/** Messages of an event stream body, as they arrive. */
async function readEvents(body: ReadableStream<Uint8Array>, onMessage: (m: JsonRpcMessage) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const flush = (block: string) => {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') return;
    try {
      onMessage(JSON.parse(data) as JsonRpcMessage);
    } catch {
      // not a JSON-RPC event (a comment, a keep-alive): nothing to relay
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    for (let end = buf.search(/\r?\n\r?\n/); end >= 0; end = buf.search(/\r?\n\r?\n/)) {
      flush(buf.slice(0, end));
      buf = buf.slice(end).replace(/^\r?\n\r?\n/, '');
    }
  }
  if (buf.trim() !== '') flush(buf);
}

/**
 * Request headers a client's message does not pass on to the endpoint: hop-by-hop ones, and
 * those tapedeck's own client sets for itself (session, protocol version, body and answer types).
 */
const NOT_FORWARDED: ReadonlySet<string> = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'content-length', 'content-encoding', 'accept', 'accept-encoding', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

/**
 * The client's request headers to send on to the endpoint (its Authorization, cookies, API keys,
 * anything else it set), so an endpoint that needs credentials can be recorded. They go only
 * upstream: an MCP record holds no headers, and the key is the message alone.
 *
 * @example
 * forwardedHeaders({ authorization: 'Bearer t', accept: 'text/event-stream' }) // { authorization: 'Bearer t' }
 */
export function forwardedHeaders(h: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    // HTTP/2 pseudo-headers are the request line, not headers.
    if (v === undefined || k.charCodeAt(0) === 0x3a || NOT_FORWARDED.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * The real Streamable HTTP endpoint as an McpUpstream: each message is a POST (its answer read
 * as JSON or as an event stream), the server's own stream a GET opened after initialization,
 * and close() a DELETE of the session. `clientHeaders` are sent with each of them (the headers
 * of the client's latest request, see forwardedHeaders).
 */
export function httpUpstream(url: string, fetchFn: typeof fetch = fetch, clientHeaders: () => Record<string, string> = () => ({})): McpUpstream {
  let session: string | undefined;
  let protocol: string | undefined;
  let getStream: AbortController | undefined;
  const inflight = new Set<Promise<void>>();
  const headers = (): Record<string, string> => ({
    ...clientHeaders(),
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(session ? { 'mcp-session-id': session } : {}),
    ...(protocol ? { 'mcp-protocol-version': protocol } : {}),
  });
  const deliver = (m: JsonRpcMessage, standalone = false) => {
    // The negotiated protocol version goes on every later request (Streamable HTTP asks for it).
    if (isResponse(m) && 'result' in m && isObject(m.result) && typeof m.result.protocolVersion === 'string' && isObject(m.result.serverInfo)) protocol = m.result.protocolVersion;
    up.onmessage?.(m, standalone);
  };
  const relay = async (res: Response): Promise<void> => {
    const ct = res.headers.get('content-type') ?? '';
    if (!res.body) return;
    if (ct.includes('text/event-stream')) return readEvents(res.body, deliver);
    const text = await res.text();
    if (text.trim() === '') return;
    const v = JSON.parse(text) as JsonRpcMessage | JsonRpcMessage[];
    for (const m of Array.isArray(v) ? v : [v]) deliver(m);
  };
  const openGet = () => {
    getStream = new AbortController();
    const p = fetchFn(url, { method: 'GET', headers: { ...clientHeaders(), accept: 'text/event-stream', ...(session ? { 'mcp-session-id': session } : {}), ...(protocol ? { 'mcp-protocol-version': protocol } : {}) }, signal: getStream.signal })
      .then((res) => (res.ok && res.body ? readEvents(res.body, (m) => deliver(m, true)) : res.body?.cancel()))
      .catch(() => undefined);
    void p;
  };
  const up: McpUpstream = {
    async start() {},
    async send(m) {
      const p = (async () => {
        let res: Response;
        try {
          res = await fetchFn(url, { method: 'POST', headers: headers(), body: JSON.stringify(m) });
        } catch (e) {
          up.onclose?.(`the MCP server at ${url} could not be reached (${e instanceof Error ? e.message : String(e)})`);
          return;
        }
        const sid = res.headers.get('mcp-session-id');
        if (sid) session = sid;
        if (!res.ok && res.status !== 202) {
          const text = await res.text().catch(() => '');
          if (isRequest(m)) {
            try {
              const v = JSON.parse(text) as Record<string, unknown>;
              if (isObject(v.error)) return up.onmessage?.({ jsonrpc: '2.0', id: m.id, error: v.error as { code: number; message: string } });
            } catch {
              // not JSON-RPC: said below
            }
            up.onmessage?.({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: `HTTP ${res.status} from the MCP server: ${text.slice(0, 200)}` } });
          }
          return;
        }
        await relay(res).catch((e: unknown) => {
          if (isRequest(m)) up.onclose?.(`the MCP server's answer stream broke (${e instanceof Error ? e.message : String(e)})`);
        });
      })();
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      // Answers come through onmessage; the POST of a request is not waited for, so the server
      // can ask the client something (sampling) while it is open.
      if (!isRequest(m)) await p;
      if (isNotification(m) && m.method === 'notifications/initialized' && !getStream) openGet();
    },
    async close() {
      getStream?.abort();
      if (session) await fetchFn(url, { method: 'DELETE', headers: { ...clientHeaders(), 'mcp-session-id': session } }).then((r) => r.body?.cancel(), () => undefined);
    },
  };
  return up;
}

/**
 * A POST of the client that owes answers: an event stream once something other than its last
 * answer must go out (or JSON, when the client does not take event streams), else one JSON answer.
 */
interface Post {
  res: ServerResponse;
  owed: Set<JsonRpcId>;
  /** The client takes `text/event-stream`. */
  sse: boolean;
  /** The event stream has begun. */
  started: boolean;
  /** JSON mode: the answers so far. */
  collected: JsonRpcMessage[];
}

/** One client session on tapedeck's endpoint. */
interface HttpSession {
  id: string;
  session: McpSession;
  /** Open POST answers, by the client request ids they still owe. */
  posts: Map<JsonRpcId, Post>;
  get?: ServerResponse;
  /** Server messages for the GET stream before one is open. */
  queued: JsonRpcMessage[];
  /** The client's headers for the endpoint, from its latest request (forwardedHeaders). */
  forward: Record<string, string>;
}

export interface McpHttpOptions extends McpTapeOptions {
  /** The real endpoint's base URL; the request path is appended. Needed unless replaying. */
  upstream?: string;
  timing?: McpTiming;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** How long a session's close waits for answers still on the way (McpSession's option; tapedeck serve --shutdown-timeout). */
  shutdownTimeoutMs?: number;
  /** Where the user sets it, for the warning about an answer that did not come in time. */
  shutdownFix?: string;
  /** Replay: how much longer than recorded a client may take to cancel a call recorded as cancelled (McpSession's option; tapedeck serve --cancel-grace). */
  cancelGraceMs?: number;
}

/**
 * tapedeck's Streamable HTTP endpoint: handles POST, GET and DELETE of MCP requests, one
 * McpSession per client session, over one MCP tape.
 *
 * @example
 * const mcp = new McpHttpEndpoint({ tape: 'tapes/tools.tape', mode: 'replay' })
 * if (isMcpRequest(req.headers, body)) return mcp.handle(req, res, body)
 */
/** MCP counters of a proxy, see {@link McpHttpEndpoint.stats}. */
export interface McpHttpStats {
  hits: number;
  recorded: number;
  misses: number;
  appendFailures: number;
  sessions: number;
}

const NO_MARKS: ReadonlySet<string> = new Set();

export class McpHttpEndpoint {
  private readonly opts: McpHttpOptions;
  private tape: Promise<McpTape> | undefined;
  private readonly sessions = new Map<string, HttpSession>();

  constructor(opts: McpHttpOptions) {
    this.opts = opts;
    McpTape.check(opts);
  }

  private open(): Promise<McpTape> {
    this.tape ??= McpTape.open({ ...this.opts, recordCommand: this.opts.recordCommand ?? inProcessFix('new McpHttpEndpoint({ tape, mode: ', this.opts.mode) }).then((t) => (this.opened = t));
    return this.tape;
  }

  /** The tape once open, for the counters. */
  private opened: McpTape | undefined;

  /**
   * Counters of the MCP traffic so far (the proxy's `/__tapedeck/stats` shows them as `mcp`):
   * messages answered from the tape, exchanges recorded (counted once stored), misses, records
   * that could not be stored, open sessions.
   *
   * @example
   * endpoint.stats() // { hits: 12, recorded: 0, misses: 1, appendFailures: 0, sessions: 1 }
   */
  stats(): McpHttpStats {
    const t = this.opened;
    return { hits: t?.hits ?? 0, recorded: t?.recorded ?? 0, misses: t?.misses.length ?? 0, appendFailures: t?.appendFailures ?? 0, sessions: this.sessions.size };
  }

  /**
   * The usage marks (./usage-mark.ts) of the exchanges served or recorded so far: a run
   * summary counts them used, as it counts the HTTP recordings served.
   *
   * @example
   * endpoint.usedMarks().has(mcpUsageMark(record)) // true once it was served
   */
  usedMarks(): ReadonlySet<string> {
    return this.opened?.used ?? NO_MARKS;
  }

  /** Answers one HTTP request of the MCP endpoint (the body already read). */
  async handle(req: IncomingMessage, res: ServerResponse, body: Uint8Array): Promise<void> {
    if (isLegacySse(req.headers, req)) return this.legacySse(req, res, body);
    const tape = await this.open();
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? this.sessions.get(sid) : undefined;
    // Credentials may change during a session (a refreshed token): the latest go upstream.
    if (known && this.opts.upstream) known.forward = forwardedHeaders(req.headers);
    if (req.method === 'DELETE') {
      if (known) {
        this.sessions.delete(known.id);
        await this.endSession(known);
      }
      res.writeHead(known ? 200 : 404).end();
      return;
    }
    if (req.method === 'GET') {
      if (!known) return this.jsonError(res, 404, 'Session not found');
      known.get?.end();
      known.get = res;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'mcp-session-id': known.id });
      res.flushHeaders();
      for (const m of known.queued.splice(0)) this.event(res, m);
      res.on('close', () => {
        if (known.get === res) known.get = undefined;
      });
      return;
    }
    if (req.method !== 'POST') return this.jsonError(res, 405, 'Method not allowed');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
    } catch {
      return this.jsonError(res, 400, 'Parse error', -32700);
    }
    const messages = (Array.isArray(parsed) ? parsed : [parsed]) as JsonRpcMessage[];
    const init = messages.find((m) => isRequest(m) && m.method === 'initialize');
    let s = known;
    if (!s) {
      if (!init) return this.jsonError(res, sid === undefined ? 400 : 404, sid === undefined ? 'Bad Request: no session id' : 'Session not found');
      s = this.newSession(tape, req.url ?? '/');
      if (this.opts.upstream) s.forward = forwardedHeaders(req.headers);
    }
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      res.writeHead(202, { 'mcp-session-id': s.id }).end();
      for (const m of messages) s.session.fromClient(m);
      return;
    }
    const sse = String(req.headers.accept ?? '').includes('text/event-stream');
    const post: Post = { res, owed: new Set(requests.map((r) => r.id)), sse, started: false, collected: [] };
    for (const r of requests) s.posts.set(r.id, post);
    res.on('close', () => {
      for (const id of post.owed) s!.posts.delete(id);
    });
    for (const m of messages) s.session.fromClient(m);
  }

  private newSession(tape: McpTape, path: string): HttpSession {
    const id = randomUUID();
    const base = this.opts.upstream;
    const s: HttpSession = {
      id,
      posts: new Map(),
      queued: [],
      forward: {},
      session: undefined as unknown as McpSession,
    };
    // Replay of a tape another entry point recorded (its records name their server).
    const served = tape.records ? { session: 1, server: undefined } : servedSession(tape.sessionsOnTape());
    s.session = new McpSession({
      tape,
      session: served.session,
      ...(served.server !== undefined ? { server: served.server } : {}),
      // The upstream's path prefix, then the path the client used.
      ...(base ? { upstream: () => httpUpstream(`${withoutTrailingSlashes(base)}${path}`, this.opts.fetch, () => s.forward) } : {}),
      send: (m, related) => this.route(s, m, related),
      timing: this.opts.timing,
      timeoutMs: this.opts.timeoutMs,
      ...(this.opts.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: this.opts.shutdownTimeoutMs } : {}),
      ...(this.opts.shutdownFix !== undefined ? { shutdownFix: this.opts.shutdownFix } : {}),
      ...(this.opts.cancelGraceMs !== undefined ? { cancelGraceMs: this.opts.cancelGraceMs } : {}),
      gapMs: 1,
    });
    this.sessions.set(id, s);
    return s;
  }

  /** A message for the client: on the POST stream of the request it belongs to, else the GET stream. */
  private route(s: HttpSession, m: JsonRpcMessage, related: JsonRpcId | undefined): void {
    const post = related !== undefined ? s.posts.get(related) : undefined;
    if (!post || post.res.writableEnded) return this.toGet(s, m);
    const answer = isResponse(m) && post.owed.has(m.id);
    if (answer) {
      post.owed.delete(m.id);
      s.posts.delete(m.id);
    }
    const last = answer && post.owed.size === 0;
    if (last && !post.started && post.collected.length === 0) {
      // The only thing this POST carries: a plain JSON answer, no stream to set up.
      return this.json(post.res, s, m);
    }
    if (!post.sse) {
      // JSON answers carry answers only; the rest (the server's requests too) goes to the GET stream.
      if (!answer) return this.toGet(s, m);
      post.collected.push(m);
      if (last) this.json(post.res, s, post.collected);
      return;
    }
    if (!post.started) {
      post.started = true;
      post.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'mcp-session-id': s.id });
    }
    this.event(post.res, m);
    if (last) post.res.end();
  }

  private json(res: ServerResponse, s: HttpSession, body: JsonRpcMessage | JsonRpcMessage[]): void {
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'mcp-session-id': s.id }).end(text);
  }

  private toGet(s: HttpSession, m: JsonRpcMessage): void {
    if (s.get && !s.get.writableEnded) this.event(s.get, m);
    else s.queued.push(m);
  }

  private event(res: ServerResponse, m: JsonRpcMessage): void {
    res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
  }

  /**
   * A client of the legacy HTTP+SSE transport: refused, saying so and how to connect instead;
   * in JSON-RPC where the client reads it (its POSTs), on the proxy's stderr once, and as the
   * body of the refused event stream. Nothing goes upstream, nothing is recorded.
   */
  private legacySse(req: IncomingMessage, res: ServerResponse, body: Uint8Array): void {
    const why = `tapedeck: the legacy HTTP+SSE MCP transport (GET ${req.method === 'GET' ? (req.url ?? '/sse') : '/sse'}, POST /messages) is not supported by tapedeck serve; use Streamable HTTP: run the server with its Streamable HTTP transport (server-everything: streamableHttp; many servers: --streamable-http or --transport http), and connect the client with StreamableHTTPClientTransport to the proxy's MCP path (for example http://<proxy>/mcp). docs/mcp.md, "Streamable HTTP".`;
    if (!this.legacyWarned) {
      this.legacyWarned = true;
      (this.opts.onWarning ?? ((m: string) => process.stderr.write(`${m}\n`)))(why);
    }
    let id: JsonRpcId | null = null;
    try {
      const v = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8')) as unknown;
      const first = Array.isArray(v) ? v[0] : v;
      if (isObject(first) && (typeof first.id === 'string' || typeof first.id === 'number')) id = first.id;
    } catch {
      // a GET has no body; a POST that is not JSON gets the error with id null
    }
    const text = JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: why } });
    res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  }

  private legacyWarned = false;

  private jsonError(res: ServerResponse, status: number, message: string, code = -32000): void {
    const text = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  }

  /**
   * The client POSTs still owed an answer, across sessions: requests in flight, as the proxy
   * counts them (its shutdown says how many it finishes).
   *
   * @example
   * endpoint.inFlight // 1 while a tools/call waits for the server's answer
   */
  get inFlight(): number {
    const open = new Set<Post>();
    for (const s of this.sessions.values()) for (const p of s.posts.values()) if (!p.res.writableEnded) open.add(p);
    return open.size;
  }

  /**
   * Ends a session: its calls still unanswered get the session's shutdown timeout to be answered
   * (and recorded) on their own POST; one still owed an answer then gets a JSON-RPC error, never
   * an empty response, and is not recorded (McpSession.close drops a late answer).
   */
  private async endSession(s: HttpSession): Promise<void> {
    await s.session.close();
    for (const [id, p] of [...s.posts]) {
      if (p.res.writableEnded) continue;
      this.route(s, errorResponse(id, MCP_ERROR.timeout, `tapedeck: the MCP server sent no answer before the session ended (tapedeck serve shut down, or the client ended the session); nothing was recorded.`), id);
    }
    s.get?.end();
    for (const p of s.posts.values()) if (!p.res.writableEnded) p.res.end();
  }

  /**
   * Ends every session at once (each gets the shutdown timeout, not one after the other; live
   * servers get their DELETE) and closes the tape.
   */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => this.endSession(s)));
    this.sessions.clear();
    if (this.tape) await (await this.tape).close();
  }
}
