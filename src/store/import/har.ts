/**
 * HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) as Polly.js, Playwright
 * (`recordHar`, `routeFromHAR`) and the Chrome and Firefox devtools save it: `log.entries[]`,
 * each a request (method, url, headers, `postData.text` or `postData.params`) and its response
 * (status, headers, `content.text`, base64 when `content.encoding` says so). Playwright's
 * `content: 'attach'` writes either body to a file beside the HAR instead, named by `_file`
 * (`postData._file` beside an empty `postData.text`). Entries are taken in file order (pages
 * and repeats keep theirs), except that the calls of one Polly.js request take their `_order`
 * (polly-order.ts). `content.text` is the decoded body whatever `content-encoding` the headers
 * still name, except in Polly.js's form for a content-encoded answer (its node-http adapter):
 * base64 chunks of the encoded bytes as sent, in a JSON array, which are joined and decoded.
 *
 * A server-sent-event answer becomes a streamed recording, one chunk per event, timed over the
 * entry's `timings.receive`; a HAR this project exported keeps each chunk's time in the
 * response's `_chunks` and gets them back exactly.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { canonicalizeJSON } from '../../core/index.ts';
import { TapedeckError } from '../../errors.ts';
import { harSalt, type HarSplit } from './har-split.ts';
import { inPollyOrder, pollyOrderOf, type PollyOrder } from './polly-order.ts';
import { freezeHeaders } from '../frozen-headers.ts';
import { originOf } from '../origins.ts';
import { addHeader, addLowercaseHeader, badFile, base64Bytes, decodedBody, FieldError, headerValue, isEventStream, isObject, readEntries, requestOf, response, streamChunks, utf8Bytes, type Exchange, type ExportedOrder, type ImportHeaders, type ReadResult } from './exchange.ts';

/** A JSON syntax error's byte offset, from V8's message ("... at position 123"). */
export function jsonErrorOffset(e: Error): number | undefined {
  const m = /position (\d+)/.exec(e.message);
  return m ? Number(m[1]) : undefined;
}

/**
 * Where JSON text that JSON.parse refused breaks, as a UTF-16 offset: V8's position when its
 * message gives one, else the core's strict reader's (V8 names no position for some errors,
 * such as an unexpected token: `{"a": [1, }`). Only on the way to an error.
 */
function syntaxErrorOffset(text: string, e: Error): number | undefined {
  const at = jsonErrorOffset(e);
  if (at !== undefined) return at;
  try {
    canonicalizeJSON(text);
  } catch (c) {
    // The core counts UTF-8 bytes; the caller counts UTF-16 units, as V8 does.
    if (c instanceof TapedeckError && c.code === 'E_JSON' && typeof c.offset === 'number') return Buffer.from(text).subarray(0, c.offset).toString('utf8').length;
  }
  return undefined;
}

/**
 * V8's parse error quotes the file around the fault: its control characters (an escape sequence
 * would act on the terminal the message is printed to) and undecodable bytes are written as
 * `\uXXXX` instead.
 */
function printable(message: string): string {
  return message.replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Parses JSON text, or throws the import's file error with the offset of the problem. A UTF-8
 * byte order mark first is skipped: the HAR format lets writers put one there and has readers
 * ignore it, and JSON.parse refuses it.
 *
 * @example
 * parseJsonFile('\ufeff{"log":{"entries":[]}}', 'session.har', 'HAR file') // { log: { entries: [] } }
 */
export function parseJsonFile(text: string, file: string, format: string): unknown {
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const json = bom === 1 ? text.slice(1) : text;
  try {
    return JSON.parse(json);
  } catch (e) {
    // An offset in the file's text, where the mark counts.
    const inJson = syntaxErrorOffset(json, e as Error);
    const offset = inJson === undefined ? undefined : inJson + bom;
    const end = text.trimEnd().length;
    // Cut short: the parser ran out of text (a mistake inside the text, like a trailing comma
    // before the last brace, is not truncation).
    const early = /end of JSON input/i.test((e as Error).message) || (offset !== undefined && offset >= end);
    const cut = text.trim() === '' ? ' (the file is empty)' : early ? ' (the file ends early: truncated?)' : '';
    // V8 counts UTF-16 units; the byte offset is what an editor's "go to byte" wants.
    const at = offset !== undefined ? Buffer.byteLength(text.slice(0, offset)) : early ? Buffer.byteLength(text) : undefined;
    throw badFile(file, format, `invalid JSON${at !== undefined ? ` at byte ${at}` : ''}: ${printable((e as Error).message)}${cut}`, at !== undefined ? { offset: at } : {});
  }
}

/**
 * The names of the last header list read for a field and the lowercase names made of them, by
 * place: a HAR's answers list the same names in the same order with new values, and a name
 * equal to the last list's in its place takes the lowercase name made then (lowercasing a
 * parsed name, and the lookup the map's store makes for a name it has not seen as that string,
 * cost more than the comparison).
 */
interface Names {
  names: string[];
  keys: string[];
}
const requestNames: Names = { names: [], keys: [] };
const responseNames: Names = { names: [], keys: [] };

/**
 * A header value given as a number: Polly.js writes the headers a test set as numbers
 * (`content-length: 12`) as they were, and a HAR read by other tools takes them as their text.
 */
function headerNumber(v: unknown, field: string): string {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw new FieldError(field, 'must be { name, value } with string values');
}

function headersOf(list: unknown, field: string, last: Names): ImportHeaders {
  if (!Array.isArray(list)) throw new FieldError(field, 'must be an array of { name, value }');
  const h: ImportHeaders = {};
  const { names, keys } = last;
  let same = names.length === list.length;
  for (let i = 0; i < list.length; i++) {
    const x: unknown = list[i];
    if (!isObject(x) || typeof x.name !== 'string') throw new FieldError(`${field}[${i}]`, 'must be { name, value } with string values');
    const value = typeof x.value === 'string' ? x.value : headerNumber(x.value, `${field}[${i}]`);
    // HTTP/2 pseudo-headers (:authority, :path) as Chrome lists them are not headers.
    if (x.name.charCodeAt(0) === 0x3a) continue;
    if (same && x.name === names[i]) addLowercaseHeader(h, keys[i]!, value);
    else {
      same = false;
      addHeader(h, x.name, value);
    }
  }
  if (!same) {
    last.names = (list as { name: string }[]).map((x) => x.name);
    last.keys = last.names.map((n) => n.toLowerCase());
  }
  return h;
}

/**
 * The last request header list read (names and values, in order), the body's mime type it was
 * read with, and the map made of them, frozen. A HAR's requests mostly list the same headers
 * (one client, one key): an entry listing exactly the last list gets the same map, which the
 * deck then redacts once and the frame writer encodes once for all the entries that share it
 * (deck-record.ts storedRequestHeaders, record-pack.ts). Compared by content, never by identity.
 */
let lastRequest: { list: string[]; mime: string | undefined; headers: ImportHeaders } = { list: [], mime: undefined, headers: Object.freeze({}) };

/** Whether a HAR header list has exactly the names and values of `flat` ([name, value, ...]). */
function sameList(list: unknown[], flat: string[]): boolean {
  if (list.length * 2 !== flat.length || list.length === 0) return false;
  for (let i = 0; i < list.length; i++) {
    const x: unknown = list[i];
    if (!isObject(x) || x.name !== flat[2 * i] || x.value !== flat[2 * i + 1]) return false;
  }
  return true;
}

/**
 * An entry's request headers: its list, `content-type` from the body's mime type where the list
 * has none, `content-encoding` dropped (the body is given decoded: the coding it was sent with
 * no longer applies). Frozen, and the last entry's map again for the same list.
 */
function requestHeaders(list: unknown, postData: unknown): ImportHeaders {
  const mime = isObject(postData) && typeof postData.mimeType === 'string' && postData.mimeType !== '' ? postData.mimeType : undefined;
  const last = lastRequest;
  if (mime === last.mime && Array.isArray(list) && sameList(list, last.list)) return last.headers;
  const h = headersOf(list, 'request.headers', requestNames);
  if (mime !== undefined && h['content-type'] === undefined) h['content-type'] = mime;
  // Deleted only when there: a delete turns the map into a slow dictionary for every later reader.
  if (h['content-encoding'] !== undefined) delete h['content-encoding'];
  const flat: string[] = [];
  for (const x of list as { name: string; value: string }[]) flat.push(x.name, x.value);
  lastRequest = { list: flat, mime, headers: freezeHeaders(h) };
  return h;
}

function requestBody(postData: unknown, harDir: string | undefined): Uint8Array {
  if (postData === undefined || postData === null) return new Uint8Array(0);
  if (!isObject(postData)) throw new FieldError('request.postData', 'must be an object');
  // Playwright's content: 'attach' writes the body to a file and leaves `text: ''` beside it.
  if (postData._file !== undefined && postData._file !== null) return attachedFile(postData._file, harDir, 'request.postData._file');
  if (typeof postData.text === 'string') return isBase64(postData.encoding, 'request.postData.encoding') ? base64Bytes(postData.text, 'request.postData.text') : utf8Bytes(postData.text);
  if (postData.text !== undefined) throw new FieldError('request.postData.text', 'must be a string');
  if (Array.isArray(postData.params)) {
    // A form given as parameters: sent as application/x-www-form-urlencoded.
    const pairs = postData.params.map((p, i) => {
      if (!isObject(p) || typeof p.name !== 'string') throw new FieldError(`request.postData.params[${i}]`, 'must be { name, value }');
      return `${encodeURIComponent(p.name)}=${encodeURIComponent(typeof p.value === 'string' ? p.value : '')}`;
    });
    return utf8Bytes(pairs.join('&'));
  }
  return new Uint8Array(0);
}

/**
 * Refuses a request that sent a body the HAR does not hold: Chromium hands Playwright and
 * devtools no bytes for a body made of files or Blobs (a multipart upload) and `postData` is
 * left out, while `content-length` still says what was sent. An empty body in its place would
 * key a request nobody made, which no replay of the real one matches.
 */
function refuseUnsavedBody(headers: ImportHeaders): void {
  const sent = Number(headerValue(headers, 'content-length'));
  if (sent > 0) {
    throw new FieldError('request.postData', `is missing although the request sent a ${sent}-byte body (content-length): the browser saved no bytes of it (a body made of files or Blobs, such as a multipart upload), so no replay of this request would match; record it with tapedeck instead (createFetch or tapedeck serve)`);
  }
}

/**
 * Refuses a request whose saved body is empty (`postData.text: ""`, no `_file`, no `params`)
 * while `content-length` or the entry's `bodySize` says bytes were sent: Chromium saves the POST
 * it re-sends after a 307 or 308 redirect so, and a bodiless request in its place would key a
 * request nobody made, which no replay of the real one matches (as {@link refuseUnsavedBody}).
 */
function refuseEmptiedBody(headers: ImportHeaders, postData: Record<string, unknown>, bodySize: unknown): void {
  if (postData._file !== undefined && postData._file !== null) return;
  const length = Number(headerValue(headers, 'content-length'));
  const sent = length > 0 ? length : typeof bodySize === 'number' && bodySize > 0 ? bodySize : 0;
  if (sent === 0) return;
  const by = length > 0 ? 'content-length' : 'request.bodySize';
  const field = typeof postData.text === 'string' ? 'request.postData.text' : 'request.postData';
  throw new FieldError(
    field,
    `is empty although the request sent a ${sent}-byte body (${by}): the browser saved none of it (a POST re-sent after a 307 or 308 redirect, or a body made of files or Blobs), so no replay of this request would match; record it with tapedeck instead (createFetch or tapedeck serve)`,
  );
}

/** The bytes of a body Playwright's content: 'attach' wrote to a file beside the HAR (`_file`). */
function attachedFile(name: unknown, harDir: string | undefined, field: string): Uint8Array {
  if (typeof name !== 'string' || name === '') throw new FieldError(field, 'must be the name of a file beside the HAR');
  if (harDir === undefined) throw new FieldError(field, `names ${JSON.stringify(name)}, a file beside the HAR, but the HAR was not read from a file (import it from its path)`);
  // Playwright names a file beside the HAR; a name that leaves its directory (`../.env`, an
  // absolute path) would put another file's bytes on the tape, to be committed with it.
  // A symbolic link beside the HAR is followed to where it points, and judged there.
  const path = join(harDir, name);
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p); // missing: said below, as a file that cannot be read
    }
  };
  const inside = relative(real(harDir), real(path));
  if (isAbsolute(name) || inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    throw new FieldError(field, `${JSON.stringify(name)} is outside the HAR's directory (Playwright writes each body file beside the HAR, named <sha1>.<ext>); it is not read: move the file beside the HAR and give its name`);
  }
  try {
    return new Uint8Array(readFileSync(path));
  } catch (e) {
    throw new FieldError(field, `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): keep the files Playwright's content: 'attach' wrote beside the HAR`);
  }
}

/**
 * The answer of Polly.js's node-http adapter for a content-encoded response: `text` is the JSON
 * array of the chunks as they came off the wire, base64 each (@pollyjs/adapter-node-http
 * getBodyFromChunks, for any Content-Encoding), so joined they are the encoded bytes. Undefined
 * for any other text: `[` is no base64 character, so a base64 body never starts with one.
 */
function pollyChunks(text: string, headers: ImportHeaders): Uint8Array | undefined {
  const start = text.trimStart();
  if (start[0] !== '[') return undefined;
  let chunks: unknown;
  try {
    chunks = JSON.parse(start);
  } catch {
    return undefined;
  }
  if (!Array.isArray(chunks)) return undefined;
  const parts = chunks.map((c, i) => {
    if (typeof c !== 'string') throw new FieldError(`response.content.text[${i}]`, 'must be a base64 string (a chunk of Polly.js\'s content-encoded answer)');
    return base64Bytes(c, `response.content.text[${i}]`);
  });
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.length;
  }
  return decodedBody(headers, joined, 'response.content.text');
}

/**
 * Whether a body's `text` is base64 by its `encoding`: the one encoding HAR names, where absent
 * (or empty, or a name of UTF-8) means the text is the body. Any other (gzip, deflate: a
 * writer's own) is refused: the text read as the body would replay an answer nobody got.
 */
function isBase64(encoding: unknown, field: string): boolean {
  if (encoding === 'base64') return true;
  if (encoding === undefined || encoding === null || encoding === '' || (typeof encoding === 'string' && /^utf-?8$/i.test(encoding))) return false;
  throw new FieldError(field, `is ${JSON.stringify(encoding)}: the body's text is read as it is (no encoding) or as base64 ("base64"), and no other encoding; save the HAR with the body as text or base64`);
}

/**
 * Whether base64 answer bytes are still gzip-compressed although HAR 1.2 keeps `content.text`
 * decoded: `content-encoding: gzip`, the gzip magic, and a content type that is no gzip file's
 * (a `.gz` download served with that coding is its bytes). A writer that breaks the rule saves
 * them so; taken as they are, the replay would serve compressed bytes as JSON.
 */
function stillGzip(content: Record<string, unknown>, headers: ImportHeaders, body: Uint8Array): boolean {
  const coding = headerValue(headers, 'content-encoding')?.trim().toLowerCase();
  if ((coding !== 'gzip' && coding !== 'x-gzip') || body[0] !== 0x1f || body[1] !== 0x8b) return false;
  const type = `${headerValue(headers, 'content-type') ?? ''} ${typeof content.mimeType === 'string' ? content.mimeType : ''}`;
  return !/gzip|octet-stream|zip/i.test(type);
}

function responseBody(content: unknown, headers: ImportHeaders, harDir: string | undefined, onStillGzip?: () => void): Uint8Array {
  if (!isObject(content)) throw new FieldError('response.content', 'is missing (every HAR response has a content object)');
  if (typeof content.text === 'string') {
    if (!isBase64(content.encoding, 'response.content.encoding')) return utf8Bytes(content.text);
    const chunks = pollyChunks(content.text, headers);
    if (chunks !== undefined) return chunks;
    const bytes = base64Bytes(content.text, 'response.content.text');
    if (!stillGzip(content, headers, bytes)) return bytes;
    onStillGzip?.();
    return decodedBody(headers, bytes, 'response.content.text');
  }
  if (content.text !== undefined) throw new FieldError('response.content.text', 'must be a string');
  if (content._file !== undefined && content._file !== null) return attachedFile(content._file, harDir, 'response.content._file');
  // A HAR saved without bodies has only the size: an answer that had bytes cannot be replayed.
  if (typeof content.size === 'number' && content.size > 0) throw new FieldError('response.content.text', `is missing although the body had ${content.size} bytes (save the HAR with content, e.g. Playwright's recordHar content: 'embed')`);
  return new Uint8Array(0);
}

/** Chunk times this project's HAR export keeps (`_chunks`), if well formed for this body. */
function exportedChunks(v: unknown, length: number): [number, number][] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  let last = 0;
  for (const c of v) {
    if (!Array.isArray(c) || c.length !== 2 || typeof c[0] !== 'number' || typeof c[1] !== 'number' || c[1] < last || c[1] > length) throw new FieldError('response._chunks', 'must be [ms, end] pairs with ends in order inside the body');
    last = c[1];
  }
  return v as [number, number][];
}

/** A body's `text` when its bytes are that text's UTF-8 and it is as long: ASCII, one byte a character. */
function asciiOf(holder: unknown, body: Uint8Array): string | undefined {
  if (!isObject(holder)) return undefined;
  const text = holder.text;
  return typeof text === 'string' && holder.encoding !== 'base64' && text.length === body.length ? text : undefined;
}

const num = (v: unknown): number => (typeof v === 'number' && v > 0 ? v : 0);

/**
 * A time as Date#toISOString writes it, of a day every month has (01-28) and an hour before 24:
 * Date.parse reads it as that instant and toISOString writes it back unchanged, so it is kept
 * as it is (browsers save startedDateTime so; the two calls cost ~0.7 us an entry).
 */
const CANONICAL_TIME = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** An entry's start as Date#toISOString writes it, or undefined for none or an invalid one. */
function startOf(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  if (CANONICAL_TIME.test(v)) return v;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

/**
 * A tapedeck HAR export's `_tapedeck` member (export-har.ts), checked: the record's place, and
 * its origin where the entry's URL is not on it (`origin`: a string, or null for none). `repeat`
 * may be absent only beside `origin` (a record that had no place of its own).
 */
function exported(v: unknown): { order?: ExportedOrder; origin?: string | null } {
  const what = 'must be { repeat, run?, test?, origin? } as tapedeck export --har writes it (a whole number from 0, strings, and an origin or null)';
  if (!isObject(v)) throw new FieldError('_tapedeck', what);
  const { repeat, run, test } = v;
  // As a record stores it: a user and password an edited file gives it are not kept.
  const origin = v.origin === undefined || v.origin === null ? v.origin : typeof v.origin === 'string' ? originOf(v.origin) : undefined;
  if (v.origin !== undefined && origin === undefined) throw new FieldError('_tapedeck.origin', what);
  const out: { order?: ExportedOrder; origin?: string | null } = origin === undefined ? {} : { origin };
  if (repeat === undefined && origin !== undefined && run === undefined && test === undefined) return out;
  if (typeof repeat !== 'number' || !Number.isSafeInteger(repeat) || repeat < 0) throw new FieldError('_tapedeck.repeat', what);
  if (run !== undefined && typeof run !== 'string') throw new FieldError('_tapedeck.run', what);
  if (test !== undefined && typeof test !== 'string') throw new FieldError('_tapedeck.test', what);
  out.order = { repeat, ...(run !== undefined ? { run } : {}), ...(test !== undefined ? { test } : {}) };
  return out;
}

/**
 * Refuses a WebSocket session. Playwright's and Chrome's HARs keep one as the entry of the GET
 * that opened it (status 101, `_resourceType: "websocket"`) with its frames in
 * `_webSocketMessages`: imported as that GET, its messages would be lost without a word and the
 * recording would answer the connect as plain HTTP. A realtime session is recorded as a session
 * (src/realtime: its provider's protocol, each completed response a part, audio stored apart),
 * which the HAR's frames do not say enough to rebuild; `tapedeck serve` records it.
 */
function refuseWebSocket(x: Record<string, unknown>, url: string, r: Record<string, unknown>): void {
  const messages = x._webSocketMessages;
  const ws = Array.isArray(messages) || x._resourceType === 'websocket' || /^wss?:/i.test(url);
  if (!ws && r.status !== 101) return;
  if (!ws) throw new FieldError('response.status', 'is 101 (Switching Protocols): the connection became another protocol, which no HTTP recording replays');
  const n = Array.isArray(messages) ? messages.length : 0;
  throw new FieldError(
    Array.isArray(messages) ? '_webSocketMessages' : 'response.status',
    `is a WebSocket session (${n} message${n === 1 ? '' : 's'}${Array.isArray(messages) ? ' in _webSocketMessages' : ''}): realtime sessions are not imported from a HAR, and the GET that opened it would replay none of its messages; record the session with tapedeck serve --mode record (docs/realtime.md)`,
  );
}

/** Statuses whose answer has no body (RFC 9110), whatever size a HAR gives the resource. */
const NO_BODY_STATUS = new Set([204, 205, 304]);

/**
 * Refuses an answer saved shorter than the HAR says it was. `content.size` is the length of the
 * body decoded (HAR 1.2; Playwright sets it to the length of the bytes it saves, Chrome to the
 * resource's decoded size), so fewer bytes in the file are an answer cut short (a stream still
 * open when the HAR was written, an entry cut at an event boundary): replayed, it would pass for
 * the whole answer (an event stream ends early and cleanly, a JSON body does not parse).
 * Compared like with like: where the answer names a content coding and `size` is its encoded
 * `bodySize`, the writer measured the bytes on the wire (Polly.js's Content-Length, mitmproxy),
 * not the decoded body; and some writers measure the text they wrote (Polly.js without a
 * Content-Length: base64 text, or its JSON array of encoded chunks), so a text as long as
 * `size` is not taken for a cut body either.
 */
function refuseCutBody(method: string, r: Record<string, unknown>, content: Record<string, unknown>, headers: ImportHeaders, body: Uint8Array): void {
  const size = content.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= body.length) return;
  if (method === 'HEAD' || NO_BODY_STATUS.has(r.status as number)) return;
  const coding = headerValue(headers, 'content-encoding')?.trim().toLowerCase();
  if (coding && coding !== 'identity' && size === r.bodySize) return;
  if (typeof content.text === 'string' && Buffer.byteLength(content.text) >= size) return;
  const field = typeof content.text === 'string' ? 'response.content.text' : 'response.content._file';
  const what = isEventStream(headers) ? 'an event stream saved before it ended' : 'the body was saved cut short';
  throw new FieldError(
    field,
    `holds ${body.length} bytes of an answer content.size says had ${size} (${what}), and replayed it would pass for the whole answer; record the call again and save the HAR once the answer has ended, or record it with tapedeck (createFetch or tapedeck serve)`,
  );
}

/** Said of an entry that imports but was saved other than HAR 1.2 says (its place, method and URL path given). */
type EntryNote = (where: string, method: string, path: string) => void;

function entry(e: unknown, i: number, harDir: string | undefined, note?: EntryNote): Exchange {
  const { q, method, url } = requestOf(e, 'entry', 'url');
  const r = (e as Record<string, unknown>).response;
  // Before the bodies: a WebSocket entry has none to read (its content.size is -1).
  if (isObject(r)) refuseWebSocket(e as Record<string, unknown>, url, r);
  const reqHeaders = requestHeaders(q.headers, q.postData);
  const body = requestBody(q.postData, harDir);
  if (q.postData === undefined || q.postData === null) refuseUnsavedBody(reqHeaders);
  else if (body.length === 0) refuseEmptiedBody(reqHeaders, q.postData as Record<string, unknown>, q.bodySize);
  const request = { method, url, headers: reqHeaders, body };
  try {
    return answered(e as Record<string, unknown>, i, harDir, r, method, request, note);
  } catch (err) {
    // The request was read whole: a later repeat of it must not take this entry's turn (readEntries).
    if (err instanceof FieldError) err.request ??= request;
    throw err;
  }
}

/** The rest of {@link entry}, once its request is read: the answer and the entry's times and place. */
function answered(x: Record<string, unknown>, i: number, harDir: string | undefined, r: unknown, method: string, request: Exchange['request'], note?: EntryNote): Exchange {
  if (!isObject(r)) throw new FieldError('response', 'is missing (the request got no answer)');
  // Playwright keeps a request that failed (status -1) or was aborted mid-answer (the status and
  // headers it got, no body) and says so here: no answer reached the page whole, and an empty
  // body in its place would replay an answer nobody got.
  if (typeof r._failureText === 'string' && r._failureText !== '') throw new FieldError('response._failureText', `is ${JSON.stringify(r._failureText)}: the request failed or was aborted before its answer was whole, so there is no answer to replay`);
  const resHeaders = headersOf(r.headers, 'response.headers', responseNames);
  // The path only: a query or a user:password in the URL may hold a credential, and warnings go to logs.
  const resBody = responseBody(r.content, resHeaders, harDir, note && (() => note(`log.entries[${i}]`, method, URL.canParse(request.url) ? new URL(request.url).pathname : '')));
  const content = r.content as Record<string, unknown>;
  if (resHeaders['content-type'] === undefined && typeof content.mimeType === 'string' && content.mimeType !== '') resHeaders['content-type'] = content.mimeType;
  refuseCutBody(method, r, content, resHeaders, resBody);
  const t = isObject(x.timings) ? x.timings : {};
  const first = num(t.blocked) + num(t.dns) + num(t.connect) + num(t.send) + num(t.wait);
  const chunks = exportedChunks(r._chunks, resBody.length) ?? streamChunks(resHeaders, resBody, 0, num(t.receive));
  const started = startOf(x.startedDateTime);
  const ascii = asciiOf(content, resBody);
  const where = `log.entries[${i}]`;
  const res = response(r.status, r.statusText, resHeaders, resBody, 'response.status', chunks);
  const durationMs = typeof x.time === 'number' && x.time >= 0 ? x.time : first + num(t.receive);
  // Whole literals, not a spread of startedAt in the middle (which copies and adds member by member).
  const out: Exchange = started
    ? { where, index: i, request, response: res, answerAscii: ascii, startedAt: started, durationMs }
    : { where, index: i, request, response: res, answerAscii: ascii, durationMs };
  if (x._tapedeck !== undefined) {
    const { order, origin } = exported(x._tapedeck);
    if (order !== undefined) out.order = order;
    if (origin !== undefined) out.origin = origin;
  }
  return out;
}

/**
 * Reads a HAR file's entries as exchanges (bad entries listed, not thrown).
 *
 * @example
 * const { exchanges, bad } = readHar(readFileSync('network.har', 'utf8'), 'network.har')
 */
export function readHar(text: string, file: string, opts: { parsed?: unknown; dir?: string } = {}): ReadResult {
  const doc = opts.parsed ?? parseJsonFile(text, file, 'HAR file');
  if (!isObject(doc) || !isObject(doc.log)) throw badFile(file, 'HAR file', 'expected an object with a "log" member (HAR 1.2)');
  if (!Array.isArray(doc.log.entries)) throw badFile(file, 'HAR file', '"log.entries" must be an array');
  return harEntries(file, opts.dir, doc.log.entries as unknown[], harSalt(doc.log));
}

/**
 * A HAR's entries as exchanges, from its parsed entries (parsed as they are iterated, or
 * before). `dir`: where `_file` bodies are (default the HAR's own directory).
 *
 * @example
 * const { exchanges } = harEntries('network.har', undefined, JSON.parse(text).log.entries)
 */
export function harEntries(file: string, dir: string | undefined, items: Iterable<unknown>, salt?: string): ReadResult {
  const base = dir ?? (file === '-' ? undefined : dirname(file));
  // Polly.js answers identical requests by `_order`, not by their place in the file.
  const polly = new WeakMap<Exchange, PollyOrder>();
  // Filled as the entries are read (lazily): said once the tape is written.
  const warnings: string[] = [];
  const note: EntryNote = (where, method, path) =>
    void warnings.push(`${file}: ${where} (${method} ${path}): the answer's content.text is base64 of its gzip-compressed bytes (content-encoding: gzip), where HAR 1.2 keeps the body decoded; imported decoded, as the client read it.`);
  const read = readEntries(file, 'HAR', items, (i) => `log.entries[${i}]`, (e, i) => {
    const x = entry(e, i, base, note);
    const order = pollyOrderOf(e as Record<string, unknown>);
    if (order !== undefined) polly.set(x, order);
    return x;
  });
  const inFile = read.exchanges;
  read.exchanges = { [Symbol.iterator]: () => inPollyOrder(inFile, (x) => polly.get(x)) };
  if (salt !== undefined) read.salt = salt;
  read.warnings = warnings;
  return read;
}

/**
 * A HAR's entries as exchanges from its split text (see har-split.ts): each entry's text is
 * parsed as the entry is read, so nothing of it outlives its turn. An entry whose text is no
 * JSON throws its SyntaxError (the split was wrong or the file is not JSON: parse the whole).
 *
 * @example
 * const split = splitHar(text)
 * const { exchanges } = split ? readHarSplit(split, 'network.har') : readHar(text, 'network.har')
 */
export function readHarSplit(split: HarSplit, file: string, opts: { dir?: string } = {}): ReadResult {
  const n = split.spans.length / 2;
  return harEntries(
    file,
    opts.dir,
    {
      *[Symbol.iterator]() {
        for (let i = 0; i < n; i++) yield split.parse(i);
      },
    },
    split.salt,
  );
}
