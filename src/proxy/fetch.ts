/**
 * createFetch: tapedeck as a standard `fetch`, for SDKs and libraries that accept one. Same
 * engine as the proxy: same matching, streaming, redaction, modes and tape records, so a tape
 * recorded through the proxy replays through createFetch and the other way round.
 */
import { untilAborted } from './abortable.ts';
import { TapedeckError } from '../errors.ts';
import type { MissEntry } from '../match/diagnose.ts';
import { Deck, DECK_OPTION_NAMES, type Decision, type DeckOptions, type DeckRequest, type DeckStats } from './deck.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';
import { REDACT_INNER } from '../store/redact-options.ts';
import { refuseChaos } from '../chaos/refused.ts';
import { checkChaos, type ChaosOptions } from '../chaos/options.ts';
import { CHAOS_HEADER, abandonedBy, faultsInPlaceOfRecordings, damagedAnswer, faultHeader, faultSent, heldUntilAborted, lateBy, liveDamageAnswer, needsRecordBehind, planChaos, recordBehind, recordedBehind, statusFaultHeaders, withoutChaosHeader, type DamagePlan, type HttpChaos } from './chaos.ts';
import { formatFetchSummary } from './fetch-summary.ts';
import { leftAnswersCut } from './left-answers.ts';
import { staleLine } from './stale-recordings.ts';
import { asTapedeckError, errorAnswer, showsWholeBody, statusOf, statusTextOf } from './http-errors.ts';
import { maskJsonErrorExcerpt } from './json-error-excerpt.ts';
import { responseChunks, type HttpRecord } from '../store/records.ts';
import { unrecordedByKey, unrecordedMiss } from './unrecordable.ts';
import { headersWait, UpstreamLink } from './upstream.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, timeoutOption, type UpstreamTimeouts } from './timeouts.ts';
import { recordStream, type OpenAnswers } from './fetch-record.ts';
import { NULL_BODY, toHeaders } from './fetch-headers.ts';
import { followRedirects, type SentRequest } from './fetch-redirect.ts';
import { otherTemperature } from './other-temperature.ts';

/**
 * The answer to a call made through a test's fetch after its tape closed: one the test did not
 * await, made after the test ended.
 *
 * @example
 * lateCallError().code // 'E_PROXY_CLOSED'
 */
export const lateCallError = (): TapedeckError =>
  new TapedeckError('E_PROXY_CLOSED', "This request came after its test ended, when the test's tape was closed: it has no answer.", { hint: 'Await every call in the test that makes it.' });

/** A miss createFetch answered: the error itself, and the same answer with its message retold. */
export interface AnsweredMiss {
  error: TapedeckError;
  /** The answer again, in the same provider's error shape, saying `message` instead (details merged in). */
  retell(message: string, details?: Record<string, unknown>): Response;
}

// Each provider's error body has its own shape (Gemini's carries no details, Bedrock's message
// is top-level, Ollama's `error` is a string): a wrapper that wants the miss reads it here, from
// the answer it got, instead of parsing one shape.
const answeredMisses = new WeakMap<Response, AnsweredMiss>();

/**
 * The miss a tapedeck fetch answered with `res`, for the test helpers (internal).
 *
 * @example
 * const res = await f(url, init)
 * if (res.headers.get('x-tapedeck-match') === 'miss') missOf(res)?.error.details.route // 'POST /v1/chat/completions'
 */
export const missOf = (res: Response): AnsweredMiss | undefined => answeredMisses.get(res);

/** The call behind each tapedeck fetch, which {@link fetchUnder} gives an upstream path. */
const underCalls = new WeakMap<TapedeckFetch, (input: string, init: RequestInit | undefined, upstreamPath: string) => Promise<Response>>();

/**
 * Calls `f` (a tapedeck fetch) as the proxy forwards a request to an upstream with a path prefix
 * (an AI gateway's): `url` is the upstream's URL plus the request's path, and the recording
 * keeps the path after `upstreamPath` as its request, with `upstreamPath` beside its origin, as
 * `tapedeck serve --upstream <origin><upstreamPath>` records it, so the two answer each other's
 * requests. For `tapedeck rerecord`; internal.
 *
 * @example
 * await fetchUnder(f, 'https://gw.example.com/prefix/v1/chat/completions', init, '/prefix')
 * // recorded as POST /v1/chat/completions, origin https://gw.example.com, upstreamPath /prefix
 */
export function fetchUnder(f: TapedeckFetch, url: string, init: RequestInit | undefined, upstreamPath: string): Promise<Response> {
  const call = underCalls.get(f);
  if (!call) throw new TypeError('fetchUnder takes a fetch made by createFetch.');
  return call(url, init, upstreamPath);
}

/** Misses kept for the summary at close (it lists 20; the count is the deck's). */
const MAX_MISSES_KEPT = 1000;

/**
 * Options of createFetch: the tape and its mode, matching, redaction and hooks, the live fetch and
 * its timeouts.
 */
export interface FetchOptions extends DeckOptions, UpstreamTimeouts {
  /** The fetch that reaches the live API in record, update and passthrough mode (default globalThis.fetch). */
  fetch?: typeof fetch;
  /**
   * At close(), how long streams still being recorded may take before their upstream calls are
   * aborted (default 10 s). An aborted answer is not recorded.
   */
  shutdownTimeoutMs?: number;
  /**
   * At close, print a summary (recordings replayed and added, misses, unused recordings) to
   * stderr, or hand its text to this function. Default: printed only when a request had no
   * recording (a miss an SDK or a library swallowed, like the AI SDK's streamText, is still
   * told); `false`: never (the test runner integrations fail the test and print a run-wide
   * summary instead).
   */
  summary?: boolean | ((text: string) => void);
}

// Symbol.asyncDispose, as Node's types and the esnext.disposable lib declare it: a page's
// project may have neither, and TapedeckFetch, which the browser entry's fetch is, names it.
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/** A standard fetch, plus close() (write pending records, close the tape) and stats(). */
export interface TapedeckFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Resolves when the tape is open. */
  readonly ready: Promise<void>;
  stats(): Promise<DeckStats>;
  /**
   * Faults on demand from the next call on (docs/chaos.md), replacing the `chaos` option;
   * undefined stops them. Refused (the calls answer E_CHAOS_MODE) outside replay unless `live`.
   *
   * @example
   * fetch.chaos({ faults: { 429: 1 }, attempts: 1 })
   */
  chaos(opts: ChaosOptions | undefined): void;
  /**
   * Waits for streams still being recorded (at most `shutdownTimeoutMs`, then aborts them, not
   * recorded), writes pending records, closes the tape and the upstream connections. `withinMs`
   * bounds that wait instead (a caller that waited part of the shutdown timeout already, as the
   * test helpers do, gives what is left of it).
   *
   * @example
   * await fetch.close(2000) // what is still in flight after 2 s is aborted, not recorded
   */
  close(withinMs?: number): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The error fetch gives when the connection drops mid-answer. */
const dropped = (why: string): TypeError => new TypeError('terminated', { cause: new Error(`other side closed (${why})`) });

/**
 * Errors a cut stream a task after its last chunk, as a dropped socket's error comes after the
 * data it delivered: erroring at once, while that chunk still sits in the queues of the caller's
 * pipes (TextDecoderStream, an SSE parser: the AI SDK's), discards it there.
 */
const cutAfter = (controller: ReadableStreamDefaultController<Uint8Array>, why: string): Promise<void> =>
  new Promise((r) => setTimeout(r, 0)).then(() => controller.error(dropped(why)));

/**
 * A recorded answer's chunks as a body, one chunk a read, paced by `timing`, ending as the
 * recording did (a close, or for a cut recording the error of a dropped connection). The
 * caller's abort ends it as it ends fetch's own bodies: once the signal fires, the next read
 * rejects with its reason, so an SDK's "stop generating" stops a replayed stream too. A damaged
 * answer (chaos) comes this way too: `cutWhy` names its cut, and `gaveUp` hears of an abort
 * before its end (a `stall` given up on: its retry gets the same recording).
 */
function chunkStream(chunks: [number, Uint8Array][], timing: Deck['timing'], cut: boolean, signal: AbortSignal | undefined, cutWhy = 'a cut stream recorded by hand', gaveUp?: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  let onAbort: (() => void) | undefined;
  // The listener goes with the stream: one signal may serve many calls.
  const forget = () => {
    if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort);
    onAbort = undefined;
    if (timer !== undefined) clearTimeout(timer);
    wake?.();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (signal === undefined) return;
      if (signal.aborted) return controller.error(signal.reason);
      onAbort = () => {
        forget();
        // Before its end (which forgets the signal): a damaged answer given up on (chaos).
        gaveUp?.();
        controller.error(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    },
    async pull(controller) {
      if (i >= chunks.length) {
        forget();
        if (cut) return cutAfter(controller, cutWhy);
        controller.close();
        return;
      }
      const [at, bytes] = chunks[i]!;
      const wait = timing === 'none' ? 0 : timing === 'recorded' ? at - (performance.now() - t0) : i === 0 ? 0 : timing;
      i++;
      if (wait > 0) {
        await new Promise<void>((r) => {
          wake = r;
          timer = setTimeout(r, wait);
        });
        wake = timer = undefined;
        // Aborted while waiting: the stream is errored already.
        if (signal?.aborted) return;
      }
      controller.enqueue(new Uint8Array(bytes));
    },
    cancel: forget,
  });
}

function replayResponse(rec: HttpRecord, matchedBy: string, warnings: readonly string[], timing: Deck['timing'], method: string, signal: AbortSignal | undefined): Response {
  const headers = toHeaders(rec.response.headers);
  headers.set('x-tapedeck-match', matchedBy);
  headers.set('x-tapedeck-key', rec.key);
  headers.set('x-tapedeck-trace', rec.trace);
  if (warnings.length > 0) headers.set('x-tapedeck-warning', warnings.join(' ').replace(/[^\x20-\x7e]+/g, ' ').slice(0, 1000));
  // A recording of an HTTP/2 answer has no status text: the standard one, which SDKs show when they cannot read the body.
  const init = { status: rec.response.status, statusText: rec.response.statusText ?? statusTextOf(rec.response.status), headers };
  if (NULL_BODY.has(rec.response.status) || method === 'HEAD') return new Response(null, init);
  const chunks = responseChunks(rec.response);
  // One chunk: the answer came whole, and is read whole (a copy: the caller owns the bytes it
  // reads, the tape keeps its own). A stream comes a chunk at a time, as it did from the API.
  if (chunks.length < 2 && !rec.response.cut) return new Response(new Uint8Array(rec.response.body), init);
  return new Response(chunkStream(chunks, timing, rec.response.cut === true, signal), init);
}

/** Sends a request upstream, recorded as usual (createFetch's live(), for chaos). */
type Live = (dreq: DeckRequest, decision: Extract<Decision, { kind: 'upstream' }>, onStored: (rec: HttpRecord) => void) => Promise<Response>;

/** Errors thrown as the network's own (a reset): passed to the caller as they are. */
const networkFaults = new WeakSet<object>();

/**
 * Returns a fetch that records and replays through a tape. Replay misses come back as HTTP
 * errors in the provider's shape (400 with the diagnostics), so SDKs raise their usual API
 * error rather than retrying a network failure.
 *
 * @example
 * import OpenAI from 'openai'
 * import { createFetch } from 'llm-tapedeck/proxy'
 * const fetch = createFetch({ tape: 'test/__tapes__/chat.tape' }) // mode: TAPEDECK_MODE, else replay
 * const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch })
 * // ... after the tests: await fetch.close()
 */
export function createFetch(opts: FetchOptions): TapedeckFetch {
  if (opts !== null && typeof opts === 'object') {
    // The proxy's upstream, given to a fetch: its calls go where the SDK sends them, and a caller
    // who expects them to go to `upstream` is told so rather than surprised.
    if ('upstream' in opts) {
      throw new TapedeckError('E_ARG', 'createFetch takes no upstream: it sends each request to the URL it is called with.', { option: 'upstream', hint: "Point the SDK at the API instead (new OpenAI({ baseURL, fetch })); upstream is the proxy's option (createHandler, startProxy, tapedeck serve --upstream)." });
    }
    checkOptionNames(opts, fetchOptions(), 'createFetch', 'docs/api.md', REDACT_INNER);
  }
  return createFetchFor(opts, { kind: 'fetch' });
}

/** The names of createFetch's own options (DeckOptions' are the rest; the timeouts are UpstreamTimeouts'). */
export const FETCH_OPTION_NAMES = ['connectTimeoutMs', 'idleTimeoutMs', 'fetch', 'shutdownTimeoutMs', 'summary'] as const;
/**
 * All of createFetch's option names. Made when createFetch is called, not when the module loads:
 * browser bundles use createFetchFor, and leave the list and the check out (their size budget).
 */
const fetchOptions = (): readonly string[] => optionNames<FetchOptions>()([...DECK_OPTION_NAMES, ...FETCH_OPTION_NAMES]);

/**
 * createFetch for a caller that wraps it (the browser replay fetch, the test helpers): `entry`
 * makes its misses name that caller's way to record instead of createFetch's. Internal.
 *
 * @example
 * const f = createFetchFor({ tape, mode }, { kind: 'test', recordCommand: 'TAPEDECK_MODE=update npx vitest run a.test.ts' })
 */
export function createFetchFor(opts: FetchOptions, entry: MissEntry): TapedeckFetch {
  // A bad mode or option throws here, where the fetch is made; the tape's own errors come back
  // from every call (and from `ready`), never as an unhandled rejection.
  if (opts === null || typeof opts !== 'object') {
    throw new TapedeckError('E_ARG', `createFetch takes an options object; got ${opts === null ? 'null' : typeof opts}.`, { hint: "createFetch({ tape: 'tapes/chat.tape' }) (or { store: 'redis://...' })" });
  }
  Deck.check(opts);
  const link = new UpstreamLink(opts.fetch, opts, 'fetch');
  const shutdownTimeoutMs = timeoutOption(opts, 'shutdownTimeoutMs', DEFAULT_SHUTDOWN_TIMEOUT_MS);
  const opening = Deck.open(opts, entry);
  opening.catch(() => {});
  const inFlight = new Set<Promise<unknown>>();
  /** Recorded answers whose body the caller has not read to the end yet. */
  const unread = new Set<() => Promise<void>>();
  const open: OpenAnswers = { inFlight, unread, left: new Set() };
  let closing: Promise<void> | undefined;
  // For the summary at close (opts.summary): recordings served or made, and misses.
  const used = new Set<string>();
  const misses: { route: string; message: string }[] = [];
  /** Calls answered with an error because the recording they matched is damaged (not "not recorded"). */
  let damagedCalls = 0;
  /** A call after close(): in a test, one the test did not wait for, made after it ended. */
  const closedError = (): TapedeckError =>
    entry.kind === 'test'
      ? lateCallError()
      : new TapedeckError('E_PROXY_CLOSED', 'This tapedeck fetch was closed.', { hint: 'Create a new one with createFetch(), or close it only after its last call.' });
  /** Calls answered with a `timeout` fault: they end when their caller aborts, or at close(). */
  const hung = new Set<(e: unknown) => void>();

  /**
   * A request that may get a fault (./chaos.ts): the fault's answer, or the decision to answer
   * it as usual (with the request stripped of the chaos header, and any delay already waited).
   * `goLive` sends a request upstream and records its answer (see live()).
   */
  async function chaotic(d: Deck, dreq: DeckRequest, signal: AbortSignal, recordBehind: () => Promise<void>, goLive: Live): Promise<Response | { decision: Decision; dreq: DeckRequest; mark?: string }> {
    const { req: sent, value } = withoutChaosHeader(dreq);
    const chaos = d.chaos;
    // `none` asks for no fault: answered as usual where there is no chaos (a page, a client
    // helper that sends it on every call), never refused.
    if (!chaos && value?.trim().toLowerCase() === 'none') return { decision: await d.decideShared(sent), dreq: sent };
    if (!chaos) {
      refuseChaos(d.mode, false, `header ${CHAOS_HEADER}`);
      // Replay without chaos: only a browser bundle, which leaves faults out (chaos.browser.ts).
      throw new TapedeckError('E_CHAOS_MODE', 'Faults on demand are not part of this build (browser playback leaves them out).', { hint: 'Test faults in Node: createFetch({ chaos }) or tapedeck serve --chaos (docs/chaos.md).' });
    }
    const plan = await planChaos(d, chaos, sent, value);
    // Update mode: a fault stands in for a call the tape has no recording of. Its replay (CI)
    // finds none for the fault to stand in for and misses, so the real answer is recorded behind
    // the fault, unseen by the caller: what the update run records is what its replay needs. The
    // fault is answered once it is stored, so the call's retry finds it, as its replay will.
    if (needsRecordBehind(plan, d, sent)) await recordBehind();
    try {
      if (plan.latencyMs > 0) {
        // The caller's abort (its own timeout) ends the wait, as it would a slow API's; its
        // retry then gets the recording this attempt took.
        await lateBy(chaos, plan, signal);
      }
      switch (plan.kind) {
        case 'usual':
          return { decision: plan.decision ?? (await d.decideShared(sent)), dreq: sent, ...(plan.latencyMs > 0 ? { mark: faultHeader(plan)! } : {}) };
        case 'status':
          return new Response(dreq.method === 'HEAD' ? null : plan.answer.body, { status: plan.answer.status, headers: statusFaultHeaders(plan, chaos.seed) });
        case 'reset': {
          // What fetch gives for a connection dropped before the status line.
          const e = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET (injected by tapedeck chaos)'), { code: 'ECONNRESET' }) });
          networkFaults.add(e);
          throw e;
        }
        case 'timeout':
          // The headers never come: the caller's own timeout (its AbortSignal) ends the call.
          return heldUntilAborted(signal, hung, networkFaults);
        case 'damage':
          return damaged(d, chaos, plan, signal);
        case 'damage-live':
          // Recorded whole first, then damaged as its replay will be (./chaos.ts).
          return await liveDamageAnswer(chaos, plan, (onStored) => goLive(sent, plan.decision, onStored), (p) => damaged(d, chaos, p, signal));
      }
    } finally {
      // The faulted answer is out (handed back, thrown, or its wait begun): from now on a
      // request of the same call can be its retry; one that came before is a call of its own.
      faultSent(chaos, plan);
    }
  }

  /** A recording served damaged (chaos): replayed (or recorded just now) and used, like any other. */
  function damaged(d: Deck, chaos: HttpChaos, plan: DamagePlan, signal: AbortSignal): Response {
    if (!plan.recorded) d.count(plan.decision.matchedBy);
    used.add(plan.record.trace);
    const a = damagedAnswer(plan, chaos, chaos.seed);
    // A stall given up on before its end reached no one whole: its retry gets the same recording.
    const gaveUp = abandonedBy(chaos, plan);
    // Its events paused as `stall` says, then an end or the error of a dropped connection.
    const body = chunkStream(a.events.map((e): [number, Uint8Array] => [0, e]), a.pauseMs || 'none', a.cut, signal, 'a cut injected by tapedeck chaos', gaveUp);
    return new Response(body, { status: a.status, headers: toHeaders(a.headers) });
  }

  /**
   * Sends `dreq` to the upstream (`url`) and answers with what comes back, recorded as it goes
   * to the caller when the decision prepared it for the tape (`onStored`: see recordStream).
   */
  async function live(d: Deck, dreq: DeckRequest, decision: Extract<Decision, { kind: 'upstream' }>, url: string, init: RequestInit | undefined, signal: AbortSignal, onStored?: (rec: HttpRecord) => void): Promise<Response> {
    const t0 = performance.now();
    const recordedAt = new Date();
    const p = decision.prepared;
    // Among identical requests being recorded (./record-turns.ts); recordStream takes it over.
    let turn = p && d.takeTurn(p);
    try {
      // The caller's abort cancels the upstream call until its answer starts; after that an
      // answer being recorded is read to the end even if the caller stops reading (an SDK
      // aborts its request on `break`), so the next replay finds it. The caller's own signal,
      // not its Request's copy (see run()). The caller's init goes along: an undici `dispatcher` in it (a ProxyAgent, an Agent with
      // a CA) is how the call reaches the API, as with fetch (./upstream.ts).
      const call = link.start(url, dreq, signal, init);
      let up: Response;
      try {
        up = await call.response;
      } catch (e) {
        throw unrecordedMiss(d, decision.miss, e);
      }
      const refused = await unrecordedByKey(d, decision.miss, up, dreq);
      if (refused) throw refused;
      if (p && (up.status < 400 || d.recordErrors)) {
        call.detachClient();
        const owned = turn;
        turn = undefined;
        const r = await recordStream(open, d, p, dreq, up, recordedAt, t0, signal, owned, onStored);
        // Aborted while a whole answer was read and recorded: recorded, and the caller gets
        // its abort, as from fetch.
        if (signal.aborted) throw signal.reason;
        return r;
      }
      d.count('passthrough');
      return up;
    } finally {
      turn?.finish();
    }
  }

  async function run(input: string | URL | Request, init: RequestInit | undefined, sent: SentRequest, upstreamPath?: string): Promise<Response> {
    // Decided when the call is made, not after the tape opened: a call made before close() is
    // in flight, and close() lets it finish (answered, or missed and counted); only a call made
    // after close() is refused. A test's call it did not await, still waiting for the tape when
    // the test ended, was refused as "after its test ended", which no miss and no summary
    // counted: the test passed in CI with a request that had no recording.
    const afterClose = closing !== undefined;
    const req = new Request(input, init);
    const u = new URL(req.url);
    // A data: or blob: URL names no server: the platform's fetch reads it, and it is neither a
    // recording nor a miss. The OpenAI and Anthropic SDKs fetch 'data:,' through a custom fetch
    // before an upload, to find its Response class; that was a miss on every replayed upload.
    if (u.protocol === 'data:' || u.protocol === 'blob:') return globalThis.fetch(req);
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k] = v));
    // Where it goes (u.origin: no user or password, no default port) is recorded and compared.
    let dreq: DeckRequest = { method: req.method, url: u.pathname + u.search, headers, body: new Uint8Array(0), origin: u.origin };
    // Under an upstream's path prefix (fetchUnder): the request is the path after it, as the
    // proxy forwarding to that upstream records it. A hop a redirect takes elsewhere is not.
    if (upstreamPath && u.pathname.startsWith(upstreamPath) && u.pathname[upstreamPath.length] === '/') {
      dreq.url = u.pathname.slice(upstreamPath.length) + u.search;
      dreq.upstreamPath = upstreamPath;
    }
    // For a redirect's next hop (fetch-redirect.ts).
    sent.url = req.url;
    sent.method = req.method;
    sent.headers = headers;
    // The caller's own signal: a Request's copy of it follows it through a weak reference that
    // garbage collection can drop, and an answer's body must hear the abort.
    const signal = init?.signal ?? (input instanceof Request ? input.signal : req.signal);
    // As fetch: a call made with an aborted signal is rejected with its reason, before anything.
    if (signal.aborted) throw signal.reason;
    let d: Deck | undefined;
    try {
      // A tape that cannot be opened (damaged, unreadable) is answered like any other tapedeck
      // error: an HTTP error the SDK raises with this message, not a rejected fetch, which
      // SDKs report as "Connection error." and retry.
      // A store that does not answer (Redis frozen) must not outlast the caller's abort.
      d = await untilAborted(opening, signal);
      if (chaosRefused !== undefined) throw chaosRefused;
      if (afterClose) throw closedError();
      if (req.body) {
        const body = new Uint8Array(await req.arrayBuffer());
        if (body.length > d.maxBodyBytes) {
          throw new TapedeckError('E_BODY_TOO_LARGE', `Request body of ${body.length} bytes is over the limit of ${d.maxBodyBytes} bytes.`, {
            limit: d.maxBodyBytes,
            hint: 'Raise maxBodyBytes, or send a smaller request.',
          });
        }
        dreq.body = body;
        sent.body = body;
      }
      let decision: Decision;
      let mark: string | undefined;
      // Chaos that cannot fire costs one header lookup here (and a request recorded behind a
      // fault takes no part in it: ./chaos.ts).
      if ((dreq.headers[CHAOS_HEADER] !== undefined || d.chaos?.canFire === true) && !recordedBehind(dreq)) {
        // The same request again, with no fault, its answer recorded and dropped (see chaotic).
        const behind = dreq;
        const c = await chaotic(d, dreq, signal, () => recordBehind(f, req.url, behind), (dr, dec, onStored) => live(d!, dr, dec, req.url, init, signal, onStored));
        if (c instanceof Response) return c;
        ({ decision, dreq, mark } = c);
      } else decision = await untilAborted(d.decideShared(dreq), signal);
      if (decision.kind === 'replay') {
        // Aborted while the answer was looked up (a first miss's matcher takes a while).
        if (signal.aborted) throw signal.reason;
        decision = otherTemperature(d, dreq, decision);
        d.count(decision.matchedBy);
        used.add(decision.record.trace);
        // A stream's headers as late as the upstream's came (an SDK timeout or abort before them fires as it did live).
        if (d.timing === 'recorded') await untilAborted(headersWait(decision.record), signal);
        const r = replayResponse(decision.record, decision.matchedBy, decision.warnings, d.timing, dreq.method, signal);
        if (mark) r.headers.set('x-tapedeck-fault', mark);
        return r;
      }
      return await live(d, dreq, decision, req.url, init, signal);
    } catch (err) {
      // An aborted request stays an AbortError (or the caller's own abort reason): SDKs treat
      // it as the caller's cancellation.
      if (signal.aborted && err === signal.reason) throw err;
      if (err !== null && typeof err === 'object' && networkFaults.has(err)) throw err;
      if (err instanceof Error && err.name === 'AbortError') throw err;
      // A malformed body's error quotes it: with its secrets masked, as the proxy's (./json-error-excerpt.ts).
      const e = asTapedeckError(d === undefined ? err : maskJsonErrorExcerpt(err, dreq.headers, dreq.body, d.maxBodyBytes, d.redactor));
      if (e.code === 'E_MISS') {
        d?.count('miss');
        if (misses.length < MAX_MISSES_KEPT) misses.push({ route: `${dreq.method} ${u.pathname}`, message: e.message });
      }
      // A failed record is counted where it failed (stats.appendFailures): not twice.
      else if (e.code !== 'E_RECORD_FAILED') {
        d?.countError();
        if (e.code === 'E_TAPE_DAMAGED' || e.code === 'E_TAPE_CORRUPT') damagedCalls++;
      }
      // A closed fetch stays closed: its answer is final, a 400 that no client retries (a 503
      // is retried whatever the headers say by some: LangChain's six tries took 77 s).
      const closed = e.code === 'E_PROXY_CLOSED';
      const status = closed ? 400 : statusOf(e.code, d?.missStatus ?? opts.missStatus, e.details.cause, e.details.lasting);
      const answerWith = (x: TapedeckError): Response => {
        const answer = errorAnswer(x, u.pathname, dreq.headers, status, showsWholeBody(dreq.headers), closed);
        return new Response(answer.body, { status, statusText: statusTextOf(status), headers: answer.headers });
      };
      const res = answerWith(e);
      if (e.code === 'E_MISS') {
        answeredMisses.set(res, { error: e, retell: (message, details = {}) => answerWith(new TapedeckError('E_MISS', message, { ...e.details, ...details, hint: undefined })) });
      }
      return res;
    }
  }

  const call = (input: string | URL | Request, init: RequestInit | undefined, upstreamPath?: string): Promise<Response> => {
    const p = followRedirects(upstreamPath ? (i, n, s) => run(i, n, s, upstreamPath) : run, input, init);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => {});
    return p;
  };
  const f = ((input: string | URL | Request, init?: RequestInit) => call(input, init)) as TapedeckFetch;
  underCalls.set(f, call);
  // Whoever awaits `ready` sees a failed open; nobody awaiting it must not make it unhandled.
  const ready = opening.then(() => undefined);
  ready.catch(() => {});
  Object.defineProperty(f, 'ready', { value: ready });
  f.stats = async () => (await opening).stats();
  // Chaos asked for after creation is applied once the tape is open, before any later call
  // (promise reactions run in order); a refusal is every later call's answer.
  let chaosRefused: unknown;
  f.chaos = (c) => {
    if (c !== undefined) checkChaos(c, 'http');
    chaosRefused = undefined;
    void opening.then(
      (d) => {
        try {
          d.useChaos(c);
        } catch (e) {
          chaosRefused = e;
        }
      },
      () => {},
    );
  };
  f.close = (withinMs = shutdownTimeoutMs) => {
    closing ??= (async () => {
      for (const end of hung) end(new TapedeckError('E_PROXY_CLOSED', 'This tapedeck fetch was closed while a call waited on an injected timeout.', { hint: 'Give the client a timeout shorter than the test.' }));
      // Past the bound, what is still in flight is aborted: a hung upstream must not keep
      // close() (and the test run or process behind it) waiting.
      const timer = setTimeout(() => {
        // Only answers their callers aborted left: said as such (./left-answers.ts).
        const left = leftAnswersCut(open, shutdownTimeoutMs);
        link.shutdown(left?.message ?? `This tapedeck fetch was closed before the upstream finished answering (shutdown timeout ${shutdownTimeoutMs} ms); nothing was recorded.`, left?.hint);
      }, withinMs);
      try {
        for (;;) {
          // Bodies nobody is reading are read now, so they are recorded and close can finish.
          for (const drain of unread) void drain();
          if (inFlight.size === 0) break;
          await Promise.allSettled([...inFlight]);
        }
      } finally {
        clearTimeout(timer);
      }
      // A tape that never opened has nothing to write: its error went to the calls.
      const d = await opening.catch(() => undefined);
      try {
        // Counted before the close rewrites the tape (a re-record, a prune: a large tape's records
        // are read from the file, which the rewrite replaces), and only when a summary may say it.
        const before = d?.stats();
        const staleCandidate = before?.mode === 'record' && before.recorded > 0 && opts.pruneUnused !== true;
        const mayTell = opts.summary !== undefined ? opts.summary !== false : entry.kind !== 'test' && (misses.length > 0 || damagedCalls > 0 || (before?.errors ?? 0) > 0 || staleCandidate);
        const unusedBefore = d && mayTell ? d.unusedCount(used) : 0;
        const closed = await d?.close();
        const s = d?.stats();
        // Said unasked when a call missed or a live answer was left off the tape: the next
        // replay misses it (a test runner's own summary says both for test tapes). A call that
        // failed is an answer not recorded only in a mode that records; a damaged recording is
        // said as such (replay reported them as "answers not recorded").
        const records = s?.mode === 'record' || s?.mode === 'update';
        const failed = s ? s.errors - damagedCalls : 0;
        const notRecorded = s ? (records ? failed : 0) + s.appendFailures : 0;
        const otherErrors = records ? 0 : failed;
        // Re-recordings took an older recording's place (record mode, known once closed): not
        // added. The recordings they replaced are off the tape, not unused (record mode serves
        // nothing, so each is among those unusedCount finds unasked for).
        const unused = Math.max(0, unusedBefore - (closed?.replaced.length ?? 0));
        // Recordings a record run left that nothing asked for: said unasked (./stale-recordings.ts).
        const stale = staleLine(staleCandidate, unused);
        const summarize = opts.summary ?? ((misses.length > 0 || notRecorded > 0 || damagedCalls > 0 || otherErrors > 0 || stale !== undefined) && entry.kind !== 'test');
        if (d && s && summarize) {
          const rerecorded = s.rerecorded ?? 0;
          // Faults that stood in for recordings leave those waiting for retries: none is judged unused.
          const faulted = faultsInPlaceOfRecordings(s.faults);
          const text = formatFetchSummary({ tape: d.tape, mode: s.mode, replayed: s.hits, added: s.recorded - rerecorded - (s.retried ?? 0), ...(rerecorded > 0 ? { rerecorded } : {}), misses, unused, ...(faulted.calls > 0 ? { unusedNotChecked: faulted.text } : {}), notRecorded, damaged: damagedCalls, failed: otherErrors, ...(faulted.calls === 0 ? { stale } : {}) });
          if (typeof opts.summary === 'function') opts.summary(text);
          else if (typeof process !== 'undefined' && process.stderr) process.stderr.write(`${text}\n`);
          else console.warn(text);
        }
      } finally {
        // Idle keep-alive connections to the upstream go too, even when writing the tape failed.
        await link.close();
      }
    })();
    return closing;
  };
  f[Symbol.asyncDispose] = f.close;
  return f;
}
