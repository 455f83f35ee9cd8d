/**
 * The one interface every LLM provider implements. What tapedeck knows about an API lives in
 * its module (src/providers/<name>.ts) and nowhere else; the matcher, the redactor, the
 * recorder (stream completeness), the miss writer and the tree ask the registry
 * (src/providers/index.ts), which asks the modules.
 *
 * A module says:
 *   - routes: which requests are its own (method and a path pattern; the model when the URL
 *     names it, as Gemini, Vertex AI, Bedrock and Azure deployments do), and which request
 *     shape a body sent there is keyed as;
 *   - request view: normalize(body, ctx) -> the RequestView whose digest is the request key
 *     (model, messages, tools, options). Messages use the shared normalized form of
 *     src/providers/normalize.ts (text parts, attachments by digest, tool calls and results
 *     with renumbered call ids), so one conversation has the same message and path hashes in
 *     every provider's shape;
 *   - answer: assemble(bytes, contentType) -> the non-streamed answer a recorded stream stands
 *     for (what a diff or the conversation tree reads);
 *   - reading: how one of its answers reads (text, tool calls, finish reason, usage, model, the
 *     messages a follow-up sends back, the envelope without them and without per-call noise),
 *     which the stats, the drift classifier and the conversation tree ask through the
 *     registry's readAnswer, so none of them knows an answer's shape. Each module's reader is
 *     an {@link AnswerReader} in ./answer-readers.ts, not a member of the module: replay never
 *     reads an answer, and a page's bundle leaves the readers out;
 *   - stream completeness: complete(bytes, contentType) -> false for a stream that was cut
 *     (no final event), which is then never recorded as a good answer;
 *   - errors: errorAnswer(error, status) -> the body and headers of an error in the provider's
 *     own error shape, so its SDK raises its own API error carrying tapedeck's one-line
 *     diagnosis;
 *   - faults: fault(kind, message) -> an injected 429, 500, 503 or 529 as the provider sends it
 *     (chaos: its SDK retries it or raises its own exception class, as for the real one);
 *   - credentials: the headers, query parameters and body members that carry its secrets, which
 *     the redactor masks everywhere (headers, URLs, JSON bodies).
 *
 * How a new provider plugs in (one module, its vectors, its docs section, its SDK tests):
 *   1. Write src/providers/<name>.ts exporting a `ProviderModule`. Import only from the core,
 *      src/errors.ts and this directory (test/imports.test.ts checks the direction:
 *      core <- providers <- match <- store <- ...). Reuse the shared pieces:
 *      `Normalizer` (content parts, attachments by digest, call id renumbering: `n.ids.of(id)`),
 *      `attachmentOf`, `splitToolResults`, `optionValue`, `sortTools`, `copy`, `strip`, `put`,
 *      `requestError`, `DROPPED` from ./normalize.ts; `parseSse` from ./sse-assemble.ts;
 *      `errorMessage`, `errorDetails`, `safeJSON` from ./error-shape.ts. ./gemini.ts is a
 *      complete example (routes with the model in the path, a view, streams in two framings,
 *      an error shape, credentials).
 *   2. Add it to PROVIDER_MODULES in src/providers/index.ts, before the modules whose routes or
 *      error-shape detection are more general than its own (openai is last: the fallback).
 *   3. If its shape has its own name, add it to `Provider` in ./types.ts (a string union that
 *      also admits any string, so this is for documentation and autocomplete).
 *   4. A route whose answer streams under a content type the proxy would not take for a stream
 *      (a JSON array sent piece by piece) says `streams: true`; complete() then judges it.
 *   5. A module whose view is not the chat family's leaves `rawKeys` false: the matcher's
 *      raw-bytes walk (src/match/raw-keys.ts, assembly/view.ts) implements the chat family's
 *      rules only; bodies of other shapes are checked by the core's index, parsed and
 *      normalized by their module, and hashed from the view's JSON text (Gemini's common
 *      bodies also have a walk of their own there, geminiDigests).
 *   6. Request-key vectors in test/vectors (scripts/reference-key.py), a section in
 *      docs/hash-spec.md and docs/providers.md, and its SDK tests against a loopback fake.
 *
 * Keying rules every module keeps (docs/hash-spec.md): member order and number spelling never
 * matter (the view is canonicalized), call ids are renumbered, attachments enter by digest,
 * volatile members (ids, timestamps, signatures, credentials, accounting) stay out, and the
 * members that decide the answer (model, tools, generation options, streaming) stay in.
 */
import type { TapedeckError } from '../errors.ts';
import type { ErrorStyle } from './error-shape.ts';
import type { NormalizeOptions, Provider, RequestView } from './types.ts';

/**
 * Where a request was sent, which decides how its body is read: the method and URL (path and
 * query, or a whole URL) as the client sent them. detectProvider's `endpoint`.
 *
 * @example
 * const endpoint: RouteRequest = { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' }
 * detectProvider(body, endpoint) // 'gemini'
 */
export interface RouteRequest {
  /** The HTTP method (default POST). */
  method?: string;
  /** The request's URL, or its path and query. */
  url: string;
}

/** One route a provider owns. */
export interface ProviderRoute {
  /** HTTP method, upper case. */
  method: string;
  /**
   * Matched against the URL path (without the query). Anchor it at the end only: the proxy may
   * be mounted under a prefix. A named group `model` is the model the URL names.
   */
  path: RegExp;
  /** What the route does, as the provider names it (`generateContent`, `chat.completions`, ...). */
  operation: string;
  /**
   * The request shape a body sent here is keyed as; absent: detected from the body (the
   * chat-family shapes of ./normalize.ts, whose keys never depended on the URL).
   */
  shape?: Provider;
  /**
   * The answer is a stream whatever its content type says (Gemini's `streamGenerateContent`
   * without `alt=sse` is one JSON array sent piece by piece as `application/json`): the proxy
   * passes it on as it comes instead of holding it until its record is stored.
   */
  streams?: boolean;
}

/** A request matched to one of a module's routes. */
export interface RouteMatch {
  provider: ProviderModule;
  route: ProviderRoute;
  /** The method, upper case. */
  method: string;
  /** The URL path without the query. */
  path: string;
  query: URLSearchParams;
  /** The model the URL names (percent-decoded), when the route has a `model` group. */
  model?: string;
}

/** What a module's normalize() is given besides the body. */
export interface NormalizeContext {
  /**
   * The shape to key as: the route's, the caller's `provider` option, or the module's detect();
   * absent when the module is to detect it (the chat family, whose detection reads the body).
   */
  shape?: Provider;
  /** The route the body was sent to, when known. */
  route?: RouteMatch;
  /** The caller's options (ignoreArgs, volatileKeys); `provider` and `endpoint` already applied. */
  opts: NormalizeOptions;
}

/** An error answer in a provider's own shape. */
export interface ErrorAnswer {
  body: string;
  /** Added to tapedeck's own error headers (content type, x-tapedeck-*, x-should-retry). */
  headers?: Record<string, string>;
}

/** An injected fault that replaces an answer with an error status (chaos, src/chaos/). */
export type StatusFault = '429' | '500' | '503' | '529';

/** What a status fault looks like in a provider's own shape. */
export interface FaultAnswer {
  /** The status sent (529 is Anthropic's own; other providers answer their overloaded status). */
  status: number;
  body: string;
  /** Headers only this provider sends with it (`x-amzn-errortype`); retry headers are added for every provider. */
  headers?: Record<string, string>;
}

/** One tool call an answer makes: the tool's name and its arguments (parsed when they were JSON text). */
export interface ToolCallRead {
  name: string;
  args: unknown;
}

/** Token counts an answer reports. `input` counts cached input too (it is billed as input). */
export interface UsageRead {
  input?: number;
  output?: number;
}

/**
 * How an answer reads: what an application reads in it (text, tool calls, finish reason and
 * refusal, usage) and the rest of its envelope. Streamed answers are read once assembled.
 */
export interface AnswerRead {
  /**
   * The answer's shape (`openai-chat`, `openai-responses`, `anthropic`, `gemini`,
   * `bedrock-converse`, `ollama`, ...): two answers of one request in different shapes differ
   * in structure. `json` for an answer of the provider with no text of its own (embeddings):
   * the drift classifier compares its members as content.
   */
  shape: string;
  /** The text of each alternative (choice, candidate), in order. */
  texts: string[];
  toolCalls: ToolCallRead[];
  /** The finish (stop) reason of each alternative, '' when it names none. */
  finish: string[];
  /** A refusal's text or reason, '' when there is none. */
  refusal: string;
  usage: UsageRead | undefined;
  /** The model the answer names (Gemini's `modelVersion`), when it names one. */
  model?: string;
  /**
   * The message lists a follow-up request sends back, in the request's own shape: one list per
   * alternative. Absent: the answer continues no conversation the module knows of.
   */
  messages?: unknown[][];
  /**
   * The envelope without the parts above and without the members that change on every call in
   * this API (timings, response ids, model snapshot names): what a change of structure is read in.
   */
  rest: unknown;
  /**
   * What else of the answer an application may read, besides the text and the tool calls:
   * reasoning (thinking blocks, thought parts, reasoning summaries), the results of tools the API
   * ran itself (web search, code execution, MCP), audio (its transcript), annotations and
   * citations, output items of other kinds; in answer order, as the answer has them (ids,
   * signatures and encrypted members included: what is noise is the reader's call, the drift
   * classifier's NOISE and opaque members). `rest` keeps their kind, or their shape without
   * values, so a change of structure is still read there. Absent: the module reads none.
   *
   * @example
   * readAnthropicAnswer({ type: 'message', content: [{ type: 'thinking', thinking: 'ok', signature: 'Eq..' }] })?.other
   * // [{ type: 'thinking', thinking: 'ok', signature: 'Eq..' }]
   */
  other?: unknown[];
  /** The name its calls are counted under when it is not the module's (an OpenAI-compatible API's). */
  provider?: string;
}

/**
 * How one of a module's answers reads, or undefined when the body is not an answer of its shape.
 * Called with the route the request went to, or with none to recognize a body by its shape
 * (ReplayCache values), so it must decline bodies of other shapes. Never mutates `body`.
 */
export type AnswerReader = (body: Record<string, unknown>, ctx: AnswerContext) => AnswerRead | undefined;

/** What a module's answer reader is given besides the body. */
export interface AnswerContext {
  /** The route the request was sent to, when known (a ReplayCache value has none). */
  route?: RouteMatch;
  /** The answer's headers (Bedrock InvokeModel reports its token counts there). */
  headers?: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/** The secrets a provider's requests carry. Names are compared case-insensitively. */
export interface Credentials {
  headers: readonly string[];
  query: readonly string[];
  /** JSON member names, at any depth. */
  fields: readonly string[];
}

/** One LLM provider: see the module comment for what each member is for and how to add one. */
export interface ProviderModule {
  /** Short name (`openai`, `anthropic`, `gemini`), used in docs and diagnostics. */
  readonly name: string;
  readonly routes: readonly ProviderRoute[];
  /**
   * Uploads whose answer never depends on their body (telemetry, such as the OpenAI Agents
   * SDK's trace export to `/v1/traces/ingest`): keyed by their route alone. Their bodies hold
   * fresh trace ids and timestamps on every run, so keyed by body no replay would ever find
   * its recording, and the miss would tell the user to re-record, which never helps.
   */
  readonly telemetry?: readonly { readonly method: string; readonly path: RegExp }[];
  /** The request shapes normalize() keys (the `provider` of its RequestViews). */
  readonly shapes: readonly Provider[];
  /**
   * Whether bodies this module keys may go through the matcher's raw-bytes walk, which
   * implements the chat-family rules of ./normalize.ts only. False for every other shape.
   */
  readonly rawKeys: boolean;
  /**
   * The shape of a body met without a route (a body handed to requestKeys, a recording of
   * another tool), or undefined when it is not this provider's. Only evidence no other shape
   * has: a body the chat-family detection accepts must keep its key.
   */
  detect?(body: Record<string, unknown>): Provider | undefined;
  /**
   * The request view. Throws a TapedeckError `E_REQUEST` (with the JSON path) for a body that
   * is not a request of the shape. Deterministic, idempotent, never mutates `body`.
   */
  normalize(body: unknown, ctx: NormalizeContext): RequestView;
  /**
   * The answer a recorded stream stands for (the non-streamed body), or undefined when the
   * bytes are not this provider's stream or not a whole answer.
   */
  assemble?(bytes: Uint8Array, contentType: string | undefined, route?: RouteMatch): Record<string, unknown> | undefined;
  /**
   * The request that continues a conversation: `request` (of one of its `shapes`) with `more`
   * (the messages an answer contributes, as readAnswer gives them) appended where that shape
   * keeps its conversation. Absent: appended to `messages`, as the chat family does.
   */
  continueRequest?(request: Record<string, unknown>, shape: Provider, more: readonly unknown[]): Record<string, unknown>;
  /**
   * Whether a response body is a whole answer: false for a stream that stopped before its
   * final event, or that reports an error; undefined when the module has nothing to say about
   * these bytes (another content type, not its stream).
   */
  complete?(bytes: Uint8Array, contentType: string | undefined, route?: RouteMatch): boolean | undefined;
  /**
   * Whether a client of this provider sent the request (its path, or a header only its SDK
   * sends), so errors are answered in its shape even on a path no route names.
   */
  speaks?(path: string, headers: Readonly<Record<string, string | string[] | undefined>>): boolean;
  /**
   * The URL (path and query) a recording of one of its routes is filed under, when it is not the
   * URL as sent: Azure drops `api-version`, so an SDK upgrade that bumps it does not orphan
   * every recording. Absent: the URL as sent.
   */
  routeUrl?(url: string): string;
  /**
   * Request headers (lower-case) that decide the answer as the body does: Anthropic's
   * `anthropic-beta` turns features on (longer output, interleaved thinking). Recordings are
   * filed apart by their values (the route name says them), so a request sent with other values
   * misses instead of replaying another request's answer.
   */
  readonly keyHeaders?: readonly string[];
  /**
   * An error (a replay miss above all) in the provider's error shape. `e.message` is
   * tapedeck's one-line diagnosis; `e.details` the rest (for a miss: key, difference, fix,
   * report). The SDK must raise its own API error with the diagnosis in its message. With
   * `style.short` (a client that shows the whole body), keep the body to a few hundred bytes:
   * errorMessage() and errorDetails() of ./error-shape.ts take the style.
   */
  errorAnswer(e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer;
  /**
   * An injected fault (rate limit, server error, overloaded) as the provider sends it, so its
   * SDK takes it for the real thing (its retry rules, its exception class). `message` says the
   * fault was injected by tapedeck. Absent: errorAnswer() with that status.
   */
  fault?(fault: StatusFault, message: string): FaultAnswer;
  readonly credentials: Credentials;
  /**
   * For an AWS API: the services its requests are signed for (the SigV4 credential scope's
   * service, e.g. `bedrock`). The proxy re-signs a request with its own AWS credentials only when
   * the client's signature names one of them.
   */
  readonly sigV4Services?: readonly string[];
}
