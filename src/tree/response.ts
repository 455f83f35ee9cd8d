// Where a recorded response sits in the conversation that follows it. A client that continues a
// conversation sends the answer back as an assistant message (OpenAI: choices[0].message as is;
// Anthropic: { role: 'assistant', content: response.content }; Responses: the output items), so
// the tree must hash the response in that same form, normalized together with the request that
// produced it: then the path hash of a recorded answer is exactly the path hash the next request
// reaches through it, and call ids are numbered as they will be in that next request.

import { TapedeckError } from '../errors.ts';
import { continueRequest, normalizeRequest, readAnswer } from '../providers/index.ts';
import type { NormalizeOptions, Provider } from '../providers/types.ts';
import { aiSdkAnswer, aiSdkStreamResult, continueAiSdk, isAiSdkCallOptions, isAiSdkResult, isAiSdkStream } from './ai-sdk.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The message lists a response value contributes to its conversation: one list per alternative
 * the response holds (an OpenAI body with n > 1 has several choices). A provider's answer is read
 * by its module (src/providers, readAnswer: the messages a follow-up sends back, such as OpenAI's
 * `choices[].message`, Anthropic's `{ role, content }`, Gemini's candidate contents, Bedrock's
 * `output.message`, Ollama's `message`, the Responses output items); a Vercel AI SDK
 * `doGenerate()` result is the assistant message the AI SDK sends back (./ai-sdk.ts); a string is
 * the answer text, and a message object (`{ role?, content }` with string or list content, or
 * with a `tool_calls` list) is itself. Anything else (other JSON, numbers, arrays, class
 * instances such as a Date) is not an answer the tree can tell the text of: it throws `E_TREE`,
 * so the tree lists the record in its warnings rather than print a guess as the answer.
 *
 * @example
 * responseMessages({ object: 'chat.completion', created: 1, choices: [{ message: { role: 'assistant', content: 'Paris' } }] })
 * // [[{ role: 'assistant', content: 'Paris' }]]
 */
export function responseMessages(value: unknown, endpoint?: { method?: string; url: string }): unknown[][] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [[{ role: 'assistant', content: value }]];
  if (!isObj(value)) throw unread(value);
  const read = readAnswer(endpoint, value);
  if (read?.messages) return read.messages;
  // A completion API's answer (Ollama's /api/generate) continues no conversation, but its module
  // knows its text: that is the answer shown, though no follow-up walks through it.
  if (read && read.texts.length > 0 && read.toolCalls.length === 0) return read.texts.map((text) => [{ role: 'assistant', content: text }]);
  if (isAiSdkResult(value)) return [[aiSdkAnswer(value)]];
  // A streamed call as replayCacheMiddleware stores it: the answer its parts make.
  if (isAiSdkStream(value)) return [[aiSdkAnswer(aiSdkStreamResult(value))]];
  if (isMessage(value)) {
    // A message object; one with bookkeeping members beside it is continued as { role, content }.
    const bookkeeping = 'usage' in value || 'model' in value;
    if (bookkeeping || value.role === undefined) {
      const m: Obj = { role: typeof value.role === 'string' ? value.role : 'assistant', content: value.content };
      if (value.tool_calls !== undefined) m.tool_calls = value.tool_calls;
      return [[m]];
    }
    return [[value]];
  }
  throw unread(value);
}

/**
 * Whether a value is a message the tree can print and hash as an answer: a plain object with
 * `content` (a string, a list of parts, or null beside `tool_calls`) or a `tool_calls` list, and
 * a string role if it names one.
 */
function isMessage(v: Obj): boolean {
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  if (v.role !== undefined && typeof v.role !== 'string') return false;
  const calls = v.tool_calls;
  if (calls !== undefined && calls !== null && !Array.isArray(calls)) return false;
  const c = v.content;
  if (typeof c === 'string') return true;
  // Parts are strings or typed objects; a list of anything else is data, not content.
  if (Array.isArray(c)) return c.every((p) => typeof p === 'string' || (isObj(p) && typeof p.type === 'string'));
  return (c === undefined || c === null) && Array.isArray(calls);
}

/** What a value the tree does not read is, for the warning. */
function kind(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (v === null || typeof v !== 'object') return `a ${typeof v}`;
  const proto = Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null;
  const name = proto?.constructor?.name;
  if (proto !== Object.prototype && proto !== null && typeof name === 'string' && name !== '') return `a ${name}`;
  const keys = Object.keys(v);
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 4).map((k) => JSON.stringify(k)).join(', ')}${keys.length > 4 ? ', …' : ''}`;
}

function unread(value: unknown): TapedeckError {
  return new TapedeckError('E_TREE', `The recorded value (${kind(value)}) is not an answer the tree reads: no provider answer, AI SDK result, message or text.`, {
    hint: 'The record still replays; only the tree cannot show its answer.',
  });
}

/** A request and its answer(s) as the tree sees them. */
export interface NormalizedExchange {
  provider: Provider;
  /** The request's normalized messages (system prompt first when the shape keeps it apart). */
  messages: unknown[];
  /** Each alternative's normalized response messages, numbered as the follow-up will number them. */
  responses: unknown[][];
  /** The request's model, when it names one. */
  model: string | undefined;
  /** The normalized request view (its digest is the request key). */
  view: Record<string, unknown>;
}

/**
 * Normalizes a recorded request together with its response, as the conversation continues.
 *
 * @example
 * const x = normalizeExchange({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, 'hello')
 * x.responses[0] // [{ role: 'assistant', content: [{ type: 'text', text: 'hello' }] }]
 */
export function normalizeExchange(request: unknown, value: unknown, opts: NormalizeOptions = {}): NormalizedExchange {
  const n = normalizeRequest(request, opts);
  const provider = n.provider;
  const responses: unknown[][] = [];
  for (const more of responseMessages(value, opts.endpoint ?? undefined)) responses.push(continuedMessages(request, provider, n.messages.length, more, opts));
  const model = n.view.model;
  return { provider, messages: n.messages, responses, model: typeof model === 'string' ? model : undefined, view: n.view };
}

/**
 * An answer's messages (as the API gave them, e.g. OpenAI's `choices[0].message`) normalized as
 * the follow-up request will carry them: appended to `request` in its own shape (`provider`, as
 * normalizeRequest detected it; `requestMessages`, how many normalized messages the request
 * itself has) and normalized with it, so call ids are numbered as in that follow-up and the
 * answer's hashes are the ones the follow-up walks through.
 *
 * @example
 * const req = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }
 * continuedMessages(req, 'openai-chat', 1, [{ role: 'assistant', content: 'hello', refusal: null }])
 * // [{ role: 'assistant', content: [{ type: 'text', text: 'hello' }] }]
 */
export function continuedMessages(request: unknown, provider: Provider, requestMessages: number, more: readonly unknown[], opts: NormalizeOptions = {}): unknown[] {
  // Call ids are renumbered in order of first appearance, so the appended messages are
  // numbered exactly as in the request that will follow; the prefix is unchanged.
  // AI SDK call options keep the conversation in `prompt`, after any `messages`.
  const next = provider === 'generic' && isAiSdkCallOptions(request) ? continueAiSdk(request, more) : continueRequest(request as Obj, provider, more);
  const continued = normalizeRequest(next, { ...opts, provider }).messages.slice(requestMessages);
  if (continued.length > 0 || more.length === 0) return continued;
  // A completion API (Ollama's /api/generate, OpenAI's legacy completions) has no member a
  // follow-up sends an answer back in, so the continued request keys nothing more. The answer's
  // text is still what the tree shows: normalized as the assistant message it is, in the shared
  // form every shape's messages take (a text answer has no call ids to number).
  return normalizeRequest({ messages: more }, { provider: 'openai-chat' }).messages;
}
