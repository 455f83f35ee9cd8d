/**
 * createHandler: the record/replay proxy as a node:http `(req, res)` handler, for `tapedeck serve`
 * or mounted in an existing node:http, Express or Fastify server.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { TapedeckError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import { REDACT_INNER } from '../store/redact-options.ts';
import { afterOversizedBody } from './oversized-body.ts';
import { maskJsonErrorExcerpt } from './json-error-excerpt.ts';
import { Deck, DECK_OPTION_NAMES, emptyStats, type DeckOptions, type DeckRequest, type DeckStats, type Decision, type Prepared } from './deck.ts';
import { asTapedeckError, errorAnswer, showsWholeBody, statusOf } from './http-errors.ts';
import { checkHooks, reportRecordHookFailure } from './deck-hooks.ts';
import { responseChunks, type HttpRecord } from '../store/records.ts';
import { originOf } from '../store/origins.ts';
import { routeStreams } from '../providers/index.ts';
import { keptOffTape } from './unwhole-answer.ts';
import { normalizeRequestPath } from './request-path.ts';
import { pointAnswerUrls, pointHeaderUrls, pointLocation, proxyBase } from './answer-urls.ts';
import { Flights } from './flights.ts';
import { unrecordedByKey, unrecordedMiss } from './unrecordable.ts';
import { awsCredentialsFromEnv, refusedSignatureWarning, resignForUpstream, type SigV4Outcome } from './aws-resign.ts';
import type { AwsCredentials } from './sigv4.ts';
import { ChunkLog, FinalEventHold, headersWait, readWhole, safeUrl, storedResponseHeaders, streamsAnswer, UpstreamLink, upstreamTarget, upstreamUrl } from './upstream.ts';
import { upstreamPrefix } from '../store/upstream-prefix.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, graceOption, timeoutOption, type UpstreamTimeouts } from './timeouts.ts';
import { handleReplay, type ReplaySource } from '../replay/handler.ts';
import type { ReplayPut } from '../replay/store.ts';
import { isMcpRequest, McpHttpEndpoint, type McpHttpStats } from '../mcp/http.ts';
import type { Duplex } from 'node:stream';
// Realtime sessions (and the WebSocket server under them) are loaded on the first upgrade:
// a proxy that serves HTTP only does not pay for them at start.
import type { RealtimeEndpoint, RealtimeStats } from '../realtime/endpoint.ts';
import { refuseChaos } from '../chaos/refused.ts';
import { upstreamCutWarning } from './upstream-cut.ts';
import { jsonLabelled } from './form-labelled-json.ts';
import { checkChaos, type ChaosOptions } from '../chaos/options.ts';
import { recordBehindUpstream } from './record-behind.ts';
import { CHAOS_HEADER, abandonedBy, damagedAnswer, faultHeader, faultSent, liveDamage, needsRecordBehind, planChaos, statusFaultHeaders, withoutChaosHeader, type DamagedAnswer, type DamagePlan, type HttpChaos, type LiveDamagePlan } from './chaos.ts';
import type { RecordTurn } from './record-turns.ts';
import { isBytes } from '../bytes.ts';
import { pageAccess, preflightAllowed } from './page-origin.ts';
import { otherTemperature } from './other-temperature.ts';
import { recordOfTrace, tokenOfReplayBody } from './replay-from-tape.ts';

/**
 * A replay store for `POST /v1/replay` (a ReplayStore or DurableReplayStore). With
 * `put`, every answer the proxy serves or records is stored under its trace token.
 */
export type ReplayTarget = ReplaySource & { put?(p: ReplayPut): unknown };

/**
 * Options of createHandler: the tape and its mode, the upstream, matching, redaction and hooks,
 * and timeouts.
 */
export interface HandlerOptions extends DeckOptions, UpstreamTimeouts {
  /**
   * At close(), how long in-flight exchanges may take to finish before their upstream calls are
   * aborted (default 10 s; tapedeck serve --shutdown-timeout). An aborted exchange is not
   * recorded; its client gets 503 E_PROXY_CLOSED, or a cut connection if its answer had started.
   */
  shutdownTimeoutMs?: number;
  /**
   * MCP over Streamable HTTP, replay of a call recorded as cancelled by its client: how much
   * longer than recorded the client may take to cancel it before it is a miss (whole ms, default
   * 2000; tapedeck serve --cancel-grace; docs/mcp.md, "Requests the client cancels").
   */
  cancelGraceMs?: number;
  /** Base URL requests are forwarded to, e.g. https://api.openai.com. Required unless mode is replay. */
  upstream?: string;
  /** fetch used for upstream calls (default: Node's global fetch). */
  fetch?: typeof fetch;
  /**
   * What a realtime or MCP session's miss tells the user to do, e.g. `re-record: TAPEDECK_MODE=record
   * npx vitest run test/voice.test.ts` (default: restart tapedeck serve with --mode record). A test's
   * tape.serve() gives its test command here.
   */
  sessionRecordCommand?: string;
  /**
   * The command that records a request this proxy missed, which its HTTP misses name as
   * `record it: <command>` with the test options (`ignoreArgs`, `strictOrder`) in place of the
   * CLI flags, e.g. `TAPEDECK_MODE=update npx vitest run test/chat.test.ts -t '^chat$'`. A test's
   * tape.serve() gives its test's command here, as its tape.fetch names it; without it a miss
   * says to restart tapedeck serve with --mode record.
   */
  testRecordCommand?: string;
  /**
   * Store behind `POST /v1/replay { trace_token, query, document_id }`: the trace token is an
   * answer's `x-tapedeck-trace`, the query its `x-tapedeck-key`, the document id its route
   * (`POST /v1/chat/completions`). Without one the endpoint answers 501 (replay disabled);
   * `false` leaves `/v1/replay` to the tape and the upstream like any other path.
   */
  replay?: ReplayTarget | false;
  /**
   * AWS credentials the proxy re-signs SigV4 requests with when it forwards them to another
   * host than the client signed (docs/proxy.md, "AWS SigV4"): only requests signed with this
   * same access key id, once their signature verifies with its secret (else 403
   * InvalidSignatureException, E_SIGNATURE, and nothing goes upstream). Default: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN
   * from the environment; `false` never re-signs.
   */
  awsCredentials?: AwsCredentials | false;
  /**
   * Called with one line per miss (`POST /v1/chat/completions: <what differs>; <fix>`), when it
   * is answered (tapedeck serve prints it on stderr unless --quiet), and the miss itself (its
   * details say the route and what differs).
   */
  onMiss?: (line: string, miss: TapedeckError) => void;
}

/** Statistics of a handler: the engine's counters plus latency and in-flight requests. */
export interface HandlerStats extends DeckStats {
  inFlight: number;
  /**
   * Median time from request to response end, in ms: over the last 4096 requests, or once
   * there were more, over the last 4096 of a sample of one request in eight.
   */
  p50Ms: number | null;
  p99Ms: number | null;
  uptimeS: number;
  /**
   * One line per request that missed (`POST /v1/chat/completions: <what differs>; <fix>`, the
   * line `onMiss` gets), the first 50 of them: a suite whose app swallows the SDK's error reads
   * them from `/__tapedeck/stats` to fail its run with the fix (docs/proxy.md, "End-to-end tests").
   */
  missed: string[];
  /** MCP Streamable HTTP traffic on the same port, once there was some (docs/mcp.md). */
  mcp?: McpHttpStats;
  /** Realtime sessions over WebSocket on the same port, once there was one (docs/realtime.md). */
  realtime?: RealtimeStats;
}

/** A node:http request handler with lifecycle methods. */
export interface TapedeckHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
  /** Resolves when the tape is open (rejects with its error, e.g. E_MODE or E_TAPE_CORRUPT). */
  readonly ready: Promise<void>;
  /** Requests being answered right now. */
  readonly inFlight: number;
  stats(): HandlerStats;
  /**
   * The trace tokens (`x-tapedeck-trace`) of the recordings this handler served or recorded so
   * far, and the usage marks of the MCP exchanges and realtime sessions it served or recorded on
   * the same port (a realtime session that missed is not served): what a run summary counts as
   * used, so that a prune after the run keeps them.
   *
   * @example
   * const unused = traces.filter((t) => !handler.usedTraces().has(t))
   */
  usedTraces(): ReadonlySet<string>;
  /**
   * A node:http `upgrade` listener: realtime sessions over WebSocket (OpenAI Realtime, Gemini
   * Live; docs/realtime.md) on the same tape. Any other upgrade is answered 404 and closed.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Replaces the chaos settings from now on, for HTTP answers and realtime sessions alike
   * (docs/chaos.md); undefined stops injecting. Rejects with E_CHAOS_MODE outside replay
   * unless `live: true`.
   *
   * @example
   * await handler.chaos({ faults: { close: 1 }, attempts: 1 })
   */
  chaos(opts: ChaosOptions | undefined): Promise<void>;
  /**
   * Stops taking requests (503 E_PROXY_CLOSED), waits for in-flight ones for at most
   * `shutdownTimeoutMs`, aborts what is left (not recorded), writes pending records and closes
   * the tape.
   */
  close(): Promise<void>;
}

const CONTENT_FREE = new Set([204, 304]);
const LATENCY_WINDOW = 4096;
/** How many miss lines the stats keep: enough to act on, bounded for a proxy left running. */
const MISSED_KEPT = 50;
const LATENCY_SAMPLE = 8;
// The global `performance` is a getter in Node: read once, not on every request.
const clock = performance;

function percentile(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p + 0.5))]!;
}

type BodyCallback = (err: unknown, body?: Uint8Array) => void;

/**
 * Reads a request body up to a limit, then calls back once; more is E_BODY_TOO_LARGE (413),
 * called back once the rest has been read and dropped (./oversized-body.ts). A callback rather
 * than a promise: on the replay path the answer is written in the tick the body ends, as a bare
 * node:http server would.
 */
function readBodyThen(req: IncomingMessage, max: number, done: BodyCallback): void {
  const pre = (req as { body?: unknown }).body;
  // Express/Fastify may have read the stream already: take their raw or parsed body.
  if (pre !== undefined && (req.readableEnded || req.complete)) {
    if (isBytes(pre)) return done(undefined, pre);
    if (typeof pre === 'string') return done(undefined, Buffer.from(pre));
    // A parsed body is re-serialized. Once the stream has been read it is the only copy, even
    // when empty ({} or []: waiting for the stream would hang). Before that, an empty object
    // may be a placeholder from a parser that skipped the request (Express 4): read the stream.
    if (pre !== null && typeof pre === 'object' && (req.readableEnded || Object.keys(pre).length > 0)) {
      let body: Uint8Array;
      try {
        body = reserialize(pre, String(req.headers['content-type'] ?? ''));
      } catch (e) {
        return done(e);
      }
      return done(undefined, body);
    }
  }
  const declared = Number(req.headers['content-length']);
  if (declared > max) return afterOversizedBody(req, () => done(tooLarge(declared, max)));
  const parts: Buffer[] = [];
  let n = 0;
  let settled = false;
  const onData = (c: Buffer) => {
    n += c.length;
    if (n > max) {
      req.off('data', onData);
      settled = true;
      afterOversizedBody(req, () => done(tooLarge(n, max)));
      return;
    }
    parts.push(c);
  };
  req.on('data', onData);
  req.on('end', () => {
    if (settled) return;
    settled = true;
    done(undefined, parts.length === 1 ? parts[0]! : Buffer.concat(parts, n));
  });
  req.on('error', (e) => {
    if (settled) return;
    settled = true;
    done(e);
  });
}

/** {@link readBodyThen} as a promise, for the paths that are not hot. */
function readBody(req: IncomingMessage, max: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => readBodyThen(req, max, (err, body) => (err === undefined ? resolve(body!) : reject(err))));
}

/**
 * The bytes of a body a framework's parser already turned into an object, in the request's own
 * content type: JSON for JSON, a query string for a flat form (express.urlencoded). Anything
 * else cannot be rebuilt faithfully, and sending it upstream in another format than its
 * content type says would record a request the client never made: that is an error.
 */
function reserialize(body: object, contentType: string): Buffer {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === '' || type === 'application/json' || type.endsWith('+json')) return Buffer.from(JSON.stringify(body));
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams();
    const flat = Object.entries(body).every(([k, v]) => {
      for (const x of Array.isArray(v) ? v : [v]) {
        if (typeof x !== 'string') return false;
        form.append(k, x);
      }
      return true;
    });
    if (flat) return Buffer.from(form.toString());
  }
  throw new TapedeckError('E_PROXY_BODY', `A body parser mounted before tapedeck already read this ${type} request body, and it cannot be turned back into the bytes the client sent.`, {
    contentType: type,
    hint: 'Mount the tapedeck handler before body parsers, or give it the raw bytes (express.raw({ type: "*/*" })).',
  });
}

function tooLarge(n: number, max: number): TapedeckError {
  return new TapedeckError('E_BODY_TOO_LARGE', `Request body of ${n} bytes or more is over the limit of ${max} bytes.`, {
    limit: max,
    hint: 'Raise the limit with --max-body (maxBodyBytes), or send a smaller request.',
  });
}

/**
 * Per-record answer parts, built once: the response headers (recorded ones plus tapedeck's) by
 * how the answer matched, and the body as a Buffer view of the recorded bytes (a Uint8Array is
 * wrapped in a new Buffer on every write otherwise).
 */
interface ReplayParts {
  /** The headers of a whole exact answer, the common case, apart from the map. */
  exact?: OutgoingHttpHeaders;
  headers: Map<string, OutgoingHttpHeaders>;
  body: Buffer;
  /**
   * A small body as a latin1 string, one char per byte (so it writes back as exactly the
   * recorded bytes, whatever they are). node:http joins a string body to the head and writes
   * both in one go, where a Buffer body is queued after the head and written with writev: ~900
   * fewer instructions per replayed answer (proxy benchmark). Only small bodies: the join
   * copies the body on every write.
   */
  text?: string;
}
const prepared = new WeakMap<HttpRecord, ReplayParts>();

/** Bodies up to this many bytes are also kept as a string ({@link ReplayParts.text}). */
const TEXT_BODY_MAX = 4096;

function replayParts(rec: HttpRecord): ReplayParts {
  let p = prepared.get(rec);
  if (!p) {
    const b = rec.response.body;
    const body = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    prepared.set(rec, (p = { headers: new Map(), body, ...(body.length <= TEXT_BODY_MAX ? { text: body.toString('latin1') } : {}) }));
  }
  return p;
}

function replayHeaders(p: ReplayParts, rec: HttpRecord, matchedBy: string, whole: boolean): OutgoingHttpHeaders {
  const exact = whole && matchedBy === 'exact';
  if (exact && p.exact !== undefined) return p.exact;
  const id = whole ? matchedBy : `${matchedBy}~`;
  let h = p.headers.get(id);
  if (!h) {
    h = { ...rec.response.headers, 'x-tapedeck-match': matchedBy, 'x-tapedeck-key': rec.key, 'x-tapedeck-trace': rec.trace };
    // A HEAD recording's own length stands (see forwardIn).
    if (whole && !CONTENT_FREE.has(rec.response.status) && !(rec.request.method === 'HEAD' && h['content-length'] !== undefined)) h['content-length'] = rec.response.body.length;
    p.headers.set(id, h);
  }
  if (exact) p.exact = h;
  return h;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Writes a recorded stream chunk by chunk, paced; stops early when the client goes away. */
async function writePaced(res: ServerResponse, rec: HttpRecord, timing: 'recorded' | number): Promise<void> {
  const chunks = responseChunks(rec.response);
  const t0 = performance.now();
  for (let i = 0; i < chunks.length; i++) {
    const [at, bytes] = chunks[i]!;
    const wait = timing === 'recorded' ? at - (performance.now() - t0) : i === 0 ? 0 : timing;
    if (wait > 0) await sleep(wait);
    if (gone(res)) return;
    if (!res.write(bytes)) await drained(res);
  }
  // A hand-written cut stream: the connection drops where the chunks end, with no end of body.
  if (rec.response.cut) res.socket?.end();
  else res.end();
}

/** Sends the chunk a FinalEventHold kept back, now that the stream may end. */
async function writeHeld(res: ServerResponse, hold: FinalEventHold | undefined): Promise<void> {
  const last = hold?.release();
  if (last && !gone(res) && !res.write(last)) await drained(res);
}

/**
 * Whether the client's side of an answer is gone. node:http's response says so in `destroyed`;
 * an HTTP/2 compatibility response has no such member (always undefined), its stream does: a
 * stream the client cancelled (RST_STREAM) read as open, and its next write waited for ever.
 */
function gone(res: ServerResponse): boolean {
  return res.destroyed === true || (res as unknown as { stream?: { destroyed?: boolean } }).stream?.destroyed === true;
}

/** Resolves once `res` can take more, or at once when its client is gone ('close' fired already). */
function drained(res: ServerResponse): Promise<void> {
  if (gone(res)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function closedError(): TapedeckError {
  return new TapedeckError('E_PROXY_CLOSED', 'The tapedeck proxy is shutting down.', { hint: 'Retry against a running proxy.' });
}

/**
 * An HTTP/2 request's headers as HTTP/1.1 would carry them: the pseudo-headers (`:method`,
 * `:path`, `:scheme`, `:authority`) are the request line, not headers, and are neither keyed,
 * stored nor forwarded; `:authority` is the Host.
 */
function h1Headers(h: IncomingMessage['headers']): IncomingMessage['headers'] {
  const out: IncomingMessage['headers'] = {};
  for (const [k, v] of Object.entries(h)) if (k.charCodeAt(0) !== 0x3a) out[k] = v;
  const authority = h[':authority'];
  if (out.host === undefined && typeof authority === 'string') out.host = authority;
  return out;
}

/** The upstream's status line on the client's response (HTTP/2 has no reason phrase; Node warns when given one). */
function writeUpstreamHead(req: IncomingMessage, res: ServerResponse, up: Response, headers: OutgoingHttpHeaders): void {
  if (req.httpVersionMajor === 2) res.writeHead(up.status, headers);
  else res.writeHead(up.status, up.statusText, headers);
}

/**
 * Drops a client's connection: after what was written (`flush`: the socket ends, so the bytes
 * sent arrive and the body has no end), or at once. HTTP/2 resets the stream alone.
 */
function dropConnection(req: IncomingMessage, res: ServerResponse, flush: boolean): void {
  if (req.httpVersionMajor === 2) {
    const stream = (res as unknown as { stream?: { close(code: number): void } }).stream;
    // Mid-answer (flush, a cut): NGHTTP2_INTERNAL_ERROR, what a server that failed mid-answer
    // sends. Before the status line (a reset): NGHTTP2_CANCEL, which an HTTP/2 client takes as
    // it takes a dropped connection (the AWS SDK retries both, not INTERNAL_ERROR), while the
    // other calls on the connection go on.
    if (stream) return stream.close(flush ? 2 : 8);
  }
  if (flush) res.socket?.end();
  else res.destroy();
}

/**
 * A miss on one line for the log: its headline, with the fix put back after `; ` when it did not
 * fit on the headline's line (missHeadline puts it on the next one): a log line that stops at
 * the difference does not say how to fix it.
 */
function missLine(e: TapedeckError): string {
  const [first = '', second] = e.message.split('\n', 2);
  const fix = e.details.fix;
  return typeof fix === 'string' && second !== undefined && second.toLowerCase() === fix.toLowerCase() ? `${first}; ${fix}` : first;
}

function sanitize(s: string): string {
  return s.replace(/[^\x20-\x7e]+/g, ' ').slice(0, 1000);
}

/**
 * Builds the record/replay proxy as a `(req, res)` handler. It opens the tape at once; requests
 * that arrive before it is open wait for it. `GET /__tapedeck/health` and `/__tapedeck/stats`
 * are answered by the handler itself.
 *
 * @example
 * import { createServer } from 'node:http'
 * import { createHandler } from 'llm-tapedeck/proxy'
 * const handler = createHandler({ tape: 'recordings/app.tape', upstream: 'https://api.openai.com', mode: 'replay' })
 * createServer(handler).listen(8080, '127.0.0.1')
 * // Express: app.use('/llm', handler)
 */
export function createHandler(opts: HandlerOptions): TapedeckHandler {
  checkOptionsObject(opts, 'createHandler', "createHandler({ tape: 'recordings/app.tape', upstream: 'https://api.openai.com' })");
  checkOptionNames(opts, HANDLER_OPTIONS, 'createHandler', 'docs/proxy.md', REDACT_INNER);
  return handlerFor(opts);
}

/** The names of createHandler's own options (DeckOptions' are the rest). */
export const HANDLER_OPTION_NAMES = ['connectTimeoutMs', 'idleTimeoutMs', 'shutdownTimeoutMs', 'cancelGraceMs', 'upstream', 'fetch', 'sessionRecordCommand', 'testRecordCommand', 'replay', 'awsCredentials', 'onMiss'] as const;
const HANDLER_OPTIONS = optionNames<HandlerOptions>()([...DECK_OPTION_NAMES, ...HANDLER_OPTION_NAMES]);

/**
 * Throws E_ARG unless `replay` is absent, false or a replay store: settings given in its place
 * (`{ enabled: false }`) have no `lookup`, and every replay was a 501 with no word of why.
 */
function checkReplayTarget(replay: unknown): void {
  if (replay === undefined || replay === false) return;
  const r = replay as Partial<ReplayTarget> | null;
  if (typeof r?.lookup === 'function' && typeof r.enabled === 'boolean') return;
  throw new TapedeckError('E_ARG', `The replay option takes a replay store (a ReplayStore or DurableReplayStore), or false; got ${r === null ? 'null' : typeof r === 'object' ? 'an object that is not one' : typeof r}.`, {
    option: 'replay',
    hint: 'Pass replay: new ReplayStore({ maxEntries: 10_000 }) (its settings go to the store), or await DurableReplayStore.open(path); leave replay out for none (tapedeck serve --replay-store FILE).',
  });
}

/**
 * createHandler without the check of its option names, for startProxy, which checks its own
 * (createHandler's and the server's). Internal.
 *
 * @example
 * const handler = handlerFor({ tape: 'app.tape', upstream: 'https://api.openai.com' })
 */
export function handlerFor(opts: HandlerOptions): TapedeckHandler {
  // Here, synchronously: the deck opens later (Deck.open is async), and an async hook found
  // there would be a 500 on the first request instead of an error where the handler is made.
  checkHooks(opts);
  checkReplayTarget(opts.replay);
  let upstream = opts.upstream;
  // Credentials in the URL (`https://user:password@gateway`) go upstream as Basic auth, to
  // requests that bring no Authorization of their own; the URL kept (and shown) has none.
  let upstreamAuth: string | undefined;
  if (upstream !== undefined) {
    try {
      const u = new URL(upstream);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
      ({ base: upstream, authorization: upstreamAuth } = upstreamTarget(upstream));
    } catch {
      throw new TapedeckError('E_ARG', `Invalid upstream URL ${JSON.stringify(safeUrl(upstream))}.`, { hint: 'Pass an absolute http(s) URL, e.g. https://api.openai.com.' });
    }
  }
  // Where requests go, recorded with their answers and compared on replay (DeckOptions.hostMatch):
  // the upstream's origin, without the credentials its URL may carry. None without an upstream
  // (a proxy that only replays): its requests compare no hosts.
  const origin = upstream === undefined ? undefined : originOf(upstream);
  // And the upstream's path prefix (an AI gateway's `/v1/acct/gw/openai`), recorded beside it:
  // the origin alone would send a re-recording to the bare path.
  const upstreamPath = upstream === undefined ? '' : upstreamPrefix(upstream);
  // Bad timeouts throw here, where the handler is made.
  const link = new UpstreamLink(opts.fetch, opts);
  const awsCredentials = opts.awsCredentials === false ? undefined : (opts.awsCredentials ?? (typeof process === 'undefined' ? undefined : awsCredentialsFromEnv(process.env)));
  const shutdownTimeoutMs = timeoutOption(opts, 'shutdownTimeoutMs', DEFAULT_SHUTDOWN_TIMEOUT_MS);
  const cancelGraceMs = graceOption(opts.cancelGraceMs);
  // Requests in flight, and which of them have an upstream call: close() cuts them once its
  // bound has passed.
  const flights = new Flights();
  const forwarding = new Set<ServerResponse>();
  // Requests answered with a `timeout` fault: held open until the client gives up, or close().
  const heldOpen = new Set<ServerResponse>();
  let deck: Deck | undefined;
  const needsUpstream = (mode: string): TapedeckError =>
    new TapedeckError('E_ARG', `Mode ${mode} needs an upstream URL${mode === 'once' ? ' (the tape does not exist yet, so it would record)' : ''}.`, { hint: 'Pass { upstream: "https://api.openai.com" } (tapedeck serve --upstream URL).' });
  // Refused before the tape opens: a record mode with nothing to record from must not leave an
  // empty tape (which the next `once` run would take as recorded) or a writer behind.
  const noUpstream = upstream === undefined ? needsUpstream : undefined;
  // A test's proxy names the test's record command, as the test's fetch does (not a `tapedeck
  // serve` the test never ran).
  const entry = opts.testRecordCommand !== undefined ? { kind: 'test' as const, recordCommand: opts.testRecordCommand } : undefined;
  const opening = Deck.open(opts, entry, noUpstream).then((d) => {
    // Left for passthrough, which opens no tape (nothing to leave behind, but nothing to serve).
    if (d.mode !== 'replay' && upstream === undefined) {
      void d.close().catch(() => {});
      throw needsUpstream(d.mode);
    }
    deck = d;
  });
  const ready = opening.then(() => undefined);
  ready.catch(() => {}); // reported to whoever awaits ready or sends a request
  const started = performance.now();
  // Trace tokens of the recordings served (whole or damaged) or recorded: see usedTraces().
  const used = new Set<string>();
  const latencies = new Float64Array(LATENCY_WINDOW);
  let latencyCount = 0;
  const missed: string[] = [];
  // Once the window is full, one request in LATENCY_SAMPLE is timed: two clock reads cost
  // ~130 ns, a visible share of a replayed answer, and a sample gives the same percentiles.
  let arrivals = 0;
  let inFlight = 0;
  let idle: (() => void) | undefined;
  let closing: Promise<void> | undefined;

  function finished(t0: number, slot: number, res: ServerResponse): void {
    flights.leave(slot, res);
    if (forwarding.size > 0) forwarding.delete(res);
    if (t0 >= 0) latencies[latencyCount++ % LATENCY_WINDOW] = clock.now() - t0;
    inFlight--;
    if (inFlight === 0 && idle) idle();
  }

  function sendError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    const e = asTapedeckError(err);
    // A page of this machine may replay a tape recorded without it, from Node: its browser's
    // preflight was never recorded, and missed it stopped every call (./page-origin.ts).
    const page = req.headers.origin === undefined ? undefined : pageAccess(req.headers.origin);
    if (page && e.code === 'E_MISS' && req.method === 'OPTIONS' && !res.headersSent && typeof req.headers['access-control-request-method'] === 'string') {
      res.writeHead(204, { ...page, ...preflightAllowed(req.headers) });
      res.end();
      return;
    }
    if (e.code === 'E_MISS') {
      deck?.count('miss');
      // The path as its route is stored: a key in it (a gateway's `/v1/<key>/…`, `;key=`) is
      // masked there, and this line goes to the proxy's log.
      const path = (req.url ?? '/').replace(/\?.*$/, '');
      const line = `${req.method ?? 'GET'} ${deck ? deck.redactor.url(path) : path}: ${missLine(e)}`;
      if (missed.length < MISSED_KEPT) missed.push(line);
      opts.onMiss?.(line, e);
    } else deck?.countError();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = statusOf(e.code, deck?.missStatus ?? opts.missStatus, e.details.cause, e.details.lasting);
    const answer = errorAnswer(e, req.url ?? '/', req.headers, status, showsWholeBody(req.headers));
    const body = answer.body;
    const headers: OutgoingHttpHeaders = { ...answer.headers, 'content-length': Buffer.byteLength(body) };
    // An oversized body may not have been read to the end; close the connection rather than
    // reuse it (HTTP/2 has no such header: the stream alone is reset when the answer ends).
    if (e.code === 'E_BODY_TOO_LARGE' && req.httpVersionMajor !== 2) headers.connection = 'close';
    // An answer to HEAD has no body: what went wrong goes in a header, or the client (a
    // `requests.head` in a test) sees a bare 400 and the reason is only in the proxy's log.
    if (req.method === 'HEAD') headers['x-tapedeck-message'] = sanitize(e.code === 'E_MISS' ? missLine(e) : e.message);
    // A page of this machine reads the miss, not a failed fetch (./page-origin.ts).
    res.writeHead(status, page ? { ...headers, ...page } : headers);
    res.end(body);
  }

  function stats(): HandlerStats {
    const n = Math.min(latencyCount, LATENCY_WINDOW);
    const sorted = latencies.slice(0, n).sort();
    const base: DeckStats = deck?.stats() ?? emptyStats('replay', opts.tape);
    return { ...base, inFlight, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), uptimeS: Math.round((performance.now() - started) / 100) / 10, missed: [...missed], ...(mcp ? { mcp: mcp.stats() } : {}), ...(realtime ? { realtime: realtime.stats() } : {}) };
  }

  function internal(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (path !== '/__tapedeck/health' && path !== '/__tapedeck/stats') return false;
    const body =
      path === '/__tapedeck/health'
        ? JSON.stringify({ status: closing ? 'closing' : deck ? 'ok' : 'starting', version: VERSION, mode: deck?.mode, tape: opts.tape, recordings: deck?.stats().recordings ?? 0 })
        : JSON.stringify(stats());
    // A page of this machine (a browser-mode test) reads them too, to fail on a miss its
    // component caught (./page-origin.ts); other origins get no access.
    const page = req.headers.origin === undefined ? undefined : pageAccess(req.headers.origin);
    res.writeHead(req.method === 'GET' || req.method === 'HEAD' ? 200 : 405, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...page });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }

  const replayStore = opts.replay === false ? undefined : opts.replay;
  const stored = new WeakSet<HttpRecord>();
  /** Makes an answer replayable by its trace token (once per recording, unless `again`: the store evicted it). */
  function remember(rec: HttpRecord, again = false): void {
    if (!replayStore?.put || !replayStore.enabled || (stored.has(rec) && !again)) return;
    stored.add(rec);
    const ct = rec.response.headers['content-type'];
    try {
      const r = replayStore.put({
        token: rec.trace,
        documentId: rec.route,
        query: rec.key,
        body: rec.response.body,
        contentType: (Array.isArray(ct) ? ct[0] : ct) ?? 'application/octet-stream',
      });
      if (r instanceof Promise) r.catch((e: unknown) => deck?.warnOnce(`tapedeck: replay store put failed: ${e instanceof Error ? e.message : String(e)}`));
    } catch (e) {
      deck?.warnOnce(`tapedeck: replay store put failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async function replayEndpoint(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, deck?.maxBodyBytes ?? opts.maxBodyBytes ?? 32 * 1024 * 1024);
    let r = handleReplay(replayStore, body);
    // Not in the store, perhaps on the tape: recorded by an earlier run, or evicted (./replay-from-tape.ts).
    const col = r.status === 404 ? deck?.collection : undefined;
    const token = col && tokenOfReplayBody(body);
    const rec = token === undefined ? undefined : recordOfTrace(col!, token);
    if (rec) {
      remember(rec, true);
      r = handleReplay(replayStore, body);
    }
    res.writeHead(r.status, { 'content-type': r.contentType, 'content-length': r.body.length });
    res.end(r.body);
  }

  /** Where a request goes upstream, and as what: re-signed for the upstream's host, with the credentials of its URL. */
  function upstreamRequest(req: IncomingMessage, dreq: DeckRequest): { url: string; sent: DeckRequest; sigv4: SigV4Outcome } {
    const url = upstreamUrl(upstream!, dreq.url);
    // A SigV4 signature names the host signed, the proxy's; the upstream checks its own.
    // Checked against the headers as received: over HTTP/2 the client signed `:authority`.
    const { req: signed, outcome: sigv4 } = resignForUpstream(dreq, url, awsCredentials, undefined, req.headers);
    const sent = upstreamAuth !== undefined && dreq.headers.authorization === undefined ? { ...dreq, headers: { ...dreq.headers, authorization: upstreamAuth } } : signed;
    return { url, sent, sigv4 };
  }

  /**
   * Sends a request to the upstream and passes its answer on, recording it when `p` prepared it
   * for the tape. `damage`: a damaging fault was drawn for it (chaos), so an answer to record is
   * read whole and stored first, and `damage` answers with the stored record (nothing is sent
   * before it is stored); an answer not stored goes as it came.
   */
  async function forward(d: Deck, req: IncomingMessage, res: ServerResponse, dreq: DeckRequest, p: Prepared | undefined, miss?: TapedeckError, damage?: (rec: HttpRecord) => Promise<void>): Promise<void> {
    // Among identical requests being recorded (./record-turns.ts): ended however this ends.
    const turn = p && d.takeTurn(p);
    try {
      await forwardIn(d, req, res, dreq, p, miss, turn, damage);
    } finally {
      turn?.finish();
    }
  }

  async function forwardIn(d: Deck, req: IncomingMessage, res: ServerResponse, dreq: DeckRequest, p: Prepared | undefined, miss: TapedeckError | undefined, turn: RecordTurn | undefined, damage: ((rec: HttpRecord) => Promise<void>) | undefined): Promise<void> {
    // A page of this machine recording through the proxy (./page-origin.ts): its browser's
    // preflight is the proxy's to answer, as in replay, and it reads the live answer. A provider
    // that takes no calls from pages (a local OpenAI-compatible server) answered the preflight
    // 404 and sent no CORS headers: the browser stopped the call as a failed fetch.
    const page = req.headers.origin === undefined ? undefined : pageAccess(req.headers.origin);
    if (page && req.method === 'OPTIONS' && typeof req.headers['access-control-request-method'] === 'string') {
      res.writeHead(204, { ...page, ...preflightAllowed(req.headers) });
      res.end();
      return;
    }
    const t0 = performance.now();
    const recordedAt = new Date();
    const { url, sent, sigv4 } = upstreamRequest(req, dreq);
    const call = link.start(url, sent);
    forwarding.add(res);
    // A client that goes away before the answer starts cancels the upstream call at once: there
    // is nothing to record yet, and a hung upstream must not hold the exchange. Once an answer
    // being recorded has started, it is read to its end (bounded by the idle timeout) and
    // recorded if whole: it was paid for, and the next client asking gets it from the tape.
    let clientGone = false;
    let keep = false;
    // For a stream being recorded as it is passed on: when its last chunk came (./record-turns.ts).
    let lastHeard: (() => number) | undefined;
    res.once('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      if (!keep) call.abort('client');
      // Read on for its record: stalled, it must not hold later identical answers (./record-turns.ts).
      else if (lastHeard && turn && p) turn.left(p.route, (m) => d.warnOnce(m), lastHeard);
    });
    let up: Response;
    try {
      up = await call.response;
    } catch (e) {
      if (clientGone) return; // nobody to answer, nothing received
      throw unrecordedMiss(d, miss, e);
    }
    const refusedKey = await unrecordedByKey(d, miss, up, dreq);
    if (refusedKey) {
      forwarding.delete(res);
      throw refusedKey;
    }
    const refused = refusedSignatureWarning(sigv4, up.status, up.headers.get('x-amzn-errortype'), p?.route ?? `${dreq.method} ${safeUrl(url)}`);
    if (refused) d.warnOnce(refused);
    const recordIt = p !== undefined && (up.status < 400 || d.recordErrors);
    keep = recordIt;
    const headers = storedResponseHeaders(up.headers);
    // A HEAD answer's length is the resource's, not of a body sent: kept, and replayed as recorded.
    const length = req.method === 'HEAD' ? up.headers.get('content-length') : null;
    if (length !== null) headers['content-length'] = length;
    // Nothing says `recorded` before the record is durable: a stream says `recording` and gives
    // the outcome in a trailer; any other answer is held until its record is durable.
    // An answer with no body (204, 304, HEAD) is no stream, whatever its headers say.
    const streaming = recordIt && !CONTENT_FREE.has(up.status) && req.method !== 'HEAD' && (streamsAnswer(headers, up.headers.get('content-length')) || routeStreams(dreq));
    const out: OutgoingHttpHeaders = { ...headers, 'x-tapedeck-match': recordIt ? 'recording' : 'passthrough' };
    // Sent, not stored: the tape keeps the provider's headers, and replay adds these again.
    if (page && out['access-control-allow-origin'] === undefined) Object.assign(out, page);
    if (p) out['x-tapedeck-key'] = p.key;
    if (recordIt) used.add((out['x-tapedeck-trace'] = d.traceFor(p, recordedAt.toISOString())));
    // HTTP/1.0 has no chunked encoding, so no trailers: its stream ends with the connection and
    // goes without the outcome (node:http refuses a declared trailer there).
    const trailed = streaming && !(req.httpVersionMajor === 1 && req.httpVersionMinor === 0);
    if (trailed) out.trailer = 'x-tapedeck-recorded';
    // An answer being recorded is counted once its record is stored, or failed (Deck.record).
    if (!recordIt) d.count('passthrough');
    if (clientGone && !recordIt) {
      call.abort('client');
      return;
    }
    // A stream to damage is recorded whole before any of it goes out, as an answer that is not one is.
    if (recordIt && (!streaming || damage)) return forwardWhole(d, req, res, dreq, p, up, headers, out, recordedAt, t0, () => clientGone, turn, streaming, damage);
    // A stream being recorded sends its head with its first bytes (when node:http would send it
    // anyway): until then, a record that fails (a beforeRecord hook that throws on an answer
    // that came in one read, its final event held back) is still a whole error answer.
    const head = () => {
      if (!res.headersSent) writeUpstreamHead(req, res, up, up.status >= 300 && up.status < 400 ? pointLocation(out, up.status, proxyBase(req), upstream) : out);
    };
    if (!recordIt) head();
    const log = recordIt ? new ChunkLog() : undefined;
    if (log) lastHeard = () => log.lastAt();
    // The chunk with the stream's final event waits for the record (FinalEventHold).
    const hold = recordIt ? new FinalEventHold() : undefined;
    if (up.body) {
      const reader = up.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          log?.add(value);
          if (clientGone) continue;
          if (!hold) {
            if (!res.write(value)) await drained(res);
          } else {
            for (const b of hold.push(value)) {
              head();
              if (!res.write(b)) await drained(res);
            }
          }
        }
      } catch (e) {
        // The upstream failed, went quiet past the idle timeout, or shutdown cut it mid-answer:
        // the client sees a cut connection (never an answer that looks whole), nothing is recorded.
        if (clientGone && !recordIt) return;
        d.countError();
        if (recordIt) d.warnOnce(upstreamCutWarning(p.route, e));
        else if (e instanceof TapedeckError && e.code === 'E_UPSTREAM_TIMEOUT') d.warnOnce(`tapedeck: ${e.message}`);
        res.destroy(e instanceof Error ? e : undefined);
        return;
      }
    }
    if (log && p) {
      const body = log.body();
      // The upstream closed the stream before its end (or sent an error event, without
      // recordErrors): the client got what came, the tape gets nothing, since half an answer
      // replayed as whole is worse than a miss.
      if (keptOffTape(d, p.route, dreq, p.body, headers['content-type'], body, 'event stream')) {
        head();
        await writeHeld(res, hold);
        if (trailed) res.addTrailers({ 'x-tapedeck-recorded': 'false' });
      } else {
        let recording: ReturnType<Deck['record']>;
        try {
          recording = d.record(p, dreq, { status: up.status, ...(up.statusText ? { statusText: up.statusText } : {}), headers, body, ...(log.chunks() ? { chunks: log.chunks()! } : {}) }, recordedAt, performance.now() - t0, turn);
        } catch (e) {
          // The beforeRecord hook failed (or the record could not be built). Said where whoever
          // runs the proxy sees it: the client may only see a cut. Nothing sent yet: the error
          // is the answer (500 E_HOOK). Else the stream is cut before its final event, as for a
          // failed record (docs/modes.md rule 17): no clean end, so the SDK raises.
          const sent = res.headersSent || clientGone;
          reportRecordHookFailure((m) => d.warnOnce(m), p.route, e, sent ? 'the stream was cut before its end' : 'the client got the error');
          if (!sent) throw e;
          d.countError();
          res.destroy(e instanceof Error ? e : undefined);
          return;
        }
        const { rec, durable } = recording;
        // The answer ends only once its record is on disk: a client that got a whole answer
        // knows it is on the tape, whatever happens to this process next. One whose record
        // failed is cut before its final event (no clean end: the SDK raises, and a reader that
        // stops at `[DONE]` never sees it), unless unrecorded answers are wanted.
        const failed = await durable;
        if (failed && !d.serveUnrecorded) {
          // Nothing of it went out yet (the stream came in one read, its final event held for
          // the record): the failure is the answer, 503 in the provider's error shape, as for an
          // answer that is not a stream. A bare dropped connection said nothing of why.
          if (!res.headersSent && !clientGone) {
            sendError(req, res, failed);
            return;
          }
          d.countError();
          res.destroy(failed);
          return;
        }
        if (failed) d.countUnrecorded();
        else if (rec) remember(rec);
        head();
        await writeHeld(res, hold);
        if (trailed) res.addTrailers({ 'x-tapedeck-recorded': failed ? 'false' : 'true' });
      }
    }
    head();
    res.end();
  }

  /**
   * An answer being recorded that is not a stream (or a stream to damage, `streamed`): read
   * whole, recorded, and only then sent, with `x-tapedeck-match: recorded` once durable; a
   * failed record answers 503 E_RECORD_FAILED (or, with onRecordFailure 'serve', the answer with
   * `x-tapedeck-recorded: false`). An upstream that fails mid-body is an error answer, never a
   * body that looks whole. `damage` answers with a stored record instead (see forward()).
   */
  async function forwardWhole(d: Deck, req: IncomingMessage, res: ServerResponse, dreq: DeckRequest, p: Prepared, up: Response, headers: Record<string, string | string[]>, out: OutgoingHttpHeaders, recordedAt: Date, t0: number, gone: () => boolean, turn: RecordTurn | undefined, streamed: boolean, damage: ((rec: HttpRecord) => Promise<void>) | undefined): Promise<void> {
    const log = new ChunkLog();
    if (up.body) {
      try {
        await readWhole(up.body, log, p.route);
      } catch (e) {
        if (e instanceof TapedeckError && e.code === 'E_UPSTREAM_TIMEOUT') d.warnOnce(`tapedeck: ${e.message}`);
        if (gone()) return;
        sendError(req, res, e);
        return;
      }
    }
    const body = log.body();
    // A stream the upstream cut that its content type did not announce (Gemini's JSON-array
    // stream): the client gets what came, the tape nothing.
    if (keptOffTape(d, p.route, dreq, p.body, headers['content-type'], body, streamed ? 'event stream' : 'stream')) {
      out['x-tapedeck-recorded'] = 'false';
      writeUpstreamHead(req, res, up, { ...out, 'content-length': body.length });
      res.end(body);
      return;
    }
    let recording: ReturnType<Deck['record']>;
    try {
      recording = d.record(p, dreq, { status: up.status, ...(up.statusText ? { statusText: up.statusText } : {}), headers, body, ...(log.chunks() ? { chunks: log.chunks()! } : {}) }, recordedAt, performance.now() - t0, turn);
    } catch (e) {
      // The client gets the error (500 E_HOOK); the route goes with it to whoever runs the proxy.
      reportRecordHookFailure((m) => d.warnOnce(m), p.route, e, gone() ? 'the client had gone' : 'the client got the error');
      throw e;
    }
    const { rec, durable } = recording;
    const failed = await durable;
    if (gone()) return;
    if (failed && !d.serveUnrecorded) {
      sendError(req, res, failed);
      return;
    }
    if (failed) d.countUnrecorded();
    else if (rec) {
      remember(rec);
      if (damage) return damage(rec);
    }
    out['x-tapedeck-match'] = failed ? 'recording' : 'recorded';
    out['x-tapedeck-recorded'] = failed ? 'false' : 'true';
    const empty = CONTENT_FREE.has(up.status) || req.method === 'HEAD';
    // Recorded as the upstream sent it; served with its next-fetch URLs on the proxy (./answer-urls.ts).
    const sent = empty || !dreq.url.includes('/batches') ? body : pointAnswerUrls(Buffer.from(body.buffer, body.byteOffset, body.byteLength), dreq.url, proxyBase(req), upstream);
    if (!empty) out['content-length'] = sent.length;
    const pointed = dreq.url.includes('/upload/') ? pointHeaderUrls(out, dreq.url, proxyBase(req), upstream) : out;
    writeUpstreamHead(req, res, up, up.status >= 300 && up.status < 400 ? pointLocation(pointed, up.status, proxyBase(req), upstream) : pointed);
    if (empty) res.end();
    else res.end(sent);
  }

  /** Answers a request that will not be served with its error, and ends it. */
  function refuse(req: IncomingMessage, res: ServerResponse, t0: number, slot: number, e: unknown): void {
    sendError(req, res, e);
    finished(t0, slot, res);
  }

  function deckRequest(req: IncomingMessage, body: Uint8Array): DeckRequest {
    // Dot segments resolved here, so they cannot climb out of the upstream's path prefix.
    const method = req.method ?? 'GET';
    const url = normalizeRequestPath(req.url ?? '/');
    const headers = jsonLabelled(req.httpVersionMajor === 2 ? h1Headers(req.headers) : req.headers, method, url, body);
    if (origin === undefined) return { method, url, headers, body };
    return upstreamPath === '' ? { method, url, headers, body, origin } : { method, url, headers, body, origin, upstreamPath };
  }

  /**
   * Writes a replayed answer, or forwards to the upstream. Returns a promise only when work is
   * left after this tick (an upstream call, a paced stream).
   */
  function answer(d: Deck, req: IncomingMessage, res: ServerResponse, dreq: DeckRequest, decision: Decision): Promise<void> | undefined {
    if (decision.kind === 'upstream') return forward(d, req, res, dreq, decision.prepared, decision.miss);
    decision = otherTemperature(d, dreq, decision);
    const rec = decision.record;
    d.count(decision.matchedBy);
    used.add(rec.trace);
    if (replayStore) remember(rec);
    const paced = rec.response.cut === true || (d.timing !== 'none' && rec.response.chunks !== undefined && rec.response.chunks.length > 1);
    const p = replayParts(rec);
    let headers = replayHeaders(p, rec, decision.matchedBy, !paced);
    // Recorded from Node, with no CORS headers: readable by a page of this machine (./page-origin.ts).
    if (req.headers.origin !== undefined && headers['access-control-allow-origin'] === undefined) headers = { ...headers, ...pageAccess(req.headers.origin) };
    if (decision.warnings.length > 0) headers = { ...headers, 'x-tapedeck-warning': sanitize(decision.warnings.join(' ')) };
    // Upload URLs in the answer's headers, on the upstream: sent on the proxy (./answer-urls.ts).
    if (dreq.url.includes('/upload/')) headers = pointHeaderUrls(headers, dreq.url, proxyBase(req), upstream);
    if (rec.response.status >= 300 && rec.response.status < 400) headers = pointLocation(headers, rec.response.status, proxyBase(req), upstream);
    if (!paced && dreq.url.includes('/batches') && !CONTENT_FREE.has(rec.response.status) && req.method !== 'HEAD') {
      // An answer naming a URL the client fetches next, on the upstream: served on the proxy (./answer-urls.ts).
      const pointed = pointAnswerUrls(p.body, dreq.url, proxyBase(req), upstream);
      if (pointed !== p.body) {
        res.writeHead(rec.response.status, { ...headers, 'content-length': pointed.length });
        res.end(pointed);
        return undefined;
      }
    }
    // `recorded` timing: a stream's headers as late as the upstream's came, then its chunks paced.
    const late = paced && d.timing === 'recorded' && req.method !== 'HEAD' && !CONTENT_FREE.has(rec.response.status) ? headersWait(rec) : undefined;
    if (late) return late.then(() => (gone(res) ? undefined : (res.writeHead(rec.response.status, headers), writePaced(res, rec, 'recorded'))));
    res.writeHead(rec.response.status, headers);
    if (CONTENT_FREE.has(rec.response.status) || req.method === 'HEAD') res.end();
    else if (!paced) {
      if (p.text !== undefined) res.end(p.text, 'latin1');
      else res.end(p.body);
    } else return writePaced(res, rec, d.timing === 'none' ? 0 : d.timing);
    return undefined;
  }

  /** What the session engines (MCP, realtime) take from the proxy: its store, mode, upstream and rules. */
  const sessionOptions = (d: Deck) => ({
    tape: opts.store ?? opts.tape,
    mode: d.mode,
    upstream,
    redact: opts.redact,
    durable: opts.durable,
    strictOrder: opts.strictOrder,
    timing: opts.timing,
    recordCommand: opts.sessionRecordCommand ?? 're-record: restart tapedeck serve with --mode record',
    onWarning: (m: string) => d.warnOnce(m),
    // A test's proxy (tape.serve()): its sessions are the test's own on a tape tests share, as its HTTP recordings are.
    ...(opts.run !== undefined ? { run: opts.run } : {}),
    ...(opts.test !== undefined ? { test: opts.test } : {}),
  });

  // MCP Streamable HTTP requests (JSON-RPC bodies, Mcp-Session-Id) go to an MCP endpoint on
  // the same tape, made on the first one (docs/mcp.md).
  let mcp: McpHttpEndpoint | undefined;
  const mcpEndpoint = (d: Deck): McpHttpEndpoint => (mcp ??= new McpHttpEndpoint({ ...sessionOptions(d), timeoutMs: opts.idleTimeoutMs, fetch: opts.fetch, shutdownTimeoutMs, shutdownFix: 'shutdownTimeoutMs, tapedeck serve --shutdown-timeout MS', ...(cancelGraceMs !== undefined ? { cancelGraceMs } : {}) }));

  // Realtime sessions (WebSocket upgrades on a provider's realtime route) go to a session
  // endpoint on the same tape, made on the first one (docs/realtime.md).
  let realtime: RealtimeEndpoint | undefined;
  let realtimeModule: Promise<typeof import('../realtime/endpoint.ts')> | undefined;
  const realtimeEndpoint = (d: Deck, m: typeof import('../realtime/endpoint.ts')): RealtimeEndpoint => (realtime ??= new m.RealtimeEndpoint({ ...sessionOptions(d), chaos: () => d.sessionChaos }));

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const notFound = () => {
      if (!socket.destroyed) socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    };
    if (closing) return void socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    const go = (d: Deck) =>
      (realtimeModule ??= import('../realtime/endpoint.ts'))
        .then((m) => {
          // Closed while the module loaded: no endpoint is made that close() would not end.
          if (closing) socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
          else if (!realtimeEndpoint(d, m).upgrade(req, socket, head)) notFound();
        })
        .catch(() => socket.destroy());
    if (deck) go(deck);
    else opening.then(() => go(deck!), () => socket.destroy());
  }

  /**
   * A request that may get a fault (chaos configured to fire, or an x-tapedeck-chaos header):
   * planned by ./chaos.ts, then answered with the fault, or as usual (after any delay).
   */
  async function chaotic(d: Deck, req: IncomingMessage, res: ServerResponse, sent: DeckRequest): Promise<void> {
    const { req: dreq, value } = withoutChaosHeader(sent);
    const chaos = d.chaos;
    if (!chaos) {
      // `none` asks for no fault: answered (and recorded) as usual where there is no chaos.
      if (value?.trim().toLowerCase() === 'none') return answer(d, req, res, dreq, await d.decideShared(dreq));
      refuseChaos(d.mode, false, `header ${CHAOS_HEADER}`);
      return;
    }
    const plan = await planChaos(d, chaos, dreq, value);
    if (plan.latencyMs > 0) {
      // A client gone during the delay got no answer: its retry gets the recording this attempt took.
      const gaveUp = () => abandonedBy(chaos, plan)?.();
      res.once('close', gaveUp);
      await sleep(plan.latencyMs);
      res.off('close', gaveUp);
    }
    if (plan.kind === 'damage-live') return liveDamaged(d, chaos, req, res, dreq, plan);
    // Update mode: a fault standing in for a call the tape has no recording of has the call's
    // real answer recorded behind it, for its retry and its replay (./record-behind.ts); the
    // fault goes out once it is stored.
    if (needsRecordBehind(plan, d, dreq)) {
      await recordBehindUpstream(d, dreq, (r) => {
        const { url, sent } = upstreamRequest(req, r);
        return link.start(url, sent).response;
      });
    }
    // The faulted answer goes out now (written, dropped, or its wait begun): from now on a
    // request of the same call can be its retry; one that came before is a call of its own.
    faultSent(chaos, plan);
    if (gone(res)) return;
    switch (plan.kind) {
      case 'usual': {
        if (plan.latencyMs > 0) res.setHeader('x-tapedeck-fault', faultHeader(plan)!);
        return answer(d, req, res, dreq, plan.decision ?? (await d.decideShared(dreq)));
      }
      case 'status': {
        const body = req.method === 'HEAD' ? undefined : plan.answer.body;
        res.writeHead(plan.answer.status, { ...statusFaultHeaders(plan, chaos.seed), 'content-length': Buffer.byteLength(plan.answer.body) });
        res.end(body);
        return;
      }
      case 'reset':
        // No status line at all: the connection goes (HTTP/2: the stream is reset), as when a
        // load balancer drops it.
        dropConnection(req, res, false);
        return;
      case 'timeout':
        heldOpen.add(res);
        return new Promise<void>((resolve) =>
          res.once('close', () => {
            heldOpen.delete(res);
            resolve();
          }),
        );
      case 'damage':
        return serveDamaged(d, chaos, req, res, plan);
    }
  }

  /** A recording served damaged (chaos): replayed (or recorded just now) and used, like any other. */
  function serveDamaged(d: Deck, chaos: HttpChaos, req: IncomingMessage, res: ServerResponse, plan: DamagePlan): Promise<void> {
    if (!plan.recorded) d.count(plan.decision.matchedBy);
    used.add(plan.record.trace);
    if (replayStore) remember(plan.record);
    // A stall its client gave up on before its end reached no one whole: its retry gets the same recording.
    res.once('close', () => (res.writableFinished ? undefined : abandonedBy(chaos, plan)?.()));
    return writeDamaged(req, res, damagedAnswer(plan, chaos, chaos.seed));
  }

  /**
   * A damaging fault drawn for a request that goes to the live API to be recorded: its answer is
   * read whole and stored, then sent damaged as its replay will be (./chaos.ts, liveDamage). An
   * answer not stored (an error not recorded, a stream the upstream cut, a failed record) goes as
   * it came, the fault taken back.
   */
  async function liveDamaged(d: Deck, chaos: HttpChaos, req: IncomingMessage, res: ServerResponse, dreq: DeckRequest, plan: LiveDamagePlan): Promise<void> {
    if (gone(res)) return void liveDamage(chaos, plan, undefined);
    let done = false;
    try {
      await forward(d, req, res, dreq, plan.decision.prepared, plan.decision.miss, (rec) => {
        done = true;
        const damage = liveDamage(chaos, plan, rec)!;
        // Out now: from here a request of the same call can be its retry.
        faultSent(chaos, plan);
        return serveDamaged(d, chaos, req, res, damage);
      });
    } finally {
      if (!done) liveDamage(chaos, plan, undefined);
    }
  }

  /** A recorded answer damaged by a fault, event by event; a cut one ends without its end of body. */
  async function writeDamaged(req: IncomingMessage, res: ServerResponse, a: DamagedAnswer): Promise<void> {
    res.writeHead(a.status, a.headers);
    for (let i = 0; i < a.events.length; i++) {
      if (i > 0 && a.pauseMs > 0) await sleep(a.pauseMs);
      if (gone(res)) return;
      if (!res.write(a.events[i]!)) await drained(res);
    }
    if (a.cut) dropConnection(req, res, true);
    else res.end();
  }

  /** The open proxy's path: body by callback, decision and replayed answer in the same tick. */
  function handleOpen(d: Deck, req: IncomingMessage, res: ServerResponse, t0: number, slot: number): void {
    readBodyThen(req, d.maxBodyBytes, (err, body) => {
      let pending: Promise<void> | undefined;
      // A malformed body's error quotes it: with its secrets masked (./json-error-excerpt.ts).
      const fail = (e: unknown) => sendError(req, res, body === undefined ? e : maskJsonErrorExcerpt(e, req.headers, body, d.maxBodyBytes, d.redactor));
      try {
        if (err !== undefined) throw err;
        if (isMcpRequest(req.headers, body!, req)) {
          pending = mcpEndpoint(d).handle(req, res, body!);
          pending.catch(fail).finally(() => finished(t0, slot, res));
          return;
        }
        const dreq = deckRequest(req, body!);
        // Chaos that cannot fire costs one header lookup here (proxy benchmark).
        if (req.headers[CHAOS_HEADER] !== undefined || d.chaos?.canFire === true) pending = chaotic(d, req, res, dreq);
        else {
          const decision = d.decideShared(dreq);
          pending = decision instanceof Promise ? decision.then((x) => answer(d, req, res, dreq, x)) : answer(d, req, res, dreq, decision);
        }
      } catch (e) {
        fail(e);
      }
      if (pending === undefined) finished(t0, slot, res);
      else pending.catch(fail).finally(() => finished(t0, slot, res));
    });
  }

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    // -1: not timed.
    const t0 = latencyCount < LATENCY_WINDOW || ++arrivals % LATENCY_SAMPLE === 0 ? clock.now() : -1;
    const q = req.url?.indexOf('?') ?? -1;
    const path = q < 0 ? (req.url ?? '/') : req.url!.slice(0, q);
    if (path.startsWith('/__tapedeck/') && internal(req, res, path)) return;
    if (path === '/v1/replay' && req.method === 'POST' && opts.replay !== false) {
      replayEndpoint(req, res).catch((e: unknown) => sendError(req, res, e));
      return;
    }
    // In flight until the answer is written and, for an upstream answer, read to the end and
    // handed to the tape (which can be after the client left): close() waits for exactly that.
    inFlight++;
    const slot = flights.enter(res);
    if (closing) refuse(req, res, t0, slot, closedError());
    else if (deck) handleOpen(deck, req, res, t0, slot);
    // A request that arrives before the tape is open waits for it, then is answered as usual.
    else
      opening.then(
        () => (closing ? refuse(req, res, t0, slot, closedError()) : handleOpen(deck!, req, res, t0, slot)),
        (e: unknown) => refuse(req, res, t0, slot, e),
      );
  }) as TapedeckHandler;

  Object.defineProperties(handler, {
    ready: { value: ready },
    // MCP POSTs are handed to their session at once and answered when the server answers:
    // in flight until then (the MCP endpoint counts them; its close() finishes them).
    inFlight: { get: () => inFlight + (mcp?.inFlight ?? 0) },
  });
  handler.stats = stats;
  // MCP exchanges and realtime sessions served on the same port are on the same tape: their
  // marks count too.
  handler.usedTraces = () => (mcp === undefined && realtime === undefined ? used : new Set([...used, ...(mcp?.usedMarks() ?? []), ...(realtime?.usedMarks() ?? [])]));
  handler.upgrade = upgrade;
  handler.chaos = (c) => {
    if (c !== undefined) checkChaos(c, 'proxy');
    // Applied once the tape is open (before any later request: promise reactions run in order).
    return opening.then(() => deck!.useChaos(c));
  };
  handler.close = () => {
    closing ??= (async () => {
      // A `timeout` fault waits for a client that gave up; there is nothing to finish.
      for (const res of heldOpen) res.destroy();
      if (inFlight > 0) {
        const settled = new Promise<void>((r) => (idle = r));
        let timer: NodeJS.Timeout | undefined;
        const late = await Promise.race([settled.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), shutdownTimeoutMs)))]);
        clearTimeout(timer);
        if (late) {
          // Past the bound: cut what is left. Upstream calls are aborted (their exchanges are
          // not recorded; a client still waiting for headers gets 503). A client whose answer
          // has started, or that is still sending its request, or getting a paced replay, loses
          // its connection: it may have stopped reading, and waiting for it is what the bound
          // is there to prevent.
          opts.onWarning?.(`shutdown timeout (${shutdownTimeoutMs} ms): cutting ${inFlight} request(s) still in flight; they are not recorded.`);
          link.shutdown(`The tapedeck proxy shut down before the upstream finished answering (shutdown timeout ${shutdownTimeoutMs} ms); nothing was recorded.`);
          for (const res of flights) if (!forwarding.has(res) || res.headersSent) res.destroy();
          await settled;
        }
      }
      await opening.catch(() => {});
      try {
        await mcp?.close();
        await realtime?.close();
        await deck?.close();
      } finally {
        // Idle keep-alive connections to the upstream go too, even when writing the tape failed.
        await link.close();
      }
    })();
    return closing;
  };
  return handler;
}
