/**
 * nock's recorder output (`nock.recorder.rec({ output_objects: true })`, `nock.recorder.play()`
 * written as JSON, and nock.back fixtures, which are the same array): one definition per
 * request with `scope` (origin), `method`, `path`, `body` (the request: parsed JSON, text, or
 * hex for bytes that are not UTF-8), `status`, `response` (parsed JSON, text, hex when `responseIsBinary`, or an array of hex
 * chunks when the answer had a Content-Encoding), `rawHeaders` (an object, or in older nock a
 * flat [name, value, ...] list) and `reqheaders` (the request's headers).
 */
import { addHeader, badFile, decodedBody, FieldError, headerValue, isObject, readEntries, response, streamChunks, utf8Bytes, type Exchange, type ImportHeaders, type ReadResult } from './exchange.ts';
import { parseJsonFile } from './har.ts';
import { TapedeckError } from '../../errors.ts';

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
/** Answers that have no body (RFC 9110): a definition of one may leave `response` out. */
const NO_BODY_STATUS = new Set([204, 205, 304]);

/**
 * Whether a definition's `scope`, `path` or `body` is a regular expression literal, as nock's
 * code spells a matching rule (`/api\.openai\.com/`, `/\/v1\/chat.+/i`). A recorder never writes
 * one; a hand-edited fixture does, and it names no one request. Told by slashes around a body
 * with an escape, a `.*` / `.+`, or a `^` / `$` anchor, so a real path ending in `/`, even with
 * parentheses or a query (`/odata/Items(1)/`, `/search?q=a/`), is not taken for one.
 *
 * @example
 * isRegexLiteral(String.raw`/\/v1\/chat.+/`) // true
 * isRegexLiteral('/v1/models/') // false
 */
function isRegexLiteral(s: string): boolean {
  const m = /^\/(.+)\/[dgimsuvy]*$/s.exec(s);
  return m !== null && /\\.|\.[*+]|^\^|\$$/.test(m[1]!);
}

const RULE_NOT_REQUEST = 'is a regular expression, a nock matching rule rather than a recorded request';

function hexBytes(s: string, field: string): Uint8Array {
  if (!HEX.test(s)) throw new FieldError(field, 'is not hex (nock records binary and encoded bodies as hex)');
  return new Uint8Array(Buffer.from(s, 'hex'));
}

function headersOf(v: unknown, field: string): ImportHeaders {
  const h: ImportHeaders = {};
  if (v === undefined || v === null) return h;
  if (Array.isArray(v)) {
    if (v.length % 2 !== 0) throw new FieldError(field, 'must be a [name, value, ...] list of even length');
    for (let i = 0; i < v.length; i += 2) {
      if (typeof v[i] !== 'string' || typeof v[i + 1] !== 'string') throw new FieldError(`${field}[${i}]`, 'names and values must be strings');
      addHeader(h, v[i] as string, v[i + 1] as string);
    }
    return h;
  }
  if (!isObject(v)) throw new FieldError(field, 'must be an object or a [name, value, ...] list');
  for (const [name, x] of Object.entries(v)) {
    for (const y of Array.isArray(x) ? x : [x]) {
      if (typeof y !== 'string' && typeof y !== 'number') throw new FieldError(`${field}.${name}`, 'must be a string');
      addHeader(h, name, String(y));
    }
  }
  return h;
}

/** A recorded body: JSON nock parsed (stored again as JSON), text, or nothing. */
function bodyBytes(v: unknown): Uint8Array {
  if (v === undefined || v === null || v === '') return new Uint8Array(0);
  return utf8Bytes(typeof v === 'string' ? v : JSON.stringify(v));
}

/**
 * A request body as nock's recorder writes it: bytes that are not UTF-8 as hex (it keeps no flag
 * saying so for a request, and compares a request with such a body by its hex), anything else as
 * text or parsed JSON. So hex whose bytes are not UTF-8 was such a body, unless the recorded
 * headers call the body text; hex whose bytes are UTF-8 would have been written as that text,
 * so it is the text itself. (Text of hex digits alone whose bytes are not UTF-8, `deadbeef`,
 * recorded without its headers, cannot be told from bytes, and reads as the bytes.)
 */
function requestBodyBytes(v: unknown, headers: ImportHeaders): Uint8Array {
  const type = String(headers['content-type'] ?? '');
  if (typeof v === 'string' && v !== '' && HEX.test(v) && !/^text\/|json|xml|x-www-form-urlencoded/i.test(type)) {
    const bytes = Buffer.from(v, 'hex');
    if (!Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes)) return new Uint8Array(bytes);
  }
  return bodyBytes(v);
}

function definition(d: unknown, i: number): Exchange {
  if (!isObject(d)) throw new FieldError('(definition)', 'must be an object');
  if (typeof d.scope === 'string' && isRegexLiteral(d.scope)) throw new FieldError('scope', `${JSON.stringify(d.scope)} ${RULE_NOT_REQUEST}: write the origin the request was sent to, such as "https://api.openai.com:443"`);
  if (!('scope' in d)) throw new FieldError('scope', 'is missing (the origin the request was sent to, such as "https://api.openai.com:443")');
  if (typeof d.scope !== 'string' || !URL.canParse(d.scope)) throw new FieldError('scope', `${JSON.stringify(d.scope) ?? 'undefined'} is not an origin such as "https://api.openai.com:443"`);
  if (typeof d.method !== 'string' || d.method === '') throw new FieldError('method', 'is missing');
  if (typeof d.path !== 'string' || !d.path.startsWith('/')) throw new FieldError('path', 'must be a path starting with /');
  if (isRegexLiteral(d.path)) throw new FieldError('path', `${JSON.stringify(d.path)} ${RULE_NOT_REQUEST}: write the path the request was sent to, such as "/v1/chat/completions"`);
  // Before the body is keyed, which would call the pattern invalid JSON.
  if (typeof d.body === 'string' && isRegexLiteral(d.body)) throw new FieldError('body', `${JSON.stringify(d.body)} ${RULE_NOT_REQUEST}: write the body that was sent`);
  const reqHeaders = headersOf(d.reqheaders, 'reqheaders');
  // Joined as text, not resolved: `new URL('//v1/x', scope)` reads `v1` as a host.
  const url = `${new URL(d.scope).origin}${d.path}`;
  const request = { method: d.method.toUpperCase(), url, headers: reqHeaders, body: requestBodyBytes(d.body, reqHeaders) };
  try {
    return answered(d as NockDefinition, i, request);
  } catch (err) {
    // The request was read whole: a later repeat of it must not take this definition's turn (readEntries).
    if (err instanceof FieldError) err.request ??= request;
    throw err;
  }
}

/** A definition past its request: what {@link definition} checked of it, typed. */
type NockDefinition = Record<string, unknown> & { method: string };

/** The rest of {@link definition}, once its request is read: the answer. */
function answered(d: NockDefinition, i: number, request: Exchange['request']): Exchange {
  if (!('status' in d)) throw new FieldError('status', 'is missing');
  // nock's recorder always writes the answer ("" for an empty one): a definition without it was
  // edited, and read as an empty body it would replay as an empty 200 an SDK takes for an
  // answer. Statuses and methods whose answer has no body need none.
  if (d.response === undefined && !NO_BODY_STATUS.has(d.status as number) && d.method.toUpperCase() !== 'HEAD') {
    throw new FieldError('response', 'is missing (nock\'s recorder writes the answer\'s body there; write "response": "" for an answer that was empty)');
  }
  const resHeaders = headersOf(d.rawHeaders, 'rawHeaders');
  let body: Uint8Array;
  // nock's recorder (and its playback) writes hex chunks only for an answer whose headers carry
  // a content-encoding; any other array is a JSON answer that is a list (`[]`, Gemini's
  // streamGenerateContent objects), stored parsed like every JSON answer.
  const coding = headerValue(resHeaders, 'content-encoding');
  if (Array.isArray(d.response) && coding !== undefined && coding !== '') {
    // An encoded answer: its chunks as sent, hex each.
    const parts = d.response.map((c, k) => {
      if (typeof c !== 'string') throw new FieldError(`response[${k}]`, `must be a hex string (nock records an answer with a content-encoding, here ${JSON.stringify(coding)}, as hex chunks; remove the content-encoding from rawHeaders if the answer is a plain JSON list)`);
      return hexBytes(c, `response[${k}]`);
    });
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      joined.set(p, at);
      at += p.length;
    }
    body = decodedBody(resHeaders, joined, 'response');
  } else if (d.responseIsBinary === true) {
    if (typeof d.response !== 'string') throw new FieldError('response', 'must be a hex string (responseIsBinary)');
    body = hexBytes(d.response, 'response');
  } else body = bodyBytes(d.response);
  return {
    where: `[${i}]`,
    index: i,
    request,
    response: response(d.status, undefined, resHeaders, body, 'status', streamChunks(resHeaders, body)),
  };
}

/** nock's recorder output as code (without output_objects): a call of nock() per request. */
const NOCK_CODE = /^\s*nock\(/;

/**
 * Whether a text, or parsed JSON, is nock's recorder output as code: what `nock.recorder.rec()`
 * prints without `output_objects`, or the strings of `nock.recorder.play()` then. Code to run,
 * not data: import reads the definitions `output_objects: true` records.
 *
 * @example
 * isNockCode("\nnock('https://api.openai.com:443').post('/v1/chat/completions', {...})") // true
 */
export function isNockCode(v: unknown): boolean {
  if (typeof v === 'string') return NOCK_CODE.test(v);
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' && NOCK_CODE.test(x));
}

/** E_IMPORT_FORMAT for nock's recorder output as code, with the option that records what import reads. */
export function nockCodeError(file: string): TapedeckError {
  return new TapedeckError('E_IMPORT_FORMAT', `${file} is nock's recorder output as code (recorded without output_objects), not recordings import reads; no tape written.`, {
    file,
    // No call or options object in it: the command line shows it too (it is about the user's
    // recording code, not tapedeck's API).
    hint: 'Record again with output_objects: true in the options of nock.recorder.rec, save JSON.stringify of what nock.recorder.play returns as a .json file, and import that (docs/migrate.md, "From nock").',
  });
}

/**
 * Whether parsed JSON looks like nock definitions: an array of objects, more than half of them
 * with both `scope` and `method`, every one with one of nock's own members and none with a
 * mock-server fixture's. Not every one need be whole: a file with one definition hand-edited or
 * merged badly is still nock's, and its import names that entry and the field it lacks (an
 * "every definition whole" test called it none of the formats import reads).
 *
 * @example
 * isNockDefinitions([{ scope: 'https://api.openai.com:443', method: 'POST', path: '/v1/chat/completions' }]) // true
 */
export function isNockDefinitions(v: unknown): boolean {
  if (!Array.isArray(v) || v.length === 0) return false;
  let whole = 0;
  for (const d of v) {
    if (!isObject(d) || 'httpRequest' in d || 'request' in d || 'match' in d) return false;
    if (!('scope' in d || 'method' in d || 'path' in d)) return false;
    if ('scope' in d && 'method' in d) whole++;
  }
  return whole * 2 > v.length;
}

/**
 * Reads nock recorder output (a JSON array of definitions) as exchanges (bad ones listed).
 *
 * @example
 * nock.recorder.rec({ output_objects: true, dont_print: true }); ... ;
 * writeFileSync('nock.json', JSON.stringify(nock.recorder.play()))
 * const { exchanges } = readNock(readFileSync('nock.json', 'utf8'), 'nock.json')
 */
export function readNock(text: string, file: string, opts: { parsed?: unknown } = {}): ReadResult {
  const format = 'nock recording';
  if (opts.parsed === undefined && isNockCode(text)) throw nockCodeError(file);
  const doc = opts.parsed ?? parseJsonFile(text, file, format);
  if (isNockCode(doc)) throw nockCodeError(file);
  if (!Array.isArray(doc)) throw badFile(file, format, 'expected a JSON array of definitions ({ scope, method, path, status, response })');
  const read = readEntries(file, format, doc, (i) => `[${i}]`, definition);
  const lost = headersLost(file, doc);
  if (lost !== undefined) read.warnings = [lost];
  return read;
}

/**
 * The warning for a recording made without `enable_reqheaders_recording`: no definition has
 * `reqheaders`, so the headers that decide an answer (Anthropic's `anthropic-beta`, a form
 * body's content type) are gone. Calls that differed only in them import as repeats of one
 * request and replay in turn, each perhaps with the other's answer. Undefined when any
 * definition kept its headers (or there are none: that import is refused anyway).
 *
 * @example
 * headersLost('chat.json', [{ scope: 'https://api.anthropic.com:443', method: 'POST', path: '/v1/messages' }])
 * // 'chat.json: the nock recording keeps no request headers (no definition has "reqheaders") ...'
 */
export function headersLost(file: string, definitions: readonly unknown[]): string | undefined {
  if (definitions.length === 0 || definitions.some((d) => isObject(d) && d.reqheaders !== undefined && d.reqheaders !== null)) return undefined;
  return `${file}: the nock recording keeps no request headers (no definition has "reqheaders": it was recorded without enable_reqheaders_recording), so headers that decide an answer are lost: calls that differed only in them (Anthropic's anthropic-beta, a form body's content type) are imported as repeats of one request and replay in turn, each perhaps with the other's answer. Record again with nock.recorder.rec({ output_objects: true, enable_reqheaders_recording: true }) and import that.`;
}
