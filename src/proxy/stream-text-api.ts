/**
 * The checked public forms of the event-stream readers (`llm-tapedeck/proxy`). The readers
 * themselves run on every replayed stream, in the page bundle too, which has a 100 KB budget;
 * the checks that turn a wrong argument into an E_ARG (instead of Node's TypeError about
 * `charCodeAt`) are made here, at the entry a program calls, once per call.
 */
import { isBytes } from '../bytes.ts';
import { TapedeckError } from '../errors.ts';
import { describeArgument } from '../option-names.ts';
import { assembleStream as assemble } from '../providers/sse-assemble.ts';
import { parseSse as parse, type SseEvent } from '../providers/sse-parse.ts';

/** The text of a stream given as text or UTF-8 bytes, or E_ARG naming the function and what it got. */
function streamText(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (isBytes(value)) return new TextDecoder('utf-8').decode(value);
  throw new TapedeckError('E_ARG', `${where} takes an event stream as a string or a Uint8Array of its UTF-8; got ${describeArgument(value)}.`, {
    hint: `Pass the response body as text or bytes, e.g. ${where === 'parseSse' ? 'parseSse(await res.text())' : "assembleStream(res.headers.get('content-type'), await res.text())"}.`,
  });
}

/**
 * Splits an event stream into events (the WHATWG EventSource rules: CRLF, LF or CR line ends,
 * `:` comments, data lines joined with LF; an event without its blank line at the end of the
 * stream is dropped, as a browser does). Takes the stream as text or as its UTF-8 bytes.
 *
 * @example
 * parseSse('event: ping\ndata: {}\n\n') // [{ event: 'ping', data: '{}' }]
 */
export function parseSse(text: string | Uint8Array): SseEvent[] {
  return parse(streamText(text, 'parseSse'));
}

/**
 * The non-streaming response body equivalent to a recorded event stream, or undefined when the
 * content type is not `text/event-stream` or the stream is not one of the shapes assembled
 * (OpenAI chat, legacy completions and Responses, Anthropic Messages). `contentType` is the Content-Type header as
 * stored (a string or the first of a list); `bytes` the body as received (UTF-8), or its text.
 *
 * @example
 * const body = assembleStream(rec.response.headers['content-type'], rec.response.body)
 * // Record<string, unknown>: the shape is the provider's (OpenAI chat here), so name it
 * const chat = body as { choices: { message: { content: string | null } }[] } | undefined
 * chat?.choices[0]?.message.content // the streamed text, whole
 */
export function assembleStream(contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string): Record<string, unknown> | undefined {
  return assemble(contentType, streamText(bytes, 'assembleStream'));
}
