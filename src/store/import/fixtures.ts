/**
 * JSON fixtures of mock servers, where an answer is tied to matching rules rather than to a
 * recorded request. A rule that pins down one whole request (method, a literal path, the exact
 * body) is imported like a recording; any other rule (a substring, a partial JSON match, a
 * regular expression, "any method") matches many requests, and keying it would mean guessing a
 * body, so it is listed with the reason and not imported. Three shapes:
 * - MockServer expectations: `[{ httpRequest: { method, path, body }, httpResponse: { statusCode,
 *   headers, body } }]`; a body matches exactly only as a plain string, `{ type: 'STRING',
 *   string }` without `subString`, or `{ type: 'JSON', json, matchType: 'STRICT' }` (MockServer's
 *   default JSON match is ONLY_MATCHING_FIELDS, a partial match);
 * - LLM mock servers' fixture files (`{ fixtures: [{ match: { userMessage, toolName, model, ... },
 *   response: { content | toolCalls | error } }] }`, as llmock writes them): every such rule is
 *   a partial match (a user message substring, a tool name), so each is listed;
 * - plain request/response pairs, `[{ request: { method, path | url, headers, body },
 *   response: { status, headers, body } }]` (as `tapedeck add` takes them): imported; a file
 *   with a stream written by hand (`events`, `gapMs`, `cut`) is refused for `tapedeck add`.
 */
import { addHeader, badFile, base64Bytes, FieldError, isObject, readEntries, response, streamChunks, utf8Bytes, type Exchange, type ImportHeaders, type ReadResult, type Unkeyable } from './exchange.ts';
import { parseJsonFile } from './har.ts';
import { TapedeckError } from '../../errors.ts';

function headersOf(v: unknown, field: string): ImportHeaders {
  const h: ImportHeaders = {};
  if (v === undefined || v === null) return h;
  // MockServer writes [{ name, values: [...] }] or { name: [values] }.
  const pairs: [string, unknown][] = Array.isArray(v)
    ? v.map((x, i) => {
        if (!isObject(x) || typeof x.name !== 'string') throw new FieldError(`${field}[${i}]`, 'must be { name, values }');
        return [x.name, x.values ?? x.value];
      })
    : isObject(v)
      ? Object.entries(v)
      : (() => {
          throw new FieldError(field, 'must be an object of header names to values');
        })();
  for (const [name, x] of pairs) {
    for (const y of Array.isArray(x) ? x : [x]) {
      if (typeof y !== 'string' && typeof y !== 'number') throw new FieldError(`${field}.${name}`, 'must be a string or a list of strings');
      addHeader(h, name, String(y));
    }
  }
  return h;
}

/** A response body as fixtures write it: JSON, text, or MockServer's typed bodies. */
function answerBody(v: unknown, headers: ImportHeaders, field: string): Uint8Array {
  if (v === undefined || v === null) return new Uint8Array(0);
  if (typeof v === 'string') return utf8Bytes(v);
  if (isObject(v) && typeof v.type === 'string') {
    if (v.type === 'JSON') return setType(headers, 'application/json', utf8Bytes(typeof v.json === 'string' ? v.json : JSON.stringify(v.json)));
    if (v.type === 'STRING') return utf8Bytes(typeof v.string === 'string' ? v.string : '');
    if (v.type === 'BINARY' && typeof v.base64Bytes === 'string') return base64Bytes(v.base64Bytes, `${field}.base64Bytes`);
    throw new FieldError(`${field}.type`, `${JSON.stringify(v.type)} is not a body type an answer can have (JSON, STRING, BINARY)`);
  }
  return setType(headers, 'application/json', utf8Bytes(JSON.stringify(v)));
}

function setType(h: ImportHeaders, type: string, body: Uint8Array): Uint8Array {
  h['content-type'] ??= type;
  return body;
}

/** The exact request body a rule gives, or why it gives none. */
function exactBody(v: unknown, headers: ImportHeaders): { body: Uint8Array } | { reason: string } {
  if (v === undefined || v === null) return { body: new Uint8Array(0) };
  if (typeof v === 'string') return { body: utf8Bytes(v) };
  if (isObject(v) && typeof v.type === 'string') {
    if (v.not === true) return { reason: 'the body rule is negated ("not": true): it matches every other body' };
    if (v.type === 'JSON') {
      if (v.matchType !== 'STRICT') return { reason: `a JSON body with matchType ${JSON.stringify(v.matchType ?? 'ONLY_MATCHING_FIELDS')} matches any body holding those fields, not one request (use matchType STRICT)` };
      return { body: setType(headers, 'application/json', utf8Bytes(typeof v.json === 'string' ? v.json : JSON.stringify(v.json))) };
    }
    if (v.type === 'STRING') {
      if (v.subString === true) return { reason: 'a substring match is not a request' };
      return typeof v.string === 'string' ? { body: utf8Bytes(v.string) } : { reason: 'a STRING body rule without a string' };
    }
    return { reason: `a ${v.type} body rule matches many bodies, not one request` };
  }
  // A bare JSON object is MockServer's partial (ONLY_MATCHING_FIELDS) match.
  return { reason: 'a bare JSON body is a partial match (ONLY_MATCHING_FIELDS) in MockServer, not one request' };
}

const PATTERN = /[*+?()[\]{}|^$\\]/;

/** The first request header a MockServer rule negates (`"!name"`, a `"!value"`, `{ not: true }`), or undefined. */
function negatedHeaderName(v: unknown): string | undefined {
  const pairs: [string, unknown][] = Array.isArray(v) ? v.filter(isObject).map((x) => [String(x.name), x.values ?? x.value]) : isObject(v) ? Object.entries(v) : [];
  for (const [name, x] of pairs) {
    if (name.startsWith('!')) return name;
    for (const y of Array.isArray(x) ? x : [x]) if ((typeof y === 'string' && y.startsWith('!')) || (isObject(y) && y.not === true)) return name;
  }
  return undefined;
}

function mockServer(x: Record<string, unknown>, i: number): Exchange | Unkeyable {
  const where = `[${i}]`;
  const q = x.httpRequest;
  const r = x.httpResponse;
  if (!isObject(q)) throw new FieldError('httpRequest', 'must be an object');
  if (!isObject(r)) {
    if (x.httpForward !== undefined || x.httpOverrideForwardedRequest !== undefined || x.httpResponseTemplate !== undefined || x.httpError !== undefined) return { where, reason: 'the answer is forwarded, templated or an error action, not a recorded response' };
    throw new FieldError('httpResponse', 'is missing');
  }
  // MockServer negates a whole request rule with `"not": true` and a method, path or header
  // value with a leading "!": such a rule answers every request but the one it names, so keyed
  // as that request it would answer exactly the request it excludes.
  if (q.not === true) return { where, reason: 'the request rule is negated ("not": true): it matches every request but this one' };
  if (typeof q.method === 'string' && q.method.startsWith('!')) return { where, reason: `the method ${JSON.stringify(q.method)} is negated: it matches every method but ${q.method.slice(1)}` };
  if (typeof q.path === 'string' && q.path.startsWith('!')) return { where, reason: `the path ${JSON.stringify(q.path)} is negated: it matches every path but ${q.path.slice(1)}` };
  if (isObject(q.method) || isObject(q.path)) return { where, reason: `the ${isObject(q.method) ? 'method' : 'path'} rule is an object (negated or a pattern), not one literal value` };
  if (typeof q.method !== 'string' || q.method === '') return { where, reason: 'no method: the rule matches any method' };
  // A method is a word: anything else (`P.*`, `GET|POST`) is MockServer's regular expression.
  if (!/^[A-Za-z]+$/.test(q.method)) return { where, reason: `the method ${JSON.stringify(q.method)} is a pattern, not one method` };
  if (typeof q.path !== 'string' || !q.path.startsWith('/')) return { where, reason: 'no path: the rule matches any path' };
  if (PATTERN.test(q.path)) return { where, reason: `the path ${JSON.stringify(q.path)} is a pattern, not one URL` };
  if (q.queryStringParameters !== undefined) return { where, reason: 'query parameter rules match many URLs' };
  const negatedHeader = negatedHeaderName(q.headers);
  if (negatedHeader !== undefined) return { where, reason: `the header rule ${JSON.stringify(negatedHeader)} is negated: it matches every request without that value` };
  const reqHeaders = headersOf(q.headers, 'httpRequest.headers');
  const body = exactBody(q.body, reqHeaders);
  if ('reason' in body) return { where, reason: body.reason };
  const resHeaders = headersOf(r.headers, 'httpResponse.headers');
  const resBody = answerBody(r.body, resHeaders, 'httpResponse.body');
  return {
    where,
    index: i,
    request: { method: q.method.toUpperCase(), url: q.path, headers: reqHeaders, body: body.body },
    response: response(r.statusCode ?? 200, r.reasonPhrase, resHeaders, resBody, 'httpResponse.statusCode', streamChunks(resHeaders, resBody)),
  };
}

function llmMock(x: Record<string, unknown>, i: number): Unkeyable {
  const m = x.match as Record<string, unknown>;
  const rules = Object.keys(m);
  const why: Record<string, string> = {
    userMessage: 'a user-message substring match is not a request',
    inputText: 'an input-text substring match is not a request',
    toolName: 'a tool-name match is not a request',
    toolCallId: 'a tool-call-id match is not a request',
    model: 'a model match is not a request',
    predicate: 'a predicate is code, not a request',
  };
  const first = rules.find((k) => k in why);
  return { where: `fixtures[${i}]`, reason: first ? why[first]! : `the rule ${JSON.stringify(m)} matches requests by their parts, not one request` };
}

function plain(x: Record<string, unknown>, i: number): Exchange {
  const q = x.request;
  const r = x.response;
  if (!isObject(q)) throw new FieldError('request', 'must be an object');
  if (!isObject(r)) throw new FieldError('response', 'is missing');
  const url = typeof q.url === 'string' ? q.url : q.path;
  if (typeof url !== 'string' || (!url.startsWith('/') && !URL.canParse(url))) throw new FieldError('request.url', 'must be a URL or a path starting with /');
  const reqHeaders = headersOf(q.headers, 'request.headers');
  const body = q.body === undefined ? new Uint8Array(0) : typeof q.body === 'string' ? utf8Bytes(q.body) : setType(reqHeaders, 'application/json', utf8Bytes(JSON.stringify(q.body)));
  const resHeaders = headersOf(r.headers, 'response.headers');
  const resBody = answerBody(r.body, resHeaders, 'response.body');
  return {
    where: `[${i}]`,
    index: i,
    request: { method: (typeof q.method === 'string' ? q.method : 'POST').toUpperCase(), url, headers: reqHeaders, body },
    response: response(r.status ?? 200, undefined, resHeaders, resBody, 'response.status', streamChunks(resHeaders, resBody)),
  };
}

function fixture(x: unknown, i: number): Exchange | Unkeyable {
  if (!isObject(x)) throw new FieldError('(fixture)', 'must be an object');
  if ('httpRequest' in x) return mockServer(x, i);
  if (isObject(x.match)) return llmMock(x, i);
  if ('request' in x) return plain(x, i);
  throw new FieldError('(fixture)', 'has none of httpRequest (MockServer), match (an LLM mock server) or request');
}

/**
 * Whether parsed JSON looks like mock-server fixtures. A list named `fixtures` or
 * `expectations` says so even when empty (the import then says the file has no entries); a bare
 * array is told by its items.
 */
export function isFixtures(v: unknown): boolean {
  if (isObject(v) && Object.keys(v).length === 1 && ((Array.isArray(v.fixtures) && v.fixtures.length === 0) || (Array.isArray(v.expectations) && v.expectations.length === 0))) return true;
  const list = isObject(v) ? (v.fixtures ?? v.expectations ?? ('httpRequest' in v ? [v] : undefined)) : v;
  return Array.isArray(list) && list.length > 0 && list.every((x) => isObject(x) && ('httpRequest' in x || isObject(x.match) || ('request' in x && 'response' in x)));
}

/**
 * Reads mock-server fixtures: exact rules as exchanges, the others listed in `unkeyable`.
 *
 * @example
 * const { exchanges, unkeyable } = readFixtures(readFileSync('mockserver.json', 'utf8'), 'mockserver.json')
 */
export function readFixtures(text: string, file: string, opts: { parsed?: unknown } = {}): ReadResult {
  const format = 'mock-server fixture file';
  const doc = opts.parsed ?? parseJsonFile(text, file, format);
  const list = isObject(doc) ? (doc.fixtures ?? doc.expectations ?? ('httpRequest' in doc ? [doc] : undefined)) : doc;
  if (!Array.isArray(list)) throw badFile(file, format, 'expected an array of fixtures, or { "fixtures": [...] }');
  const prefix = isObject(doc) && Array.isArray(doc.fixtures) ? 'fixtures' : isObject(doc) && Array.isArray(doc.expectations) ? 'expectations' : '';
  // A hand-written stream (`events`, `gapMs`, `cut`: docs/hand-written.md) is no mock server's
  // answer: read as a pair, its events would be dropped and an empty body replayed. The file is
  // for `tapedeck add`, which reads them.
  const written = list.findIndex((x) => isObject(x) && isObject(x.response) && ['events', 'gapMs', 'cut'].some((k) => k in (x.response as object)));
  if (written >= 0) {
    const field = ['events', 'gapMs', 'cut'].find((k) => k in ((list[written] as { response: object }).response));
    throw new TapedeckError('E_IMPORT_FORMAT', `${file} holds hand-written recordings (${prefix}[${written}].response.${field}: a stream written by hand), which import does not read; no tape written.`, {
      file,
      entry: written,
      hint: `Put them on a tape with tapedeck add <tape> ${file} (docs/hand-written.md).`,
    });
  }
  const turns = answerTurns(list, prefix);
  // (whereOf(0) names the list even when it is empty.)
  return readEntries(file, format, turns, (i) => `${prefix}[${turns[i]?.at ?? i}]`, (t) => {
    if (t.never !== undefined) return { where: `${prefix}[${t.at}]`, reason: t.never };
    if (t.bad !== undefined) throw new FieldError(t.bad.field, t.bad.what);
    // Its place as the file gives it (`expectations[2]`), whichever turn of the rule this is.
    return { ...fixture(t.rule, t.at), where: `${prefix}[${t.at}]` };
  });
}

/** One answer a rule gives: the rule, its place in the file, and why it never answers (or what is malformed in it). */
interface Turn {
  rule: unknown;
  at: number;
  never?: string;
  bad?: { field: string; what: string };
}

/** Most answers one MockServer rule is imported as (`times.remainingTimes`); a rule giving more is listed. */
const MOST_TIMES = 1000;

/**
 * The answers MockServer gives, in the order it gives them: it tries rules by `priority`
 * (highest first, then in file order), and a rule answers `times.remainingTimes` requests, or
 * every one (`unlimited`, the default). So a rule with `remainingTimes: n` is n recordings of
 * its request (the import keeps identical requests' recordings in turn), an unlimited rule is
 * one (replay serves a request's last recording again), and a rule after an unlimited one for
 * the same request is never answered: listed with the reason, not imported as a later turn.
 * Other fixtures (no `httpRequest`) are one answer each, in file order.
 *
 * @example
 * answerTurns([{ httpRequest: r, httpResponse: a, times: { remainingTimes: 2 } }, { httpRequest: r, httpResponse: b }], '').length // 3
 */
export function answerTurns(list: unknown[], prefix: string): Turn[] {
  const priority = (x: unknown): number => (isObject(x) && 'httpRequest' in x && typeof x.priority === 'number' && Number.isFinite(x.priority) ? x.priority : 0);
  // A stable sort: equal priorities keep file order, as MockServer keeps creation order.
  const order = list.map((_, i) => i).sort((a, b) => priority(list[b]) - priority(list[a]));
  const turns: Turn[] = [];
  const answeredBy = new Map<string, number>();
  for (const at of order) {
    const rule = list[at];
    if (!isObject(rule) || !('httpRequest' in rule)) {
      turns.push({ rule, at });
      continue;
    }
    const same = sameRequestKey(rule.httpRequest);
    const first = answeredBy.get(same);
    if (first !== undefined) {
      const ahead = priority(list[first]) > priority(rule) ? `its priority ${priority(list[first])} is above this rule's ${priority(rule)}` : 'it comes first in the file';
      turns.push({ rule, at, never: `MockServer never answers with this rule: ${prefix}[${first}] matches the same request every time (no "times" limit) and ${ahead}` });
      continue;
    }
    const t = rule.times;
    if (t === undefined || t === null || (isObject(t) && t.unlimited === true)) {
      answeredBy.set(same, at);
      turns.push({ rule, at });
      continue;
    }
    const n = isObject(t) ? t.remainingTimes : undefined;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      turns.push({ rule, at, bad: { field: 'times', what: 'must be { "unlimited": true } or { "remainingTimes": <whole number> }' } });
      continue;
    }
    if (n === 0) turns.push({ rule, at, never: 'times.remainingTimes is 0: MockServer never answers with this rule' });
    else if (n > MOST_TIMES) turns.push({ rule, at, never: `times.remainingTimes ${n} is more answers than import writes for one rule (${MOST_TIMES} at most); give it "unlimited": true to replay its answer to every call` });
    else for (let k = 0; k < n; k++) turns.push({ rule, at });
  }
  return turns;
}

/** A MockServer request rule as text that is the same for the same rule whatever its key order. */
function sameRequestKey(v: unknown): string {
  const sorted = (x: unknown): unknown => (Array.isArray(x) ? x.map(sorted) : isObject(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])])) : x);
  return JSON.stringify(sorted(v)) ?? '';
}
