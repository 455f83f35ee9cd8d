/**
 * Where an HTTP recording's request went: its `origin` (`scheme://host[:port]`, see
 * docs/tape-format.md), and how origins are compared when a recording is looked for
 * (docs/matching.md, "Hosts"). A request is served the recordings made for its own origin, so
 * an app that falls back from one provider to another with the same path and body never gets
 * the first one's answer for the second one's request.
 *
 * The origin is checked beside the request key, never hashed into it (docs/hash-spec.md is
 * unchanged): a recording is filed under its route with its origin after it
 * (`POST /v1/chat/completions https://api.openai.com`), so each host's recordings of one request
 * keep their own order, are replaced by a re-recording for that host only, and pruned apart. A
 * record without an origin (tapes written before origins were stored) is filed under its route
 * alone and answers any host.
 *
 * Browser builds take origins.browser.ts: a page compares no hosts.
 */
import { isLoopbackHost } from './loopback.ts';
import { httpRecordKey, type MatchKind, type OriginFiling } from './records.ts';

/**
 * The origin of an absolute http(s) URL as a record stores it: scheme, host in lowercase and a
 * port other than the scheme's default (`URL#origin`); never the user and password a URL may
 * carry. Undefined for a path, or a URL of another scheme.
 *
 * @example
 * originOf('HTTPS://me:secret@API.OpenAI.com:443/v1/models') // 'https://api.openai.com'
 * originOf('/v1/models') // undefined
 */
export function originOf(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return undefined;
  return new URL(url).origin;
}

let lastOrigin = '';
let lastKey = '';

/**
 * An origin as it is compared: as a record stores it (an origin written by hand is put in that
 * form), without the port of a loopback host.
 *
 * @example
 * originKey('https://api.groq.com') // 'https://api.groq.com'
 * originKey('http://127.0.0.1:53412') // 'http://127.0.0.1'
 */
export function originKey(origin: string): string {
  // Requests mostly repeat one origin, and a tape's records come in runs of one.
  if (origin === lastOrigin) return lastKey;
  const stored = originOf(origin) ?? origin.toLowerCase();
  const scheme = stored.indexOf('://');
  let key = stored;
  if (scheme > 0) {
    const colon = stored.lastIndexOf(':');
    const host = colon > scheme + 3 && !stored.endsWith(']') ? stored.slice(scheme + 3, colon) : stored.slice(scheme + 3);
    if (isLoopbackHost(host)) key = stored.slice(0, scheme + 3) + host;
  }
  lastOrigin = origin;
  lastKey = key;
  return key;
}

/**
 * The name recordings of `route` sent to `origin` are filed under: the route, then the origin as
 * it is compared (the route alone for a record without one), with the upstream's path prefix
 * after it when the request went under one (one gateway host routes to several providers by
 * prefix: their answers are not each other's). The route's method and path come first, so
 * routeEndpoint() reads them from a filed name as from a route.
 *
 * @example
 * filedName('POST /v1/chat/completions', 'https://api.groq.com') // 'POST /v1/chat/completions https://api.groq.com'
 * filedName('POST /v1/chat/completions', 'https://gw.example.com', '/groq') // 'POST /v1/chat/completions https://gw.example.com/groq'
 * filedName('POST /v1/chat/completions', undefined) // 'POST /v1/chat/completions'
 */
export function filedName(route: string, origin: string | undefined, upstreamPath?: string): string {
  return origin === undefined ? route : `${route} ${originKey(origin)}${upstreamPath ?? ''}`;
}

/**
 * The collection key of a recording (or of a request about to be recorded): its filed name,
 * match kind and key (see httpRecordKey).
 *
 * @example
 * filedKey({ route: 'POST /v1/chat/completions', origin: 'https://api.groq.com', match: 'llm', key })
 */
export function filedKey(p: { route: string; origin?: string; upstreamPath?: string; match: MatchKind; key: string }): string {
  return httpRecordKey(filedName(p.route, p.origin, p.upstreamPath), p.match, p.key);
}

/** An origin as filedName() puts it after a route: a scheme and an authority, then an upstream's path prefix if any. */
const ORIGIN_KEY = /^[a-z][a-z0-9+.-]*:\/\/[^\s/?#()]+(?:\/[^\s?#]*)?$/;

/**
 * The origin part of a filed name of `route`, or undefined when `name` is not `route` with an
 * origin after it (the route itself, another route, or the route with more headers after it).
 *
 * @example
 * originInName('POST /v1/chat/completions https://api.groq.com', 'POST /v1/chat/completions') // 'https://api.groq.com'
 */
export function originInName(name: string, route: string): string | undefined {
  if (name.length <= route.length + 1 || !name.startsWith(route) || name.charCodeAt(route.length) !== 0x20) return undefined;
  const origin = name.slice(route.length + 1);
  return ORIGIN_KEY.test(origin) ? origin : undefined;
}

/**
 * The route a filed name is of (see {@link filedName}): the name without the origin after it.
 *
 * @example
 * routeOfName('POST /v1/chat/completions https://api.groq.com') // 'POST /v1/chat/completions'
 * routeOfName('POST /v1/chat/completions') // 'POST /v1/chat/completions'
 */
export function routeOfName(name: string): string {
  const sp = name.lastIndexOf(' ');
  return sp > 0 && ORIGIN_KEY.test(name.slice(sp + 1)) && name.lastIndexOf(' ', sp - 1) > 0 ? name.slice(0, sp) : name;
}

/**
 * The first ten routes of the names recordings are filed under, for a miss to list: each once,
 * without the origins after them.
 *
 * @example
 * recordedRoutes(['POST /v1/messages https://api.anthropic.com', 'POST /v1/messages']) // ['POST /v1/messages']
 */
export function recordedRoutes(names: Iterable<string>): string[] {
  const routes = new Set<string>();
  for (const name of names) {
    routes.add(routeOfName(name));
    if (routes.size === 10) break;
  }
  return [...routes];
}

/**
 * A collection key (`name NUL match:key`) without the origin its name ends with: the key its
 * request was filed under before origins were stored; undefined when it names no origin.
 *
 * @example
 * withoutOrigin('POST /v1/chat/completions https://api.groq.com\u0000llm:9f86…') // 'POST /v1/chat/completions\u0000llm:9f86…'
 */
export function withoutOrigin(key: string): string | undefined {
  const nul = key.indexOf('\u0000');
  if (nul < 0) return undefined;
  const route = routeOfName(key.slice(0, nul));
  return route.length === nul ? undefined : route + key.slice(nul);
}

/**
 * How HTTP records are filed under their origins (httpRecords' `origins`): under
 * {@link filedName}, a re-recording replacing its request's recordings filed before origins
 * were stored ({@link withoutOrigin}).
 *
 * @example
 * const kind = httpRecords(norm, ORIGIN_FILING)
 */
export const ORIGIN_FILING: OriginFiling = Object.freeze({ name: filedName, replaces: withoutOrigin });
