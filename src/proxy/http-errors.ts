/**
 * Errors over HTTP, in the error shape of the provider the client talks to, so the client's SDK
 * raises its usual API error (with tapedeck's message and code in it) instead of failing to
 * parse the body.
 */
import { TapedeckError } from '../errors.ts';
import { errorModuleOf, PROVIDER_MODULES } from '../providers/index.ts';

export { safeJSON } from '../providers/error-shape.ts';

/** The provider whose error shape a request expects (src/providers: its routes, its SDK's headers; else OpenAI's). */
export type ErrorShape = string;

/**
 * Which provider's error shape a request expects, by its path and headers.
 *
 * @example
 * errorShapeOf('/v1/messages', {}) // 'anthropic'
 */
export function errorShapeOf(path: string, headers: Record<string, string | string[] | undefined>): ErrorShape {
  return errorModuleOf(path, headers).name;
}

const STATUS: Record<string, number> = {
  E_MISS: 404,
  E_JSON: 400,
  E_UTF8: 400,
  E_DUPLICATE_KEY: 400,
  E_LONE_SURROGATE: 400,
  E_NON_FINITE: 400,
  E_DEPTH: 400,
  E_REQUEST: 400,
  E_REQUEST_ENCODING: 400,
  E_PROXY_PATH: 400,
  // A client that took the proxy for a forward proxy (HTTP_PROXY, curl -x): its set-up.
  E_FORWARD_PROXY: 400,
  // A request asking for a fault by header that names none, or outside replay without --chaos-live.
  E_CHAOS_SPEC: 400,
  E_CHAOS_MODE: 400,
  E_BODY_TOO_LARGE: 413,
  // A SigV4 signature by the proxy's own access key that does not prove the secret: AWS's 403.
  E_SIGNATURE: 403,
  // A body parser mounted in front of the proxy: the server's set-up, not the client's request.
  // The same request gets the same again, so a 400, which no SDK retries (the AI SDK retries
  // any 5xx, for about 6 s, whatever x-should-retry says).
  E_PROXY_BODY: 400,
  E_TOO_LARGE: 413,
  E_UPSTREAM: 502,
  // The upstream did not connect or went quiet past the limit: a gateway timeout.
  E_UPSTREAM_TIMEOUT: 504,
  E_PROXY_NO_UPSTREAM: 502,
  E_PROXY_CLOSED: 503,
  // The shared store (Redis) is down: a transient server-side condition, like a closing proxy.
  E_STORE_UNAVAILABLE: 503,
  // The answer came but could not be stored: served, it would look recorded and is not.
  E_RECORD_FAILED: 503,
  // A user's hook threw: the server's set-up, as E_PROXY_BODY; a 400, not retried (the same again).
  E_HOOK: 400,
  // A tape that cannot be read at all (not a tape, a newer format, merge conflict markers, a
  // damaged header, an unknown extension type): every call gets the same, so a 400, which no
  // SDK retries, as for a miss. As a 500 the AI SDK retried it twice and failed after 6 s.
  E_TAPE_CORRUPT: 400,
  E_TAPE_VERSION: 400,
  E_TAPE_MERGE: 400,
  E_TAPE_HEADER: 400,
  E_TAPE_TYPE: 400,
};

// Causes of E_TAPE_IO that no retry changes: the tape path names a directory, or is not readable.
const LASTING_IO = new Set(['EISDIR', 'ENOTDIR', 'EACCES', 'EPERM']);

/**
 * The HTTP status of a replay miss. 400, because every SDK raises it at once with tapedeck's
 * message and adds nothing of its own: 404 made LangChain append its "model not found"
 * troubleshooting link, 409 and 422 are retried (by the AI SDK and by LangChain), and each
 * retry only delays the same miss.
 */
export const DEFAULT_MISS_STATUS = 400;

/**
 * The HTTP status for an error code (500 for codes that mean tapedeck itself failed); `cause`:
 * the system error behind an E_TAPE_IO (`EISDIR`: a lasting one, a 400 as a tape that is no tape);
 * `lasting`: an error's `lasting` detail (E_STORE_UNAVAILABLE, a hook's E_ARG, E_FETCH_STUBBED: no retry changes it, a 400).
 *
 * @example
 * statusOf('E_TAPE_CORRUPT') // 400
 */
export function statusOf(code: string, missStatus = DEFAULT_MISS_STATUS, cause?: unknown, lasting?: unknown): number {
  if (code === 'E_MISS') return missStatus;
  // What no retry changes answers every call the same: a 400, as a tape that is no tape. So a
  // store that cannot be used as configured (a wrong password or ACL, its client package
  // missing, another service on its port; one that is down may come back: a 503), a hook that
  // returns a promise (as a hook that throws, E_HOOK), a global fetch stubbed before import.
  if (lasting === true) return 400;
  if (code === 'E_TAPE_IO' && typeof cause === 'string' && LASTING_IO.has(cause)) return 400;
  return STATUS[code] ?? 500;
}

/**
 * Whether a client shows an error's whole body rather than its message, so the body must stay
 * short: the Python SDKs (`str(e)` is "Error code: 400 - " and the body's repr, also what
 * LangChain and LiteLLM in Python show), every other non-JavaScript SDK that names its
 * language in `x-stainless-lang`, the JavaScript Stainless SDKs other than OpenAI's and
 * Anthropic's (groq-sdk, together-ai: their error message is the whole body as JSON when it has
 * no top-level `message`), the Fern SDKs (cohere-ai: `x-fern-language`), the Speakeasy SDKs
 * (@mistralai/mistralai), and the AI SDK, whose errors carry the body as `responseBody` into
 * logs and test reports. The JavaScript OpenAI and Anthropic SDKs show only the message
 * (`error.message`), and get the full diagnosis in the body.
 *
 * @example
 * showsWholeBody({ 'x-stainless-lang': 'python' }) // true
 * showsWholeBody({ 'x-stainless-lang': 'js', 'user-agent': 'Groq/JS 1.6.0' }) // true
 * showsWholeBody({ 'x-stainless-lang': 'js', 'user-agent': 'OpenAI/JS 6.0.0' }) // false
 */
export function showsWholeBody(headers: Record<string, string | string[] | undefined>): boolean {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';
  const ua = one(headers['user-agent']);
  const lang = one(headers['x-stainless-lang']).toLowerCase();
  // A JavaScript Stainless SDK names itself `<Client>/JS <version>`, except in a page, where the
  // user agent is the browser's: one it cannot name keeps the full body, as OpenAI's would get.
  if (lang !== '') return lang !== 'js' || (/^[\w.-]+\/JS /.test(ua) && !MESSAGE_ONLY_JS.test(ua));
  if (one(headers['x-fern-language']) !== '') return true;
  return /python|ai-sdk\/|speakeasy-sdk\/|mistral-client-typescript\//i.test(ua);
}

/**
 * Whether a client reads only OpenAI's nested `error` and shows the whole body: a Python SDK
 * (`x-stainless-lang: python`, or Python in its user agent), for which a top-level copy of the
 * message would only print it twice.
 *
 * @example
 * readsNestedOnly({ 'x-stainless-lang': 'python' }) // true
 */
export function readsNestedOnly(headers: Record<string, string | string[] | undefined>): boolean {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';
  return one(headers['x-stainless-lang']).toLowerCase() === 'python' || /python/i.test(one(headers['user-agent']));
}

/**
 * The user agents of the JavaScript Stainless SDKs that show an error's `error.message` alone
 * (OpenAI's client classes are named in theirs: `OpenAI/JS`, `AzureOpenAI/JS`; Anthropic's
 * clients, Bedrock's and Vertex's included, all send `Anthropic/JS`).
 */
const MESSAGE_ONLY_JS = /^(?:OpenAI|AzureOpenAI|Anthropic)\/JS /;

/**
 * The reason phrase of an HTTP status tapedeck answers with, for a Response made by createFetch
 * (`new Response` leaves it empty, and some SDKs fall back to it for their message when a body
 * does not parse): the standard phrase, or '' for a status without one here.
 *
 * @example
 * statusTextOf(400) // 'Bad Request'
 */
export function statusTextOf(status: number): string {
  return REASONS[status] ?? '';
}

const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  529: 'Site is overloaded',
};

/**
 * The body for a TapedeckError in the error shape of a provider (src/providers: OpenAI
 * `{ object, message, type, param, code, error: { message, type, param, code, tapedeck } }`, Anthropic `{ type: 'error', message,
 * error }`, Gemini `{ error: { code, message, status } }`, ...). `tapedeck` holds the details
 * (miss diagnostics with the full `report`, hint, offsets), so `message` stays short.
 *
 * `short` (for clients that show the whole body, see {@link showsWholeBody}): the message on one
 * line, and of the details only `code`, `difference`, `kind` and `route` (the key is in the
 * `x-tapedeck-key` header), so the body stays within a few hundred bytes.
 *
 * @example
 * JSON.parse(errorBody(new TapedeckError('E_MISS', 'model differs'), 'anthropic', 400)).message // 'tapedeck miss: model differs'
 */
export function errorBody(e: TapedeckError, shape: ErrorShape, status: number, short = false): string {
  const module = PROVIDER_MODULES.find((m) => m.name === shape) ?? PROVIDER_MODULES[PROVIDER_MODULES.length - 1]!;
  return module.errorAnswer(e, status, { short }).body;
}

/**
 * The body and headers of an error answer to a request, in the shape its client expects;
 * `short` for clients that show the whole body (showsWholeBody); `final` for an answer no retry
 * can change whatever its code (a closed tapedeck fetch).
 *
 * @example
 * errorAnswer(new TapedeckError('E_MISS', 'no recording'), '/v1/messages', {}, 404).headers['x-should-retry'] // 'false'
 */
export function errorAnswer(e: TapedeckError, path: string, headers: Record<string, string | string[] | undefined>, status: number, short = false, final = false): { body: string; headers: Record<string, string> } {
  const a = errorModuleOf(path, headers).errorAnswer(e, status, { short, nested: readsNestedOnly(headers) });
  return { body: a.body, headers: { ...errorHeaders(e, final), ...a.headers } };
}

// Codes worth a retry by the client: the upstream may come back, another proxy may be up.
// Everything else (a miss, a damaged tape, a bad mode or request) gives the same answer on
// every retry, and an SDK that retries it only hides the message behind a delay.
const RETRYABLE = new Set(['E_UPSTREAM', 'E_UPSTREAM_TIMEOUT', 'E_PROXY_CLOSED']);

/**
 * Headers of an error answer. `x-should-retry: false` is the header the OpenAI and Anthropic
 * SDKs read before their retry rules, so a 500 for a damaged tape is raised at once as an API
 * error with tapedeck's message instead of being retried.
 *
 * `final`: not worth a retry whatever the code.
 *
 * @example
 * errorHeaders(new TapedeckError('E_MISS', 'no recording'))['x-should-retry'] // 'false'
 */
export function errorHeaders(e: TapedeckError, final = false): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'x-tapedeck-match': e.code === 'E_MISS' ? 'miss' : 'error',
    'x-tapedeck-error': e.code,
    'x-should-retry': RETRYABLE.has(e.code) && !final ? 'true' : 'false',
  };
  // A header value must be visible ASCII: a key that is not (a joined collection key) is left out.
  if (typeof e.details.key === 'string' && /^[\x21-\x7e]+$/.test(e.details.key)) h['x-tapedeck-key'] = e.details.key;
  return h;
}

/** Any thrown value as a TapedeckError (unexpected ones become E_PROXY_INTERNAL). */
export function asTapedeckError(e: unknown): TapedeckError {
  if (e instanceof TapedeckError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new TapedeckError('E_PROXY_INTERNAL', `tapedeck proxy failed: ${message}`, { hint: 'This is a bug in tapedeck; please report it with the request that caused it.' });
}
