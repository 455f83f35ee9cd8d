// Bedrock's event streams (AWS event-stream frames, docs/providers.md "AWS Bedrock"): whether a
// recorded stream is a whole answer, and the answer it stands for. Kept apart from bedrock.ts so
// a page (src/browser), which only replays, leaves the frame decoder out
// (bedrock-stream.browser.ts).
import type { RouteMatch } from './provider.ts';
import { assembleStream } from './sse-assemble.ts';
import { decodeEventStream, headerString, type EventStreamMessage } from './wire/aws-eventstream.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const EVENT_STREAM = 'application/vnd.amazon.eventstream';
const STREAMING = new Set(['ConverseStream', 'InvokeModelWithResponseStream']);

function messagesOf(bytes: Uint8Array): EventStreamMessage[] | undefined {
  try {
    return decodeEventStream(bytes);
  } catch {
    return undefined;
  }
}

const decoder = new TextDecoder();

function payload(m: EventStreamMessage): unknown {
  try {
    return JSON.parse(decoder.decode(m.body));
  } catch {
    return undefined;
  }
}

/** The Anthropic stream events carried by an InvokeModelWithResponseStream answer's `chunk` events. */
function invokeEvents(ms: EventStreamMessage[]): unknown[] | undefined {
  const out: unknown[] = [];
  for (const m of ms) {
    if (headerString(m, ':message-type') !== 'event') return undefined;
    if (headerString(m, ':event-type') !== 'chunk') continue;
    const p = payload(m);
    if (!isObj(p) || typeof p.bytes !== 'string') return undefined;
    try {
      out.push(JSON.parse(decoder.decode(Uint8Array.from(atob(p.bytes), (c) => c.charCodeAt(0)))));
    } catch {
      return undefined;
    }
  }
  return out;
}

const ended = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * Whether an invoke stream's model events end as that model family ends its stream. Bedrock adds
 * `amazon-bedrock-invocationMetrics` to the last event of every family; each family also marks its
 * end itself: Anthropic `message_stop`, Nova `metadata` after `messageStop`, Llama/Titan/Cohere a
 * stop reason on the event, Mistral/DeepSeek/AI21 one on a choice.
 */
function invokeEnded(events: unknown[]): boolean {
  const last = events.at(-1);
  if (!isObj(last)) return false;
  if (last.type === 'message_stop' || last['amazon-bedrock-invocationMetrics'] !== undefined || last.is_finished === true) return true;
  if (last.metadata !== undefined) return events.some((e) => isObj(e) && e.messageStop !== undefined);
  if (ended(last.stop_reason) || ended(last.completionReason) || ended(last.finish_reason)) return true;
  const choices = Array.isArray(last.choices) ? last.choices : Array.isArray(last.outputs) ? last.outputs : [];
  return choices.length > 0 && choices.every((c) => isObj(c) && (ended(c.stop_reason) || ended(c.finish_reason)));
}

function isStream(contentType: string | undefined, route: RouteMatch | undefined): boolean {
  const ct = contentType?.split(';')[0]?.trim().toLowerCase();
  return ct === EVENT_STREAM || (route !== undefined && STREAMING.has(route.route.operation) && ct === undefined);
}

/**
 * Whether an event stream is a whole answer: it decodes (every CRC right), carries no exception
 * message, and ends as its operation ends: ConverseStream with `messageStop` then `metadata`,
 * InvokeModelWithResponseStream with the chunk that ends its model family's stream (Anthropic
 * `message_stop`, Llama's `stop_reason`, Nova's `metadata`, ...).
 *
 * @example
 * complete(bytes, 'application/vnd.amazon.eventstream') // true once messageStop and metadata came
 */
export function complete(bytes: Uint8Array, contentType: string | undefined, route?: RouteMatch): boolean | undefined {
  if (!isStream(contentType, route)) return undefined;
  const ms = messagesOf(bytes);
  if (!ms || ms.length === 0) return false;
  if (ms.some((m) => headerString(m, ':message-type') !== 'event')) return false;
  const types = ms.map((m) => headerString(m, ':event-type'));
  if (types.includes('chunk')) {
    const events = invokeEvents(ms);
    return events !== undefined && invokeEnded(events);
  }
  return types.includes('messageStop') && types.at(-1) === 'metadata';
}

/**
 * The answer a recorded stream stands for: a ConverseStream as the Converse answer
 * (`{ output: { message }, stopReason, usage, metrics }`), an Anthropic invoke stream as the
 * Anthropic message.
 *
 * @example
 * assemble(bytes, 'application/vnd.amazon.eventstream')?.stopReason // 'end_turn'
 */
export function assemble(bytes: Uint8Array, contentType: string | undefined, route?: RouteMatch): Record<string, unknown> | undefined {
  if (!isStream(contentType, route) || !complete(bytes, contentType, route)) return undefined;
  const ms = messagesOf(bytes)!;
  if (ms.some((m) => headerString(m, ':event-type') === 'chunk')) {
    const sse = invokeEvents(ms)!.map((e) => `event: ${isObj(e) ? String(e.type) : 'message'}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    return assembleStream('text/event-stream', sse);
  }
  const content: Obj[] = [];
  const inputs = new Map<number, string>();
  const out: Obj = { output: { message: { role: 'assistant', content } } };
  for (const m of ms) {
    const p = payload(m);
    if (!isObj(p)) continue;
    const i = typeof p.contentBlockIndex === 'number' ? p.contentBlockIndex : 0;
    switch (headerString(m, ':event-type')) {
      case 'messageStart':
        ((out.output as Obj).message as Obj).role = p.role;
        break;
      case 'contentBlockStart':
        if (isObj(p.start) && isObj(p.start.toolUse)) content[i] = { toolUse: { toolUseId: p.start.toolUse.toolUseId, name: p.start.toolUse.name, input: {} } };
        break;
      case 'contentBlockDelta': {
        const d = isObj(p.delta) ? p.delta : {};
        if (typeof d.text === 'string') {
          const b = (content[i] ??= { text: '' });
          b.text = String(b.text ?? '') + d.text;
        } else if (isObj(d.toolUse) && typeof d.toolUse.input === 'string') {
          inputs.set(i, (inputs.get(i) ?? '') + d.toolUse.input);
        } else if (isObj(d.reasoningContent)) {
          const b = (content[i] ??= { reasoningContent: { reasoningText: { text: '' } } });
          const rt = ((b.reasoningContent as Obj).reasoningText ??= { text: '' }) as Obj;
          if (typeof d.reasoningContent.text === 'string') rt.text = String(rt.text ?? '') + d.reasoningContent.text;
          if (typeof d.reasoningContent.signature === 'string') rt.signature = d.reasoningContent.signature;
        }
        break;
      }
      case 'messageStop':
        out.stopReason = p.stopReason;
        if (p.additionalModelResponseFields !== undefined) out.additionalModelResponseFields = p.additionalModelResponseFields;
        break;
      case 'metadata':
        for (const k of ['usage', 'metrics', 'trace', 'performanceConfig']) if (p[k] !== undefined) out[k] = p[k];
        break;
    }
  }
  for (const [i, text] of inputs) {
    const b = content[i];
    if (!b || !isObj(b.toolUse)) continue;
    try {
      b.toolUse.input = text === '' ? {} : JSON.parse(text);
    } catch {
      b.toolUse.input = text;
    }
  }
  ((out.output as Obj).message as Obj).content = content.filter((b) => b !== undefined);
  return out;
}
