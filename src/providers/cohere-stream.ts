/**
 * Completeness of Cohere's v1 chat stream (`POST /v1/chat` with `stream: true`, the `cohere-ai`
 * SDK's `CohereClient.chatStream`): newline-delimited JSON (`application/stream+json`; some
 * gateways relabel it `application/x-ndjson`), one object per event, each with an `event_type`
 * and `is_finished`. The last one is `stream-end` (`is_finished: true`, the finish reason and
 * the whole response). The SDK yields the events that came and stops quietly when the
 * connection ends, so a stream cut before `stream-end` must not be recorded as a whole answer.
 *
 * Cohere's v2 stream is server-sent events: its rule (`message-end`) is streamComplete's, in
 * ./sse-assemble.ts, with the other event-stream rules.
 */
import { ndjsonComplete, parseNdjson } from './wire/ndjson.ts';

/** The content types a JSON-lines stream comes under. */
const LINES_TYPE = /^application\/(?:stream\+json|x-ndjson|ndjson|jsonl|x-jsonlines)\b/i;

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A Cohere v1 stream event: an object with a string `event_type` and a boolean `is_finished`. */
const isCohereEvent = (v: unknown): boolean => isObj(v) && typeof v.event_type === 'string' && typeof v.is_finished === 'boolean';

/**
 * Whether a JSON-lines body is a whole answer by Cohere v1's rule: false for a Cohere v1 stream
 * (its first line is `{"is_finished":false,"event_type":"stream-start",...}`) that does not end
 * with a `stream-end` event, or that ends inside a line; true for a whole one and for any body
 * that is not a Cohere v1 stream (nothing to judge it by here).
 *
 * @example
 * cohereStreamComplete('application/stream+json', '{"is_finished":false,"event_type":"stream-start"}\n') // false
 * cohereStreamComplete('application/stream+json', '{"is_finished":false,"event_type":"stream-start"}\n{"is_finished":true,"event_type":"stream-end","finish_reason":"COMPLETE"}\n') // true
 */
export function cohereStreamComplete(contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string): boolean {
  const ct = Array.isArray(contentType) ? contentType[0] : contentType;
  if (typeof ct !== 'string' || !LINES_TYPE.test(ct.trim())) return true;
  // Parsed once: the first value tells a Cohere stream, and the whole parse judges it.
  const parsed = parseNdjson(bytes);
  if (!isCohereEvent(parsed.values[0])) return true;
  return ndjsonComplete(parsed, (v) => isObj(v) && v.event_type === 'stream-end' && v.is_finished === true);
}
