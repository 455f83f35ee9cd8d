/**
 * What an injected fault looks like on the wire (chaos; src/chaos/ decides which call gets
 * one): a status fault in the error shape of the provider the client talks to, through its
 * module's fault() (./provider.ts), with the retry headers its SDK reads; and a recorded answer
 * split into its events, so a stream can be cut after N of them, paused between them, or sent
 * with one event's JSON broken, in its own framing (server-sent events, NDJSON, AWS event stream).
 */
import { TapedeckError } from '../errors.ts';
import { errorModuleOf } from './index.ts';
import type { StatusFault } from './provider.ts';
import { decodeEventStream, encodeEventStreamMessage } from './wire/aws-eventstream.ts';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** A status fault ready to send: status, body and every header. */
export interface StatusFaultAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

const RETRY_AFTER = new Set<string>(['429', '503', '529']);

/**
 * An injected 429, 500, 503 or 529 in the shape of the provider a request is for (by its path
 * and headers, as a miss is), with `retry-after` (seconds) and `retry-after-ms` on 429 and
 * overload answers and `x-should-retry: true`, the headers the OpenAI and Anthropic SDKs read.
 * The message names the seed: a test that fails on the fault shows in its own output how to
 * inject the same faults again. The request-id headers the SDKs put on their errors
 * (`x-request-id`, `request-id`, `x-amzn-requestid`) say the answer is an injected one.
 *
 * @example
 * statusFault('/v1/messages', {}, '529', 1000, 7).status // 529, Anthropic's overloaded_error
 * statusFault('/v1/chat/completions', {}, '429', 1000, 7).headers['retry-after'] // '1'
 *
 * `retry` says what a retry of the call gets (the message's advice: with `attempts` the
 * retry after them gets the recording; without, every attempt is drawn anew).
 */
export function statusFault(path: string, headers: Headers, fault: StatusFault, retryAfterMs: number, seed: number, retry = 'the retry gets the recording'): StatusFaultAnswer {
  const m = errorModuleOf(path, headers);
  const what = fault === '429' ? 'rate limit' : fault === '500' ? 'server error' : fault === '503' ? 'service unavailable' : 'overloaded';
  const message = `tapedeck chaos: injected ${fault} ${what} with seed ${seed} (not the API's answer; ${retry}; chaos.seed ${seed} or --chaos-seed ${seed} injects the same faults again)`;
  let a = m.fault?.(fault, message);
  if (!a) {
    const status = Number(fault);
    const e = new TapedeckError('E_CHAOS', message, { fault });
    const ea = m.errorAnswer(e, status);
    a = { status, body: ea.body, ...(ea.headers ? { headers: ea.headers } : {}) };
  }
  const id = `tapedeck-chaos-${fault}-seed-${seed}`;
  const out: Record<string, string> = { 'content-type': 'application/json', 'x-should-retry': 'true', 'x-request-id': id, 'request-id': id, 'x-amzn-requestid': id, ...a.headers };
  if (RETRY_AFTER.has(fault)) {
    out['retry-after'] = String(Math.ceil(retryAfterMs / 1000));
    out['retry-after-ms'] = String(retryAfterMs);
  }
  return { status: a.status, body: a.body, headers: out };
}

const EVENT_STREAM = 'application/vnd.amazon.eventstream';

function typeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Splits at the end of each separator (`\n\n` for events, `\n` for lines). */
function splitAfter(body: Uint8Array, sep: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i + sep.length <= body.length; i++) {
    let hit = true;
    for (let k = 0; k < sep.length && hit; k++) hit = body[i + k] === sep[k];
    if (!hit) continue;
    // `\r\n\r\n` ends an event too: the `\n\n` test sees `\n\r\n`, so both are looked for.
    out.push(body.subarray(start, i + sep.length));
    start = i + sep.length;
    i += sep.length - 1;
  }
  if (start < body.length) out.push(body.subarray(start));
  return out;
}

function sseEvents(body: Uint8Array): Uint8Array[] {
  const text = new TextDecoder().decode(body);
  if (!text.includes('\r\n')) return splitAfter(body, [0x0a, 0x0a]);
  return splitAfter(body, [0x0d, 0x0a, 0x0d, 0x0a]);
}

function eventStreamFrames(body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const v = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let at = 0;
  while (at + 4 <= body.length) {
    const len = v.getUint32(at);
    if (len < 16 || at + len > body.length) break;
    out.push(body.subarray(at, at + len));
    at += len;
  }
  if (at < body.length) out.push(body.subarray(at));
  return out;
}

/**
 * A recorded answer as the events a client reads one by one: server-sent events, NDJSON lines,
 * AWS event-stream messages; another body in its recorded chunks, or in two halves when it came
 * whole (so that cutting it leaves part of it).
 *
 * @example
 * answerEvents(bytes('data: {"a":1}\n\ndata: [DONE]\n\n'), 'text/event-stream').length // 2
 */
export function answerEvents(body: Uint8Array, contentType: string | undefined, chunks?: readonly Uint8Array[]): Uint8Array[] {
  const type = typeOf(contentType);
  let events: Uint8Array[];
  if (type === 'text/event-stream') events = sseEvents(body);
  else if (type === 'application/x-ndjson' || type === 'application/jsonl' || type === 'application/json-seq') events = splitAfter(body, [0x0a]);
  else if (type === EVENT_STREAM) events = eventStreamFrames(body);
  else events = chunks && chunks.length > 1 ? [...chunks] : [];
  if (events.length > 1) return events;
  if (body.length < 2) return [body];
  const half = body.length >> 1;
  return [body.subarray(0, half), body.subarray(half)];
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** JSON text cut in the middle: never valid (an object or array is left open). */
function brokenJson(text: string): string {
  const t = text.trim();
  return t.slice(0, Math.max(1, Math.floor(t.length / 2)));
}

function breakSse(event: Uint8Array): Uint8Array | undefined {
  const lines = dec.decode(event).split(/(\r?\n)/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^data: ?(.*)$/.exec(lines[i]!);
    if (!m || !/^[[{]/.test(m[1]!.trim())) continue;
    lines[i] = `data: ${brokenJson(m[1]!)}`;
    return enc.encode(lines.join(''));
  }
  return undefined;
}

function breakLine(event: Uint8Array): Uint8Array | undefined {
  const text = dec.decode(event);
  if (!/^\s*[[{]/.test(text)) return undefined;
  return enc.encode(`${brokenJson(text)}\n`);
}

function breakFrame(event: Uint8Array): Uint8Array | undefined {
  let m;
  try {
    [m] = decodeEventStream(event);
  } catch {
    return undefined;
  }
  if (!m || !/^\s*[[{]/.test(dec.decode(m.body))) return undefined;
  // Framed and checksummed as a real message: only its JSON payload is broken.
  return encodeEventStreamMessage({ headers: m.headers, body: enc.encode(brokenJson(dec.decode(m.body))) });
}

/**
 * The events of an answer with the JSON of one of them broken (the second that carries JSON,
 * else the first), framing kept: what a client's parser meets when a provider sends a malformed
 * event. A body that is no stream is cut to its first half and sent as if whole.
 *
 * @example
 * malformedEvents(events, 'text/event-stream') // same events, one `data:` line cut mid-JSON
 */
export function malformedEvents(events: readonly Uint8Array[], contentType: string | undefined): Uint8Array[] {
  const type = typeOf(contentType);
  const breaker = type === 'text/event-stream' ? breakSse : type === EVENT_STREAM ? breakFrame : type === 'application/x-ndjson' || type === 'application/jsonl' ? breakLine : undefined;
  if (!breaker) return [events[0]!];
  const out = [...events];
  const order = events.length > 1 ? [1, ...events.keys()].filter((i, k) => i < events.length && (k === 0 || i !== 1)) : [0];
  for (const i of order) {
    const broken = breaker(events[i]!);
    if (broken) {
      out[i] = broken;
      return out;
    }
  }
  return [events[0]!];
}
