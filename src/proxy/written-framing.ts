/**
 * The first piece of a hand-written stream that is not JSON: an NDJSON line (Ollama), the data
 * of a server-sent event (every other provider's stream), or a JSON-array stream's text (Gemini
 * without `?alt=sse`). A client parses each piece as JSON and fails on such a piece, whatever
 * comes after it; and the completeness verdict (answerVerdict) only sees that the stream is not
 * whole, which, said as "it has no end", sends the user looking for an end that is there. Named
 * by its place as the user wrote it (`line 2`, `response.events[1].data`), with the parser's
 * error and the text.
 */
import { parseSse } from '../providers/sse-assemble.ts';

/** A piece that is not JSON: where it is and what is wrong, in the user's terms. */
export interface UnparsedPiece {
  /** `line 2 of \`response.body\` is not JSON`, `` `response.events[1].data` is not JSON ``, ... */
  said: string;
  /** The JSON parser's error (`Expected double-quoted property name in JSON at position 61`). */
  error: string;
  /** The piece's text, shortened to one line for a terminal. */
  text: string;
}

/** How the stream is framed: NDJSON lines, server-sent events, or one JSON array. */
export type StreamFraming = 'ndjson' | 'sse' | 'array';

const decoder = new TextDecoder('utf-8');

/** Up to 120 characters of a piece, control characters (a CR, a tab) shown as spaces. */
const excerpt = (s: string): string => {
  const one = s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  return one.length > 120 ? `${one.slice(0, 120)}…` : one;
};

/** JSON.parse's complaint about `text`, or undefined when it parses. */
function jsonError(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    return String((e as Error)?.message ?? e).split('\n')[0];
  }
}

/**
 * The first piece of a stream's `body` that is not JSON, or undefined when every piece parses.
 * `events`: the body was written as `response.events` (each becomes one server-sent event, in
 * order), so an event is named by its index there; else by its number in the body. OpenAI's
 * `[DONE]` is the one event data that is text by design.
 *
 * @example
 * unparsedPiece('ndjson', new TextEncoder().encode('{"done":false}\n{"done":false,}\n{"done":true}\n'), false)
 * // { said: 'line 2 of `response.body` is not JSON', error: 'Expected double-quoted property name in JSON at position 14 ...', text: '{"done":false,}' }
 */
export function unparsedPiece(framing: StreamFraming, body: Uint8Array, events: boolean): UnparsedPiece | undefined {
  const text = decoder.decode(body);
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (framing === 'array') {
    const error = jsonError(text.slice(start));
    return error === undefined ? undefined : { said: '`response.body` is not JSON', error, text: excerpt(text.slice(start).trim()) };
  }
  if (framing === 'ndjson') {
    // Numbered as an editor numbers them (blank lines counted), so the user finds the line.
    const lines = text.slice(start).split('\n');
    for (const [i, raw] of lines.entries()) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '') continue;
      const error = jsonError(line);
      if (error !== undefined) return { said: `line ${i + 1} of \`response.body\` is not JSON`, error, text: excerpt(line) };
    }
    return undefined;
  }
  for (const [i, e] of parseSse(text).entries()) {
    if (e.data === '[DONE]') continue;
    const error = jsonError(e.data);
    if (error === undefined) continue;
    const said = events ? `\`response.events[${i}].data\` is not JSON` : `event ${i + 1} of \`response.body\` has data that is not JSON`;
    return { said, error, text: excerpt(e.data) };
  }
  return undefined;
}
