/**
 * A ReplayCache request's `headers` member (the AI SDK's call headers, a user's own request
 * objects) is the headers the call sends: redacted by the header rules (a name ending in `token`,
 * the credential headers, `redact.headers`) and by the field rules, which the redactor's value()
 * alone applies. Through the AI SDK middleware a gateway token given as a call header was stored
 * in clear. Its own module, outside the redactor: only ReplayCache uses it, and a page's bundle
 * (which has a 100 KB budget) never stores a request.
 */
import type { Redactor } from './redact.ts';

type HeaderValue = string | string[] | number | undefined;

/** The map as headers when it is one (plain data of strings, string lists and numbers), else undefined. */
function headerMap(h: unknown): Record<string, HeaderValue> | undefined {
  if (h === null || typeof h !== 'object' || Array.isArray(h)) return undefined;
  const proto = Object.getPrototypeOf(h) as unknown;
  if (proto !== Object.prototype && proto !== null) return undefined;
  for (const x of Object.values(h as Record<string, unknown>)) {
    if (!(x === undefined || typeof x === 'string' || typeof x === 'number' || (Array.isArray(x) && x.every((y) => typeof y === 'string')))) return undefined;
  }
  return h as Record<string, HeaderValue>;
}

/**
 * A request as ReplayCache stores it: `r.value(request)`, and its top-level `headers` member, when
 * that is a header map, redacted by the header rules and the field rules too. Credentials become
 * `[REDACTED]`; other secrets their keyed mask (one value one mask, two values two; headers are
 * no part of a request key either). The same value when nothing changed.
 *
 * @example
 * redactRequest(redactor(), { model: 'gpt-4o', prompt: 'hi', headers: { 'x-gateway-token': 'gw_…' } })
 * // { model: 'gpt-4o', prompt: 'hi', headers: { 'x-gateway-token': '[REDACTED:…]' } }
 */
export function redactRequest<T>(r: Redactor, request: T): T {
  const out = r.value(request);
  // One member read for a request without headers: ReplayCache.put is a benchmarked path.
  const given = request !== null && typeof request === 'object' ? (request as Record<string, unknown>).headers : undefined;
  if (given === undefined) return out;
  // Plain data only, as value() copies it (a user's class instance is left as it is).
  const proto = Object.getPrototypeOf(request) as unknown;
  if (Array.isArray(request) || (proto !== Object.prototype && proto !== null)) return out;
  const map = headerMap(given);
  if (map === undefined) return out;
  const judged = r.headers(map);
  let headers: Record<string, HeaderValue> | undefined;
  for (const k of Object.keys(map)) {
    const x = map[k];
    // Nothing sent, nothing to hide (the field rules leave an empty value as it is too).
    if (x === undefined || x === '') continue;
    let y = judged[k];
    // A name the field rules mask (`password`, `client_secret`) that the header rules let through.
    if (y === x || (Array.isArray(x) && Array.isArray(y) && y.every((v, i) => v === x[i]))) {
      if (r.isSecretField(k)) y = Array.isArray(x) ? x.map((v) => r.mask(v)) : r.mask(String(x));
      else continue;
    }
    (headers ??= { ...map })[k] = y;
  }
  if (headers === undefined) return out;
  // value() copied the request when it changed anything, so its copy is ours to set.
  const copy = (out === request ? { ...(request as Record<string, unknown>) } : out) as Record<string, unknown>;
  copy.headers = headers;
  return copy as T;
}
