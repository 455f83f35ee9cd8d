/**
 * The review form of a recorded stream, for `git diff` (`tapedeck export --review`, the textconv
 * `tapedeck init` sets): instead of the stream's bytes as one escaped line of kilobytes (or
 * base64, for Bedrock's binary event stream), the answer it stands for, assembled by the
 * provider module of its route, and its events one per line, so a re-recorded stream shows what
 * changed in words. Not importable: the export without `--review` is the lossless form.
 */
import { assembleAnswer, routeStreams } from '../providers/index.ts';
import { parseSse } from '../providers/sse-assemble.ts';
import { decodeEventStream, headerString } from '../providers/wire/aws-eventstream.ts';
import { isHttpRecord } from './records.ts';

/** A recorded stream as a reviewer reads it. */
export interface StreamReview {
  /** The non-streamed answer it stands for; null when no module assembles it (cut, unknown). */
  answer: Record<string, unknown> | null;
  /** Its events (SSE events, NDJSON lines, event-stream frames, array elements), one per entry. */
  events: string[];
}

const utf8 = new TextDecoder('utf-8');

function contentTypeOf(headers: Record<string, unknown> | undefined): string {
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() !== 'content-type') continue;
    const s = Array.isArray(v) ? v[0] : v;
    return typeof s === 'string' ? s.split(';')[0]!.trim().toLowerCase() : '';
  }
  return '';
}

/** A JSON text in one line (its own spelling when it is not JSON). */
function oneLine(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.replace(/\r?\n/g, '\\n');
  }
}

/** Bedrock frames: `<event type> <payload>`, InvokeModel's base64 `bytes` chunks decoded. */
function eventStreamEvents(bytes: Uint8Array): string[] {
  return decodeEventStream(bytes).map((m) => {
    const type = headerString(m, ':event-type') ?? headerString(m, ':exception-type') ?? headerString(m, ':message-type') ?? '?';
    const text = utf8.decode(m.body);
    let shown = oneLine(text);
    try {
      const p = JSON.parse(text) as { bytes?: unknown };
      if (typeof p.bytes === 'string') shown = oneLine(Buffer.from(p.bytes, 'base64').toString('utf8'));
    } catch {
      // not JSON: shown as it is
    }
    return `${type} ${shown}`;
  });
}

/**
 * The review form of a record's answer when it is a stream, else undefined.
 *
 * @example
 * streamReview(tape.records[0].value)?.events // ['data: {"choices":[...]}', ..., 'data: [DONE]']
 */
export function streamReview(record: unknown): StreamReview | undefined {
  if (!isHttpRecord(record)) return undefined;
  const { request, response } = record;
  const ct = contentTypeOf(response.headers);
  const body = response.body;
  let events: string[];
  try {
    if (ct === 'text/event-stream') events = parseSse(utf8.decode(body)).map((e) => (e.event === 'message' ? `data: ${oneLine(e.data)}` : `${e.event}: ${oneLine(e.data)}`));
    else if (ct === 'application/x-ndjson') events = utf8.decode(body).split(/\r?\n/).filter((l) => l.trim() !== '').map(oneLine);
    else if (ct === 'application/vnd.amazon.eventstream') events = eventStreamEvents(body);
    else if (routeStreams(request) && body[0] === 0x5b) events = (JSON.parse(utf8.decode(body)) as unknown[]).map((x) => JSON.stringify(x));
    else return undefined;
  } catch {
    return undefined;
  }
  const answer = assembleAnswer(request, ct, body) ?? null;
  return { answer, events };
}
