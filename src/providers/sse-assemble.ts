/**
 * Turns a recorded server-sent-event stream back into the body the same request would have got
 * without `stream: true`. Pure (no I/O): the tree uses it to read streamed proxy records as
 * conversations, and anything else that wants the final answer of a recorded stream can too.
 *
 * Shapes assembled:
 * - OpenAI chat completions (`chat.completion.chunk`): per choice index, `delta.content` (and `delta.audio`'s pieces) and
 *   `delta.refusal` concatenated, the reasoning text OpenAI-compatible APIs stream
 *   (`delta.reasoning_content`, `delta.reasoning`) concatenated into the message member of that name, `role`, `delta.tool_calls` merged by index (id, type, name set;
 *   `function.arguments` concatenated), legacy `delta.function_call`, `finish_reason`,
 *   `logprobs.content` concatenated; `usage` from the usage chunk (Groq's: the last chunk's `x_groq.usage`).
 * - OpenAI legacy completions (`text_completion` chunks): `choices[].text` concatenated.
 * - OpenAI Responses: the `response` of the last `response.completed` (or `response.incomplete`)
 *   event, which carries the whole response.
 * - Anthropic Messages: `message_start`, `content_block_start` / `content_block_delta`
 *   (`text_delta`, `input_json_delta` -> tool input parsed at the block's end, `thinking_delta`,
 *   `signature_delta`, `citations_delta`) / `content_block_stop`, `message_delta` (stop reason,
 *   usage).
 *
 * Anything else (another content type, an unknown stream shape, a stream that reports an error
 * or ends without the events that make an answer) gives undefined: no answer is better than a
 * made-up one.
 */

import { REASONING_DELTAS } from './openai-compatible.ts';
import type { RouteMatch } from './provider.ts';
import { parseSse, type SseEvent } from './sse-parse.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export { parseSse, type SseEvent } from './sse-parse.ts';

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

function contentTypeOf(ct: string | readonly string[] | undefined | null): string {
  const v = Array.isArray(ct) ? ct[0] : ct;
  return typeof v === 'string' ? v.split(';')[0]!.trim().toLowerCase() : '';
}

// ---------------------------------------------------------------------------------------------
// OpenAI chat completions (and legacy completions)

interface ToolCallAcc {
  id?: string;
  type?: string;
  name: string;
  arguments: string;
  extra: Obj;
}

interface ChoiceAcc {
  index: number;
  role: string | undefined;
  content: string;
  hasContent: boolean;
  refusal: string;
  hasRefusal: boolean;
  text: string;
  isText: boolean;
  toolCalls: Map<number, ToolCallAcc>;
  functionCall: { name: string; arguments: string } | undefined;
  finishReason: unknown;
  logprobs: unknown[] | undefined;
  /** Reasoning text by delta member (`reasoning_content`, `reasoning`), concatenated. */
  reasoning: Map<string, string>;
  /** Spoken answers (`modalities: ['text', 'audio']`): the id, base64 speech and transcript, a piece per chunk. */
  audio: { id?: unknown; data: string; transcript: string; expires_at?: unknown } | undefined;
}

function openaiChat(datas: unknown[]): Obj | undefined {
  let head: Obj | undefined;
  let usage: unknown;
  let groqUsage: unknown;
  let legacy = false;
  const choices = new Map<number, ChoiceAcc>();
  for (const d of datas) {
    if (!isObj(d)) continue;
    if (isObj(d.error)) return undefined;
    if (!Array.isArray(d.choices)) continue;
    if (head === undefined) {
      head = d;
      legacy = d.object === 'text_completion';
    }
    if (d.usage !== undefined && d.usage !== null) usage = d.usage;
    // Groq reports a stream's usage in its last chunk's `x_groq.usage` (and at the top level only
    // when `stream_options.include_usage` asks): the top-level one wins when both came.
    else if (isObj(d.x_groq) && isObj(d.x_groq.usage)) groqUsage = d.x_groq.usage;
    for (const c of d.choices) {
      if (!isObj(c)) continue;
      const index = typeof c.index === 'number' ? c.index : 0;
      let acc = choices.get(index);
      if (!acc) {
        acc = { index, role: undefined, content: '', hasContent: false, refusal: '', hasRefusal: false, text: '', isText: false, toolCalls: new Map(), functionCall: undefined, finishReason: null, logprobs: undefined, reasoning: new Map(), audio: undefined };
        choices.set(index, acc);
      }
      if (c.finish_reason !== undefined && c.finish_reason !== null) acc.finishReason = c.finish_reason;
      if (isObj(c.logprobs) && Array.isArray(c.logprobs.content)) (acc.logprobs ??= []).push(...c.logprobs.content);
      if (typeof c.text === 'string') {
        acc.isText = true;
        acc.text += c.text;
      }
      const delta = c.delta;
      if (!isObj(delta)) continue;
      if (typeof delta.role === 'string') acc.role = delta.role;
      if (typeof delta.content === 'string' && delta.content !== '') {
        acc.content += delta.content;
        acc.hasContent = true;
      }
      for (const name of REASONING_DELTAS) {
        const r = delta[name];
        if (typeof r === 'string' && r !== '') acc.reasoning.set(name, (acc.reasoning.get(name) ?? '') + r);
      }
      if (isObj(delta.audio)) {
        // The transcript is what drift compares (the speech is synthesized anew each call).
        const au = (acc.audio ??= { data: '', transcript: '' });
        const d = delta.audio;
        if (d.id !== undefined) au.id = d.id;
        if (d.expires_at !== undefined) au.expires_at = d.expires_at;
        if (typeof d.data === 'string') au.data += d.data;
        if (typeof d.transcript === 'string') au.transcript += d.transcript;
      }
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        acc.refusal += delta.refusal;
        acc.hasRefusal = true;
      }
      if (isObj(delta.function_call)) {
        const f = (acc.functionCall ??= { name: '', arguments: '' });
        if (typeof delta.function_call.name === 'string' && delta.function_call.name !== '') f.name = delta.function_call.name;
        if (typeof delta.function_call.arguments === 'string') f.arguments += delta.function_call.arguments;
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const t of delta.tool_calls) {
          if (!isObj(t)) continue;
          const ti = typeof t.index === 'number' ? t.index : acc.toolCalls.size;
          let tc = acc.toolCalls.get(ti);
          if (!tc) {
            tc = { name: '', arguments: '', extra: {} };
            acc.toolCalls.set(ti, tc);
          }
          for (const [k, v] of Object.entries(t)) {
            if (k === 'index' || k === 'id' || k === 'type' || k === 'function') continue;
            tc.extra[k] = v;
          }
          if (typeof t.id === 'string' && t.id !== '') tc.id = t.id;
          if (typeof t.type === 'string' && t.type !== '') tc.type = t.type;
          if (isObj(t.function)) {
            if (typeof t.function.name === 'string' && t.function.name !== '') tc.name = t.function.name;
            if (typeof t.function.arguments === 'string') tc.arguments += t.function.arguments;
          }
        }
      }
    }
  }
  if (head === undefined) return undefined;
  const out: Obj = {};
  for (const k of ['id', 'created', 'model', 'system_fingerprint', 'service_tier']) if (head[k] !== undefined) out[k] = head[k];
  out.object = legacy ? 'text_completion' : 'chat.completion';
  out.choices = [...choices.values()]
    .sort((a, b) => a.index - b.index)
    .map((a) => {
      const logprobs = a.logprobs ? { content: a.logprobs } : null;
      if (legacy || (a.isText && a.role === undefined)) return { index: a.index, text: a.text, finish_reason: a.finishReason, logprobs };
      // As the OpenAI SDK finalizes a streamed completion: no text is content null.
      const message: Obj = { role: a.role ?? 'assistant', content: a.hasContent ? a.content : null, refusal: a.hasRefusal ? a.refusal : null };
      // DeepSeek, xAI, vLLM `reasoning_content`; OpenRouter, Groq `reasoning`: kept beside the text.
      for (const [name, text] of a.reasoning) message[name] = text;
      if (a.audio) message.audio = a.audio;
      if (a.functionCall) message.function_call = a.functionCall;
      if (a.toolCalls.size > 0) {
        message.tool_calls = [...a.toolCalls.entries()]
          .sort(([x], [y]) => x - y)
          .map(([, t]) => ({ ...t.extra, id: t.id ?? '', type: t.type ?? 'function', function: { name: t.name, arguments: t.arguments } }));
      }
      return { index: a.index, message, finish_reason: a.finishReason, logprobs };
    });
  usage ??= groqUsage;
  if (usage !== undefined) out.usage = usage;
  return out;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

function openaiResponses(datas: unknown[]): Obj | undefined {
  let final: Obj | undefined;
  for (const d of datas) {
    if (!isObj(d)) continue;
    if (d.type === 'error' || d.type === 'response.failed') return undefined;
    if ((d.type === 'response.completed' || d.type === 'response.incomplete') && isObj(d.response)) final = d.response;
  }
  return final;
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

interface BlockAcc {
  block: Obj;
  json: string;
  isToolInput: boolean;
}

function anthropicMessages(datas: unknown[]): Obj | undefined {
  let message: Obj | undefined;
  const blocks = new Map<number, BlockAcc>();
  let stopped = false;
  for (const d of datas) {
    if (!isObj(d)) continue;
    switch (d.type) {
      case 'error':
        return undefined;
      case 'message_start':
        if (!isObj(d.message)) return undefined;
        message = { ...d.message, content: [] };
        if (isObj(d.message.usage)) message.usage = { ...d.message.usage };
        break;
      case 'content_block_start': {
        if (!message || typeof d.index !== 'number' || !isObj(d.content_block)) break;
        const block: Obj = { ...d.content_block };
        const isToolInput = 'input' in block && (block.type === 'tool_use' || block.type === 'server_tool_use' || block.type === 'mcp_tool_use');
        blocks.set(d.index, { block, json: '', isToolInput });
        break;
      }
      case 'content_block_delta': {
        const acc = typeof d.index === 'number' ? blocks.get(d.index) : undefined;
        if (!acc || !isObj(d.delta)) break;
        const delta = d.delta;
        const b = acc.block;
        if (delta.type === 'text_delta' && typeof delta.text === 'string') b.text = (typeof b.text === 'string' ? b.text : '') + delta.text;
        else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') acc.json += delta.partial_json;
        else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') b.thinking = (typeof b.thinking === 'string' ? b.thinking : '') + delta.thinking;
        else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') b.signature = delta.signature;
        else if (delta.type === 'citations_delta' && delta.citation !== undefined) b.citations = [...(Array.isArray(b.citations) ? b.citations : []), delta.citation];
        break;
      }
      case 'message_delta':
        if (!message) break;
        if (isObj(d.delta)) {
          for (const [k, v] of Object.entries(d.delta)) message[k] = v;
        }
        if (isObj(d.usage)) {
          const usage: Obj = isObj(message.usage) ? message.usage : {};
          for (const [k, v] of Object.entries(d.usage)) if (v !== null && v !== undefined) usage[k] = v;
          message.usage = usage;
        }
        break;
      case 'message_stop':
        stopped = true;
        break;
    }
  }
  // A stream cut before message_stop is not a whole answer (the proxy never writes one, but a
  // hand-made or imported record might be).
  if (!message || !stopped) return undefined;
  const content: unknown[] = [];
  for (const [, acc] of [...blocks.entries()].sort(([x], [y]) => x - y)) {
    if (acc.isToolInput) {
      if (acc.json.trim() !== '') {
        try {
          acc.block.input = JSON.parse(acc.json);
        } catch {
          // Keep the text, so a broken tool input is visible rather than silently {}.
          acc.block.input = acc.json;
        }
      } else if (!isObj(acc.block.input)) acc.block.input = {};
    }
    content.push(acc.block);
  }
  message.content = content;
  return message;
}

// ---------------------------------------------------------------------------------------------

/**
 * The non-streaming response body equivalent to a recorded event stream, or undefined when the
 * content type is not `text/event-stream` or the stream is not one of the assembled shapes (see
 * the module comment). `contentType` is the response's Content-Type header as stored (a string or
 * the first of a list); `bytes` the body as received (UTF-8), or its text.
 *
 * @example
 * const body = assembleStream(rec.response.headers['content-type'], rec.response.body)
 * body?.choices?.[0]?.message.content // the streamed text, whole
 */
export function assembleStream(contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string): Record<string, unknown> | undefined {
  if (contentTypeOf(contentType) !== 'text/event-stream') return undefined;
  const text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8').decode(bytes);
  const events = parseSse(text);
  const datas: unknown[] = [];
  for (const e of events) {
    if (e.data === '[DONE]') continue;
    if (e.event === 'error') return undefined;
    const d = parseData(e.data);
    if (d !== undefined) datas.push(d);
  }
  // The first event that says what it is decides the shape.
  for (const d of datas) {
    if (!isObj(d)) continue;
    const type = typeof d.type === 'string' ? d.type : '';
    if (type === 'message_start' || type.startsWith('content_block_') || type === 'message_delta') return anthropicMessages(datas);
    if (type.startsWith('response.')) return openaiResponses(datas);
    if (Array.isArray(d.choices) || d.object === 'chat.completion.chunk' || d.object === 'text_completion') return openaiChat(datas);
    if (type === 'error' || isObj(d.error)) return undefined;
  }
  return undefined;
}

/**
 * The OpenAI event streams that are whole only once one event came, by the prefix their event
 * types share: audio transcriptions (`stream: true`) end with `transcript.text.done`, speech
 * (`stream_format: 'sse'`) with `speech.audio.done`. The SDK takes a stream that ends before it
 * for a whole one (the transcript or audio so far), so a cut one must not be recorded as one.
 */
const DONE_EVENTS: readonly (readonly [prefix: string, done: string])[] = [
  ['transcript.text.', 'transcript.text.done'],
  ['speech.audio.', 'speech.audio.done'],
];

/**
 * Cohere's v2 chat stream (`/v2/chat`, `chatStream`): named events whose `type` is hyphenated
 * (`message-start`, `content-delta`, `tool-call-start`, `citation-end`, ...), ending with
 * `message-end`, which carries the finish reason and usage. The SDK yields whatever events came
 * and takes the end of the connection for the end of the answer, so a stream cut before
 * `message-end` would replay as a whole (shorter) answer.
 */
const COHERE_V2_EVENT = /^(?:message|content|tool-plan|tool-call|citation)-/;

/**
 * The routes (by operation) whose streams are known to end with an end event: chat and legacy
 * completions (`[DONE]` or a finish reason), the Responses API (`response.completed`), Anthropic
 * Messages (`message_stop`). A stream to one of them with no event of an answer at all (an empty
 * 200 stream, a body cut inside its first event) is cut, not an answer of an unknown shape.
 */
const END_DUE = new Set(['chat.completions', 'completions', 'responses', 'messages']);

/**
 * Whether a recorded event stream is a whole answer: OpenAI chat completions end with
 * `data: [DONE]`, or at least a `finish_reason` for every choice the stream began (`n: 3` has
 * three), the Responses API with `response.completed` or `response.incomplete`, audio
 * transcriptions with `transcript.text.done`, speech with `speech.audio.done`, Anthropic
 * Messages with `message_stop`, Cohere v2 chat with `message-end`. A stream that stopped before that (the connection closed early)
 * or that carries an `error` event is not whole: false. True for whole streams, and for bodies
 * that are not event streams or not of a known shape (nothing to judge them by), except on a
 * `route` that says which end is due (chat completions, Responses, Anthropic Messages): there a
 * stream without one event of the answer (empty, or cut inside its first event) is false.
 *
 * @example
 * streamComplete('text/event-stream', 'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n') // false
 * streamComplete('text/event-stream', 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n') // true
 * streamComplete('text/event-stream', '', routeOf({ method: 'POST', url: '/v1/messages' })) // false
 */
export function streamComplete(contentType: string | readonly string[] | undefined | null, bytes: Uint8Array | string, route?: Pick<RouteMatch, 'route'>): boolean {
  if (contentTypeOf(contentType) !== 'text/event-stream') return true;
  const text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8').decode(bytes);
  let shape: 'chat' | 'responses' | 'anthropic' | 'cohere' | 'done-event' | undefined;
  let finished = false;
  let done = false;
  // Chat: whether each choice index seen has its finish_reason, and how many have not yet (a
  // stream of n choices is whole only when all n finished; one finishing says nothing of the others).
  const choices = new Map<number, boolean>();
  let open = 0;
  for (const e of parseSse(text)) {
    if (e.event === 'error') return false;
    if (e.data === '[DONE]') {
      done = true;
      continue;
    }
    const d = parseData(e.data);
    if (!isObj(d)) continue;
    const type = typeof d.type === 'string' ? d.type : '';
    if (type === 'error' || (isObj(d.error) && !Array.isArray(d.choices))) return false;
    if (type === 'message_start' || type.startsWith('content_block_') || type === 'message_delta' || type === 'message_stop') {
      shape ??= 'anthropic';
      if (type === 'message_stop') finished = true;
    } else if (type.startsWith('response.')) {
      shape ??= 'responses';
      if (type === 'response.completed' || type === 'response.incomplete') finished = true;
      if (type === 'response.failed') return false;
    } else if (Array.isArray(d.choices)) {
      shape ??= 'chat';
      for (const c of d.choices) {
        if (!isObj(c)) continue;
        const index = typeof c.index === 'number' ? c.index : 0;
        const ended = c.finish_reason !== null && c.finish_reason !== undefined;
        const was = choices.get(index);
        if (was === undefined) {
          choices.set(index, ended);
          if (!ended) open++;
        } else if (ended && !was) {
          choices.set(index, true);
          open--;
        }
      }
    } else if (COHERE_V2_EVENT.test(type)) {
      shape ??= 'cohere';
      if (type === 'message-end') finished = true;
    } else if (type !== '') {
      for (const [prefix, last] of DONE_EVENTS) {
        if (!type.startsWith(prefix)) continue;
        shape ??= 'done-event';
        if (type === last) finished = true;
      }
    }
  }
  // `data: [DONE]` ends a chat stream whatever its choices say (the API sends it last).
  if (shape === 'chat') return done || (choices.size > 0 && open === 0);
  if (shape === undefined) return done || !END_DUE.has(route?.route.operation ?? '');
  return finished || done;
}

/**
 * The type of one stream event, coarse enough that a longer text gives more of the same: the
 * event's own `type` (Anthropic, Responses; Anthropic content deltas by what they carry), or
 * what an OpenAI chat chunk carries (`role`, `content`, `tool_calls`, `refusal`, `finish`,
 * `usage`). What the drift classifier's `stream` class compares.
 *
 * @example
 * sseEventType('message', '{"choices":[{"delta":{"content":"Hi"}}]}') // 'content'
 */
export function sseEventType(event: string, data: string): string {
  if (data === '[DONE]') return '[DONE]';
  let d: unknown;
  try {
    d = JSON.parse(data);
  } catch {
    return event;
  }
  if (!isObj(d)) return event;
  if (typeof d.type === 'string') {
    // Anthropic content deltas differ by what they carry (text vs tool input).
    if (d.type === 'content_block_delta' && isObj(d.delta) && typeof d.delta.type === 'string') return `content_block_delta:${d.delta.type}`;
    return d.type;
  }
  if (Array.isArray(d.choices)) {
    const c = d.choices[0];
    if (!isObj(c)) return d.usage ? 'usage' : 'chunk';
    if (c.finish_reason !== null && c.finish_reason !== undefined) return 'finish';
    const delta = isObj(c.delta) ? c.delta : {};
    if (Array.isArray(delta.tool_calls)) return 'tool_calls';
    if (typeof delta.refusal === 'string' && delta.refusal !== '') return 'refusal';
    if (typeof delta.role === 'string') return 'role';
    if (typeof delta.content === 'string') return 'content';
    return 'chunk';
  }
  return event;
}

/**
 * A chat completion assembled from chunks keeps the members every chunk repeats (id, model,
 * created...) that the assembler knows; members it does not know are taken from the first chunk
 * here, so that a new envelope member in a streamed answer is seen as one in a plain answer.
 * Other answers come back as they are.
 *
 * @example
 * withChunkEnvelope(assembleStream('text/event-stream', text)!, parseSse(text))
 */
export function withChunkEnvelope(assembled: Obj, events: readonly SseEvent[]): Obj {
  if (assembled.object !== 'chat.completion' && assembled.object !== 'text_completion') return assembled;
  for (const e of events) {
    let d: unknown;
    try {
      d = JSON.parse(e.data);
    } catch {
      continue;
    }
    if (!isObj(d) || !Array.isArray(d.choices)) continue;
    const out = { ...assembled };
    for (const [k, v] of Object.entries(d)) if (!(k in out) && k !== 'choices' && k !== 'usage' && k !== 'object') out[k] = v;
    return out;
  }
  return assembled;
}
