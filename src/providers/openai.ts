/**
 * OpenAI: chat completions, Responses, embeddings and legacy completions (and every API that
 * copies them). Bodies are keyed by the chat-family normalizer (./normalize.ts), whose
 * detection reads the body alone, so a chat body keys the same on any path; streams are
 * server-sent events (./sse-assemble.ts); errors are `{ error: { message, type, param, code } }`.
 * It is the registry's fallback: errors of requests no other module speaks for take its shape.
 */
import type { TapedeckError } from '../errors.ts';
import { errorDetails, errorMessage, safeJSON, type ErrorStyle } from './error-shape.ts';
import { normalizeRequest } from './normalize.ts';
import { count, envelopeRead, holdsMore, isObj, modelOf, newRead, parseArgs, partsText, shapeOnly } from './answer-read.ts';
import { compatibleApiOf } from './openai-compatible.ts';
import type { AnswerRead, ErrorAnswer, FaultAnswer, NormalizeContext, ProviderModule, RouteMatch, StatusFault } from './provider.ts';
import { assembleStream, streamComplete } from './sse-assemble.ts';

function openaiType(status: number): string {
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'server_error';
}

/** The chat family's keying, stream assembly and completeness, shared with the Anthropic module. */
export const chatFamily = {
  rawKeys: true,
  normalize: (body: unknown, ctx: NormalizeContext) => normalizeRequest(body, ctx.shape === undefined ? ctx.opts : { ...ctx.opts, provider: ctx.shape }),
  assemble: (bytes: Uint8Array, contentType: string | undefined) => assembleStream(contentType, bytes),
  // The route says which end a stream is due, so one with no event of the answer is cut.
  complete: (bytes: Uint8Array, contentType: string | undefined, route?: RouteMatch) => streamComplete(contentType, bytes, route),
} as const;

type Obj = Record<string, unknown>;

/** The assistant message a chat-completion choice stands for (what a follow-up sends back). */
function choiceMessage(choice: Obj): unknown[] | undefined {
  const m = isObj(choice.message) ? choice.message : isObj(choice.delta) ? choice.delta : undefined;
  if (m) return [m.role === undefined ? { ...m, role: 'assistant' } : m];
  if (typeof choice.text === 'string') return [{ role: 'assistant', content: choice.text }];
  return undefined;
}

function readChat(a: Obj): AnswerRead {
  const c = newRead('openai-chat');
  const choices: unknown[] = [];
  const messages: unknown[][] = [];
  const other: unknown[] = [];
  for (const ch of Array.isArray(a.choices) ? a.choices : []) {
    if (!isObj(ch)) continue;
    const cm = choiceMessage(ch);
    if (cm) messages.push(cm);
    const m = isObj(ch.message) ? ch.message : {};
    c.texts.push(typeof ch.text === 'string' ? ch.text : partsText(m.content));
    for (const t of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      if (isObj(t) && isObj(t.function)) c.toolCalls.push({ name: String(t.function.name ?? ''), args: parseArgs(t.function.arguments) });
      else if (isObj(t)) c.toolCalls.push({ name: String(t.type ?? ''), args: t });
    }
    if (isObj(m.function_call)) c.toolCalls.push({ name: String(m.function_call.name ?? ''), args: parseArgs(m.function_call.arguments) });
    c.finish.push(String(ch.finish_reason ?? ''));
    if (typeof m.refusal === 'string') c.refusal += m.refusal;
    const { content: _c, tool_calls: _t, function_call: _f, refusal: _r, ...mrest } = m;
    // The message's other members are read too: audio (its transcript), annotations (citations),
    // the reasoning text OpenAI-compatible APIs send (`reasoning_content`, `reasoning`). One
    // entry per choice, so each compares with its own; the envelope keeps their shape.
    const { role: _ro, ...more } = mrest;
    other.push(more);
    const { message: _m, text: _x, finish_reason: _fr, logprobs: _l, ...crest } = ch;
    choices.push({ ...crest, message: { ...mrest, ...(shapeOnly(more) as Obj) } });
  }
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: count(u.prompt_tokens), output: count(u.completion_tokens) };
  c.rest = { ...a, choices };
  c.other = other;
  if (messages.length > 0) c.messages = messages;
  return c;
}

function readResponses(a: Obj): AnswerRead {
  const c = newRead('openai-responses');
  const kinds: unknown[] = [];
  const other: unknown[] = [];
  let text = '';
  const output = a.output as unknown[];
  for (const item of output) {
    if (!isObj(item)) continue;
    if (item.type === 'message') {
      const parts = Array.isArray(item.content) ? item.content : [];
      for (const p of parts) {
        if (!isObj(p)) continue;
        if (p.type === 'refusal' && typeof p.refusal === 'string') c.refusal += p.refusal;
        else if (typeof p.text === 'string') text += p.text;
      }
      // What the message holds besides its text and refusal (read above): annotations
      // (citations, file paths). Logprobs differ on every call, as in chat completions.
      const more = parts.filter(isObj).map(({ text: _t, refusal: _r, logprobs: _l, ...x }) => x);
      if (more.some(holdsMore)) other.push({ ...item, content: more });
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      c.toolCalls.push({ name: String(item.name ?? ''), args: parseArgs(item.arguments ?? item.input) });
    } else if (item.type === 'mcp_call') {
      // A call the API made to an MCP server itself: a tool call as Anthropic's mcp_tool_use is,
      // and its output (or error) beside it, content like any tool result.
      c.toolCalls.push({ name: String(item.name ?? ''), args: parseArgs(item.arguments) });
      const { name: _n, arguments: _a, ...result } = item;
      other.push(result);
    } else {
      // Reasoning, searches and other items: their kind is structure; what they hold (reasoning
      // summaries, search results, code and its output) is content.
      kinds.push({ type: item.type });
      other.push(item);
    }
  }
  c.texts.push(text);
  const incomplete = isObj(a.incomplete_details) ? a.incomplete_details.reason : undefined;
  c.finish.push(`${String(a.status ?? '')}${incomplete ? `:${String(incomplete)}` : ''}`);
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: count(u.input_tokens), output: count(u.output_tokens) };
  const { output: _o, output_text: _ot, status: _s, incomplete_details: _i, ...rest } = a;
  c.rest = { ...rest, output: kinds };
  c.other = other;
  // The output items are what a follow-up sends back as input.
  if (output.length > 0) c.messages = [output.slice()];
  return c;
}

/**
 * How an answer in OpenAI's shapes reads: chat completions (and legacy completions), Responses,
 * and the usage of other answers of its routes (embeddings). Answers of an OpenAI-compatible
 * API that the table recognizes are counted under that API's name.
 *
 * @example
 * readOpenAIAnswer({ object: 'chat.completion', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] })?.texts // ['hi']
 */
export function readOpenAIAnswer(a: Obj, fromRoute = false): AnswerRead | undefined {
  let read: AnswerRead | undefined;
  if (a.object === 'chat.completion' || a.object === 'text_completion' || (Array.isArray(a.choices) && 'created' in a)) read = readChat(a);
  else if (a.object === 'response' && Array.isArray(a.output)) read = readResponses(a);
  else {
    const u = isObj(a.usage) ? a.usage : undefined;
    const usage = u && ('prompt_tokens' in u || 'completion_tokens' in u) ? { input: count(u.prompt_tokens) ?? 0, output: count(u.completion_tokens) ?? 0 } : undefined;
    // A bare `{ choices: [{ message }] }` (written by hand or by another tool) continues a
    // conversation; its members are compared as plain JSON.
    const messages = Array.isArray(a.choices) ? a.choices.filter(isObj).map(choiceMessage).filter((m): m is unknown[] => m !== undefined) : [];
    // Embeddings and other answers with no text: only their usage is read.
    if (usage || messages.length > 0 || (fromRoute && a.object === 'list')) {
      read = envelopeRead(a, usage);
      if (messages.length > 0) read.messages = messages;
    }
  }
  if (!read) return undefined;
  const model = modelOf(a);
  if (model !== undefined) read.model = model;
  const api = compatibleApiOf(a);
  if (api) read.provider = api.name;
  return read;
}

/**
 * The OpenAI module.
 *
 * @example
 * JSON.parse(openai.errorAnswer(new TapedeckError('E_MISS', 'model differs'), 404).body).error.message
 * // 'tapedeck miss: model differs'
 */
export const openai: ProviderModule = {
  name: 'openai',
  // The Agents SDK's trace export (OpenAITracingExporter): its answer is a 204 whatever it sends.
  telemetry: [{ method: 'POST', path: /\/v1\/traces\/ingest$/ }],
  routes: [
    { method: 'POST', path: /\/chat\/completions$/, operation: 'chat.completions' },
    { method: 'POST', path: /\/responses$/, operation: 'responses' },
    { method: 'POST', path: /\/embeddings$/, operation: 'embeddings' },
    { method: 'POST', path: /\/completions$/, operation: 'completions' },
  ],
  shapes: ['openai-chat', 'openai-responses', 'openai-embeddings', 'generic'],
  ...chatFamily,
  continueRequest(request, shape, more) {
    // Responses keeps the conversation in `input` (a string is one user message).
    if (shape !== 'openai-responses') return { ...request, messages: [...(Array.isArray(request.messages) ? request.messages : []), ...more] };
    const input = request.input;
    const items = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
    return { ...request, input: [...items, ...more] };
  },
  errorAnswer(e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer {
    const message = errorMessage(e, style);
    const type = e.code === 'E_MISS' ? 'tapedeck_miss' : openaiType(status);
    // The message at the top level too, with Mistral's members, beside OpenAI's `error`: the AI
    // SDK's Mistral, Cohere and Cerebras providers parse their own shapes (`{ object: 'error',
    // message, type, param, code }`, `{ message }`, `{ message, type, param, code }`, every one a
    // string: `param` may not be null for Cerebras) and raise with the bare status text when that
    // fails; nothing in their requests says which provider they are. SDKs that show a top-level
    // `message`, else the whole body (groq-sdk, together-ai), show the message alone. OpenAI's
    // SDKs read `error` only.
    const error = { message, type, param: null, code: e.code, tapedeck: errorDetails(e, style) };
    return { body: safeJSON(style?.nested ? { error } : { object: 'error', message, type, param: '', code: e.code, error }) };
  },
  fault(fault: StatusFault, message: string): FaultAnswer {
    // OpenAI's own: a 429 names the limit hit, a 500 is a server_error, overload is a 503.
    const [status, type, code] = fault === '429' ? [429, 'requests', 'rate_limit_exceeded'] : fault === '500' ? [500, 'server_error', null] : [503, 'server_error', 'overloaded'];
    return { status, body: JSON.stringify({ error: { message, type, param: null, code } }) };
  },
  credentials: { headers: ['authorization', 'openai-organization', 'openai-project'], query: [], fields: ['api_key'] },
};
