/**
 * Hand-written recordings: answers written as JSON (a plain answer, a stream with its events and
 * the gaps between them, an error such as a 429 with `retry-after`, a cut stream) added to a tape
 * beside recorded ones, keyed like them, so error handling and retries are tested through the
 * real SDKs with the same tape. `tapedeck add` and {@link addRecordings}. docs/hand-written.md.
 */
import { TapedeckError } from '../errors.ts';
import { isHttpRecord, type HttpRecord, type StoredHeaders } from '../store/records.ts';
import type { LoadedRecord } from '../store/backend.ts';
import { checkOptionNames } from '../option-names.ts';
import { Deck, DECK_OPTION_NAMES, UNSTORED_RESPONSE_HEADERS, type DeckOptions, type DeckRequest } from './deck.ts';
import { unknownField, WRITTEN_FIELDS } from './written-fields.ts';
import { originOf } from '../store/origins.ts';
import { HAND_WRITTEN_RUN } from '../store/hand-written-run.ts';
import { answerShapeProblem } from './written-shape.ts';
import { withoutSecrets } from '../store/shown-secrets.ts';

/** One server-sent event of a hand-written stream. */
export interface WrittenEvent {
  /** The `event:` name (Anthropic streams name theirs); none for OpenAI's. */
  event?: string;
  /** The data: JSON, or text as it is (`[DONE]`). */
  data: unknown;
  /** Milliseconds since the previous event (default the answer's `gapMs`). */
  afterMs?: number;
}

/** A hand-written exchange. */
export interface WrittenRecording {
  request: {
    /** Default POST. */
    method?: string;
    /** The full http(s) URL the SDK calls, or its path (from the root, `/v1/...`) and query. */
    url: string;
    headers?: Record<string, string>;
    /** The request body (JSON); keyed like a recorded request. */
    body?: unknown;
  };
  response: {
    /** Default 200. */
    status?: number;
    headers?: Record<string, string>;
    /** A JSON answer (an object), or text. */
    body?: unknown;
    /** A streamed answer instead of `body`: server-sent events. */
    events?: WrittenEvent[];
    /** Default gap between events in milliseconds (default 0). */
    gapMs?: number;
    /** The stream stops after its events without ending: the connection drops. */
    cut?: boolean;
  };
}

const encoder = new TextEncoder();

// Hints are written as JSON, as the recording is: a CLI user reads them too, and the CLI drops a
// hint in API terms (cli-errors.ts), which would leave the error without its fix.
function bad(where: string, what: string, hint: string): TapedeckError {
  // What it quotes of the file (a URL with its `?key=`) goes to the log: its secrets masked.
  const shown = withoutSecrets(what);
  return new TapedeckError('E_RECORDING', `Hand-written recording ${where}: ${shown}${shown.endsWith('?') ? '' : '.'}`, { hint });
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** E_RECORDING for a field its place does not know (a misspelling would be dropped silently). */
function checkFields(v: Record<string, unknown>, where: string, path: string, known: readonly string[]): void {
  const u = unknownField(v, path, known);
  if (!u) return;
  const place = path ? `\`${path}\`` : 'a recording';
  throw bad(
    where,
    `\`${u.field}\` is not a field of ${place}${u.suggestion ? `; did you mean \`${u.suggestion}\`?` : ''}`,
    `${u.suggestion ? `Rename it to "${u.suggestion}"` : 'Remove it'}; the fields of ${place} are ${u.known.map((k) => `"${k}"`).join(', ')} (docs/hand-written.md).`,
  );
}

// RFC 9110 §5.6.2: a method and a header name are tokens.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// What node:http lets through as a header value (RFC 9110 §5.5 field-value: no CR, LF, NUL or
// other control but tab); a value it refuses would only fail later, at replay.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** The longest pause written between two events: a gap past it is a typo, and would outlast any test. */
export const MAX_GAP_MS = 600_000;

/** Headers as stored (lowercase names, string values), each one checked as node:http would. */
function writtenHeaders(h: unknown, where: string, field: string, unstored?: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  if (h === undefined) return out;
  if (h === null || typeof h !== 'object' || Array.isArray(h)) throw bad(where, `\`${field}\` is ${Array.isArray(h) ? 'an array' : JSON.stringify(h)}, not an object`, `Write headers as an object of names and text values: "${field.split('.').pop()}": { "retry-after": "1" }.`);
  for (const [k, v] of Object.entries(h)) {
    const at = `\`${field}[${JSON.stringify(k)}]\``;
    if (!TOKEN.test(k)) throw bad(where, `${at} is not a header name`, 'A header name is letters, digits and !#$%&\'*+-.^_`|~ only (no spaces, colons or line breaks).');
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isFinite(v))) throw bad(where, `${at} is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}, not text`, `Write the header's value as text: ${JSON.stringify(k)}: "value".`);
    const value = String(v);
    if (!FIELD_VALUE.test(value)) throw bad(where, `${at} holds a line break or another control character`, 'A header value is one line of text: remove the CR, LF or control character (a header cannot hold a line break).');
    const name = k.toLowerCase();
    if (unstored?.has(name)) throw bad(where, `${at} is set by tapedeck when it answers`, `Leave ${JSON.stringify(k)} out: the length and framing follow from the body or the events.`);
    out[name] = value;
  }
  return out;
}

/** A pause in milliseconds, or undefined when not written. */
function writtenGap(v: unknown, where: string, field: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_GAP_MS) throw bad(where, `\`${field}\` is ${JSON.stringify(v)}`, `Give the pause in milliseconds, from 0 to ${MAX_GAP_MS} (10 minutes): "${field.split('.').pop()}": 20.`);
  return v;
}

/**
 * Every field name of a recording checked first: a misspelt `"rquest"` or `"evnts"` is then
 * named as the misspelling it is, not reported as the field it left missing.
 */
function checkFieldNames(w: Record<string, unknown>, where: string): void {
  checkFields(w, where, '', WRITTEN_FIELDS.recording);
  if (isObject(w.request)) checkFields(w.request, where, 'request', WRITTEN_FIELDS.request);
  if (!isObject(w.response)) return;
  checkFields(w.response, where, 'response', WRITTEN_FIELDS.response);
  if (Array.isArray(w.response.events)) w.response.events.forEach((e, i) => isObject(e) && checkFields(e, where, `response.events[${i}]`, WRITTEN_FIELDS.event));
}

/**
 * The URL a recording answers: a full http(s) URL, or a path from the root. Anything else (a
 * phrase, `ftp://x/y`, a protocol-relative `//host/path`) is refused: resolved against a base it
 * would become a path of its own (`/not%20a%20url`) or lose its host, and never answer the SDK.
 */
function writtenUrl(url: string, where: string): URL {
  const hint = 'Give the URL the SDK calls, "https://api.openai.com/v1/chat/completions", or just its path from the root, "/v1/chat/completions".';
  if (url.startsWith('/') && !url.startsWith('//')) {
    const u = new URL(url, 'http://localhost');
    // `/\host/x` is read as `//host/x` by URL parsers (a backslash is a slash in http URLs).
    if (u.origin === 'http://localhost') return u;
    throw bad(where, `\`request.url\` ${JSON.stringify(url)} names another host, not a path`, hint);
  }
  if (/^https?:\/\//i.test(url)) {
    try {
      return new URL(url);
    } catch {
      throw bad(where, `\`request.url\` ${JSON.stringify(url)} is not a URL`, hint);
    }
  }
  if (url.startsWith('//')) throw bad(where, `\`request.url\` ${JSON.stringify(url)} has no scheme: read as a URL it names the host ${JSON.stringify(url.slice(2).split(/[/?#]/)[0])}, read as a path it has an empty first segment`, hint);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1];
  if (scheme !== undefined) throw bad(where, `\`request.url\` ${JSON.stringify(url)} is not an http or https URL (its scheme is ${scheme}:)`, hint);
  throw bad(where, `\`request.url\` ${JSON.stringify(url)} is neither a URL nor a path (a path starts with /)`, hint);
}

/**
 * Where a value JSON cannot hold as written breaks: a BigInt or an object that holds itself
 * (JSON.stringify throws), a function or symbol (dropped without a word: the answer would lose
 * that member, the key that argument).
 */
function unwritable(v: unknown, path: string, seen: Set<object>): string | undefined {
  if (typeof v === 'bigint') return `\`${path}\` is a BigInt`;
  if (typeof v === 'function' || typeof v === 'symbol') return `\`${path}\` is a ${typeof v}`;
  if (v === null || typeof v !== 'object') return undefined;
  // Its own JSON form (a Date) is what is written.
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return undefined;
  if (seen.has(v)) return `\`${path}\` holds itself (a circular reference)`;
  seen.add(v);
  try {
    for (const [k, x] of Object.entries(v)) {
      const found = unwritable(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`, seen);
      if (found) return found;
    }
  } finally {
    seen.delete(v);
  }
  return undefined;
}

/**
 * A body or event data as JSON text, or E_RECORDING naming what JSON cannot hold: JSON.stringify
 * would throw its own TypeError (a BigInt, a circular object), which addRecordings must not let
 * out, or give undefined (a function), which would be stored as the text "undefined".
 */
function jsonText(v: unknown, where: string, field: string): string {
  const hint = 'Give JSON values only: a BigInt as a number or as text ("n": 1 or "n": "1"), each object once (none that holds itself), no functions.';
  let text: string | undefined;
  // A function or symbol nested in it is dropped by JSON.stringify rather than refused: looked for first.
  const nested = v !== null && typeof v === 'object' ? unwritable(v, field, new Set()) : undefined;
  if (nested) throw bad(where, nested, hint);
  try {
    text = JSON.stringify(v);
  } catch (e) {
    const why = unwritable(v, field, new Set()) ?? `\`${field}\` cannot be written as JSON (${String((e as Error)?.message ?? e).split('\n')[0]})`;
    throw bad(where, why, hint);
  }
  if (text === undefined) throw bad(where, `\`${field}\` is a ${typeof v}, not a JSON value`, hint);
  return text;
}

/**
 * The request as the deck takes it: path and query, lowercase headers, JSON body bytes, and the
 * origin of a full URL (a recording written with a path alone answers any host).
 */
function deckRequest(w: WrittenRecording, where: string): DeckRequest {
  const q = w.request as unknown;
  const urlHint = 'Give the URL the SDK calls: "request": { "url": "https://api.openai.com/v1/chat/completions", "body": { ... } } (or just its path, "/v1/chat/completions").';
  if (!isObject(q)) throw bad(where, q === undefined ? '`request` is missing' : `\`request\` is ${Array.isArray(q) ? 'an array' : JSON.stringify(q)}, not an object`, urlHint);
  if (q.url === undefined || q.url === '') throw bad(where, '`request.url` is missing', urlHint);
  if (typeof q.url !== 'string') throw bad(where, `\`request.url\` is ${JSON.stringify(q.url)}, not text`, urlHint);
  const u = writtenUrl(q.url, where);
  const method = (q.method as unknown) ?? 'POST';
  if (typeof method !== 'string' || !TOKEN.test(method)) throw bad(where, `\`request.method\` ${JSON.stringify(method)} is not an HTTP method`, 'Give a method such as "POST" or "GET" (or leave it out: POST).');
  const headers = writtenHeaders(q.headers, where, 'request.headers');
  let body = new Uint8Array(0);
  if (q.body !== undefined) {
    body = encoder.encode(typeof q.body === 'string' ? q.body : jsonText(q.body, where, 'request.body'));
    headers['content-type'] ??= typeof q.body === 'string' ? 'text/plain' : 'application/json';
  }
  const origin = originOf(q.url);
  return { method: method.toUpperCase(), url: u.pathname + u.search, headers, body, ...(origin !== undefined ? { origin } : {}) };
}

/** The stored answer: bytes, chunk times for a stream, the content type it implies. */
function storedResponse(w: WrittenRecording, where: string): HttpRecord['response'] {
  const r = w.response;
  if (!isObject(r)) {
    throw bad(where, r === undefined ? '`response` is missing' : `\`response\` is ${Array.isArray(r) ? 'an array' : JSON.stringify(r)}, not an object`, 'Give the answer: "response": { "status": 200, "body": { ... } }, or "events" instead of "body" for a stream.');
  }
  const status = r.status ?? 200;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw bad(where, `\`response.status\` ${typeof r.status === 'number' ? String(r.status) : JSON.stringify(r.status)} is not an HTTP status`, 'Give the status as a number from 100 to 599 ("status": 429), or leave it out for 200.');
  }
  const headers: StoredHeaders = writtenHeaders(r.headers, where, 'response.headers', UNSTORED_RESPONSE_HEADERS);
  const gapMs = writtenGap(r.gapMs, where, 'response.gapMs');
  if (r.cut !== undefined && typeof r.cut !== 'boolean') throw bad(where, `\`response.cut\` is ${JSON.stringify(r.cut)}`, 'Write "cut": true for a stream that drops, or leave it out.');
  if (r.events !== undefined) {
    if (!Array.isArray(r.events)) {
      throw bad(where, `\`response.events\` is ${JSON.stringify(r.events)}, not an array`, 'Write the events as an array: "events": [{ "data": { ... } }, { "data": "[DONE]" }].');
    }
    if (r.body !== undefined) throw bad(where, '`response.events` and `response.body` are both given', 'A streamed answer has "events" instead of "body": remove one of them.');
    headers['content-type'] ??= 'text/event-stream; charset=utf-8';
    const parts: Uint8Array[] = [];
    const chunks: [number, number][] = [];
    let at = 0;
    let end = 0;
    r.events.forEach((e, i) => {
      const dataHint = 'Give each event its data: { "data": { ... } }, or { "data": "[DONE]" } for the end of an OpenAI stream.';
      if (!isObject(e)) throw bad(where, `\`response.events[${i}]\` is ${JSON.stringify(e)}, not an object`, dataHint);
      if (!('data' in e)) throw bad(where, `\`response.events[${i}].data\` is missing`, dataHint);
      const afterMs = writtenGap(e.afterMs, where, `response.events[${i}].afterMs`);
      if (e.event !== undefined && (typeof e.event !== 'string' || !/^[^\r\n]+$/.test(e.event))) throw bad(where, `\`response.events[${i}].event\` is ${JSON.stringify(e.event)}`, 'An event name is one line of text ("message_stop"), or left out.');
      at += i === 0 ? (afterMs ?? 0) : (afterMs ?? gapMs ?? 0);
      const data = typeof e.data === 'string' ? e.data : jsonText(e.data, where, `response.events[${i}].data`);
      const text = `${e.event ? `event: ${e.event}\n` : ''}${data.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('')}\n`;
      const bytes = encoder.encode(text);
      parts.push(bytes);
      end += bytes.length;
      chunks.push([at, end]);
    });
    const body = new Uint8Array(end);
    let o = 0;
    for (const p of parts) {
      body.set(p, o);
      o += p.length;
    }
    return { status, headers, body, ...(chunks.length > 1 ? { chunks } : {}), ...(r.cut ? { cut: true } : {}) };
  }
  if (r.cut) throw bad(where, '`response.cut` needs `response.events`', 'Only a stream can be cut: give "events" instead of "body", or leave "cut" out.');
  if (r.body === undefined) return { status, headers, body: new Uint8Array(0) };
  headers['content-type'] ??= typeof r.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
  return { status, headers, body: encoder.encode(typeof r.body === 'string' ? r.body : jsonText(r.body, where, 'response.body')) };
}

/** The request body as the key reads it: JSON written as text is parsed as the deck parses it. */
function writtenBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** The options addRecordings takes: the deck's, less the mode (it always adds), and `replace`. */
const ADD_OPTIONS: readonly string[] = [...DECK_OPTION_NAMES.filter((n) => n !== 'mode'), 'replace'];

/** The options of {@link addRecordings}. */
export type AddOptions = Omit<DeckOptions, 'mode'> & {
  /**
   * Remove the recordings the tape holds of the same requests (same key, route and host) and
   * serve the added ones in their place: for an answer fixed and added again.
   */
  replace?: boolean;
};

/**
 * Adds hand-written recordings to a tape (created if missing), after what it holds, in order:
 * two for the same request answer its first and second call. Keyed, redacted and stored like
 * recorded ones (the deck options that decide keys, such as `ignoreArgs` or `volatileText`,
 * apply). Resolves to how many were added, once they are on disk.
 *
 * @example
 * await addRecordings({ tape: 'test/__tapes__/retry.tape' }, [
 *   { request: { url: 'https://api.openai.com/v1/chat/completions', body },
 *     response: { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'Rate limit', type: 'rate_limit_error' } } } },
 *   { request: { url: 'https://api.openai.com/v1/chat/completions', body }, response: { body: completion } },
 * ])
 *
 * `origins`, when given, says where each recording was read from (`retry.json`, `retry.json [2]`)
 * for the errors to name: `tapedeck add` gives the files.
 */
export async function addRecordings(options: AddOptions, recordings: readonly WrittenRecording[], origins?: readonly string[]): Promise<number> {
  // A misspelt option (`tpae`) would be dropped without a word, as createFetch refuses it not to.
  checkOptionNames(options, ADD_OPTIONS, 'addRecordings', 'docs/hand-written.md');
  const { replace, ...opts } = options ?? {};
  if (replace !== undefined && typeof replace !== 'boolean') {
    throw new TapedeckError('E_ARG', `addRecordings: replace is ${JSON.stringify(replace) ?? String(replace)}, not true or false.`, { option: 'replace', hint: 'Write replace: true to put the added recordings in place of the ones the tape holds of the same requests, or leave it out.' });
  }
  if (!Array.isArray(recordings)) throw bad('list', 'expected an array of recordings', 'Pass an array: addRecordings(options, [recording, ...]).');
  // Nothing to add is most likely the wrong list, or one not filled yet: said, as tapedeck add says it.
  if (recordings.length === 0) throw bad('list', `the list is empty: no recording to add; nothing was added to ${opts.tape ?? 'the store'}`, 'Pass the recordings to add: addRecordings(options, [recording, ...]).');
  // Everything is checked before anything is written.
  const prepared = recordings.map((w, i) => {
    const where = origins?.[i] ? `#${i} (${origins[i]})` : `#${i}`;
    const v: unknown = w;
    if (!isObject(v)) throw bad(where, `${Array.isArray(v) ? 'an array' : JSON.stringify(v)} is not a recording`, 'Write each recording as an object: { "request": { "url": ..., "body": ... }, "response": { "body": ... } }.');
    try {
      checkFieldNames(v, where);
      const req = deckRequest(w, where);
      const response = storedResponse(w, where);
      const problem = answerShapeProblem(req, writtenBody(w.request.body), response, { events: w.response.events !== undefined, cut: w.response.cut === true, ...(Array.isArray(w.response.events) ? { list: w.response.events } : {}) });
      if (problem) throw bad(where, problem.what, problem.hint);
      return { req, response };
    } catch (e) {
      // Every rejection is a TapedeckError (docs/api.md): a value that throws when read (a
      // getter, a proxy) is the recording's fault, said as the others are.
      if (e instanceof TapedeckError) throw e;
      throw new TapedeckError('E_RECORDING', `Hand-written recording ${where}: could not be read (${String((e as Error)?.message ?? e).split('\n')[0]}).`, {
        cause: e,
        hint: 'Write the recording as plain JSON values (docs/hand-written.md).',
      });
    }
  });
  // Warnings said while a recording is stored are held until it is: the deck also warns of the
  // failure it reports, which the error thrown here says once, with its fix.
  const say = opts.onWarning ?? ((m: string) => (typeof process !== 'undefined' && process.emitWarning ? process.emitWarning(m, { code: 'TAPEDECK_PROXY' }) : console.warn(m)));
  let held: string[] | undefined;
  // Stored under a run of their own, which a record run of the same requests keeps.
  const run = `${HAND_WRITTEN_RUN}${opts.run ?? globalThis.crypto.randomUUID()}`;
  const open = () => Deck.open({ ...opts, mode: 'update', run, onWarning: (m) => (held ? held.push(m) : say(m)) }, { kind: 'fetch' });
  let deck = await open();
  let added = 0;
  let skipped = 0;
  try {
    const now = new Date();
    const onTape = recordingsByRequest(deck);
    const planned = plan(deck, prepared, now, onTape, replace === true, opts.tape, origins);
    if (planned.replaced.size > 0 && deck.collection) {
      // Removed before the new ones are added, and the tape opened again: each recording counts
      // those of its request before it (its turn), and one counting removed ones would be taken
      // for a recording after lost ones.
      await deck.collection.rewrite((records) => replacedAt(records, planned.replaced));
      await deck.close();
      deck = await open();
    }
    for (const [i, { req, response }] of prepared.entries()) {
      if (planned.skip.has(i)) {
        skipped++;
        continue;
      }
      held = [];
      const { durable } = deck.record(deck.prepareRequest(req), req, response, now, 0);
      const failed = await durable;
      const said = held;
      held = undefined;
      // One at a time, and the first that fails stops the rest: each would fail alike (a
      // read-only or full disk), and said again per recording.
      const cause = failed?.details.cause;
      const told = cause instanceof Error ? cause.message : undefined;
      for (const m of said) if (told === undefined || !m.includes(told)) say(m);
      if (failed) throw notAdded(opts.tape, failed, added, prepared.length);
      added++;
    }
    await deck.flush();
    // Said once the recordings are on the tape: a failure to add them is the one thing said then.
    for (const m of planned.notes) say(m);
  } finally {
    held = undefined;
    await deck.close();
  }
  if (deck.stats().appendFailures > 0) throw new TapedeckError('E_TAPE_IO', `Could not add the recordings to ${opts.tape ?? 'the store'}.`, { hint: 'See the warning above for why.' });
  return prepared.length - skipped;
}

/** Which request a recording answers, as replay tells requests apart: host, route, match kind and key. */
const requestOf = (r: Pick<HttpRecord, 'origin' | 'route' | 'match' | 'key'>): string => `${r.origin ?? ''}\n${r.route}\n${r.match}\n${r.key}`;

/** The recordings a tape holds, by the request they answer, in order. */
function recordingsByRequest(deck: Deck): Map<string, HttpRecord[]> {
  const out = new Map<string, HttpRecord[]>();
  for (const { value } of deck.collection?.entries() ?? []) {
    const id = requestOf(value);
    const list = out.get(id);
    if (list) list.push(value);
    else out.set(id, [value]);
  }
  return out;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const sortedJson = (h: StoredHeaders): string => JSON.stringify(Object.entries(h).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** Whether two recordings of one request give the same answer (status, headers, bytes, pacing, cut). */
function sameAnswer(a: HttpRecord['response'], b: HttpRecord['response']): boolean {
  return (
    a.status === b.status &&
    (a.statusText ?? '') === (b.statusText ?? '') &&
    a.cut === b.cut &&
    JSON.stringify(a.chunks ?? null) === JSON.stringify(b.chunks ?? null) &&
    sortedJson(a.headers) === sortedJson(b.headers) &&
    sameBytes(a.body, b.body)
  );
}

/**
 * What to do with each recording about to be added. Recordings of a request the tape already
 * ends with, answer for answer, are skipped: addRecordings called in a test runs on every test
 * run, and appending them again grew the tape each time and gave a later call a second 429.
 * With `replace`, the tape's recordings of the added requests are removed first; without it, a request the tape holds other answers for is said (they are served first).
 */
function plan(
  deck: Deck,
  prepared: readonly { req: DeckRequest; response: HttpRecord['response'] }[],
  now: Date,
  onTape: ReadonlyMap<string, readonly HttpRecord[]>,
  replace: boolean,
  tape: string | undefined,
  origins: readonly string[] | undefined,
): { skip: Set<number>; replaced: Set<string>; notes: string[] } {
  // A new or empty tape has nothing to compare with (and a beforeRecord hook runs once).
  if (onTape.size === 0) return { skip: new Set(), replaced: new Set(), notes: [] };
  const byRequest = new Map<string, { at: number[]; recs: HttpRecord[] }>();
  prepared.forEach(({ req, response }, i) => {
    const rec = deck.recordOf(deck.prepareRequest(req), req, response, now, 0);
    if (!rec) return;
    const id = requestOf(rec);
    const g = byRequest.get(id) ?? { at: [], recs: [] };
    g.at.push(i);
    g.recs.push(rec);
    byRequest.set(id, g);
  });
  const skip = new Set<number>();
  const replaced = new Set<string>();
  const notes: string[] = [];
  for (const [id, { at, recs }] of byRequest) {
    const old = onTape.get(id) ?? [];
    if (old.length === 0) continue;
    if (replace) {
      replaced.add(id);
      continue;
    }
    const tail = old.slice(old.length - recs.length);
    if (tail.length === recs.length && recs.every((r, j) => sameAnswer(r.response, tail[j]!.response))) {
      for (const i of at) skip.add(i);
      continue;
    }
    const r = recs[0]!;
    const where = origins?.[at[0]!] ? `#${at[0]} (${origins[at[0]!]})` : `#${at[0]}`;
    notes.push(
      `tapedeck: hand-written recording ${where}: ${tape ?? 'the store'} already holds ${old.length} recording${old.length === 1 ? '' : 's'} of ${r.route}${r.origin ? ` on ${r.origin}` : ''} with this request and other answers: ${old.length === 1 ? 'it is' : 'they are'} served first, the added one${recs.length === 1 ? '' : 's'} only after. To serve the added one${recs.length === 1 ? '' : 's'} instead, add with replace: true (tapedeck add --replace), which removes the ones the tape holds of this request.`,
    );
  }
  return { skip, replaced, notes };
}

/** The indexes of the recordings `replace` removes: those of the replaced requests. */
function replacedAt(records: readonly LoadedRecord[], replaced: ReadonlySet<string>): number[] {
  const out: number[] = [];
  records.forEach((r, i) => {
    let v: unknown;
    try {
      v = r.value();
    } catch {
      return; // damage is prune's to remove, not this
    }
    if (isHttpRecord(v) && replaced.has(requestOf(v))) out.push(i);
  });
  return out;
}

/**
 * The error of a recording the store did not take: what the store said (a read-only file
 * system, a full disk, the tape's lock), with its fix, and how many were added before it.
 */
function notAdded(tape: string | undefined, failed: TapedeckError, added: number, total: number): TapedeckError {
  const cause = failed.details.cause;
  const where = tape ?? 'the store';
  const done = added === 0 ? 'no recording was added' : `${added} of the ${total} recordings were added before it`;
  if (!(cause instanceof TapedeckError)) {
    const why = cause instanceof Error ? cause.message : String(cause);
    return new TapedeckError('E_TAPE_IO', `Could not add the recordings to ${where}: ${why}; ${done}.`, { file: where, hint: 'Check permissions and free disk space where the tape is.' });
  }
  const text = cause.hint && cause.message.endsWith(cause.hint) ? cause.message.slice(0, -cause.hint.length).trim() : cause.message;
  return new TapedeckError(cause.code, `${text.replace(/\.$/, '')}; ${done}.`, { ...cause.details, file: where });
}
