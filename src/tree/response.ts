// Where a recorded response sits in the conversation that follows it. A client that continues a
// conversation sends the answer back as an assistant message (OpenAI: choices[0].message as is;
// Anthropic: { role: 'assistant', content: response.content }; Responses: the output items), so
// the tree must hash the response in that same form, normalized together with the request that
// produced it: then the path hash of a recorded answer is exactly the path hash the next request
// reaches through it, and call ids are numbered as they will be in that next request.

import { normalizeRequest } from '../providers/index.ts';
import type { NormalizeOptions, Provider } from '../providers/types.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The assistant message a chat-completion choice stands for. */
function choiceMessage(choice: unknown): unknown[] | undefined {
  if (!isObj(choice)) return undefined;
  const m = isObj(choice.message) ? choice.message : isObj(choice.delta) ? choice.delta : undefined;
  if (m) return [m.role === undefined ? { ...m, role: 'assistant' } : m];
  if (typeof choice.text === 'string') return [{ role: 'assistant', content: choice.text }];
  return undefined;
}

/**
 * The message lists a response value contributes to its conversation: one list per alternative
 * the response holds (an OpenAI body with n > 1 has several choices). Shapes, first that fits:
 * a string (the answer text); `choices` (OpenAI chat completions); `candidates` (Gemini); `output.message`
 * (Bedrock Converse); `output` items (OpenAI Responses); an Ollama chat answer (`{ message, done }`);
 * a message or Anthropic message object (`{ role?, content }`); anything else is kept
 * whole as the content of one assistant message, so it is still recorded and printed, even if no
 * later request can ever continue through it.
 *
 * @example
 * responseMessages({ choices: [{ message: { role: 'assistant', content: 'Paris' } }] })
 * // [[{ role: 'assistant', content: 'Paris' }]]
 */
export function responseMessages(value: unknown): unknown[][] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [[{ role: 'assistant', content: value }]];
  if (!isObj(value)) return [[{ role: 'assistant', content: value }]];
  if (Array.isArray(value.choices)) {
    const alts = value.choices.map(choiceMessage).filter((m): m is unknown[] => m !== undefined);
    if (alts.length > 0) return alts;
  }
  if (Array.isArray(value.candidates)) {
    // Gemini: each candidate's content ({ role: 'model', parts }) is what the client sends back.
    const alts = value.candidates.filter((c): c is Obj => isObj(c) && isObj(c.content)).map((c) => [c.content]);
    if (alts.length > 0) return alts;
  }
  if (isObj(value.output) && isObj(value.output.message)) {
    // Bedrock Converse: `output.message` ({ role, content blocks }) is what the client sends back.
    return [[value.output.message]];
  }
  // An Ollama chat answer: the client sends `message` back as it is.
  if (isObj(value.message) && typeof value.done === 'boolean') return [[value.message]];
  if (Array.isArray(value.output) && (value.object === 'response' || value.role === undefined)) {
    if (value.output.length > 0) return [value.output.slice()];
  }
  if ('content' in value || 'tool_calls' in value) {
    // An Anthropic message (type 'message', stop_reason, usage...) is continued as { role, content }:
    // its bookkeeping members are not part of what the client sends back.
    const bookkeeping = value.type === 'message' || 'stop_reason' in value || 'usage' in value || 'model' in value;
    if (bookkeeping || value.role === undefined) {
      const m: Obj = { role: typeof value.role === 'string' ? value.role : 'assistant', content: value.content };
      if (value.tool_calls !== undefined) m.tool_calls = value.tool_calls;
      return [[m]];
    }
    return [[value]];
  }
  return [[{ role: 'assistant', content: value }]];
}

/** The request body with `more` appended to its conversation, in the body's own shape. */
function extend(request: Obj, provider: Provider, more: readonly unknown[]): Obj {
  if (provider === 'openai-responses') {
    const input = request.input;
    const items = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
    return { ...request, input: [...items, ...more] };
  }
  if (provider === 'gemini') {
    const contents = Array.isArray(request.contents) ? request.contents : [];
    return { ...request, contents: [...contents, ...more] };
  }
  const messages = Array.isArray(request.messages) ? request.messages : [];
  return { ...request, messages: [...messages, ...more] };
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
  for (const more of responseMessages(value)) {
    // Call ids are renumbered in order of first appearance, so the appended messages are
    // numbered exactly as in the request that will follow; the prefix is unchanged.
    const ext = normalizeRequest(extend(request as Obj, provider, more), { ...opts, provider });
    responses.push(ext.messages.slice(n.messages.length));
  }
  const model = n.view.model;
  return { provider, messages: n.messages, responses, model: typeof model === 'string' ? model : undefined, view: n.view };
}
