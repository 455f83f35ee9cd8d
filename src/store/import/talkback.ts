/**
 * talkback tapes (npm `talkback` 4.x, an HTTP record/replay proxy), read as talkback 4.2 writes
 * and reads them (its tape-store.js, tape-renderer.js, tape.js, utils/media-type.js):
 * - one tape per request, a JSON5 file (`JSON5.stringify(tape, null, 4)`) named
 *   `unnamed-<Date.now()>.json5` in the `path` directory (`./tapes/`), or as the
 *   `tapeNameGenerator` option names it, in directories below it too;
 * - `meta`: `createdAt` (the Date, written as its ISO text), `host` (the upstream it proxied
 *   to, the `host` option: the URL is `host` + `req.url`), and per side `reqHumanReadable` /
 *   `resHumanReadable` (the body is written as text, or as the JSON value when the content
 *   type is JSON) and `reqUncompressed` / `resUncompressed` (the body was decoded from its
 *   gzip, deflate or br `content-encoding` to be written so; the header is kept);
 * - `req`: `url` (the path and query the client called), `method`, `headers` (as Node received
 *   them: lowercase names, without `host` and `content-length`), `body`; a JSON request body
 *   was parsed and indented before it was written;
 * - `res`: `status`, `headers` (node-fetch's `raw()`: lowercase names, a list of values each),
 *   `body`. A body that is not human-readable (an event stream, an image, a content type
 *   talkback does not list, a coding it cannot undo) is base64 of the bytes as received, still
 *   content-encoded.
 *
 * Each body becomes the bytes talkback itself would answer or send with (tape-renderer's
 * fromStore): text as it is, a JSON value indented by 2 as talkback writes it back, base64
 * decoded; then any coding still on it is undone, so the tape keeps what the client read.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { TapedeckError } from '../../errors.ts';
import { addHeader, badFile, base64Bytes, decodedBody, FieldError, firstNonUtf8, headerValue, notUtf8Byte, isObject, readEntries, response, streamChunks, utf8Bytes, type Exchange, type ImportHeaders, type ReadResult } from './exchange.ts';
import { Json5SyntaxError, parseJson5 } from './json5.ts';

const FORMAT = 'talkback tape';
const DIR_FORMAT = 'talkback tape directory';

/**
 * Whether a parsed value is a talkback tape: an object with `meta` and `req` objects (a tape
 * missing `res` is still one, and is refused for it as a bad entry).
 *
 * @example
 * isTalkbackTape({ meta: { host: 'https://api.openai.com' }, req: { url: '/v1/models' }, res: {} }) // true
 */
export function isTalkbackTape(v: unknown): v is Record<string, unknown> & { meta: Record<string, unknown>; req: Record<string, unknown> } {
  return isObject(v) && isObject(v.meta) && isObject(v.req);
}

/** The content types talkback writes as JSON values (utils/media-type.js, `jsonTypes`). */
const JSON_TYPE = /^(?:application\/(?:json|graphql|x-amz-json-1\.[01])|application\/[^;\s]*\+json)$/;

/** The media type of a header map's content-type, lowercase, without parameters. */
function mediaType(h: ImportHeaders): string {
  return (headerValue(h, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

function headersOf(v: unknown, field: string): ImportHeaders {
  const h: ImportHeaders = {};
  if (v === undefined || v === null) return h;
  if (!isObject(v)) throw new FieldError(field, 'must be an object of header names to values');
  for (const [name, x] of Object.entries(v)) {
    for (const y of Array.isArray(x) ? x : [x]) {
      if (typeof y !== 'string' && typeof y !== 'number') throw new FieldError(`${field}.${name}`, 'must be a string or a list of strings');
      addHeader(h, name, String(y));
    }
  }
  return h;
}

/**
 * The bytes of a request or response body as talkback reads them back (tape-renderer.js,
 * prepareBody), with any content-encoding left on them undone. `side` is `req` or `res`, the
 * prefix of its `meta` flags.
 */
function bodyOf(meta: Record<string, unknown>, side: 'req' | 'res', headers: ImportHeaders, raw: unknown): Uint8Array {
  const field = `${side}.body`;
  const coding = headerValue(headers, 'content-encoding')?.trim().toLowerCase();
  const decodedByTalkback = meta[`${side}Uncompressed`] === true;
  // talkback reads a body as text only when it is flagged so and holds no coding (left or undone).
  if (meta[`${side}HumanReadable`] === true && (decodedByTalkback || !coding || coding === 'identity')) {
    if (typeof raw === 'string') return utf8Bytes(raw);
    if (raw !== undefined && JSON_TYPE.test(mediaType(headers))) return utf8Bytes(JSON.stringify(raw, null, 2));
    throw new FieldError(field, `must be text${raw === undefined ? '' : ` or, with a JSON content type, a JSON value (content-type is ${JSON.stringify(headerValue(headers, 'content-type') ?? 'missing')})`}, found ${raw === undefined ? 'nothing' : raw === null ? 'null' : typeof raw}`);
  }
  if (typeof raw !== 'string') {
    throw new FieldError(field, `must be base64 text (meta.${side}HumanReadable is not true), found ${raw === undefined ? 'nothing' : raw === null ? 'null' : typeof raw} (talkback writes '' for an empty body)`);
  }
  // As received: still in its coding when it has one (an event stream sent gzip).
  return decodedBody(headers, base64Bytes(raw, field), field);
}

/** A tape's URL: `meta.host` (trailing slashes off, as a client's base URL is joined) and `req.url`; the path alone when the tape names no host. */
function urlOf(meta: Record<string, unknown>, path: string): string {
  const host = meta.host;
  if (host === undefined || host === '') return path;
  if (typeof host !== 'string' || !URL.canParse(host)) throw new FieldError('meta.host', `${JSON.stringify(host) ?? 'undefined'} is not an absolute URL (talkback's host option, such as "https://api.openai.com")`);
  return `${host.replace(/\/+$/, '')}${path}`;
}

/** One tape as an exchange; `where` is its file, as messages name it. */
function tapeExchange(t: Record<string, unknown> & { meta: Record<string, unknown>; req: Record<string, unknown> }, i: number, where: string): Exchange {
  const { meta, req } = t;
  if (typeof req.method !== 'string' || req.method === '') throw new FieldError('req.method', 'is missing');
  if (typeof req.url !== 'string' || !req.url.startsWith('/')) throw new FieldError('req.url', `${JSON.stringify(req.url) ?? 'undefined'} is not a path starting with / (talkback records the path the client called)`);
  const url = urlOf(meta, req.url);
  const reqHeaders = headersOf(req.headers, 'req.headers');
  const reqBody = bodyOf(meta, 'req', reqHeaders, req.body);
  // The body is decoded: a coding named beside it would be undone twice.
  delete reqHeaders['content-encoding'];
  const request = { method: req.method.toUpperCase(), url, headers: reqHeaders, body: reqBody };
  try {
    const res = t.res;
    if (!isObject(res)) throw new FieldError('res', res === undefined ? 'is missing' : 'must be an object with status, headers and body');
    const resHeaders = headersOf(res.headers, 'res.headers');
    const body = bodyOf(meta, 'res', resHeaders, res.body);
    const created = typeof meta.createdAt === 'string' ? Date.parse(meta.createdAt) : NaN;
    return {
      where,
      index: i,
      request,
      response: response(res.status, undefined, resHeaders, body, 'res.status', streamChunks(resHeaders, body)),
      ...(Number.isNaN(created) ? {} : { startedAt: new Date(created).toISOString() }),
    };
  } catch (err) {
    // The request was read whole: a later repeat of it must not take this tape's turn (readEntries).
    if (err instanceof FieldError) err.request ??= request;
    throw err;
  }
}

/** A tape file's text parsed, or why it is none: for a tape file imported alone. */
function parseTapeFile(text: string, file: string): unknown {
  try {
    return parseJson5(text);
  } catch (e) {
    if (!(e instanceof Json5SyntaxError)) throw e;
    const cut = e.offset >= text.trimEnd().length ? ' (the file ends early: truncated?)' : '';
    throw badFile(file, FORMAT, `invalid JSON5 at line ${e.line}, column ${e.column}: ${e.what}${cut}`, { offset: Buffer.byteLength(text.slice(0, e.offset)), line: e.line });
  }
}

/**
 * Reads one talkback tape file (JSON5) as a source of one exchange (a bad tape listed, not
 * thrown). `parsed` is the tape when the caller parsed the text on the way (detection).
 *
 * @example
 * const { exchanges } = readTalkbackTape(readFileSync('tapes/unnamed-1764690000000.json5', 'utf8'), 'tapes/unnamed-1764690000000.json5')
 */
export function readTalkbackTape(text: string, file: string, opts: { parsed?: unknown } = {}): ReadResult {
  const doc = opts.parsed ?? parseTapeFile(text, file);
  if (!isTalkbackTape(doc)) throw badFile(file, FORMAT, 'expected a talkback tape, an object with meta, req and res');
  const where = basename(file);
  return readEntries(file, FORMAT, [doc], () => where, (t, i) => tapeExchange(t, i, where));
}

/** Sorts names as their numbers count (`unnamed-9` before `unnamed-10`), the same on every machine. */
const byName = new Intl.Collator('en', { numeric: true }).compare;

/**
 * The `*.json5` files in a directory and the directories below it, as paths relative to it
 * (with `/`), each directory's names in order. Directories reached by a symbolic link are not
 * entered (a link back up would never end); linked files are read.
 *
 * @example
 * tapeFiles('tapes') // ['unnamed-1764690000000.json5', 'chat/unnamed-1764690000100.json5']
 */
export function tapeFiles(dir: string, under = ''): string[] {
  const out: string[] = [];
  const names = readdirSync(join(dir, under), { withFileTypes: true }).sort((a, b) => byName(a.name, b.name));
  for (const d of names) {
    const rel = under === '' ? d.name : `${under}/${d.name}`;
    if (d.isDirectory()) out.push(...tapeFiles(dir, rel));
    else if (d.name.endsWith('.json5') && (d.isFile() || (d.isSymbolicLink() && statSync(join(dir, rel), { throwIfNoEntry: false })?.isFile() === true))) out.push(rel);
  }
  return out;
}

/**
 * Whether a directory is a talkback tape directory: it holds `*.json5` files (in it or below)
 * and no `*.json` file of its own (a directory of JSON recordings, which import reads too).
 *
 * @example
 * if (isTalkbackDirectory('tapes')) await importRecordings('tapes', 'tapes.tape')
 */
export function isTalkbackDirectory(dir: string): boolean {
  if (readdirSync(dir).some((n) => n.endsWith('.json'))) return false;
  return tapeFiles(dir).length > 0;
}

/** One tape file of a directory as an exchange; a file that is no tape is that entry's fault. */
function fileExchange(dir: string, rel: string, i: number): Exchange {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, rel));
  } catch (e) {
    throw new FieldError('(tape)', `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  // Decoded as is, a byte that is no UTF-8 (a Latin-1 `é`) would be imported as U+FFFD.
  const bad = firstNonUtf8(bytes);
  if (bad >= 0) throw new FieldError('(tape)', `is not UTF-8 text: ${notUtf8Byte(bytes, bad)} (convert the file to UTF-8: iconv -f LATIN1 -t UTF-8)`);
  const text = bytes.toString('utf8');
  let doc: unknown;
  try {
    doc = parseJson5(text);
  } catch (e) {
    if (!(e instanceof Json5SyntaxError)) throw e;
    throw new FieldError('(tape)', `is not valid JSON5: ${e.message}${e.offset >= text.trimEnd().length ? ' (the file ends early: truncated?)' : ''}`);
  }
  if (!isTalkbackTape(doc)) throw new FieldError('(tape)', 'is not a talkback tape (an object with meta, req and res)');
  return tapeExchange(doc, i, rel);
}

/**
 * Reads a directory talkback recorded to (its `path` option): every `*.json5` tape in it and
 * below, in file-name order (talkback's `unnamed-<ms>` names are the order it recorded in), one
 * exchange each, read as they are iterated. Each tape is an entry named by its path in the
 * directory; a file that does not parse is a bad entry like any other. A directory without a
 * tape is E_IMPORT_ENTRY: an empty tape would replay nothing.
 *
 * @example
 * const read = readTalkbackDir('test/tapes')
 * for (const x of read.exchanges) console.log(x.where, x.request.method, x.request.url)
 */
export function readTalkbackDir(dir: string): ReadResult {
  const files = tapeFiles(dir);
  // A directory of JSON recordings (one request and response per *.json file) is read by
  // importRecordingsDir, which `tapedeck import` picks for it: named, not "no talkback tapes".
  const json = files.length === 0 ? readdirSync(dir).filter((n) => n.endsWith('.json')).length : 0;
  if (json > 0) {
    throw new TapedeckError('E_IMPORT_FORMAT', `${dir} holds ${json} *.json file${json === 1 ? '' : 's'} and no talkback tapes (*.json5): importRecordings reads one recording file or talkback's tape directory, not a directory of JSON recordings; no tape written.`, {
      file: dir,
      hint: `Import a directory of JSON recordings with importRecordingsDir('${dir}', '<tape>') from llm-tapedeck/store, or tapedeck import ${dir} <tape> (docs/migrate.md).`,
    });
  }
  if (files.length === 0) {
    throw new TapedeckError('E_IMPORT_ENTRY', `${dir}: the directory holds no talkback tapes (*.json5 files, in it or below it), and an empty tape would replay nothing; no tape written.`, {
      file: dir,
      entries: 0,
      hint: "Check that this is the directory talkback records to (its path option, ./tapes/ by default): talkback writes a tape only once it has recorded a request.",
    });
  }
  return readEntries(dir, DIR_FORMAT, files, (i) => files[i]!, (rel, i) => fileExchange(dir, rel, i));
}
