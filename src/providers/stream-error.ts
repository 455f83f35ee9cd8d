/**
 * The API's own error inside an event stream that began with a 200: Anthropic's `event: error`
 * (`{"type":"error","error":{"type":"overloaded_error",...}}`), OpenAI's data line
 * `{"error":{...}}`, the Responses API's `error` and `response.failed` events, Gemini's
 * `{"error":{...}}`. The SDKs raise it as an API error, as they raise a 5xx: it is an error
 * answer sent after its status, not a stream cut short.
 *
 * Node only: the record paths and `tapedeck stats` ask it; a page never records.
 */
import { parseSse } from './sse-assemble.ts';

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
 */
export function streamErrorOf(contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string): string | undefined {
  const type = typeof contentType === 'string' ? contentType : contentType?.[0];
  if (type === undefined || !/^\s*text\/event-stream/i.test(type)) return undefined;
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
