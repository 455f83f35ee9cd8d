/**
 * Redirects, as fetch follows them, for createFetch. Its upstream calls are made with
 * `redirect: 'manual'` so that a redirect is recorded as the answer it is; but a caller of
 * createFetch asked for a fetch, whose default is to follow: a 307 from a server that redirects
 * `/v1/chat/completions/` to `/v1/chat/completions` (FastAPI does) came back to the SDK as the
 * 307 itself, with an empty body, where the platform's fetch gives the answer. Each hop is a
 * call of its own through the tape (recorded, replayed or missed as any other), so a replay
 * takes the same hops offline. The rules are fetch's (https://fetch.spec.whatwg.org/#http-redirect-fetch):
 * at most 20 hops; 303, and 301/302 after a POST, go on as a GET without a body; a hop to
 * another origin drops the credentials; `redirect: 'error'` rejects; `'manual'` gets the redirect.
 */
import { hiddenUserinfo } from '../store/url-userinfo.ts';
import { userinfoRefused } from './fetch-request.ts';

/** What a call sent, for the next hop: its absolute URL, method, headers and body. */
export interface SentRequest {
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
}

/** One call through the tape; fills `sent` with what it sent. */
export type TapeCall = (input: string | URL | Request, init: RequestInit | undefined, sent: SentRequest) => Promise<Response>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
// Headers about a body that is no longer sent (fetch's request-body-header names, and its length).
const BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];
// Sent to the origin they were meant for only.
const ORIGIN_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/** fetch's error for a redirect it does not take. */
const failed = (why: string): TypeError => new TypeError('fetch failed', { cause: new Error(why) });

/**
 * The answer with the URL it came from and whether a redirect led there, as fetch's answers
 * have: a replayed or tapedeck-made answer has no URL of its own (one passed through from the
 * upstream has, and keeps it).
 */
function answered(res: Response, url: string | undefined, redirected: boolean): Response {
  if (url !== undefined && res.url === '') settle(res, 'url', url);
  if (redirected && !res.redirected) settle(res, 'redirected', true);
  return res;
}

/** Sets a member an answer reads from its prototype, unless the answer has its own for good (a passed-through one). */
function settle(res: Response, name: 'url' | 'redirected', value: unknown): void {
  if (Object.getOwnPropertyDescriptor(res, name)?.configurable === false) return;
  Object.defineProperty(res, name, { value, configurable: true });
}

/**
 * Makes the call, and the calls its redirects lead to while the request's `redirect` mode is
 * `follow` (the default); returns the last answer.
 *
 * @example
 * const res = await followRedirects(run, 'http://127.0.0.1:8000/v1/chat/completions/', { method: 'POST', body })
 * res.redirected // true: the 307 to /v1/chat/completions was followed
 */
export async function followRedirects(call: TapeCall, input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
  let sent: SentRequest = {};
  // A URL with a password: fetch's error would quote it (./fetch-request.ts).
  let res = userinfoRefused(input) ?? (await call(input, init, sent));
  const mode = init?.redirect ?? (input instanceof Request ? input.redirect : 'follow');
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  for (let hops = 0; ; hops++) {
    // The status first: every call comes through here, and few are redirects.
    const location = REDIRECTS.has(res.status) && mode !== 'manual' ? res.headers.get('location') : null;
    if (location === null || sent.url === undefined) return answered(res, sent.url, hops > 0);
    if (mode === 'error') {
      await res.body?.cancel().catch(() => {});
      throw failed('unexpected redirect');
    }
    if (hops >= MAX_REDIRECTS) {
      await res.body?.cancel().catch(() => {});
      throw failed('redirect count exceeded');
    }
    let next: URL;
    try {
      next = new URL(location, sent.url);
    } catch {
      throw failed(`invalid redirect location ${JSON.stringify(hiddenUserinfo(location).slice(0, 100))}`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw failed(`redirect to a ${next.protocol} URL`);
    // As fetch refuses it, without quoting the server's Location (its password).
    if (next.username !== '' || next.password !== '') throw failed('redirect to a URL with a user name or password in it');
    // The redirect's own body is not the caller's: read away (a redirect being recorded is read
    // to its end all the same).
    await res.body?.cancel().catch(() => {});
    const headers = { ...sent.headers };
    let method = sent.method ?? 'GET';
    let body = sent.body;
    if ((res.status === 303 && method !== 'GET' && method !== 'HEAD') || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      for (const h of BODY_HEADERS) delete headers[h];
    }
    if (next.origin !== new URL(sent.url).origin) for (const h of ORIGIN_HEADERS) delete headers[h];
    sent = {};
    // The caller's undici dispatcher carries every hop, as fetch's own redirects.
    const dispatcher = (init as { dispatcher?: unknown } | undefined)?.dispatcher;
    res = await call(next.href, { method, headers, ...(body !== undefined && body.length > 0 ? { body } : {}), ...(signal ? { signal } : {}), ...(dispatcher ? { dispatcher } : {}), redirect: 'manual' } as RequestInit, sent);
  }
}
