/**
 * The usage chunk an OpenAI chat stream owes a caller that asked for it. With `stream_options:
 * { include_usage: true }` OpenAI sends, after the chunk with the finish reason, one more chunk
 * with empty `choices` and the `usage` of the whole answer, then `data: [DONE]`. A stream that
 * ended after the finish reason without it was cut: recorded, it would replay an answer without
 * usage where the API gives one (a cost report or a token budget reads null).
 *
 * Node only: the record paths and re-recording judge with it; a page never records.
 */
import { parseSse } from './sse-parse.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether a request body asks a chat stream for its usage chunk.
 *
 * @example
 * usageAsked({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } }) // true
 */
export function usageAsked(requestBody: unknown): boolean {
  return isObj(requestBody) && requestBody.stream === true && isObj(requestBody.stream_options) && requestBody.stream_options.include_usage === true;
}

/**
 * Whether a chat completions event stream lacks the usage chunk its request asked for: it
 * ended on a chunk with `choices` and no `usage` object. False when usage was not asked for,
 * for other bodies and shapes, and once `data: [DONE]` came: a server that ignores
 * `stream_options` (some OpenAI-compatible ones do) ends its whole answer so, and replaying it
 * gives what that server gives.
 *
 * @example
 * usageChunkMissing({ stream: true, stream_options: { include_usage: true } }, 'text/event-stream', 'data: {"choices":[{"delta":{},"finish_reason":"stop"}],"usage":null}\n\n') // true
 */
export function usageChunkMissing(requestBody: unknown, contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string): boolean {
  // Asked for first: most requests do not, and the stream is not read again for them.
  if (!usageAsked(requestBody)) return false;
  const type = typeof contentType === 'string' ? contentType : contentType?.[0];
  if (type === undefined || !/^\s*text\/event-stream/i.test(type)) return false;
  const events = parseSse(typeof bytes === 'string' ? bytes : new TextDecoder('utf-8').decode(bytes));
  // The usage chunk is the last one before [DONE]: the last event that says anything decides.
  for (let i = events.length - 1; i >= 0; i--) {
    const data = events[i]!.data;
    if (data === '[DONE]') return false;
    let d: unknown;
    try {
      d = JSON.parse(data);
    } catch {
      continue;
    }
    if (!isObj(d)) continue;
    if (isObj(d.usage)) return false;
    // Every chunk but the usage chunk carries `"usage": null` when usage was asked for.
    return Array.isArray(d.choices);
  }
  return false;
}
