/**
 * What every recording format's reader gives the import: plain HTTP exchanges, in the source's
 * order, with bodies decoded (HAR's base64, VCR's `!!binary` and gzip, nock's hex chunks) but
 * nothing keyed, redacted or stored yet. The proxy layer keys and stores them exactly as it
 * records a live exchange (src/proxy/import.ts), so an imported recording is found by the same
 * request a recorded one is.
 *
 * A reader never throws for one bad entry: it lists it in `bad` (file, entry, field, what is
 * wrong), so the caller decides between refusing the whole import and `--skip-bad`. A file that
 * is not the format at all (invalid JSON or YAML, a truncated file) throws.
 */
import { isUtf8 } from 'node:buffer';
import { canonicalizeJSON } from '../../core/index.ts';
import { TapedeckError } from '../../errors.ts';
import { decodeContentEncoding } from '../http-body.ts';
import { lastTest } from '../last-test.ts';
import type { HttpRecord } from '../records.ts';
import { MAX_RECORD_BYTES } from '../tape-codec.ts';
import { withoutSecrets } from '../shown-secrets.ts';

/** Header map as readers give it: lowercase names, repeated headers as arrays. */
export type ImportHeaders = Record<string, string | string[]>;

/** One request and its answer, read from another tool's recording. */
export interface Exchange {
  /** Its place in the source, for messages: `entries[3]`, `interactions[0]`. */
  where: string;
  /** 0-based index among the source's entries. */
  index: number;
  request: {
    method: string;
    /** Absolute URL, or path and query. */
    url: string;
    headers: ImportHeaders;
    /** Decoded (no Content-Encoding left to undo). */
    body: Uint8Array;
  };
  /** Body decoded; `chunks` for a stream (one per server-sent event). */
  response: HttpRecord['response'];
  /** The response body as the source gave it as text, when every character is ASCII (one byte a character). */
  answerAscii?: string | undefined;
  /** Time the request was sent, when the source says, as Date#toISOString writes it. */
  startedAt?: string;
  /** Milliseconds the exchange took, when the source says. */
  durationMs?: number;
  /**
   * A tapedeck export's record place and origin (a HAR entry's `_tapedeck`): its `repeat` among
   * its request's recordings, and the run and test that made it. Absent: numbered in file order.
   */
  order?: ExportedOrder;
  /**
   * Where the request went when its URL does not say (a tapedeck HAR export's `_tapedeck.origin`,
   * written where the entry's URL is not on its recording's origin): that origin, or null for a
   * recording that named none (it answers any host). Absent: the URL's origin, if it has one.
   */
  origin?: string | null;
}

/** See {@link Exchange.order}. */
export interface ExportedOrder {
  repeat: number;
  run?: string;
  test?: string;
}

/** An entry that cannot become a recording, and why (a matching rule is not a request). */
export interface Unkeyable {
  where: string;
  reason: string;
}

/** What a reader found in one source. */
export interface ReadResult {
  /** The format's name as the import reports it (`HAR`, `VCR.py cassette`, ...). */
  format: string;
  /** The source, as messages name it. */
  file: string;
  /**
   * The good entries, read one by one as they are iterated (once), so an import keeps no more
   * than one entry's exchange at a time: `bad` and `unkeyable` are whole only after that.
   */
  exchanges: Iterable<Exchange>;
  /** Entries that are malformed: the import refuses the file for them unless told to skip. */
  bad: TapedeckError[];
  /** Entries that are well formed but hold no request to key (mock-server matching rules). */
  unkeyable: Unkeyable[];
  /** Entries read so far, good or bad (all of them once `exchanges` is iterated). */
  entries: number;
  /** Where the source lists its entries (`log.entries`, `interactions`; empty for a top-level array), for messages. */
  list: string;
  /**
   * The redaction salt the source's keyed masks were made under, when it names one (a HAR that
   * tapedeck exported): the import writes its tape under it, so those masks match again.
   */
  salt?: string;
  /**
   * What the source lost that the import cannot give back but that does not stop it (nock
   * recorded without request headers): said once the tape is written, as the import's warnings.
   */
  warnings?: string[];
  /**
   * The bad entries whose request was read whole (see {@link FieldError}), in source order, as
   * they are read: the import keys them to find later repeats that only the request key makes
   * identical (a volatile member that differs), which {@link readEntries} cannot tell apart.
   */
  leftOut?: { request: Exchange['request']; error: TapedeckError }[];
}

/** The flag that keeps the good entries of a file with bad ones. */
export const SKIP_BAD_HINT = 'Fix or remove that entry, or keep the good entries with --skip-bad (option skipBad: true); the bad ones are then listed.';

/**
 * A malformed entry: names the file, the entry (index and place) and the field. `details.where`
 * and `details.problem` keep the place and what is wrong apart, for lists that name the place
 * once (the skipped entries of an import).
 *
 * @example
 * badEntry('rec.har', 3, 'log.entries[3]', 'response.status', 'is missing')
 */
export function badEntry(file: string, index: number, where: string, field: string, what: string): TapedeckError {
  const shown = withoutSecrets(what);
  return new TapedeckError('E_IMPORT_ENTRY', `${file}: entry ${index} (${where}), field ${field}: ${shown}.`, { file, entry: index, field, path: `${where}.${field}`, where, problem: shown, hint: SKIP_BAD_HINT });
}

/** A file that cannot be read as its format at all (syntax, truncation, wrong shape). */
export function badFile(file: string, format: string, what: string, details: Record<string, unknown> = {}): TapedeckError {
  return new TapedeckError('E_IMPORT_PARSE', `${file} is not a readable ${format}: ${what}; no tape written.`, {
    file,
    ...details,
    hint: `Check that the file is whole (a truncated or hand-edited file is refused), or give the format with --from.`,
  });
}

/**
 * Thrown inside a reader for one entry; turned into {@link badEntry} by {@link readEntries}.
 * `request` is the entry's request when it was read whole before the fault (a HAR entry whose
 * answer is bad): a later entry repeating it would take its turn if it were left out.
 */
export class FieldError extends Error {
  request?: Exchange['request'];
  constructor(
    readonly field: string,
    readonly what: string,
  ) {
    super(`${field}: ${what}`);
  }
}

/**
 * The entries of a source as a {@link ReadResult}: each is read with `read` as `exchanges` is
 * iterated, and the bad ones are collected instead of stopping at the first. Lazily, so that a
 * bulk import holds one exchange at a time: holding them all made every young-generation
 * garbage collection during the read copy them (bench/import.mjs).
 */
export function readEntries<T>(file: string, format: string, items: Iterable<T>, whereOf: (i: number) => string, read: (item: T, i: number) => Exchange | Unkeyable | undefined): ReadResult {
  const out: ReadResult = { format, file, exchanges: [], bad: [], unkeyable: [], entries: 0, list: whereOf(0).replace(/\[0\]$/, '') };
  const once = { started: false };
  out.exchanges = { [Symbol.iterator]: () => readEach(once, out, items, whereOf, read) };
  return out;
}

/**
 * {@link readEntries}' iteration. A generator function of the module's, not one made per call:
 * the objects of each generator function have a map of their own, and the import's loop, which
 * calls next() on them, was compiled again for every new one.
 */
function* readEach<T>(once: { started: boolean }, out: ReadResult, items: Iterable<T>, whereOf: (i: number) => string, read: (item: T, i: number) => Exchange | Unkeyable | undefined): Generator<Exchange> {
  if (once.started) throw new Error('readEntries: the exchanges of a source are read once');
  once.started = true;
  const file = out.file;
  // Bad entries whose request was read, which a later repeat of it must not replace (made at the first).
  let left: LeftOut | undefined;
  // The first of them a later entry repeats, and that entry: the import is refused for it.
  let refusal: { bad: TapedeckError; later: Exchange } | undefined;
  let i = -1;
  for (const item of items) {
    i++;
    out.entries++;
    let r: Exchange | Unkeyable | undefined;
    try {
      r = read(item, i);
    } catch (e) {
      if (e instanceof FieldError) out.bad.push(badEntry(file, i, whereOf(i), e.field, e.what));
      else if (e instanceof TapedeckError) out.bad.push(badEntry(file, i, whereOf(i), String(e.details.field ?? 'body'), e.message.replace(/\.$/, '')));
      else throw e;
      if (e instanceof FieldError && e.request !== undefined) {
        (left ??= new LeftOut()).add(e.request, out.bad[out.bad.length - 1]!);
        (out.leftOut ??= []).push({ request: e.request, error: out.bad[out.bad.length - 1]! });
      }
      continue;
    }
    if (r === undefined) continue;
    if ('request' in r) {
      // An exchange that names its own turn (a tapedeck HAR export's `repeat`) keeps it whatever is left out.
      const taken = left === undefined || r.order !== undefined || refusal !== undefined ? undefined : left.repeated(r.request);
      if (taken !== undefined) refusal = { bad: taken, later: r };
      yield r;
    } else out.unkeyable.push(r);
  }
  // Once every entry is read, as a source that does not parse is said first (a HAR read entry by
  // entry falls back to the whole file's parse when its end was not reached: har-split.ts).
  if (refusal !== undefined) throw turnTaken(refusal.bad, refusal.later, out.bad.length);
}

/**
 * The requests of the bad entries read so far, by method and URL. Identical requests are answered
 * in source order, each recording its call's turn (docs/migrate.md): a bad entry left out by
 * --skip-bad would give its turn to the next repeat of its request, which would then answer the
 * call before its own (a wrong answer, served without a word), and every later repeat would move
 * up too. A tape has no record to stand for an entry that has no answer, so such an entry is not
 * left out: the import is refused (see {@link turnTaken}).
 *
 * Requests are compared as the source gives them, the body as canonical JSON when it is JSON (key
 * order and spacing do not change a request key): a repeat the request key alone makes identical
 * (a volatile member that differs, such as `user`) is told apart by the import, which keys the
 * bad entries' requests (`ReadResult.leftOut`, src/proxy/import.ts).
 */
class LeftOut {
  private readonly byUrl = new Map<string, { body: Uint8Array; canonical: string | undefined; error: TapedeckError }[]>();

  add(request: Exchange['request'], error: TapedeckError): void {
    const k = `${request.method} ${request.url}`;
    let list = this.byUrl.get(k);
    if (list === undefined) this.byUrl.set(k, (list = []));
    list.push({ body: request.body, canonical: undefined, error });
  }

  /** The error of the first bad entry `request` repeats, or undefined. */
  repeated(request: Exchange['request']): TapedeckError | undefined {
    const list = this.byUrl.get(`${request.method} ${request.url}`);
    if (list === undefined) return undefined;
    // This request's canonical body, made once and only when no body is the same byte for byte ('' for no JSON).
    let mine: string | undefined;
    for (const x of list) {
      if (Buffer.from(x.body.buffer, x.body.byteOffset, x.body.byteLength).equals(request.body)) return x.error;
      mine ??= canonicalText(request.body) ?? '';
      x.canonical ??= canonicalText(x.body) ?? '';
      if (mine !== '' && mine === x.canonical) return x.error;
    }
    return undefined;
  }
}

/** A body's canonical JSON text (RFC 8785), or undefined when it is no JSON. */
function canonicalText(body: Uint8Array): string | undefined {
  if (body.length === 0) return undefined;
  try {
    return Buffer.from(canonicalizeJSON(body)).toString('latin1');
  } catch {
    return undefined;
  }
}

/**
 * E_IMPORT_ENTRY for a bad entry (`bad`, as {@link badEntry} made it) that a later good entry
 * (`later`) repeats: --skip-bad cannot leave it out without moving the repeats up a turn.
 */
export function turnTaken(bad: TapedeckError, later: Exchange, badCount: number): TapedeckError {
  const d = bad.details;
  const others = badCount - 1;
  const more = others > 0 ? ` (${others} other bad entr${others === 1 ? 'y' : 'ies'} in the file)` : '';
  return new TapedeckError(
    'E_IMPORT_ENTRY',
    `${String(d.file)}: entry ${String(d.entry)} (${String(d.where)}), field ${String(d.field)}: ${String(d.problem)}; and entry ${later.index} (${later.where}) repeats its request: identical requests are answered in turn, so with this entry left out (--skip-bad) the repeats would move up a turn and each answer the call before its own; it is not skipped${more}; no tape written.`,
    {
      ...d,
      repeat: later.index,
      hint: `Record the call again so that the entry holds a whole answer, or remove entry ${String(d.entry)} together with the later repeats of its request (entry ${later.index} and after) from the file, then import again.`,
    },
  );
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The last URL found absolute: a recording mostly calls one or a few URLs, and parsing one costs more than the rest of the check. */
let lastUrl = '';

/**
 * An entry's request object with its method and absolute URL checked; `urlField` is the
 * format's name for the URL (`url` in HAR, `uri` in VCR.py).
 */
export function requestOf(entry: unknown, what: string, urlField: string): { q: Record<string, unknown>; method: string; url: string } {
  if (!isObject(entry)) throw new FieldError(`(${what})`, 'must be an object with request and response');
  const q = entry.request;
  if (!isObject(q)) throw new FieldError('request', 'is missing');
  if (typeof q.method !== 'string' || q.method === '') throw new FieldError('request.method', 'is missing');
  const url = q[urlField];
  if (typeof url !== 'string' || (url !== lastUrl && !URL.canParse(url))) throw new FieldError(`request.${urlField}`, `${JSON.stringify(url) ?? 'undefined'} is not an absolute URL`);
  lastUrl = url;
  return { q, method: q.method.toUpperCase(), url };
}

/**
 * UTF-8 bytes of a string: Buffer's encoder (small strings share a pooled slab, where
 * TextEncoder allocates a buffer each), as a plain Uint8Array view like TextEncoder gives.
 */
export const utf8Bytes = (s: string): Uint8Array => {
  const b = Buffer.from(s, 'utf8');
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
};

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** Bytes of a base64 string; a FieldError for anything that is not base64 (Node would skip it silently). */
export function base64Bytes(s: string, field: string): Uint8Array {
  const compact = s.replace(/\s+/g, '');
  if (!BASE64.test(s) || compact.length % 4 === 1) throw new FieldError(field, 'is not valid base64');
  return new Uint8Array(Buffer.from(compact, 'base64'));
}

/** Adds a header to a map, folding the name to lowercase and repeats into an array. */
export function addHeader(h: ImportHeaders, name: string, value: string): void {
  addLowercaseHeader(h, name.toLowerCase(), value);
}

/** {@link addHeader} for a name already lowercase. */
export function addLowercaseHeader(h: ImportHeaders, k: string, value: string): void {
  const had = h[k];
  if (had === undefined) h[k] = value;
  else h[k] = Array.isArray(had) ? [...had, value] : [had, value];
}

/** The first value of a header. */
export function headerValue(h: ImportHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Largest decoded body accepted from a recording: what one tape record holds. Recording keeps an
 * answer whatever its size (createFetch and the proxy limit request bodies, never answers), so a
 * decoded answer is refused only where no record could hold it; the limit still stops a small
 * compressed body that decodes without end (a decompression bomb) from filling memory.
 */
const MAX_DECODED = MAX_RECORD_BYTES;

/**
 * A body with its Content-Encoding undone, for formats that keep the bytes as sent (VCR.py,
 * nock, Polly.js's chunks of a content-encoded answer in a HAR). A body that does not start
 * like its coding says (some tools store it decoded and keep the header) is taken as already
 * decoded.
 */
export function decodedBody(headers: ImportHeaders, body: Uint8Array, field: string): Uint8Array {
  const coding = headerValue(headers, 'content-encoding')?.toLowerCase().trim();
  if (!coding || coding === 'identity' || body.length === 0) return body;
  if ((coding === 'gzip' || coding === 'x-gzip') && !(body[0] === 0x1f && body[1] === 0x8b)) return body;
  let decoded: Uint8Array;
  try {
    decoded = decodeContentEncoding({ 'content-encoding': coding }, body, MAX_DECODED);
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    // Too large is no fault of the bytes: said as such, not as a body cut short.
    if (e.code === 'E_BODY_TOO_LARGE') throw new FieldError(field, `decodes (${coding}, content-encoding) to more than ${MAX_DECODED / (1024 * 1024)} MiB, the most one tape record holds; a recording cannot keep it (split the call into smaller ones and record them)`);
    throw new FieldError(field, `does not decode as ${coding} (content-encoding): the body is cut short or not ${coding}`);
  }
  // zlib gives a Buffer, which a tape keeps as a Buffer (msgpack bin; `export --review` shows
  // it as opaque base64). A recorded answer is a plain Uint8Array (what fetch reads), stored and
  // reviewed as the JSON or text it holds: so is the decoded one, a view of the same bytes.
  return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
}

/**
 * Where each server-sent event ends in a body (after its blank line, `\n\n` or `\r\n\r\n`),
 * for stream chunks. Only the line feeds are visited (Buffer's native search), not every byte.
 */
function eventEnds(body: Uint8Array): number[] {
  const ends: number[] = [];
  const b = Buffer.from(body.buffer, body.byteOffset, body.length);
  let i = 0;
  while (i + 1 < b.length) {
    const lf = b.indexOf(0x0a, i);
    if (lf < 0) break;
    if (lf - 1 >= i && b[lf - 1] === 0x0d && b[lf + 1] === 0x0d && b[lf + 2] === 0x0a) ends.push((i = lf + 3));
    else if (b[lf + 1] === 0x0a) ends.push((i = lf + 2));
    else i = lf + 1;
  }
  if (ends.length === 0 || ends[ends.length - 1] !== body.length) ends.push(body.length);
  return ends;
}

/** Whether a response is a server-sent-event stream. */
export function isEventStream(headers: ImportHeaders): boolean {
  return eventStreamType(headers['content-type'] === undefined ? '' : String(headers['content-type']));
}

/** Whether a content type is an event stream's, the last answer kept (a recording repeats its content types). */
const eventStreamType = lastTest(/^\s*text\/event-stream/i);

/**
 * Chunks for a streamed answer: one per event, timed from `firstMs` (the first byte) to
 * `lastMs` evenly, since recordings of other tools keep the whole stream's time, not each
 * event's. Undefined for an answer of one piece.
 */
export function streamChunks(headers: ImportHeaders, body: Uint8Array, firstMs = 0, lastMs = firstMs): [number, number][] | undefined {
  if (!isEventStream(headers)) return undefined;
  const ends = eventEnds(body);
  if (ends.length < 2) return undefined;
  const step = ends.length > 1 ? (lastMs - firstMs) / (ends.length - 1) : 0;
  return ends.map((end, i) => [Math.round((firstMs + step * i) * 1000) / 1000, end]);
}

/** A response as stored, checked: status an HTTP status, chunks only for streams. */
export function response(status: unknown, statusText: unknown, headers: ImportHeaders, body: Uint8Array, field: string, chunks?: [number, number][]): HttpRecord['response'] {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new FieldError(field, status === 0 ? 'is 0: the request got no response (blocked, aborted or failed)' : `${JSON.stringify(status) ?? 'undefined'} is not an HTTP status`);
  }
  // Whole literals, not spreads of the members that may be absent (a spread in the middle of a
  // literal copies and adds member by member: ~10x slower).
  if (typeof statusText === 'string' && statusText !== '') return chunks ? { status, statusText, headers, body, chunks } : { status, statusText, headers, body };
  return chunks ? { status, headers, body, chunks } : { status, headers, body };
}

/**
 * The offset of the first byte of `b` that is no UTF-8, or -1 when all are, found by halving with
 * `isUtf8` (native; a prefix cut mid-character is no UTF-8 either, so each cut is moved back to a
 * character's start).
 *
 * @example
 * firstNonUtf8(Buffer.from('caf\xe9!', 'latin1')) // 3
 */
export function firstNonUtf8(b: Uint8Array): number {
  if (isUtf8(b)) return -1;
  let good = 0; // b[0, good) is UTF-8 and ends at a character's end
  let bad = b.length;
  while (bad - good > 8) {
    let mid = (good + bad) >>> 1;
    // Back to the start of a character (past at most 3 continuation bytes).
    for (let k = 0; k < 3 && mid > good && (b[mid]! & 0xc0) === 0x80; k++) mid--;
    if (mid <= good) break;
    if (isUtf8(b.subarray(0, mid))) good = mid;
    else bad = mid;
  }
  // The last few bytes one character at a time.
  for (let i = good; i < b.length; ) {
    const c = b[i]!;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > b.length || !isUtf8(b.subarray(i, i + n))) return i;
    i += n;
  }
  return -1;
}

/**
 * How a byte that is no UTF-8 is named in an error: its offset and value.
 *
 * @example
 * notUtf8Byte(Buffer.from('caf\xe9', 'latin1'), 3) // 'byte 3 (0xe9) is no UTF-8'
 */
export function notUtf8Byte(b: Uint8Array, at: number): string {
  return `byte ${at} (0x${b[at]!.toString(16).padStart(2, '0')}) is no UTF-8`;
}
