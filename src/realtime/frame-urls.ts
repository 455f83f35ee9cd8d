/**
 * Secret query parameters of URLs inside realtime frames. A `session.update` can carry URLs the
 * session will call (an MCP server's `server_url` with `?token=` or `?key=`), and the server
 * echoes them in `session.updated`. The redactor masks credential-looking tokens and secret
 * members by name, but a secret in a URL's query is a secret by its parameter's name, which only
 * `Redactor.url` judges: without this pass such a token reached the tape in both frames.
 */
import type { Redactor } from '../store/redact.ts';

// An absolute URL with a query, up to what ends it in JSON or prose: a quote, a backslash (an
// escape in JSON text), whitespace or an angle bracket.
const URL_WITH_QUERY = /\b(?:https?|wss?):\/\/[^\s"'<>\\?]*\?[^\s"'<>\\]+/g;

/**
 * A text (a server frame's wire JSON, a string member) with the secret query parameters of the
 * URLs in it masked, as `Redactor.url` masks a request's own URL. Masks are ASCII without quotes
 * or backslashes, so JSON text stays valid.
 *
 * @example
 * maskUrlsInText(redactor(), '{"server_url":"https://mcp.example.com/sse?key=abc&x=1"}')
 * // '{"server_url":"https://mcp.example.com/sse?key=%5BREDACTED%5D&x=1"}'
 */
export function maskUrlsInText(r: Redactor, s: string): string {
  if (r.keepSecrets || s.indexOf('://') < 0) return s;
  return s.replace(URL_WITH_QUERY, (u) => r.url(u));
}

/**
 * A parsed client frame with the secret query parameters of the URLs in its strings masked; the
 * same value when nothing changed.
 *
 * @example
 * maskUrlsInValue(redactor(), { tools: [{ server_url: 'https://x.example/sse?token=abc' }] })
 * // { tools: [{ server_url: 'https://x.example/sse?token=%5BREDACTED%3A...%5D' }] }
 */
export function maskUrlsInValue<T>(r: Redactor, v: T): T {
  if (r.keepSecrets) return v;
  if (typeof v === 'string') return maskUrlsInText(r, v) as T;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    v.forEach((x, i) => {
      const m = maskUrlsInValue(r, x);
      if (m !== x && !out) out = v.slice(0, i);
      if (out) out.push(m);
    });
    return (out ?? v) as T;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const m = maskUrlsInValue(r, x);
    if (m !== x) out ??= { ...(v as Record<string, unknown>) };
    if (out) out[k] = m;
  }
  return (out ?? v) as T;
}
