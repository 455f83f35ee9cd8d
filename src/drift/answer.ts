// What a recording asked and what it was answered, read the same way for every record layout on
// a tape (the proxy / createFetch's HTTP exchanges, ReplayCache records). Answers are read behind
// one function, answerOf, so that the drift classifier needs to know nothing about record layouts,
// stream framing or answer shapes: streamed answers are assembled into the body the same request
// would have got without streaming, and every answer is read (text, tool calls, finish, usage),
// by the provider module of the request's route (src/providers); the stream's own shape (its
// event sequence) is kept beside it for the `stream` class.

import { assembleAnswer, readAnswer, type ProviderAnswer } from '../providers/index.ts';
import { answerVerdict, type AnswerVerdict } from '../providers/answer-verdict.ts';
import { streamErrorOf } from '../providers/stream-error.ts';
import { parseSse, sseEventType, withChunkEnvelope } from '../providers/sse-assemble.ts';
import { currentHttpKey, isHttpRecord, isCacheRecord, type HttpRecord } from '../store/records.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The answer shapes the classifier tells apart: a provider's (its module's reading says which:
 * `openai-chat`, `anthropic`, `gemini`, ...), or `json`, `text`, `bytes`, `none` for answers no
 * module reads.
 */
export type AnswerShape = string;

/** One recorded answer, as the classifier reads it. */
export interface Answer {
  /** HTTP status (200 for ReplayCache values). */
  status: number;
  shape: AnswerShape;
  /** How its provider's module reads it, when one does. */
  read?: ProviderAnswer;
  /** The answer body: parsed JSON (assembled when streamed), text, or bytes. */
  body: unknown;
  /** Whether the answer came as an event stream. */
  streamed: boolean;
  /** For streams: the type of each event, in order (`content`, `tool_calls`, `message_start`, ...). */
  events: string[];
  /** The raw bytes (HTTP records), for the quick identical check. */
  raw?: Uint8Array;
  /** Recorded time from request to the end of the answer, when the record says. */
  durationMs?: number;
}

/** What was asked: the route, the key the recording is found under, the request body. */
export interface Asked {
  /** `METHOD /path` for HTTP exchanges, `cache` for ReplayCache records. */
  route: string;
  /** How the key was computed: `llm` (the matcher's request key), `json`, `http`, `cache`. */
  match: string;
  key: string;
  /** The request body (parsed JSON where it was JSON). */
  body: unknown;
  /** Where an HTTP request went (`scheme://host[:port]`), when its recording names it. */
  origin?: string;
}

const decoder = new TextDecoder();

function contentTypeOf(headers: Record<string, string | string[]> | undefined): string {
  const v = headers?.['content-type'];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' ? s.split(';')[0]!.trim().toLowerCase() : '';
}

/** The shape of an answer no module reads. */
const plainShape = (body: unknown): AnswerShape => (body === undefined ? 'none' : typeof body === 'string' ? 'text' : 'json');

function parseBody(bytes: Uint8Array, contentType: string): { body: unknown; shape: AnswerShape } {
  if (bytes.length === 0) return { body: undefined, shape: 'none' };
  const text = decoder.decode(bytes);
  if (contentType.includes('json') || /^\s*[[{]/.test(text)) {
    try {
      const body = JSON.parse(text) as unknown;
      return { body, shape: 'json' };
    } catch {
      // not JSON after all: read as text below
    }
  }
  if (contentType.startsWith('text/') || contentType === '' || contentType.includes('json')) return { body: text, shape: 'text' };
  return { body: bytes, shape: 'bytes' };
}

// The only place drift reads stream framing: the provider module of the request's route
// assembles a stream and judges whether it is whole, or carried an error event (src/providers).

/**
 * The non-streamed answer a recorded stream stands for, or undefined.
 *
 * @example
 * assembleRecorded({ method: 'POST', url: '/v1/chat/completions' }, 'text/event-stream', bytes)?.choices
 */
export function assembleRecorded(request: { method: string; url: string }, contentType: string, body: Uint8Array | string): Record<string, unknown> | undefined {
  return assembleAnswer(request, contentType, body);
}

/**
 * Whether a live answer to a recorded request is whole (src/providers/answer-verdict.ts): not a
 * stream cut before its final event or before the usage chunk the request asked for, nor one
 * that carried the API's error event.
 *
 * @example
 * liveAnswerVerdict({ method: 'POST', url: '/v1/chat/completions', body: { stream: true } }, 'text/event-stream', bytes).whole // false for a cut stream
 */
export function liveAnswerVerdict(request: { method: string; url: string; body?: unknown }, contentType: string, body: Uint8Array): AnswerVerdict {
  return answerVerdict(request, request.body, contentType, body);
}

/**
 * What the API's error event in a recorded stream says (a 200 recorded with recordErrors whose
 * stream carried it), or undefined when it carries none.
 *
 * @example
 * recordedStreamError(tape.records[0].value) // 'overloaded_error: Overloaded'
 */
export function recordedStreamError(record: HttpRecord): string | undefined {
  return streamErrorOf(record.response.headers['content-type'], record.response.body);
}

/**
 * The answer of a tape record, or undefined for a value that is no recording (another tool's
 * record on a shared tape).
 *
 * @example
 * const a = answerOf(tape.records[0].value)
 * a?.shape // 'openai-chat'
 */
export function answerOf(record: unknown): Answer | undefined {
  if (isHttpRecord(record)) {
    const res = record.response;
    const ct = contentTypeOf(res.headers);
    const durationMs = typeof record.durationMs === 'number' ? record.durationMs : undefined;
    const read = (body: unknown) => readAnswer(record.request, body, res.headers);
    if (ct === 'text/event-stream') {
      const text = decoder.decode(res.body);
      const sse = parseSse(text);
      const assembled = assembleRecorded(record.request, ct, text);
      const body = assembled ? withChunkEnvelope(assembled, sse) : text;
      const r = assembled ? read(body) : undefined;
      let events: string[] | undefined;
      return {
        status: res.status,
        shape: r?.shape ?? plainShape(body),
        ...(r ? { read: r } : {}),
        body,
        streamed: true,
        // Read only when a pair's content is the same: typing every event costs a JSON.parse each.
        get events() {
          return (events ??= sse.map((e) => sseEventType(e.event, e.data)));
        },
        raw: res.body,
        durationMs,
      };
    }
    // Streams in other framings (Ollama's NDJSON, Bedrock's event stream, Gemini's JSON array):
    // the module of the route assembles them; their frames are not typed for the stream class.
    const framed = ct === 'application/json' || ct === '' ? undefined : assembleRecorded(record.request, ct, res.body);
    const arrayStream = framed === undefined && ct === 'application/json' && res.body[0] === 0x5b ? assembleRecorded(record.request, ct, res.body) : undefined;
    const assembled = framed ?? arrayStream;
    if (assembled) {
      const r = read(assembled);
      return { status: res.status, shape: r?.shape ?? 'json', ...(r ? { read: r } : {}), body: assembled, streamed: true, events: [], raw: res.body, durationMs };
    }
    const { body, shape } = parseBody(res.body, ct);
    const r = shape === 'json' ? read(body) : undefined;
    return { status: res.status, shape: r?.shape ?? shape, ...(r ? { read: r } : {}), body, streamed: false, events: [], raw: res.body, durationMs };
  }
  if (isCacheRecord(record)) {
    const durationMs = typeof record.durationMs === 'number' ? record.durationMs : undefined;
    const r = readAnswer(undefined, record.value);
    return { status: 200, shape: r?.shape ?? plainShape(record.value), ...(r ? { read: r } : {}), body: record.value, streamed: false, events: [], durationMs };
  }
  return undefined;
}

/**
 * What a tape record asked, or undefined for a value that is no recording.
 *
 * @example
 * askedOf(tape.records[0].value)?.route // 'POST /v1/chat/completions'
 */
export function askedOf(record: unknown): Asked | undefined {
  if (isHttpRecord(record)) {
    // Keyed under the current key spec, so a tape recorded by an older tapedeck pairs with a new one.
    const { match, key } = currentHttpKey(record);
    return { route: record.route, match, key, body: record.request.body, ...(typeof record.origin === 'string' ? { origin: record.origin } : {}) };
  }
  if (isCacheRecord(record)) {
    const key = (record as { key?: unknown }).key;
    return { route: 'cache', match: 'cache', key: typeof key === 'string' ? key : '', body: record.request };
  }
  return undefined;
}
