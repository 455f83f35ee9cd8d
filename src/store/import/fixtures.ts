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

function mockServer(x: Record<string, unknown>, i: number): Exchange | Unkeyable {
  const where = `[${i}]`;
  const q = x.httpRequest;
  const r = x.httpResponse;
  if (!isObject(q)) throw new FieldError('httpRequest', 'must be an object');
  if (!isObject(r)) {
    if (x.httpForward !== undefined || x.httpOverrideForwardedRequest !== undefined || x.httpResponseTemplate !== undefined || x.httpError !== undefined) return { where, reason: 'the answer is forwarded, templated or an error action, not a recorded response' };
    throw new FieldError('httpResponse', 'is missing');
  }
  if (typeof q.method !== 'string' || q.method === '') return { where, reason: 'no method: the rule matches any method' };
  if (typeof q.path !== 'string' || !q.path.startsWith('/')) return { where, reason: 'no path: the rule matches any path' };
  if (PATTERN.test(q.path)) return { where, reason: `the path ${JSON.stringify(q.path)} is a pattern, not one URL` };
  if (q.queryStringParameters !== undefined) return { where, reason: 'query parameter rules match many URLs' };
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
  return readEntries(file, format, list, (i) => `${prefix}[${i}]`, fixture);
}
