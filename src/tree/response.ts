// Where a recorded response sits in the conversation that follows it. A client that continues a
// conversation sends the answer back as an assistant message (OpenAI: choices[0].message as is;
// Anthropic: { role: 'assistant', content: response.content }; Responses: the output items), so
// the tree must hash the response in that same form, normalized together with the request that
// produced it: then the path hash of a recorded answer is exactly the path hash the next request
// reaches through it, and call ids are numbered as they will be in that next request.

import { continueRequest, normalizeRequest, readAnswer } from '../providers/index.ts';
import type { NormalizeOptions, Provider } from '../providers/types.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The message lists a response value contributes to its conversation: one list per alternative
 * the response holds (an OpenAI body with n > 1 has several choices). A provider's answer is read
 * by its module (src/providers, readAnswer: the messages a follow-up sends back, such as OpenAI's
 * `choices[].message`, Anthropic's `{ role, content }`, Gemini's candidate contents, Bedrock's
 * `output.message`, Ollama's `message`, the Responses output items); otherwise a string is the
 * answer text, a message object (`{ role?, content }` or with `tool_calls`) is itself, and
 * anything else is kept whole as the content of one assistant message, so it is still recorded
 * and printed, even if no later request can ever continue through it.
 *
 * @example
 * responseMessages({ object: 'chat.completion', created: 1, choices: [{ message: { role: 'assistant', content: 'Paris' } }] })
 * // [[{ role: 'assistant', content: 'Paris' }]]
 */
export function responseMessages(value: unknown, endpoint?: { method?: string; url: string }): unknown[][] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [[{ role: 'assistant', content: value }]];
  if (!isObj(value)) return [[{ role: 'assistant', content: value }]];
  const read = readAnswer(endpoint, value);
  if (read?.messages) return read.messages;
  if ('content' in value || 'tool_calls' in value) {
    // A message object; one with bookkeeping members beside it is continued as { role, content }.
    const bookkeeping = 'usage' in value || 'model' in value;
    if (bookkeeping || value.role === undefined) {
      const m: Obj = { role: typeof value.role === 'string' ? value.role : 'assistant', content: value.content };
      if (value.tool_calls !== undefined) m.tool_calls = value.tool_calls;
      return [[m]];
    }
    return [[value]];
  }
  return [[{ role: 'assistant', content: value }]];
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
  for (const more of responseMessages(value, opts.endpoint ?? undefined)) {
    // Call ids are renumbered in order of first appearance, so the appended messages are
    // numbered exactly as in the request that will follow; the prefix is unchanged.
    const ext = normalizeRequest(continueRequest(request as Obj, provider, more), { ...opts, provider });
    responses.push(ext.messages.slice(n.messages.length));
  }
  const model = n.view.model;
  return { provider, messages: n.messages, responses, model: typeof model === 'string' ? model : undefined, view: n.view };
}
