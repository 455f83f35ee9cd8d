/**
 * AWS Bedrock Runtime: Converse and ConverseStream (Bedrock's own message shape), InvokeModel
 * and InvokeModelWithResponseStream (the model's native body; Anthropic-on-Bedrock keyed as
 * Anthropic). The model is in the path (`/model/{modelId}/converse`, percent-encoded: ARNs and
 * inference profiles), streams are AWS event streams (./wire/aws-eventstream.ts), errors are
 * `{ message }` with the exception name in `x-amzn-ErrorType`, and requests are signed with
 * SigV4 (or carry a Bedrock API key as a Bearer token).
 *
 * A Converse body is keyed by translating it, block by block, into the Anthropic body it means
 * and keying that with the chat-family normalizer, so one conversation has the same message and
 * path hashes in Converse, Anthropic and OpenAI shape (docs/hash-spec.md, "AWS Bedrock").
 */
import { TapedeckError } from '../errors.ts';
import { errorDetails, errorMessage, safeJSON, type ErrorStyle } from './error-shape.ts';
import { attachment, normalizeRequest, optionValue } from './normalize.ts';
import { readAnthropicAnswer } from './anthropic.ts';
import { count, envelopeRead, newRead } from './answer-read.ts';
import type { AnswerContext, AnswerRead, ErrorAnswer, FaultAnswer, NormalizeContext, ProviderModule, RouteMatch, StatusFault, UsageRead } from './provider.ts';
import type { RequestView } from './types.ts';
import { assemble, complete } from './bedrock-stream.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);


const IMAGE_TYPES: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg' };
const VIDEO_TYPES: Record<string, string> = { mkv: 'video/x-matroska', mov: 'video/quicktime', three_gp: 'video/3gpp', flv: 'video/x-flv', wmv: 'video/x-ms-wmv', mpg: 'video/mpeg' };
const AUDIO_TYPES: Record<string, string> = { mp3: 'audio/mpeg', mpeg: 'audio/mpeg', m4a: 'audio/mp4' };
const DOCUMENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  csv: 'text/csv',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  html: 'text/html',
  txt: 'text/plain',
  md: 'text/markdown',
};

/** The media type a Converse `format` names, for a kind of content. */
function mediaTypeOf(kind: 'image' | 'video' | 'audio' | 'document', format: unknown): string | undefined {
  if (typeof format !== 'string' || format === '') return undefined;
  const f = format.toLowerCase();
  const table = kind === 'image' ? IMAGE_TYPES : kind === 'video' ? VIDEO_TYPES : kind === 'audio' ? AUDIO_TYPES : DOCUMENT_TYPES;
  // Own entries only: `format: 'constructor'` is image/constructor, not Object's constructor.
  return (Object.hasOwn(table, f) ? table[f] : undefined) ?? (kind === 'document' ? `application/${f}` : `${kind}/${f}`);
}

/**
 * A Converse media source as the Anthropic source it stands for: `bytes` (base64 on the wire, a
 * Uint8Array in the SDK's input) by digest, `s3Location.uri` and `text` as Anthropic's url and
 * text sources, `content` as a content source. Anything else is kept as given.
 */
function source(src: unknown, mediaType: string | undefined): unknown {
  if (!isObj(src)) return src;
  if (src.bytes !== undefined && src.bytes !== null) return { type: 'base64', ...(mediaType ? { media_type: mediaType } : {}), data: src.bytes };
  if (isObj(src.s3Location) && typeof src.s3Location.uri === 'string') return { type: 'url', url: src.s3Location.uri };
  if (typeof src.text === 'string') return { type: 'text', media_type: 'text/plain', data: src.text };
  if (Array.isArray(src.content)) return { type: 'content', content: blocks(src.content) };
  return src;
}

function without(o: Obj, skip: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of Object.keys(o)) if (!skip.includes(k)) out[k] = o[k];
  return out;
}

/**
 * One Converse content block (`{ text }`, `{ image }`, `{ toolUse }`, ...: one member naming
 * its kind) as the Anthropic block it means; undefined for a block that is no content
 * (`cachePoint`, a caching hint like Anthropic's `cache_control`). The matcher's raw-bytes walk
 * hands it the blocks it does not write itself.
 *
 * @example
 * converseBlock({ toolUse: { toolUseId: 't1', name: 'f', input: {} } }) // { type: 'tool_use', id: 't1', name: 'f', input: {} }
 */
export function converseBlock(b: unknown): unknown {
  if (!isObj(b)) return b;
  const keys = Object.keys(b);
  if (b.cachePoint !== undefined && keys.length === 1) return undefined;
  if (typeof b.text === 'string' && keys.length === 1) return { type: 'text', text: b.text };
  if (isObj(b.image)) {
    const mt = mediaTypeOf('image', b.image.format);
    return { type: 'image', source: source(b.image.source, mt) };
  }
  if (isObj(b.document)) {
    const d = b.document;
    const mt = mediaTypeOf('document', d.format);
    const out: Obj = { type: 'document', source: source(d.source, mt) };
    if (d.name !== undefined) out.filename = d.name;
    return { ...out, ...without(d, ['format', 'name', 'source']) };
  }
  if (isObj(b.video) || isObj(b.audio)) {
    const kind = isObj(b.video) ? 'video' : 'audio';
    const m = b[kind] as Obj;
    const src = source(m.source, mediaTypeOf(kind, m.format));
    // Audio is a part the normalizer knows; video is kept with its attachment already by digest.
    const att = isObj(src) ? (attachment(src) ?? src) : src;
    return { type: kind, [kind]: att };
  }
  if (isObj(b.toolUse)) {
    const t = b.toolUse;
    return { type: 'tool_use', id: t.toolUseId, name: t.name, input: t.input, ...without(t, ['toolUseId', 'name', 'input']) };
  }
  if (isObj(b.toolResult)) {
    const t = b.toolResult;
    const out: Obj = { type: 'tool_result', tool_use_id: t.toolUseId, content: Array.isArray(t.content) ? blocks(t.content) : t.content };
    if (t.status === 'error') out.is_error = true;
    return { ...out, ...without(t, ['toolUseId', 'content', 'status']) };
  }
  if (b.json !== undefined && keys.length === 1) return { type: 'json', json: b.json };
  if (isObj(b.reasoningContent)) {
    const r = b.reasoningContent;
    if (isObj(r.reasoningText)) return { type: 'thinking', thinking: r.reasoningText.text, signature: r.reasoningText.signature };
    if (r.redactedContent !== undefined) return { type: 'redacted_thinking', data: r.redactedContent };
  }
  return b;
}

function blocks(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v.map(converseBlock).filter((x) => x !== undefined);
}

/**
 * A Converse tool (`{ toolSpec }`) as the Anthropic tool it means; `cachePoint` entries are no
 * tools (undefined).
 *
 * @example
 * converseTool({ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }) // { name: 'f', description: undefined, input_schema: { type: 'object' } }
 */
export function converseTool(t: unknown): unknown {
  if (!isObj(t)) return t;
  if (t.cachePoint !== undefined && Object.keys(t).length === 1) return undefined;
  if (!isObj(t.toolSpec)) return t;
  const s = t.toolSpec;
  const schema = isObj(s.inputSchema) && 'json' in s.inputSchema ? s.inputSchema.json : s.inputSchema;
  return { name: s.name, description: s.description, input_schema: schema, ...without(s, ['name', 'description', 'inputSchema']) };
}

// Converse members that never decide the answer: log metadata, latency and capacity tiers
// (like `service_tier` in the chat family), and the model id of an SDK input object.
const CONVERSE_DROPPED = new Set(['requestMetadata', 'performanceConfig', 'serviceTier', 'modelId']);
// Converse members the Anthropic layout would read as its own: never options of that name.
const RESERVED = new Set(['model', 'tools', 'functions', 'context', 'stream']);

/**
 * `inferenceConfig` as an option: `temperature` by the chat family's rule (kept only when 0),
 * null members absent, empty absent; `ignoreArgs` names its members too.
 */
function inferenceConfig(v: unknown, ignore: ReadonlySet<string>): unknown {
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) {
    if (ignore.has(k)) continue;
    const x = k === 'temperature' ? optionValue('temperature', v[k]) : v[k] === null ? undefined : v[k];
    if (x !== undefined) out[k] = x;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The Anthropic body a Converse body means (before the chat-family normalizer keys it). */
function converseAsAnthropic(body: Obj, model: unknown, stream: boolean, ignore: ReadonlySet<string>): Obj {
  const out: Obj = {};
  if (model !== undefined && model !== null) out.model = model;
  for (const k of Object.keys(body)) {
    if (ignore.has(k) || CONVERSE_DROPPED.has(k)) continue;
    const v = body[k];
    if (k === 'messages') {
      out.messages = Array.isArray(v) ? v.map((m) => (isObj(m) ? { ...m, content: blocks(m.content) } : m)) : v;
    } else if (k === 'system') {
      out.system = blocks(v);
    } else if (k === 'toolConfig' && isObj(v)) {
      if (Array.isArray(v.tools)) out.tools = v.tools.map(converseTool).filter((t) => t !== undefined);
      for (const [ck, cv] of Object.entries(v)) if (ck !== 'tools' && !ignore.has(ck)) out[ck] = cv;
    } else if (k === 'inferenceConfig') {
      const ic = inferenceConfig(v, ignore);
      if (ic !== undefined) out.inferenceConfig = ic;
    } else {
      out[RESERVED.has(k) ? `converse.${k}` : k] = v;
    }
  }
  if (stream) out.stream = true;
  return out;
}

/** Whether a body sent to InvokeModel is in Converse shape (Amazon Nova's messages-v1 is): members only Converse has. */
function looksConverse(body: Obj): boolean {
  if (!Array.isArray(body.messages) && body.messages !== undefined) return false;
  if (['inferenceConfig', 'toolConfig', 'additionalModelRequestFields', 'guardrailConfig', 'promptVariables', 'additionalModelResponseFieldPaths'].some((k) => body[k] !== undefined)) return true;
  return typeof body.modelId === 'string' && Array.isArray(body.messages);
}

const STREAMING = new Set(['ConverseStream', 'InvokeModelWithResponseStream']);

function userOptions(ctx: NormalizeContext): { ignore: Set<string>; rest: { ignoreArgs?: readonly string[]; volatileKeys?: readonly string[]; volatileText?: readonly (RegExp | string)[] } } {
  const { ignoreArgs, volatileKeys, volatileText } = ctx.opts;
  // The body is keyed as an Anthropic one: volatileKeys and volatileText apply there, to its messages.
  return { ignore: new Set(ignoreArgs ?? []), rest: { ...(volatileKeys ? { volatileKeys } : {}), ...(volatileText ? { volatileText } : {}) } };
}

function normalizeConverse(body: unknown, ctx: NormalizeContext, stream: boolean): RequestView {
  if (!isObj(body)) throw new TapedeckError('E_REQUEST', `A Converse request body must be a JSON object; got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}.`, { path: '$' });
  if (!Array.isArray(body.messages) && !(ctx.opts.ignoreArgs ?? []).includes('messages')) {
    throw new TapedeckError('E_REQUEST', 'A Converse request needs a `messages` array.', { path: '$.messages', hint: 'Converse bodies look like { messages: [{ role, content: [{ text }] }], system?, inferenceConfig?, toolConfig? }.' });
  }
  const { ignore, rest } = userOptions(ctx);
  const model = ignore.has('model') ? undefined : (ctx.route?.model ?? body.modelId);
  const r = normalizeRequest(converseAsAnthropic(body, model, stream, ignore), { ...rest, provider: 'anthropic' });
  return { ...r, provider: 'bedrock-converse' };
}

function normalizeInvoke(body: unknown, ctx: NormalizeContext, stream: boolean): RequestView {
  if (isObj(body) && body.anthropic_version === undefined && looksConverse(body)) return { ...normalizeConverse(body, ctx, stream), provider: 'bedrock-invoke' };
  const { ignore, rest } = userOptions(ctx);
  const model = ctx.route?.model;
  let b = body;
  if (isObj(body)) {
    b = { ...body };
    if (model !== undefined && !ignore.has('model')) (b as Obj).model = model;
    if (stream) (b as Obj).stream = true;
  }
  const anthropicBody = isObj(body) && typeof body.anthropic_version === 'string';
  const r = normalizeRequest(b, { ...rest, ...(ctx.opts.ignoreArgs ? { ignoreArgs: ctx.opts.ignoreArgs } : {}), ...(anthropicBody ? { provider: 'anthropic' as const } : {}) });
  return { ...r, provider: 'bedrock-invoke' };
}

// Bedrock's exception names by status, so the AWS SDK raises its own modeled exception class
// (ValidationException, ResourceNotFoundException, ...) with the message in it.
function exceptionName(status: number): string {
  switch (status) {
    case 400:
    case 413:
      return 'ValidationException';
    case 403:
      return 'AccessDeniedException';
    case 404:
      return 'ResourceNotFoundException';
    case 408:
      return 'ModelTimeoutException';
    case 429:
      return 'ThrottlingException';
    case 502:
    case 503:
    case 504:
      return 'ServiceUnavailableException';
    default:
      return status >= 500 ? 'InternalServerException' : 'ValidationException';
  }
}

const MODEL = '(?<model>[^/]+)';

/**
 * The Bedrock Runtime module.
 *
 * @example
 * routeOf({ method: 'POST', url: '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse' })?.model
 * // 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
 * bedrock.errorAnswer(new TapedeckError('E_MISS', 'model differs'), 404).headers // { 'x-amzn-errortype': 'ResourceNotFoundException' }
 */
/** A Converse answer (`{ output: { message }, stopReason, usage, metrics }`). */
function readConverse(a: Obj): AnswerRead | undefined {
  if (!isObj(a.output) || !isObj(a.output.message) || !('stopReason' in a)) return undefined;
  const c = newRead('bedrock-converse');
  const message = a.output.message;
  const kinds: unknown[] = [];
  const other: unknown[] = [];
  let text = '';
  for (const b of Array.isArray(message.content) ? message.content : []) {
    if (!isObj(b)) continue;
    if (typeof b.text === 'string') text += b.text;
    else if (isObj(b.toolUse)) c.toolCalls.push({ name: String(b.toolUse.name ?? ''), args: b.toolUse.input });
    else {
      // reasoningContent, citationsContent and other blocks: their kind is structure, what they
      // hold is content.
      kinds.push(Object.keys(b).sort());
      other.push(b);
    }
  }
  c.texts.push(text);
  c.finish.push(String(a.stopReason ?? ''));
  if (a.stopReason === 'guardrail_intervened' || a.stopReason === 'content_filtered') c.refusal = String(a.stopReason);
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: (count(u.inputTokens) ?? 0) + (count(u.cacheReadInputTokens) ?? 0) + (count(u.cacheWriteInputTokens) ?? 0), output: count(u.outputTokens) ?? 0 };
  // `metrics.latencyMs` differs on every call.
  const { output: _o, stopReason: _s, usage: _u, metrics: _m, ...rest } = a;
  c.rest = { ...rest, content: kinds };
  c.other = other;
  // `output.message` ({ role, content blocks }) is what a follow-up sends back.
  c.messages = [[message]];
  return c;
}

/** InvokeModel answers of the model families that are not Anthropic's: Llama, Titan text, Mistral. */
function readInvoke(a: Obj, headerUsage: UsageRead | undefined): AnswerRead {
  if (typeof a.generation === 'string') {
    const c = newRead('bedrock-llama');
    c.texts.push(a.generation);
    c.finish.push(String(a.stop_reason ?? ''));
    c.usage = { input: count(a.prompt_token_count) ?? 0, output: count(a.generation_token_count) ?? 0 };
    const { generation: _g, stop_reason: _s, prompt_token_count: _p, generation_token_count: _n, ...rest } = a;
    c.rest = rest;
    return c;
  }
  const results = Array.isArray(a.results) ? a.results : Array.isArray(a.outputs) ? a.outputs : undefined;
  if (results && results.every(isObj)) {
    const c = newRead(Array.isArray(a.results) ? 'bedrock-titan' : 'bedrock-mistral');
    for (const r of results as Obj[]) {
      c.texts.push(String(r.outputText ?? r.text ?? ''));
      c.finish.push(String(r.completionReason ?? r.stop_reason ?? ''));
    }
    const out = (results as Obj[]).reduce((n, r) => n + (count(r.tokenCount) ?? 0), 0);
    c.usage = typeof a.inputTextTokenCount === 'number' ? { input: a.inputTextTokenCount, output: out } : headerUsage;
    c.rest = { ...a, [Array.isArray(a.results) ? 'results' : 'outputs']: [] };
    return c;
  }
  return envelopeRead(a, typeof a.inputTextTokenCount === 'number' ? { input: a.inputTextTokenCount, output: 0 } : headerUsage);
}

/** The token counts InvokeModel reports in its answer's headers. */
function headerUsage(headers: AnswerContext['headers']): UsageRead | undefined {
  const h = (name: string) => {
    const v = headers?.[name];
    const n = Number(Array.isArray(v) ? v[0] : v);
    return v === undefined || !Number.isFinite(n) ? undefined : n;
  };
  const input = h('x-amzn-bedrock-input-token-count');
  const output = h('x-amzn-bedrock-output-token-count');
  return input === undefined && output === undefined ? undefined : { input: input ?? 0, output: output ?? 0 };
}

/**
 * How a Bedrock answer reads: Converse (and ConverseStream, assembled) by its own shape;
 * InvokeModel by the model family's body (Anthropic's Messages, Llama, Titan, Mistral), with
 * the token counts of the answer's headers where the body has none. The model is the URL's.
 *
 * @example
 * readBedrockAnswer({ output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn' }, {})?.texts // ['hi']
 */
export function readBedrockAnswer(a: Obj, ctx: AnswerContext): AnswerRead | undefined {
  const op = ctx.route?.provider.name === 'bedrock' ? ctx.route.route.operation : undefined;
  let read = readConverse(a);
  if (!read && op !== undefined && op.startsWith('InvokeModel')) read = readAnthropicAnswer(a) ?? readInvoke(a, headerUsage(ctx.headers));
  if (!read) return undefined;
  read.usage ??= headerUsage(ctx.headers);
  if (ctx.route?.model !== undefined) read.model = ctx.route.model;
  return read;
}

export const bedrock: ProviderModule = {
  name: 'bedrock',
  routes: [
    { method: 'POST', path: new RegExp(`/model/${MODEL}/converse$`), operation: 'Converse', shape: 'bedrock-converse' },
    { method: 'POST', path: new RegExp(`/model/${MODEL}/converse-stream$`), operation: 'ConverseStream', shape: 'bedrock-converse', streams: true },
    { method: 'POST', path: new RegExp(`/model/${MODEL}/invoke$`), operation: 'InvokeModel', shape: 'bedrock-invoke' },
    { method: 'POST', path: new RegExp(`/model/${MODEL}/invoke-with-response-stream$`), operation: 'InvokeModelWithResponseStream', shape: 'bedrock-invoke', streams: true },
  ],
  shapes: ['bedrock-converse', 'bedrock-invoke'],
  rawKeys: false,
  // No detect(): a Converse body met without its route keeps the chat-family key it always had
  // (the raw-bytes walk keys it so too); its route or `provider: 'bedrock-converse'` says what it is.
  normalize(body: unknown, ctx: NormalizeContext): RequestView {
    const stream = ctx.route !== undefined && STREAMING.has(ctx.route.route.operation);
    return ctx.shape === 'bedrock-invoke' ? normalizeInvoke(body, ctx, stream) : normalizeConverse(body, ctx, stream);
  },
  assemble,
  complete,
  speaks: (path, headers) => /\/model\/[^/]+\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.test(path) || String(headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '),
  errorAnswer(e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer {
    // The AWS SDK reads the exception name from this header and `message` from the body; the
    // other members become properties of the exception it raises (err.tapedeck).
    const name = e.code === 'E_SIGNATURE' ? 'InvalidSignatureException' : exceptionName(status);
    return { body: safeJSON({ message: errorMessage(e, style), tapedeck: errorDetails(e, style) }), headers: { 'x-amzn-errortype': name } };
  },
  fault(fault: StatusFault, message: string): FaultAnswer {
    // The AWS SDK reads the exception from x-amzn-ErrorType (the part before the colon) and
    // retries ThrottlingException and ServiceUnavailableException by its own rules.
    const status = fault === '529' ? 503 : Number(fault);
    const name = exceptionName(status);
    return { status, body: JSON.stringify({ message }), headers: { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` } };
  },
  credentials: {
    // SigV4: the signature, the session token, and the two headers only the signature reads.
    headers: ['authorization', 'x-amz-security-token', 'x-amz-date', 'x-amz-content-sha256'],
    query: ['X-Amz-Signature', 'X-Amz-Security-Token', 'X-Amz-Credential'],
    fields: [],
  },
  // Bedrock Runtime and the Bedrock control plane both sign as `bedrock`.
  sigV4Services: ['bedrock'],
};

