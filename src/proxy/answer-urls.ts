/**
 * URLs in an answer that the client fetches next, pointed at the proxy.
 *
 * Anthropic's message batch (`GET /v1/messages/batches/{id}`) names its results by an absolute
 * `results_url` on the API's host, and @anthropic-ai/sdk's `batches.results()` fetches that URL
 * as it is, whatever `baseURL` says. Through `tapedeck serve` that request went around the proxy:
 * recording never saw it, and a replay went to the network (or failed with a connection error
 * offline). So the proxy serves such a URL with its own origin in place of the upstream's (and
 * without the upstream's path prefix, which the proxy adds back when it forwards). The tape keeps
 * the upstream's bytes; only what the client gets is rewritten. `createFetch` needs none of this:
 * it sees every URL the SDK fetches.
 *
 * Google's resumable upload answers its `start` with the URL to send the file to in the
 * `X-Goog-Upload-URL` header (and `X-Goog-Upload-Control-URL`). @google/genai moves that URL to
 * its `baseUrl` itself; other clients (curl, a script of one's own) send the file where the header
 * says, so those headers are pointed at the proxy the same way.
 *
 * A redirect's absolute `Location` on the upstream's host (Starlette's trailing-slash redirect
 * names the host it was asked for: the upstream, as the proxy forwards) sent the client around
 * the proxy the same way, to the live API even in replay. It is pointed at the proxy too.
 */
import type { IncomingMessage } from 'node:http';
import { upstreamPrefix } from '../store/upstream-prefix.ts';

/** The member names whose values are such URLs. */
const NEEDLE = Buffer.from('"results_url"');
const MEMBER = /("results_url"\s*:\s*")(https?:\/\/[^"/]+)([^"]*)"/g;

/** The proxy's own base URL as this client reached it: scheme, Host, and the prefix it is mounted under (Express). */
export function proxyBase(req: IncomingMessage): string {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const host = req.headers.host ?? req.headers[':authority'] ?? '127.0.0.1';
  const original = (req as { originalUrl?: string }).originalUrl;
  const url = req.url ?? '';
  const mount = original !== undefined && original.endsWith(url) ? original.slice(0, original.length - url.length) : '';
  return `${scheme}://${String(host)}${mount}`;
}

/**
 * The answer body with its next-fetch URLs on the proxy, or `body` itself when it has none (the
 * check is a path test, then one byte search, so other answers cost nothing more). `path` is the
 * path the client asked the proxy for: what precedes it in the URL is the upstream's path prefix
 * (`--upstream https://gateway/anthropic`), which is left out, since the proxy adds it back when it
 * forwards; a replaying proxy, which has no upstream, finds it the same way. A URL on a host other
 * than `upstream`'s is left alone (the proxy could not answer it).
 *
 * @example
 * pointAnswerUrls(Buffer.from('{"results_url":"https://api.anthropic.com/v1/messages/batches/b1/results"}'), '/v1/messages/batches/b1', 'http://127.0.0.1:8080')
 * // {"results_url":"http://127.0.0.1:8080/v1/messages/batches/b1/results"}
 */
export function pointAnswerUrls(body: Buffer, path: string, base: string, upstream?: string): Buffer {
  if (!path.includes('/batches') || body.indexOf(NEEDLE) < 0) return body;
  const origin = upstream === undefined ? undefined : new URL(upstream).origin;
  const asked = path.split('?')[0]!;
  const text = body.toString('latin1');
  const out = text.replace(MEMBER, (whole, head: string, at: string, rest: string) => {
    if (origin !== undefined && at !== origin) return whole;
    const from = rest.indexOf(asked);
    return `${head}${base}${from > 0 ? rest.slice(from) : rest}"`;
  });
  return out === text ? body : Buffer.from(out, 'latin1');
}

/** Answer headers that hold the URL the client sends its next request to. */
const URL_HEADERS: readonly string[] = ['x-goog-upload-url', 'x-goog-upload-control-url'];

/** One URL moved to the proxy: its origin, and what precedes the path asked for (the upstream's prefix). */
function pointed(url: string, asked: string, base: string, origin: string | undefined): string {
  const m = /^(https?:\/\/[^/?#]+)(.*)$/.exec(url);
  if (!m || (origin !== undefined && m[1] !== origin)) return url;
  const rest = m[2]!;
  const from = rest.indexOf(asked);
  return `${base}${from > 0 ? rest.slice(from) : rest}`;
}

/**
 * The answer headers with the upload URLs moved to the proxy, or `headers` itself when none is
 * there (only requests under `/upload/` are looked at).
 *
 * @example
 * pointHeaderUrls({ 'x-goog-upload-url': 'https://generativelanguage.googleapis.com/upload/v1beta/files?upload_id=u1' }, '/upload/v1beta/files', 'http://127.0.0.1:8080')
 * // { 'x-goog-upload-url': 'http://127.0.0.1:8080/upload/v1beta/files?upload_id=u1' }
 */
export function pointHeaderUrls<H extends Record<string, unknown>>(headers: H, path: string, base: string, upstream?: string): H {
  if (!path.includes('/upload/') || !URL_HEADERS.some((h) => typeof headers[h] === 'string')) return headers;
  const origin = upstream === undefined ? undefined : new URL(upstream).origin;
  const asked = path.split('?')[0]!;
  const out: Record<string, unknown> = { ...headers };
  for (const h of URL_HEADERS) if (typeof out[h] === 'string') out[h] = pointed(out[h] as string, asked, base, origin);
  return out as H;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The answer headers with a redirect's absolute `Location` on the upstream moved to the proxy,
 * without the upstream's path prefix (the proxy adds it back when it forwards), or `headers`
 * itself. A location on another host is left alone; a replaying proxy, which has no upstream,
 * points any absolute location at itself: it answers from the tape, or says what it lacks,
 * where the client would otherwise reach the network.
 *
 * @example
 * pointLocation({ location: 'http://llm:8000/v1/chat/completions' }, 307, 'http://127.0.0.1:8080', 'http://llm:8000')
 * // { location: 'http://127.0.0.1:8080/v1/chat/completions' }
 */
export function pointLocation<H extends Record<string, unknown>>(headers: H, status: number, base: string, upstream?: string): H {
  const location = headers.location;
  if (!REDIRECTS.has(status) || typeof location !== 'string') return headers;
  const m = /^(https?:\/\/[^/?#]+)(.*)$/i.exec(location);
  if (!m) return headers;
  let rest = m[2]!;
  if (upstream !== undefined) {
    const up = new URL(upstream);
    // As URL spells origins: a host in capitals or a default port written out is the same one.
    let origin: string;
    try {
      origin = new URL(m[1]!).origin;
    } catch {
      return headers;
    }
    if (origin !== up.origin) return headers;
    const prefix = upstreamPrefix(upstream);
    if (prefix !== '' && (rest === prefix || rest.startsWith(`${prefix}/`) || rest.startsWith(`${prefix}?`))) rest = rest.slice(prefix.length);
  }
  return { ...headers, location: `${base}${rest === '' || rest[0] === '/' ? rest : `/${rest}`}` };
}
