/**
 * The provider registry: the list of provider modules (./provider.ts says what one is and how
 * to add one) and the questions the rest of tapedeck asks them. The matcher keys a body with
 * normalizeRequest() here, the raw-bytes walk asks rawKeysAllowed(), the proxy and createFetch
 * ask errorAnswerFor() and responseComplete(), the redactor reads CREDENTIALS, the tree reads
 * assembleAnswer().
 */
import { TapedeckError } from '../errors.ts';
import type { ErrorStyle } from './error-shape.ts';
import { ANSWER_READERS } from './answer-readers.ts';
import { anthropic } from './anthropic.ts';
import { azure } from './azure.ts';
import { bedrock } from './bedrock.ts';
import { cohereStreamComplete } from './cohere-stream.ts';
import { gemini } from './gemini.ts';
import { ollama } from './ollama.ts';
import { OBSERVABILITY_UPLOADS } from './observability.ts';
import { detectProvider as detectChatShape, normalizeRequest as normalizeChatShape } from './normalize.ts';
import { openai } from './openai.ts';
import type { AnswerContext, AnswerRead, Credentials, ErrorAnswer, ProviderModule, ProviderRoute, RouteMatch, RouteRequest } from './provider.ts';
import { assembleStream, streamComplete } from './sse-assemble.ts';
import type { NormalizeOptions, Provider, RequestView } from './types.ts';

export type { AnswerContext, AnswerRead, ToolCallRead, UsageRead } from './provider.ts';
export type { Credentials, ErrorAnswer, NormalizeContext, ProviderModule, ProviderRoute, RouteMatch, RouteRequest } from './provider.ts';

/**
 * Every provider module, most specific first: routes are tried in this order, and so are the
 * modules' detect() and speaks(). OpenAI is last: the fallback error shape.
 */
export const PROVIDER_MODULES: readonly ProviderModule[] = [gemini, bedrock, anthropic, ollama, azure, openai];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The module route a request was sent to, or undefined. The URL's query is kept apart (Gemini's
 * `alt=sse`), and the model the path names is percent-decoded.
 *
 * @example
 * routeOf({ method: 'POST', url: '/v1/chat/completions' })?.provider.name // 'openai'
 */
export function routeOf(req: RouteRequest | undefined): RouteMatch | undefined {
  const found = foundRoute(req);
  if (found === undefined || found.provider === undefined || found.route === undefined) return undefined;
  const url = req!.url;
  const q = url.indexOf('?');
  return { provider: found.provider, route: found.route, method: found.method, path: found.path, query: new URLSearchParams(q < 0 ? '' : url.slice(q + 1)), ...(found.model !== undefined ? { model: found.model } : {}) };
}

/**
 * The module route of a request's method and path (none: no `provider`), without a match
 * object. Requests mostly repeat one route: the last path's route is kept, so the modules'
 * patterns are not tried again for it; callers only read what it gives.
 */
function foundRoute(req: RouteRequest | undefined): NonNullable<typeof lastRoute> | undefined {
  if (req === undefined || req === null || typeof req.url !== 'string') return undefined;
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const method = (req.method ?? 'POST').toUpperCase();
  let found = lastRoute;
  if (found === undefined || found.path !== path || found.method !== method) found = lastRoute = { method, path, ...findRoute(method, path) };
  return found;
}

let lastRoute: { method: string; path: string; provider?: ProviderModule; route?: ProviderRoute; model?: string } | undefined;

/** The first module route whose method and path pattern match, and the model the path names (percent-decoded). */
function findRoute(method: string, path: string): { provider: ProviderModule; route: ProviderRoute; model?: string } | undefined {
  for (const provider of PROVIDER_MODULES) {
    for (const route of provider.routes) {
      if (route.method !== method) continue;
      const m = route.path.exec(path);
      if (!m) continue;
      let model = m.groups?.model;
      if (model !== undefined) {
        try {
          model = decodeURIComponent(model);
        } catch {
          // a malformed escape: the model as written
        }
      }
      return { provider, route, ...(model !== undefined ? { model } : {}) };
    }
  }
  return undefined;
}

/**
 * Whether a request is a telemetry upload a provider answers whatever its body holds (see
 * ProviderModule.telemetry): keyed by its route alone, so each run's fresh trace ids and
 * timestamps never make it a miss.
 *
 * @example
 * isTelemetry({ method: 'POST', url: '/v1/traces/ingest' }) // true
 */
export function isTelemetry(req: RouteRequest): boolean {
  // Clients repeat one route: the last answer is kept, so the usual request costs two compares.
  const last = lastTelemetry;
  if (req.url === last.url && req.method === last.method) return last.is;
  const method = (req.method ?? 'POST').toUpperCase();
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  let is = false;
  for (const t of TELEMETRY) if (t.method === method && t.path.test(path)) is = true;
  lastTelemetry = { method: req.method, url: req.url, is };
  return is;
}

let lastTelemetry: { method: string | undefined; url: string; is: boolean } = { method: '', url: '', is: false };

/**
 * Every module's telemetry routes and the observability tools' uploads (./observability.ts), in
 * one list (isTelemetry runs on every JSON request).
 */
const TELEMETRY = PROVIDER_MODULES.flatMap((m) => m.telemetry ?? []).concat(OBSERVABILITY_UPLOADS);

/**
 * The AWS services (SigV4 signing names) a request may be signed for: those of its route's
 * module, or, for a path no such module names (Bedrock's control plane, its OpenAI-compatible
 * routes), those of every module that declares some. The proxy signs with its own credentials
 * only for these.
 *
 * @example
 * sigV4ServicesOf({ method: 'POST', url: '/model/m/converse' }) // ['bedrock']
 */
export function sigV4ServicesOf(req: RouteRequest): readonly string[] {
  const own = routeOf(req)?.provider.sigV4Services;
  if (own && own.length > 0) return own;
  return [...new Set(PROVIDER_MODULES.flatMap((m) => m.sigV4Services ?? []))];
}

/**
 * The URL a recording of this request is filed under: the URL as sent, unless the module of its
 * route, or (for a path no module route names) the module that speaks the path, files it
 * otherwise: Azure OpenAI leaves out `api-version` on every `/openai/...` path (transcriptions,
 * files, models, a polled response), not only on the routes it keys.
 *
 * @example
 * recordingUrl({ method: 'POST', url: '/openai/deployments/d/chat/completions?api-version=2024-10-21' }) // '/openai/deployments/d/chat/completions'
 * recordingUrl({ method: 'GET', url: '/openai/responses/resp_1?api-version=2024-10-21' })              // '/openai/responses/resp_1'
 */
export function recordingUrl(req: RouteRequest): string {
  const own = routeOf(req)?.provider.routeUrl;
  if (own) return own(req.url);
  // Azure's paths outside its keyed routes (or matched by OpenAI's own routes, which take any
  // prefix) still carry the version the SDK was given: filed by the module that speaks them.
  const q = req.url.indexOf('?');
  if (q < 0) return req.url;
  const path = req.url.slice(0, q);
  for (const m of FILED_OTHERWISE) if (m.speaks!(path, {})) return m.routeUrl!(req.url);
  return req.url;
}

/** The modules that file some URLs otherwise (routeUrl) and say which paths they speak. */
const FILED_OTHERWISE = PROVIDER_MODULES.filter((m) => m.routeUrl !== undefined && m.speaks !== undefined);

/**
 * What a route name adds for the headers its module files recordings by (see
 * ProviderModule.keyHeaders): ` (anthropic-beta: a,b)`, or '' when the module has none or the
 * request sends none. A list's items are sorted and deduplicated: SDKs join the caller's list in
 * the caller's order, which does not change the answer.
 *
 * @example
 * keyedHeaders({ method: 'POST', url: '/v1/messages' }, { 'anthropic-beta': 'b, a' }) // ' (anthropic-beta: a,b)'
 */
export function keyedHeaders(req: RouteRequest, headers: Readonly<Record<string, string | readonly string[] | undefined>> = {}): string {
  let out = '';
  for (const name of foundRoute(req)?.provider?.keyHeaders ?? []) {
    const v = headers[name];
    const items = v === undefined ? [] : [...new Set(String(v).split(',').map((s) => s.trim()).filter((s) => s !== ''))].sort();
    if (items.length > 0) out += `${out && '; '}${name}: ${items.join(',')}`;
  }
  return out && ` (${out})`;
}

/**
 * The method and URL of a route name (`METHOD /path?query`, and the headers it is filed by
 * after a space: see keyedHeaders).
 *
 * @example
 * routeEndpoint('POST /v1/messages (anthropic-beta: a)') // { method: 'POST', url: '/v1/messages' }
 */
export function routeEndpoint(route: string): { method: string; url: string } {
  const sp = route.indexOf(' ');
  const end = route.indexOf(' ', sp + 1);
  return { method: route.slice(0, sp), url: route.slice(sp + 1, end < 0 ? undefined : end) };
}

/** The module that keys a shape (`gemini`, `openai-chat`, ...), or undefined. */
export function moduleOfShape(shape: Provider): ProviderModule | undefined {
  return PROVIDER_MODULES.find((m) => m.shapes.includes(shape));
}

/** The module and shape for a body, by the caller's `provider`, the endpoint's route, then the modules' detect(). */
function shapeOf(body: unknown, opts: NormalizeOptions): { module: ProviderModule; shape: Provider; route?: RouteMatch } | undefined {
  if (opts.provider !== undefined && opts.provider !== null) {
    const module = moduleOfShape(opts.provider);
    if (!module) {
      throw new TapedeckError('E_ARG', `${JSON.stringify(opts.provider)} is not a provider.`, { hint: `Valid values: ${PROVIDER_MODULES.flatMap((m) => m.shapes).join(', ')}.` });
    }
    // A chat-family name is the chat normalizer's business.
    if (module.rawKeys) return undefined;
    const route = routeOf(opts.endpoint);
    return { module, shape: opts.provider, ...(route?.provider === module ? { route } : {}) };
  }
  const route = routeOf(opts.endpoint);
  if (route?.route.shape !== undefined) return { module: route.provider, shape: route.route.shape, route };
  if (!isObj(body)) return undefined;
  for (const module of PROVIDER_MODULES) {
    const shape = module.detect?.(body);
    if (shape !== undefined) return { module, shape };
  }
  return undefined;
}

/**
 * Normalizes a request body of any known provider into the view whose digest is the request
 * key (docs/hash-spec.md): the provider's module when the endpoint's route, the `provider`
 * option or the body says which, else the chat family (OpenAI, Anthropic, AI SDK, generic).
 * Throws a TapedeckError `E_REQUEST` for a body that is no request, `E_ARG` for bad options.
 *
 * @example
 * normalizeRequest({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
 *   { endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' } }).view.model // 'gemini-2.5-flash'
 * normalizeRequest({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).provider // 'openai-chat'
 */
export function normalizeRequest(body: unknown, opts: NormalizeOptions = {}): RequestView {
  // Options that are not an object are the chat normalizer's E_ARG.
  if (opts === null || typeof opts !== 'object') return normalizeChatShape(body, opts);
  const found = shapeOf(body, opts);
  const { endpoint: _e, ...rest } = opts;
  if (found) return found.module.normalize(body, { shape: found.shape, route: found.route, opts: { ...rest, provider: found.shape } });
  return normalizeChatShape(body, rest);
}

/**
 * Which request shape a body has: the endpoint's route or a module's detection first, else the
 * chat family's rules (docs/hash-spec.md, "Detection"). Throws `E_REQUEST` for no known shape.
 *
 * @example
 * detectProvider({ contents: [{ parts: [{ text: 'hi' }] }] }) // 'gemini'
 */
export function detectProvider(body: unknown, endpoint?: RouteRequest): Provider {
  return shapeOf(body, { endpoint })?.shape ?? detectChatShape(body);
}

/**
 * Whether the matcher's raw-bytes walk (chat-family rules only) may key a body with these
 * options: not when the options or the endpoint name a shape of another module. (Bodies of
 * such shapes met without a route have none of the members the walk keys, so it declines them.)
 */
export function rawKeysAllowed(opts: NormalizeOptions): boolean {
  if (opts.provider !== undefined && opts.provider !== null) return moduleOfShape(opts.provider)?.rawKeys !== false;
  // The endpoint's route as routeOf() finds it, without the match object it makes.
  const found = foundRoute(opts.endpoint);
  return found?.route?.shape === undefined || found.provider!.rawKeys;
}

/**
 * The shape of the module route a request was sent to (routeOf()'s `route.shape`), without
 * making a match object: the raw-bytes path asks it per request.
 *
 * @example
 * routeShapeOf({ method: 'POST', url: '/api/chat' }) // 'ollama-chat'
 */
export function routeShapeOf(req: RouteRequest | undefined): string | undefined {
  return foundRoute(req)?.route?.shape;
}

/**
 * Whether the route says the answer is a stream whatever its content type (./provider.ts,
 * ProviderRoute.streams).
 *
 * @example
 * routeStreams({ method: 'POST', url: '/v1beta/models/gemini-2.5-flash:streamGenerateContent' }) // true
 */
export function routeStreams(req: RouteRequest | undefined): boolean {
  return routeOf(req)?.route.streams === true;
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The module whose error shape a request expects: its route's, else the first that speaks for
 * the path or headers, else OpenAI's.
 */
export function errorModuleOf(path: string, headers: Headers): ProviderModule {
  const q = path.indexOf('?');
  const bare = q < 0 ? path : path.slice(0, q);
  for (const m of PROVIDER_MODULES) if (m.routes.some((r) => r.path.test(bare)) || m.speaks?.(bare, headers)) return m;
  return openai;
}

/**
 * An error in the error shape of the provider the client talks to (by the request's path and
 * headers), so the client's SDK raises its own API error with tapedeck's message in it.
 *
 * @example
 * errorAnswerFor('/v1/messages', {}, new TapedeckError('E_MISS', 'model differs'), 404).body // Anthropic's shape
 */
export function errorAnswerFor(path: string, headers: Headers, e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer {
  return errorModuleOf(path, headers).errorAnswer(e, status, style);
}

const asBytes = (b: Uint8Array | string): Uint8Array => (typeof b === 'string' ? new TextEncoder().encode(b) : b);
const firstOf = (ct: string | readonly string[] | undefined | null): string | undefined => (Array.isArray(ct) ? ct[0] : (ct as string | undefined | null) ?? undefined);

/**
 * Whether a response body is a whole answer, by the module of the request's route, else by the
 * event-stream rules (the chat family's, Cohere v2's) and Cohere v1's JSON-lines rule: false for
 * a stream cut before its final event (never recorded as good), true for whole answers and for
 * bodies nothing can judge.
 *
 * @example
 * responseComplete({ method: 'POST', url: '/v1/chat/completions' }, 'text/event-stream', 'data: {"choices":[{"delta":{}}]}\n\n') // false
 */
export function responseComplete(req: RouteRequest | undefined, contentType: string | readonly string[] | undefined | null, body: Uint8Array | string): boolean {
  const route = routeOf(req);
  const verdict = route?.provider.complete?.(asBytes(body), firstOf(contentType), route);
  return verdict ?? (streamComplete(contentType, body) && cohereStreamComplete(contentType, body));
}

/**
 * Byte patterns of the events after which a client may take a stream for a whole answer and
 * stop reading: OpenAI chat's `data: [DONE]` and a chunk with a finish reason, the Responses
 * API's `response.completed` / `response.incomplete`, Anthropic's `message_stop`, Gemini's
 * `finishReason`, Ollama's `"done":true` line, Bedrock's `messageStop` event, OpenAI's audio
 * streams' `transcript.text.done` and `speech.audio.done` (Cohere's final events, v2's
 * `message-end` and v1's `stream-end`, carry a `"finish_reason":"`). A stream being
 * recorded holds back a chunk that carries one until its record is stored (src/proxy/upstream.ts,
 * FinalEventHold); a false match only delays that chunk until the next one arrives.
 */
export const FINAL_EVENT_MARKERS: readonly string[] = Object.freeze(['[DONE]', '"finish_reason":"', 'response.completed', 'response.incomplete', 'message_stop', 'finishReason', '"done":true', '"done": true', 'messageStop', 'transcript.text.done', 'speech.audio.done']);

/**
 * The non-streamed answer a recorded stream stands for, by the module of the request's route,
 * else the chat family's event streams; undefined when nothing assembles it.
 *
 * @example
 * assembleAnswer({ method: 'POST', url: '/v1/chat/completions' }, rec.response.headers['content-type'], rec.response.body)
 */
export function assembleAnswer(req: RouteRequest | undefined, contentType: string | readonly string[] | undefined | null, body: Uint8Array | string): Record<string, unknown> | undefined {
  const route = routeOf(req);
  const own = route?.provider.assemble?.(asBytes(body), firstOf(contentType), route);
  return own ?? assembleStream(contentType, body);
}

/**
 * The request that continues a conversation with `more` appended, in the request's own shape,
 * by the module that keys that shape (`messages` for the chat family, `input` for Responses,
 * `contents` for Gemini).
 *
 * @example
 * continueRequest({ model: 'gpt-4o', input: 'hi' }, 'openai-responses', [{ role: 'assistant', content: 'hello' }]).input
 * // [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]
 */
export function continueRequest(request: Record<string, unknown>, shape: Provider, more: readonly unknown[]): Record<string, unknown> {
  const own = moduleOfShape(shape)?.continueRequest;
  if (own) return own(request, shape, more);
  return { ...request, messages: [...(Array.isArray(request.messages) ? request.messages : []), ...more] };
}

/** An answer as its provider's module reads it, with the name its calls are counted under. */
export interface ProviderAnswer extends AnswerRead {
  provider: string;
}

/**
 * How an answer reads, by the module of the request's route, else by the first module that
 * recognizes the body's shape (a ReplayCache value has no route); undefined when none does (plain
 * JSON of another API, text, bytes). Streamed answers are read once assembled (assembleAnswer).
 *
 * @example
 * readAnswer({ method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' }, body)?.usage // { input: 10, output: 8 }
 */
export function readAnswer(req: RouteRequest | undefined, body: unknown, headers?: AnswerContext['headers']): ProviderAnswer | undefined {
  if (!isObj(body)) return undefined;
  const route = routeOf(req);
  const own = route ? ANSWER_READERS[route.provider.name]?.(body, { route, headers }) : undefined;
  if (own) return { ...own, provider: own.provider ?? route!.provider.name };
  for (const m of PROVIDER_MODULES) {
    if (m === route?.provider) continue;
    const r = ANSWER_READERS[m.name]?.(body, { headers });
    if (r) return { ...r, provider: r.provider ?? m.name };
  }
  return undefined;
}

/** The credentials of every module, merged: what the redactor masks by default. */
export const CREDENTIALS: Credentials = Object.freeze({
  headers: [...new Set(PROVIDER_MODULES.flatMap((m) => m.credentials.headers.map((h) => h.toLowerCase())))],
  query: [...new Set(PROVIDER_MODULES.flatMap((m) => m.credentials.query))],
  fields: [...new Set(PROVIDER_MODULES.flatMap((m) => m.credentials.fields))],
});
