/**
 * VCR.py and pytest-recording cassettes, read with a real YAML parser (the `yaml` package, YAML
 * 1.1 schema as PyYAML writes it). VCR.py's serializer (vcr/serialize.py, yamlserializer.py)
 * writes `{ interactions: [{ request, response }], version: 1 }`, keys sorted, so `version` is
 * the last line: a cassette without it was cut short and is refused.
 * - request: `method`, `uri`, `headers: { Name: [values] }`, `body`: null, a string, `!!binary`
 *   (bytes that are not UTF-8), or, in old cassettes, a pickled `_io.BytesIO`
 *   (`!!python/object/new:_io.BytesIO { state: !!python/tuple [bytes, ...] }`);
 * - response: `status: { code, message }`, `headers`, `body: { string }` where the string is
 *   text or `!!binary`, kept as sent: a gzip body (`Content-Encoding: gzip`) is `!!binary` gzip
 *   bytes and is decoded here. Old httpx cassettes write `status_code` and `content` (already
 *   decoded text) instead.
 * `!!python/unicode`, `!!python/str` and `!!python/tuple` are read as the values they name, as
 * VCR.py's own safe loader does; any other `!!python/...` tag is refused (it would run code in
 * Python).
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { addHeader, badFile, decodedBody, FieldError, isObject, readEntries, requestOf, response, streamChunks, utf8Bytes, type Exchange, type ImportHeaders, type ReadResult } from './exchange.ts';
import { isBytes } from '../../bytes.ts';

const py = (t: string) => `tag:yaml.org,2002:python/${t}`;

/**
 * The yaml package, loaded on the first cassette read: it is ~30 ms of the start of every
 * process that imports it, and only a VCR.py import needs it. Its Node entry is CommonJS, so a
 * require here gives the module an import would.
 */
let yamlModule: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

/** The Python tags VCR.py's safe loader constructs; collections stay what they are. */
const same = <T>(v: T): T => v;
function pythonTags({ YAMLMap, YAMLSeq }: typeof Yaml): (Yaml.ScalarTag | Yaml.CollectionTag)[] {
  return [
    { tag: py('unicode'), resolve: same },
    { tag: py('str'), resolve: same },
    { tag: py('tuple'), collection: 'seq', nodeClass: YAMLSeq, resolve: same },
    { tag: py('object/new:_io.BytesIO'), collection: 'map', nodeClass: YAMLMap, resolve: same },
    { tag: py('object/apply:builtins.iter'), collection: 'map', nodeClass: YAMLMap, resolve: same },
  ];
}

function headersOf(v: unknown, field: string): ImportHeaders {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new FieldError(field, 'must be a mapping of header names to lists of values');
  const h: ImportHeaders = {};
  for (const [name, values] of Object.entries(v)) {
    const list = Array.isArray(values) ? values : [values];
    for (const x of list) {
      if (typeof x !== 'string' && typeof x !== 'number') throw new FieldError(`${field}.${name}`, 'must be a list of strings');
      addHeader(h, name, String(x));
    }
  }
  return h;
}

/** Bytes of a cassette body value: text, `!!binary`, a BytesIO's state, or a list of chunks. */
function bytesOf(v: unknown, field: string): Uint8Array {
  if (v === null || v === undefined) return new Uint8Array(0);
  if (typeof v === 'string') return utf8Bytes(v);
  if (isBytes(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return concat(v.map((x, i) => bytesOf(x, `${field}[${i}]`)));
  if (isObject(v) && Array.isArray(v.state)) return bytesOf(v.state[0], `${field}.state[0]`);
  if (isObject(v) && Array.isArray(v.args)) return bytesOf(v.args[0], `${field}.args[0]`);
  throw new FieldError(field, `must be text or !!binary, found ${typeof v === 'object' ? 'a mapping' : typeof v}`);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function interaction(x: unknown, i: number): Exchange {
  const { q, method, url } = requestOf(x, 'interaction', 'uri');
  const reqHeaders = headersOf(q.headers, 'request.headers');
  const reqBody = decodedBody(reqHeaders, bytesOf(q.body, 'request.body'), 'request.body');
  delete reqHeaders['content-encoding'];
  const request = { method, url, headers: reqHeaders, body: reqBody };
  try {
    return answered((x as Record<string, unknown>).response, i, request);
  } catch (err) {
    // The request was read whole: a later repeat of it must not take this interaction's turn (readEntries).
    if (err instanceof FieldError) err.request ??= request;
    throw err;
  }
}

/** The rest of {@link interaction}, once its request is read: the answer. */
function answered(r: unknown, i: number, request: Exchange['request']): Exchange {
  if (!isObject(r)) throw new FieldError('response', 'is missing');
  const resHeaders = headersOf(r.headers, 'response.headers');
  let body: Uint8Array;
  if (r.content !== undefined && r.body === undefined) {
    // Old httpx cassettes: `content` is the decoded text.
    body = bytesOf(r.content, 'response.content');
  } else {
    if (!isObject(r.body) || !('string' in r.body)) throw new FieldError('response.body', 'must be { string: ... }');
    body = decodedBody(resHeaders, bytesOf(r.body.string, 'response.body.string'), 'response.body.string');
  }
  const status = isObject(r.status) ? r.status.code : (r.status_code ?? r.status);
  const message = isObject(r.status) ? r.status.message : undefined;
  return {
    where: `interactions[${i}]`,
    index: i,
    request,
    response: response(status, message, resHeaders, body, isObject(r.status) ? 'response.status.code' : 'response.status', streamChunks(resHeaders, body)),
  };
}

/**
 * Where a YAML problem is, for its message: line and column (counted here: the parser gives them
 * only with its pretty errors, which quote the source), the interaction it is in (VCR.py starts
 * each with `- request:` at the left margin), and whether it is the end of the file, where a
 * cassette cut short breaks.
 *
 * @example
 * const cut = 'interactions:\n- request:\n    body: \'{"a'
 * yamlPlace(cut, cut.length)
 * // { line: 3, col: 15, place: ' (interactions[0]; the file ends early: truncated?)' }
 */
function yamlPlace(text: string, offset: number): { line: number; col: number; place: string } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - (before.lastIndexOf('\n') + 1) + 1;
  const entry = (before.match(/^- request:/gm) ?? []).length - 1;
  const parts = [entry >= 0 ? `interactions[${entry}]` : '', offset >= text.trimEnd().length ? 'the file ends early: truncated?' : ''].filter((x) => x !== '');
  return { line, col, place: parts.length ? ` (${parts.join('; ')})` : '' };
}

/**
 * Reads a VCR.py / pytest-recording YAML cassette (or VCR.py's JSON serializer's output) as
 * exchanges (bad interactions listed, not thrown).
 *
 * @example
 * const { exchanges } = readVcr(readFileSync('cassettes/test_chat.yaml', 'utf8'), 'test_chat.yaml')
 */
export function readVcr(text: string, file: string): ReadResult {
  const format = 'VCR.py cassette';
  const lib = yaml();
  const python = pythonTags(lib);
  const doc = lib.parseDocument(text, { schema: 'yaml-1.1', uniqueKeys: true, prettyErrors: false, customTags: (tags: Yaml.Tags) => [...tags, ...python] });
  const problem = doc.errors[0] ?? doc.warnings.find((w) => /tag/i.test(w.message));
  if (problem) {
    const { line, col, place } = yamlPlace(text, problem.pos[0]);
    const what = /Unresolved tag/i.test(problem.message) ? `${problem.message.split('\n')[0]} (VCR.py reads only !!binary, !!python/unicode, !!python/str and !!python/tuple; other Python tags would run code)` : problem.message.split('\n')[0];
    throw badFile(file, format, `line ${line}, column ${col}${place}: ${what}`, { offset: problem.pos[0], line });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    throw badFile(file, format, (e as Error).message);
  }
  if (!isObject(data) || !Array.isArray(data.interactions)) throw badFile(file, format, 'expected a mapping with an "interactions" list');
  // VCR.py writes `version` after `interactions` (sorted keys): without it the file was cut.
  if (data.version === undefined) throw badFile(file, format, 'it has no "version" (VCR.py writes "version: 1" as the last line, so the file ends early: truncated?)');
  if (data.version !== 1) throw badFile(file, format, `cassette version ${JSON.stringify(data.version)} is not 1 (only VCR.py 1.x+ cassettes are read)`);
  return readEntries(file, format, data.interactions as unknown[], (i) => `interactions[${i}]`, interaction);
}
