/**
 * The events of a server-sent-event stream. Its own module, apart from the assembler
 * (./sse-assemble.ts): a page replaying a tape reads events (Gemini's chunks, a stream's error
 * event) but never assembles an answer, and its bundle has a 100 KB budget.
 */

/** One server-sent event: its `event:` name (default "message") and its data lines joined. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits an event stream into events (the WHATWG EventSource parsing rules: CRLF, LF or CR line
 * ends, `:` comments, one optional space after the colon, data lines joined with LF; an event
 * without a blank line after it at the end of the stream is dropped, as a browser does).
 *
 * @example
 * parseSse('event: ping\ndata: {}\n\n') // [{ event: 'ping', data: '{}' }]
 */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  let event = '';
  let data: string[] = [];
  let hasData = false;
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const lines = text.slice(start).split(/\r\n|\r|\n/);
  // The piece after the last line end is no line ('' when the text ends with one): taken for a
  // blank line, it dispatched an event whose blank line never came (a stream cut one byte short).
  lines.pop();
  for (const line of lines) {
    if (line === '') {
      if (hasData) out.push({ event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      hasData = false;
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') {
      data.push(value);
      hasData = true;
    }
  }
  return out;
}
