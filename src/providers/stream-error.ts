/**
 * The API's own error inside a stream that began with a 200: Anthropic's `event: error`
 * (`{"type":"error","error":{"type":"overloaded_error",...}}`), OpenAI's data line
 * `{"error":{...}}`, the Responses API's `error` and `response.failed` events, Gemini's
 * `{"error":{...}}`, Ollama's NDJSON line `{"error":"..."}`, Bedrock's event-stream exception
 * frame (`:message-type` `exception`). The SDKs raise it as an API error, as they raise a 5xx:
 * it is an error answer sent after its status, not a stream cut short.
 *
 * Node only: the record paths and `tapedeck stats` ask it; a page never records.
 */
import { isNdjson } from './ollama.ts';
import { parseSse } from './sse-parse.ts';
import { parseNdjson } from './wire/ndjson.ts';
import { EventStreamDecoder, headerString } from './wire/aws-eventstream.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The first 160 characters of an API's error text, control characters as spaces (it goes to a terminal). */
const shown = (s: string): string => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 160);

/** `type: message` of an error object, as far as it has them. */
function described(e: unknown): string {
  if (!isObj(e)) return 'error';
  const kind = typeof e.type === 'string' ? e.type : typeof e.code === 'string' || typeof e.code === 'number' ? String(e.code) : typeof e.status === 'string' ? e.status : undefined;
  const message = typeof e.message === 'string' ? e.message : undefined;
  return shown([kind, message].filter((x) => x !== undefined && x !== '').join(': ')) || 'error';
}

/**
 * What the first error event of an event stream says (`overloaded_error: Overloaded`), or
 * undefined when the body is no event stream or carries none.
 *
 * @example
 * streamErrorOf('text/event-stream', 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n') // 'overloaded_error: Overloaded'
 * streamErrorOf('application/x-ndjson', '{"done":false}\n{"error":"unexpected EOF"}\n') // 'unexpected EOF'
 */
export function streamErrorOf(contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string): string | undefined {
  const type = typeof contentType === 'string' ? contentType : contentType?.[0];
  if (type === undefined) return undefined;
  if (/^\s*application\/vnd\.amazon\.eventstream/i.test(type)) return eventStreamError(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes);
  if (isNdjson(type)) return ndjsonError(bytes);
  if (!/^\s*text\/event-stream/i.test(type)) return undefined;
  const text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8').decode(bytes);
  // Every error event has the word: a stream without it is not parsed.
  if (!text.includes('error')) return undefined;
  for (const e of parseSse(text)) {
    let d: unknown;
    try {
      d = JSON.parse(e.data);
    } catch {
      d = undefined;
    }
    if (e.event === 'error') return described(isObj(d) && isObj(d.error) ? d.error : d);
    if (!isObj(d)) continue;
    if (d.type === 'error') return described(isObj(d.error) ? d.error : d);
    if (d.type === 'response.failed') return described(isObj(d.response) ? d.response.error : undefined);
    // A chat chunk may carry `error: null` beside its choices (some compatible servers).
    if (isObj(d.error) && !Array.isArray(d.choices)) return described(d.error);
  }
  return undefined;
}

/**
 * Ollama's error line: the runner that fails mid-answer (a crash, out of memory) writes
 * `{"error":"..."}` as the stream's last line, and the ollama client throws its text. A line
 * cut halfway is no value, so a cut stream is not taken for one.
 *
 * @example
 * ndjsonError('{"done":false}\n{"error":"model runner has unexpectedly stopped"}\n') // 'model runner has unexpectedly stopped'
 */
function ndjsonError(bytes: Uint8Array | string): string | undefined {
  const text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8').decode(bytes);
  // As for SSE: a stream without the word has no error line, and is not parsed.
  if (!text.includes('"error"')) return undefined;
  for (const v of parseNdjson(text).values) {
    if (!isObj(v) || v.error === undefined || v.error === null) continue;
    // Ollama writes a string; an object is read as the other APIs' error objects are.
    return typeof v.error === 'string' ? shown(v.error) || 'error' : described(v.error);
  }
  return undefined;
}

/**
 * Bedrock's error frame in an AWS event stream: `:message-type` `exception`, the exception's
 * name in `:exception-type` (`throttlingException`, `modelStreamErrorException`, ...) and
 * `{"message":"..."}` as payload, which the AWS SDK raises as that modeled exception; or the
 * framing's own `:message-type` `error` with `:error-code` and `:error-message` headers. Only
 * whole frames count (their CRCs checked): the messages before a cut still do, a damaged
 * stream has none.
 *
 * @example
 * eventStreamError(encodeEventStreamMessage({ headers: [{ name: ':message-type', type: 'string', value: 'exception' }, { name: ':exception-type', type: 'string', value: 'throttlingException' }], body: new TextEncoder().encode('{"message":"Too many requests"}') }))
 * // 'throttlingException: Too many requests'
 */
function eventStreamError(bytes: Uint8Array): string | undefined {
  let messages;
  try {
    // push, not decodeEventStream: a stream cut after its exception frame still says it.
    messages = new EventStreamDecoder().push(bytes);
  } catch {
    return undefined;
  }
  for (const m of messages) {
    const kind = headerString(m, ':message-type');
    if (kind === 'error') return shown([headerString(m, ':error-code'), headerString(m, ':error-message')].filter((x) => x !== undefined && x !== '').join(': ')) || 'error';
    if (kind !== 'exception') continue;
    let message: unknown;
    try {
      const d: unknown = JSON.parse(new TextDecoder('utf-8').decode(m.body));
      message = isObj(d) ? (d.message ?? d.Message) : undefined;
    } catch {
      message = undefined;
    }
    return described({ type: headerString(m, ':exception-type'), message: typeof message === 'string' ? message : undefined });
  }
  return undefined;
}
