/**
 * Why a request found no recording on its route while another route of the same operation has
 * some: the URL names another model (Gemini, Bedrock), or the route is filed by headers that
 * change the answer (Anthropic's `anthropic-beta`, see keyedHeaders in src/providers/index.ts)
 * and was recorded with other values of them, or without them. Routes are compared as the deck
 * files them, with the origin they were recorded for after them (src/store/origins.ts): only
 * those of the request's origin, and those of none (they answer any host), are looked at.
 */
import { routeEndpoint, routeOf } from '../providers/index.ts';
import type { RecordCollection } from '../store/collection.ts';
import { queryPairs } from '../store/query-pairs.ts';
import { REDACTED } from '../store/redact.ts';
import { httpRecordKey, type MatchKind } from '../store/records.ts';

/**
 * For APIs that name the model in the URL (Gemini, ...): when the request's route has no
 * recordings but the same operation was recorded for another model, that is the difference.
 *
 * @example
 * modelOnOtherRoute('POST /v1beta/models/gemini-2.5-pro:generateContent', new Map([['POST /v1beta/models/gemini-2.5-flash:generateContent', { count: 1 }]]))
 * // 'model differs: gemini-2.5-pro vs gemini-2.5-flash in the recordings (the URL names the model)'
 */
export function modelOnOtherRoute(route: string, routes: ReadonlyMap<string, { readonly count: number }>): string | undefined {
  const endpoint = routeEndpoint(route);
  const here = routeOf(endpoint);
  if (here?.model === undefined) return undefined;
  const origin = partsAfter(route, endpoint).origin;
  for (const [name, r] of routes) {
    if (r.count === 0 || name === route || !sameHost(partsAfter(name, routeEndpoint(name)).origin, origin)) continue;
    const there = routeOf(routeEndpoint(name));
    if (there && there.provider === here.provider && there.route === here.route && there.model !== here.model) {
      return `model differs: ${here.model} vs ${there.model} in the recordings (the URL names the model)`;
    }
  }
  return undefined;
}

/**
 * For APIs whose URL says whether the answer streams (Gemini's `:streamGenerateContent`, Bedrock's
 * `converse-stream` and `invoke-with-response-stream`): when this request was recorded on the
 * other one of the pair (same model and body shape, same host), that is the difference, not the
 * text of the closest recording on this route. `recordedOn(name, endpoint)` says whether the
 * request, keyed for that route's endpoint, has a recording there.
 *
 * @example
 * streamOnOtherRoute('POST /v1beta/models/m:generateContent', routes, (name, endpoint) => col.count(httpRecordKey(name, 'llm', keyFor(endpoint))).recorded > 0)
 * // 'this request was recorded streamed (streamGenerateContent) and is sent not streamed (generateContent)'
 */
export function streamOnOtherRoute(route: string, routes: ReadonlyMap<string, { readonly count: number }>, recordedOn: (name: string, endpoint: { method: string; url: string }) => boolean): string | undefined {
  const endpoint = routeEndpoint(route);
  const here = routeOf(endpoint);
  if (here === undefined) return undefined;
  const origin = partsAfter(route, endpoint).origin;
  const streamed = (s: boolean | undefined) => (s ? 'streamed' : 'not streamed');
  for (const [name, r] of routes) {
    if (r.count === 0 || name === route) continue;
    const theirs = routeEndpoint(name);
    if (!sameHost(partsAfter(name, theirs).origin, origin)) continue;
    const there = routeOf(theirs);
    if (!there || there.provider !== here.provider || there.model !== here.model || there.route.shape !== here.route.shape || Boolean(there.route.streams) === Boolean(here.route.streams)) continue;
    if (recordedOn(name, theirs)) return `this request was recorded ${streamed(there.route.streams)} (${there.route.operation}) and is sent ${streamed(here.route.streams)} (${here.route.operation})`;
  }
  return undefined;
}

/**
 * The difference between `route` and a recorded route of the same endpoint filed under other
 * header values, or undefined when there is none. A route that holds this very request
 * (`holds`: the same body was recorded there) is named first; else a route with header values is
 * compared with one that has values too (the betas differ), else with the endpoint recorded
 * without them. The request (`match`, `key`) is looked for in `col` under each route. The
 * `beta=true` query of the Anthropic SDK's beta client is no difference (see withoutBetaMarker).
 * When no route holds the request, `bodyOn(name)` says how it differs from the closest recording
 * of the route chosen, and that comes first (`tools differ ...; with it, no anthropic-beta sent: ...`).
 *
 * @example
 * headersOnOtherRoute('POST /v1/messages (anthropic-beta: a)', new Map([['POST /v1/messages', { count: 1 }]]))
 * // 'anthropic-beta: a sent; recorded without it for POST /v1/messages'
 */
export function headersOnOtherRoute(route: string, routes: ReadonlyMap<string, { readonly count: number }>, col?: Pick<RecordCollection<unknown>, 'count'>, match?: MatchKind, key?: string, bodyOn?: false | ((other: string) => unknown)): string | undefined {
  // Whether a route holds this very request (its match kind and key).
  const holds = col && match && key ? (name: string) => col.count(httpRecordKey(name, match, key)).recorded > 0 : undefined;
  const endpoint = routeEndpoint(route);
  const base = `${endpoint.method} ${withoutBetaMarker(endpoint.url)}`;
  const { headers: mine, origin } = partsAfter(route, endpoint);
  let other: string | undefined;
  let otherName = '';
  let best = -1;
  for (const [name, r] of routes) {
    if (r.count === 0 || name === route) continue;
    const at = routeEndpoint(name);
    if (`${at.method} ${withoutBetaMarker(at.url)}` !== base) continue;
    const there = partsAfter(name, at);
    const theirs = there.headers;
    if (theirs === mine || !sameHost(there.origin, origin)) continue;
    // The request itself recorded with other headers explains the most; then like with like:
    // another set of betas explains more than the plain recording.
    const rank = (holds?.(name) ? 2 : 0) + (mine !== '' && theirs !== '' ? 1 : 0);
    if (rank > best) {
      best = rank;
      other = theirs;
      otherName = name;
    }
  }
  if (other === undefined) return undefined;
  // Values before the route: a long list of betas must not push them off the headline.
  const sent = mine === '' ? `no ${names(other)} sent` : `${mine.slice(2, -1)} sent`;
  const theirs = other === '' ? `without ${mine.includes(';') ? 'them' : 'it'}` : `with ${names(other) === names(mine) && !other.includes(';') ? other.slice(other.indexOf(':') + 2, -1) : other.slice(2, -1)}`;
  // The request changed too (that route does not hold it): what changed comes first. A client
  // may set such headers by itself for what the body asks (@ai-sdk/anthropic sends a beta with
  // tools), so the headers alone would point at a header the user never wrote.
  const body = best < 2 && bodyOn ? bodyOn(otherName) : undefined;
  if (typeof body === 'string' && body) return `${body}; with it, ${sent}: recorded ${theirs} for ${base}`;
  return `${sent}; recorded ${theirs} for ${base}`;
}

/**
 * When this very request (the same key) is recorded under another path of the same operation
 * (`other`: DeepSeek and others answer at both `/chat/completions` and `/v1/chat/completions`,
 * so a base URL given with or without `/v1` moves every call), that is the difference, not the
 * model or text of an unrelated recording on the request's own path. Undefined when `other` is
 * the same path, another method, operation, host or set of filing headers.
 *
 * @example
 * pathOnOtherRoute('POST /v1/chat/completions', 'POST /chat/completions')
 * // 'this request was recorded at POST /chat/completions and is sent to POST /v1/chat/completions (the base URL's path changed?)'
 */
export function pathOnOtherRoute(route: string, other: string): string | undefined {
  const mine = routeEndpoint(route);
  const theirs = routeEndpoint(other);
  const path = (url: string) => (url.includes('?') ? url.slice(0, url.indexOf('?')) : url);
  if (mine.method !== theirs.method || path(mine.url) === path(theirs.url)) return undefined;
  const a = partsAfter(route, mine);
  const b = partsAfter(other, theirs);
  if (a.headers !== b.headers) return undefined;
  const here = routeOf(mine);
  const there = routeOf(theirs);
  if (!here || !there || here.route.operation !== there.route.operation || here.model !== there.model) return undefined;
  // A gateway base URL changes the host and adds a path prefix at once: both named, or the miss
  // said only "no recording for" the prefixed path.
  if (!sameHost(b.origin, a.origin)) {
    return `this request was recorded at ${theirs.method} ${path(theirs.url)} on ${b.origin} and is sent to ${mine.method} ${path(mine.url)} on ${a.origin} (the base URL changed?; hostMatch: 'any' serves recordings of any host)`;
  }
  return `this request was recorded at ${theirs.method} ${path(theirs.url)} and is sent to ${mine.method} ${path(mine.url)} (the base URL's path changed?)`;
}

/**
 * When the request's route has no recordings but the same method and path were recorded with
 * another query, that is the difference: the query names and values that differ. A query
 * credential is its own case (Gemini's `?key=`, kept as `key=[REDACTED]` in the route): the
 * same call with the key in a header (`x-goog-api-key`, what @google/genai sends) is another
 * route, and "no recording ... re-record" would send the user to the live API when the fix is
 * to send the key the way it was recorded. With no such route, a path that differs from a
 * recorded one in its last part alone (an id) names the recorded one (idOnOtherRoute).
 *
 * @example
 * queryOnOtherRoute('POST /v1beta/models/gemini-2.5-flash:generateContent', new Map([['POST /v1beta/models/gemini-2.5-flash:generateContent?key=[REDACTED]', { count: 1 }]]))
 * // 'recorded with the key in the query (?key=), sent without it (in a header?): send the key the way it was recorded, for POST /v1beta/models/gemini-2.5-flash:generateContent'
 */
export function queryOnOtherRoute(route: string, routes: ReadonlyMap<string, { readonly count: number }>): string | undefined {
  const endpoint = routeEndpoint(route);
  const q = endpoint.url.indexOf('?');
  const path = q < 0 ? endpoint.url : endpoint.url.slice(0, q);
  const { headers, origin } = partsAfter(route, endpoint);
  const mine = queryValues(q < 0 ? '' : endpoint.url.slice(q + 1));
  let best: { theirs: Map<string, string>; raw: string; differs: number } | undefined;
  for (const [name, r] of routes) {
    if (r.count === 0 || name === route) continue;
    const there = routeEndpoint(name);
    const tq = there.url.indexOf('?');
    if (there.method !== endpoint.method || (tq < 0 ? there.url : there.url.slice(0, tq)) !== path) continue;
    const rest = partsAfter(name, there);
    if (rest.headers !== headers || !sameHost(rest.origin, origin)) continue;
    const theirs = queryValues(tq < 0 ? '' : there.url.slice(tq + 1));
    // The closest: the fewest names whose values differ.
    let differs = 0;
    for (const k of new Set([...mine.keys(), ...theirs.keys()])) if (mine.get(k) !== theirs.get(k)) differs++;
    if (best === undefined || differs < best.differs) best = { theirs, raw: tq < 0 ? '' : there.url.slice(tq + 1), differs };
  }
  if (best === undefined) return idOnOtherRoute(endpoint.method, path, headers, origin, routes);
  const at = `${endpoint.method} ${path}`;
  const masked = (v: string | undefined) => v !== undefined && v.startsWith('[REDACTED');
  const diff: string[] = [];
  let shaped: string | undefined;
  for (const k of new Set([...mine.keys(), ...best.theirs.keys()])) {
    const a = mine.get(k);
    const b = best.theirs.get(k);
    if (a === b) continue;
    if (masked(b) && a === undefined) return `recorded with the ${k === 'key' ? 'key' : `credential ${k}`} in the query (?${k}=), sent without it (in a header?): send the ${k === 'key' ? 'key' : 'credential'} the way it was recorded, for ${at}`;
    if (masked(a) && b === undefined) return `sent with the ${k === 'key' ? 'key' : `credential ${k}`} in the query (?${k}=), recorded without it (in a header?): send the ${k === 'key' ? 'key' : 'credential'} the way it was recorded, for ${at}`;
    diff.push(a === undefined ? `${k} not sent (recorded ${k}=${b})` : b === undefined ? `${k}=${a} sent (recorded without it)` : `${k}=${a} vs ${k}=${b} in the recordings`);
    // One side's value was taken for a credential (`[REDACTED]`, any value replays it) and the
    // other's for a lookup value (keyed by the value): said, since both read as "a mask". Short:
    // a miss's first line is cut at 140 characters.
    if (shaped === undefined && a !== undefined && b !== undefined && masked(a) && masked(b) && (a === REDACTED) !== (b === REDACTED)) shaped = shapeAdvice(k, b === REDACTED);
  }
  if (diff.length === 0) return queryOrderDiffers(q < 0 ? '' : endpoint.url.slice(q + 1), best.raw, at);
  if (diff.length === 1 && shaped !== undefined) return shaped;
  return `query differs: ${diff.slice(0, 3).join(', ')}${diff.length > 3 ? ', ...' : ''} for ${at}`;
}

/**
 * Why a query parameter masked on both sides differs: `?key=` and the other parameters that carry
 * a client's credential on some APIs are `[REDACTED]` (any value matches) when the value is shaped
 * like a credential, and keyed by the value otherwise (src/store/query-credential.ts).
 *
 * @example
 * shapeAdvice('key', true)
 * // "?key= sent is not shaped like a key, so it is matched by its value; the recording's was a key: send a key-shaped value, dummy or none"
 */
function shapeAdvice(name: string, recordedPlain: boolean): string {
  return recordedPlain
    ? `?${name}= sent is not shaped like a key, so it is matched by its value; the recording's was a key: send a key-shaped value, dummy or none`
    : `?${name}= sent is shaped like a key, so any key matches; the recording's was not (matched by its value): send the value it was recorded with`;
}

/**
 * For a path that differs from a recorded one in its last part alone (`GET
 * /v1/batches/batch_abc124` against a recording of `batch_abc123`): the id of a batch, a response
 * or a file, which the API makes anew on every live run, so the usual cause is the call that
 * made it answered live or re-recorded while this one was not. Says the recorded path (the first
 * of them, and how many more), so the user sees the id the tape knows.
 */
function idOnOtherRoute(method: string, path: string, headers: string, origin: string, routes: ReadonlyMap<string, { readonly count: number }>): string | undefined {
  // A poll (or a delete) of a resource under a collection (`/v1/batches/`), both ids with a digit:
  // two operations of one API (`/v1/embeddings`, `/v1/messages`) are no two ids.
  const cut = path.lastIndexOf('/');
  const isId = (s: string) => /\d/.test(s);
  if ((method !== 'GET' && method !== 'DELETE') || !isId(path.slice(cut + 1)) || path.slice(0, cut).split('/').length < 3) return undefined;
  const stem = path.slice(0, cut + 1);
  const found: string[] = [];
  for (const [name, r] of routes) {
    if (r.count === 0) continue;
    const there = routeEndpoint(name);
    const q = there.url.indexOf('?');
    const p = q < 0 ? there.url : there.url.slice(0, q);
    if (there.method !== method || p === path || !p.startsWith(stem) || p.indexOf('/', stem.length) >= 0 || !isId(p.slice(stem.length))) continue;
    const rest = partsAfter(name, there);
    if (rest.headers === headers && sameHost(rest.origin, origin)) found.push(`${method} ${p}`);
  }
  if (found.length === 0) return undefined;
  const more = found.length > 1 ? ` (and ${found.length - 1} more of ${stem}…)` : '';
  return `no recording for ${method} ${path}; the tape has ${found[0]}${more}: an id the API makes on each live run (was the call that made it answered live or re-recorded, and this one not?)`;
}

/**
 * The difference of two queries whose names and values compare equal (the first of each name):
 * a recording is found by its query as sent, in its order (tapes already made are keyed so), so
 * the same parameters in another order (`URLSearchParams({ order, limit })` against a recording
 * of `?limit=5&order=asc`) are another request. Said with both queries and the fix, rather than
 * an empty list of differences.
 *
 * @example
 * queryOrderDiffers('order=asc&limit=5', 'limit=5&order=asc', 'GET /v1/models')
 * // 'query differs only in the order of its parameters: sent ?order=asc&limit=5, recorded ?limit=5&order=asc for GET /v1/models; ...'
 */
function queryOrderDiffers(sent: string, recorded: string, at: string): string {
  const sorted = (q: string) => (q === '' ? [] : q.split('&')).sort().join('&');
  if (sorted(sent) !== sorted(recorded)) return `query differs: sent ?${sent}, recorded ?${recorded} (the same names and values, written otherwise: a repeated name or another encoding) for ${at}`;
  return `query differs only in the order of its parameters: sent ?${sent}, recorded ?${recorded} for ${at}; a recording is found by its query in the order sent: send the parameters in the recorded order (a query built from an object follows its keys' order)`;
}

/** A query's names and values as meant (first of each name; masks compare as text; a piece with no `=` has ''). */
function queryValues(query: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of query === '' ? [] : queryPairs(query)) if (!out.has(p.name)) out.set(p.name, p.value ?? '');
  return out;
}

/**
 * Why a recording filed under `route` before such headers kept recordings apart is not served:
 * it was sent with `theirs` (keyedHeaders of its stored headers), the request with `mine`.
 *
 * @example
 * headersOfOldRecording('POST /v1/messages', ' (anthropic-beta: a)', '')
 * // 'recorded with anthropic-beta: a, sent without it (the recording for POST /v1/messages was filed ...)'
 */
export function headersOfOldRecording(route: string, theirs: string, mine: string): string {
  return `recorded with ${theirs ? theirs.slice(2, -1) : 'other headers'}, sent ${mine ? `with ${mine.slice(2, -1)}` : 'without it'} (the recording for ${route} was filed before headers that change the answer kept recordings apart)`;
}

/**
 * What a filed route name holds after its method and path (`endpoint`): the headers it is
 * filed by (` (name: values)`, or '') and the origin it was recorded for ('' for none).
 */
function partsAfter(name: string, endpoint: { method: string; url: string }): { headers: string; origin: string } {
  const rest = name.slice(endpoint.method.length + 1 + endpoint.url.length);
  if (rest === '' || rest.endsWith(')')) return { headers: rest, origin: '' };
  const sp = rest.lastIndexOf(' ');
  return { headers: rest.slice(0, sp), origin: rest.slice(sp + 1) };
}

/**
 * A URL without the `beta=true` query the Anthropic SDK's beta client adds to every call it
 * sends with betas (LangChain's ChatAnthropic `betas` goes through it): the query only repeats
 * what the anthropic-beta header says, so the same call with and without betas is compared as
 * one endpoint, filed apart by the header.
 */
const withoutBetaMarker = (url: string): string => url.replace(/([?&])beta=true(&|$)/, (_m, sep: string, next: string) => (next ? sep : ''));

/** Whether recordings for `theirs` ('' for none: any host) answer a request to `mine` ('' for one whose host is not compared). */
const sameHost = (theirs: string, mine: string): boolean => theirs === '' || mine === '' || theirs === mine;

/** The header names in a route's ` (name: values; name: values)` part. */
function names(part: string): string {
  return part
    .slice(2, -1)
    .split('; ')
    .map((p) => p.slice(0, p.indexOf(':')))
    .join(', ');
}
