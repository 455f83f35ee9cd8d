/**
 * Ollama's native API: `POST /api/chat`, `/api/generate`, `/api/embed` and the legacy
 * `/api/embeddings`, NDJSON streams, `{ error }` bodies. docs/providers.md ("Ollama") and
 * docs/hash-spec.md ("Ollama shapes") state these rules for users; this is the summary kept
 * next to the code.
 *
 * Keying: an Ollama body is read as the chat (or embeddings) body it stands for, then keyed by
 * the chat rules, so a conversation has the same message and path hashes whether it was sent
 * to Ollama or in OpenAI or Anthropic shape:
 *   - a message's `thinking` is a thinking part, then its text, then its `images` (base64, keyed
 *     by the SHA-256 of the decoded bytes, with the media type the bytes' signature gives, as an
 *     OpenAI data: URL of the same picture is);
 *   - Ollama's tool calls carry no ids (newer servers may send one): each gets a positional id,
 *     and a `tool` message answers the first unanswered call of the last assistant turn whose
 *     name is its `tool_name` (or the first unanswered one), so it keys as an OpenAI tool
 *     message with that call's id does; a `tool_name` that names no open call stays in the key;
 *   - `options` (temperature, seed, num_ctx, num_predict, stop, ...) are keyed beside the other
 *     options, by the chat rules (temperature only when 0), except the members that only say how
 *     the runner uses the machine (VOLATILE_RUNNER_OPTIONS);
 *   - `format` (json or a JSON schema), `think`, `logprobs`, `raw`, `template`, `suffix`,
 *     `context` decide the answer: in the key; `keep_alive` says how long the model stays
 *     loaded: never in the key;
 *   - `stream` absent means streamed in Ollama: the key says `stream: true` for a streamed call
 *     (absent or true) and nothing for `stream: false`, as chat keys say it.
 * `/api/generate` is a chat of its `system` and one user message (`prompt`, `images`);
 * `/api/embed` is an embeddings body (`input` a string or a list), `/api/embeddings` one of
 * its `prompt`.
 */
import type { TapedeckError } from '../errors.ts';
import { errorDetails, errorMessage, safeJSON } from './error-shape.ts';
import { normalizeRequest } from './normalize.ts';
import { count, envelopeRead, newRead, parseArgs } from './answer-read.ts';
import type { AnswerContext, AnswerRead, ErrorAnswer, FaultAnswer, NormalizeContext, ProviderModule, StatusFault } from './provider.ts';
import type { RequestView } from './types.ts';
import { ndjsonComplete, parseNdjson } from './wire/ndjson.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

// `o[k] = v` would set the prototype for k === '__proto__' (JSON.parse makes such own members).
function put(o: Obj, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** The endpoints this module keys. */
export type OllamaEndpoint = 'chat' | 'generate' | 'embed' | 'embeddings';

/**
 * Members of `options` that say how the runner uses the machine (threads, GPU layers, memory
 * mapping, batch size), not what the model is asked: the same prompt gets the same answer on
 * another machine with other values, so they are left out of the key.
 */
export const VOLATILE_RUNNER_OPTIONS: readonly string[] = [
  'numa', 'num_batch', 'num_gpu', 'main_gpu', 'low_vram', 'f16_kv', 'use_mmap', 'use_mlock', 'num_thread', 'vocab_only',
];
const RUNNER = new Set(VOLATILE_RUNNER_OPTIONS);

/** Top-level members that never enter the key: `keep_alive` is how long the model stays loaded. */
export const OLLAMA_DROPPED: readonly string[] = ['keep_alive'];

// Image signatures (the first bytes of the decoded data) -> media type.
function sniffImage(b64: string): string | undefined {
  // The first 24 characters that are not base64 whitespace (the normalizer's set), without
  // copying a multi-megabyte image.
  let head = '';
  for (let i = 0; i < b64.length && head.length < 24; i++) if (!' \t\n\f\r'.includes(b64[i]!)) head += b64[i];
  let bytes: number[];
  try {
    bytes = [...atob(head.slice(0, head.length - (head.length % 4)))].map((c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
  const at = (i: number, ...xs: number[]) => xs.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  return undefined;
}

function imagePart(img: unknown): unknown {
  if (typeof img !== 'string') return { type: 'image', data: img };
  const mediaType = /^data:/i.test(img) ? undefined : sniffImage(img);
  return mediaType ? { type: 'image', data: img, media_type: mediaType } : { type: 'image', data: img };
}

// Message members this module rewrites; the others are copied as they are.
const MESSAGE_OWN = new Set(['content', 'images', 'thinking', 'tool_calls', 'tool_name']);

/**
 * The positional id of the k-th call sent without one (counted over the whole body): no
 * provider's id looks like this. Shared with the raw-bytes walk (src/match/raw-keys/ollama.ts).
 *
 * @example
 * ollamaSyntheticId(0) // '\u0000ollama-call-0'
 */
export const ollamaSyntheticId = (k: number): string => `\u0000ollama-call-${k}`;
const syntheticId = ollamaSyntheticId;

/** Ollama messages as OpenAI chat messages (see the module comment). */
function chatMessages(messages: unknown): unknown {
  if (!Array.isArray(messages)) return messages;
  let pending: { id: unknown; name: unknown }[] = [];
  let calls = 0;
  return messages.map((m) => {
    if (!isObj(m)) return m;
    const out: Obj = {};
    const { content, images, thinking, tool_calls: toolCalls, tool_name: toolName } = m;
    for (const k of Object.keys(m)) if (!MESSAGE_OWN.has(k)) put(out, k, m[k]);
    const parts: unknown[] = [];
    if (typeof thinking === 'string' && thinking !== '') parts.push({ type: 'thinking', thinking });
    else if (thinking !== undefined && thinking !== null && thinking !== '') out.thinking = thinking;
    const hasImages = Array.isArray(images) && images.length > 0;
    if (parts.length === 0 && !hasImages) out.content = content;
    else {
      if (typeof content === 'string') parts.push({ type: 'text', text: content });
      else if (Array.isArray(content)) parts.push(...content);
      else if (content !== undefined && content !== null) parts.push(content);
      if (hasImages) for (const img of images) parts.push(imagePart(img));
      out.content = parts;
    }
    if (Array.isArray(toolCalls)) {
      pending = [];
      out.tool_calls = toolCalls.map((c) => {
        if (!isObj(c)) return c;
        const id = c.id ?? syntheticId(calls++);
        const f = isObj(c.function) ? c.function : {};
        pending.push({ id, name: f.name });
        return { id, type: 'function', function: { name: f.name, arguments: f.arguments } };
      });
    }
    if (m.role === 'tool' && (out.tool_call_id === undefined || out.tool_call_id === null)) {
      const i = pending.findIndex((p) => toolName === undefined || toolName === null || p.name === toolName);
      if (i >= 0) {
        out.tool_call_id = pending[i]!.id;
        pending.splice(i, 1);
      } else if (toolName !== undefined) out.tool_name = toolName;
    } else if (toolName !== undefined && m.role !== 'tool') out.tool_name = toolName;
    return out;
  });
}

// Names a flattened option must not take: the chat body's own members (`system` would become
// the system prompt, `context` the generic shape's context) and the streaming switch.
const RESERVED = new Set(['model', 'messages', 'system', 'tools', 'functions', 'context', 'prompt', 'input', 'instructions', 'options', 'stream', 'ollama']);

/**
 * `options` members as top-level options, minus the runner's; a member whose name the body
 * already has, or one of RESERVED, stays nested under `options` (so it still keys).
 */
function flatOptions(body: Obj, out: Obj): void {
  const o = body.options;
  if (o === undefined || o === null) return;
  if (!isObj(o)) {
    out.options = o; // not Ollama's options object: kept as it is, so it still keys
    return;
  }
  const nested: Obj = {};
  for (const k of Object.keys(o)) {
    if (RUNNER.has(k)) continue;
    put(RESERVED.has(k) || Object.hasOwn(out, k) ? nested : out, k, o[k]);
  }
  if (Object.keys(nested).length > 0) out.options = nested;
}

// Members each endpoint's translation reads itself.
const CHAT_OWN = new Set(['messages', 'stream', 'options']);
const GENERATE_OWN = new Set(['prompt', 'system', 'images', 'stream', 'options']);
// Top-level names the chat rules give a meaning (the system prompt, the conversation, the
// generic shape's context): an Ollama body's own member of that name is moved under `ollama`.
const CHAT_LAYOUT = new Set(['system', 'functions', 'context', 'prompt', 'input', 'instructions', 'messages']);

/**
 * The chat-completions body an Ollama `/api/chat` or `/api/generate` body stands for, or the
 * embeddings body an `/api/embed` or `/api/embeddings` body stands for: what tapedeck keys (by
 * the chat and embeddings rules). Never mutates `body`; a body that is no object is returned as
 * it is, for the normalizer to refuse with its usual error.
 *
 * @example
 * ollamaAsOpenAI('chat', { model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], keep_alive: '5m' })
 * // { model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: true }
 */
export function ollamaAsOpenAI(endpoint: OllamaEndpoint, body: unknown): unknown {
  if (!isObj(body)) return body;
  const out: Obj = {};
  if (endpoint === 'embed' || endpoint === 'embeddings') {
    for (const k of Object.keys(body)) if (k !== 'options' && k !== 'prompt' && !OLLAMA_DROPPED.includes(k)) put(out, k, body[k]);
    if (endpoint === 'embeddings') out.input = body.prompt === undefined || body.prompt === null ? [] : [body.prompt];
    else if (out.input === undefined) out.input = [];
    flatOptions(body, out);
    return out;
  }
  const streamed = body.stream !== false;
  // Members the chat rules would read as part of the conversation (generate's `context` tokens
  // would be taken for the generic shape's context and dropped) are keyed under `ollama`.
  const moved: Obj = {};
  const own = endpoint === 'chat' ? CHAT_OWN : GENERATE_OWN;
  for (const k of Object.keys(body)) {
    if (own.has(k) || OLLAMA_DROPPED.includes(k)) continue;
    put(CHAT_LAYOUT.has(k) ? moved : out, k, body[k]);
  }
  if (endpoint === 'chat') {
    out.messages = body.messages === undefined ? [] : chatMessages(body.messages);
  } else {
    const { prompt, system, images } = body;
    const messages: unknown[] = [];
    if (system !== undefined && system !== null && system !== '') messages.push({ role: 'system', content: system });
    messages.push({ role: 'user', content: prompt ?? '', ...(images !== undefined ? { images } : {}) });
    out.messages = chatMessages(messages);
  }
  if (Object.keys(moved).length > 0) out.ollama = moved;
  flatOptions(body, out);
  if (streamed) out.stream = true;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Answers

const isDone = (v: unknown): boolean => isObj(v) && v.done === true;

/** Whether a content type is NDJSON (Ollama sends `application/x-ndjson`). */
export function isNdjson(contentType: string | readonly string[] | undefined | null): boolean {
  const v = Array.isArray(contentType) ? contentType[0] : contentType;
  return typeof v === 'string' && /^application\/(x-)?ndjson\b/i.test(v.trim());
}

/**
 * Whether an Ollama stream is a whole answer: every line JSON, no `{ error }` line, and the last
 * object `done: true`. A stream the runner cut (a crash, a closed connection) is never recorded.
 *
 * @example
 * ollamaStreamComplete('{"message":{"content":"Hi"},"done":false}\n') // false
 */
export function ollamaStreamComplete(bytes: Uint8Array | string): boolean {
  return ndjsonComplete(bytes, isDone);
}

/**
 * The body the same request would have got with `stream: false`, from a recorded NDJSON stream:
 * chat `message.content` and `message.thinking` concatenated, `tool_calls` gathered in order;
 * generate `response` and `thinking` concatenated; everything else (done_reason, counts,
 * durations, context) from the final object. Undefined for a stream that is not whole.
 *
 * @example
 * assembleOllamaStream(rec.response.body)?.message.content // the streamed text, whole
 */
export function assembleOllamaStream(bytes: Uint8Array | string): Obj | undefined {
  if (!ollamaStreamComplete(bytes)) return undefined;
  const values = parseNdjson(bytes).values.filter(isObj);
  const final = values[values.length - 1]!;
  const out: Obj = { ...final };
  if (values.some((v) => isObj(v.message))) {
    let content = '';
    let thinking = '';
    const toolCalls: unknown[] = [];
    let role = 'assistant';
    let extra: Obj = {};
    for (const v of values) {
      if (!isObj(v.message)) continue;
      const { content: c, thinking: t, tool_calls: tc, role: r, ...rest } = v.message;
      if (typeof c === 'string') content += c;
      if (typeof t === 'string') thinking += t;
      if (Array.isArray(tc)) toolCalls.push(...tc);
      if (typeof r === 'string') role = r;
      extra = { ...extra, ...rest };
    }
    const message: Obj = { ...extra, role, content };
    if (thinking !== '') message.thinking = thinking;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    out.message = message;
  } else {
    let response = '';
    let thinking = '';
    for (const v of values) {
      if (typeof v.response === 'string') response += v.response;
      if (typeof v.thinking === 'string') thinking += v.thinking;
    }
    out.response = response;
    if (thinking !== '') out.thinking = thinking;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The module

const SHAPES = { chat: 'ollama-chat', generate: 'ollama-generate', embed: 'ollama-embed', embeddings: 'ollama-embeddings' } as const;
const ENDPOINT_OF_SHAPE: Record<string, OllamaEndpoint> = { 'ollama-chat': 'chat', 'ollama-generate': 'generate', 'ollama-embed': 'embed', 'ollama-embeddings': 'embeddings' };

/**
 * How an Ollama answer reads: a chat answer's `message` or a generate answer's `response`,
 * tool calls, `done_reason`, `thinking` as other content, and `prompt_eval_count` /
 * `eval_count` as usage. Timings and the context vector change on every call and are left out
 * of the envelope. An embed answer (on its route) reads as its usage.
 *
 * @example
 * readOllamaAnswer({ model: 'llama3.2', message: { role: 'assistant', content: 'hi' }, done: true }, {})?.texts // ['hi']
 */
export function readOllamaAnswer(a: Obj, ctx: AnswerContext): AnswerRead | undefined {
  const m = isObj(a.message) ? a.message : undefined;
  if (typeof a.done !== 'boolean' || !(m || typeof a.response === 'string')) {
    const op = ctx.route?.provider.name === 'ollama' ? ctx.route.route.operation : undefined;
    if ((op === 'embed' || op === 'embeddings') && typeof a.prompt_eval_count === 'number') {
      return envelopeRead(a, { input: a.prompt_eval_count, output: 0 }, typeof a.model === 'string' ? a.model : undefined);
    }
    return undefined;
  }
  const c = newRead('ollama');
  c.texts.push(m ? (typeof m.content === 'string' ? m.content : '') : String(a.response ?? ''));
  for (const t of m && Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    if (isObj(t) && isObj(t.function)) c.toolCalls.push({ name: String(t.function.name ?? ''), args: parseArgs(t.function.arguments) });
  }
  c.finish.push(String(a.done_reason ?? (a.done === true ? 'stop' : '')));
  if (typeof a.prompt_eval_count === 'number' || typeof a.eval_count === 'number') c.usage = { input: count(a.prompt_eval_count) ?? 0, output: count(a.eval_count) ?? 0 };
  const { message: _m, response: _r, done_reason: _d, done: _dn, prompt_eval_count: _p, eval_count: _e, total_duration: _t, load_duration: _l, prompt_eval_duration: _pd, eval_duration: _ed, context: _c, thinking: _th, ...rest } = a;
  const mrest = m ? (({ content: _mc, tool_calls: _mt, thinking: _mth, ...x }) => x)(m) : undefined;
  c.rest = { ...rest, ...(mrest ? { message: mrest } : {}) };
  // A thinking model's reasoning (`think: true`): the message's, or a generate answer's own.
  const thinking = m ? m.thinking : a.thinking;
  c.other = thinking === undefined ? [] : [{ thinking }];
  if (typeof a.model === 'string') c.model = a.model;
  // A chat answer's `message` is what a follow-up sends back, as it is.
  if (m) c.messages = [[m]];
  return c;
}

/**
 * The Ollama module: its four keyed routes, NDJSON streams, `{ error }` answers. Ollama needs no
 * credentials locally; a bearer token for a hosted or proxied Ollama is redacted like OpenAI's.
 *
 * @example
 * JSON.parse(ollama.errorAnswer(new TapedeckError('E_MISS', 'model differs'), 404).body).error // 'tapedeck miss: model differs'
 */
export const ollama: ProviderModule = {
  name: 'ollama',
  routes: (['chat', 'generate', 'embed', 'embeddings'] as const).map((ep) => ({ method: 'POST', path: new RegExp(`/api/${ep}$`), operation: ep, shape: SHAPES[ep] })),
  shapes: Object.values(SHAPES),
  rawKeys: false,
  normalize(body: unknown, ctx: NormalizeContext): RequestView {
    const endpoint = ENDPOINT_OF_SHAPE[String(ctx.shape)] ?? 'chat';
    const embeddings = endpoint === 'embed' || endpoint === 'embeddings';
    const r = normalizeRequest(ollamaAsOpenAI(endpoint, body), { ...ctx.opts, provider: embeddings ? 'openai-embeddings' : 'openai-chat' });
    return { ...r, provider: SHAPES[endpoint] };
  },
  assemble: (bytes: Uint8Array, contentType: string | undefined) => (isNdjson(contentType) ? assembleOllamaStream(bytes) : undefined),
  complete: (bytes: Uint8Array, contentType: string | undefined) => (isNdjson(contentType) ? ollamaStreamComplete(bytes) : undefined),
  // The rest of Ollama's API (/api/show, /api/tags, /api/pull, ...) is recorded as plain JSON;
  // its errors still take Ollama's shape.
  speaks: (path: string) => /\/api\/(show|tags|ps|pull|push|create|copy|delete|version|blobs)(\/|$)/.test(path),
  errorAnswer(e: TapedeckError): ErrorAnswer {
    // The ollama client raises ResponseError(body.error, status): the one-line diagnosis.
    return { body: safeJSON({ error: errorMessage(e), tapedeck: errorDetails(e) }) };
  },
  fault(fault: StatusFault, message: string): FaultAnswer {
    // Ollama answers a full queue with 503 and a one-line `error`.
    const status = fault === '529' ? 503 : Number(fault);
    return { status, body: JSON.stringify({ error: message }) };
  },
  credentials: { headers: ['authorization'], query: [], fields: [] },
};
