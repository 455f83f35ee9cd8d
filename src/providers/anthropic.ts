/**
 * Anthropic Messages (and legacy completions): keyed by the chat-family normalizer, streams as
 * server-sent events, errors as `{ type: 'error', error: { type, message } }`.
 */
import type { TapedeckError } from '../errors.ts';
import { errorDetails, errorMessage, safeJSON, type ErrorStyle } from './error-shape.ts';
import { count, holdsMore, isObj, modelOf, newRead } from './answer-read.ts';
import { chatFamily } from './openai.ts';
import type { AnswerRead, ErrorAnswer, FaultAnswer, ProviderModule, StatusFault } from './provider.ts';

type Obj = Record<string, unknown>;

/**
 * How a Messages answer reads: text blocks joined, tool uses (server and MCP ones too) as calls,
 * the other blocks (thinking, tool results the API made) and the text's citations as other
 * content, `stop_reason`, and usage with cached input (written and read) counted as input,
 * since it is billed as input.
 *
 * @example
 * readAnthropicAnswer({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' })?.finish // ['end_turn']
 */
export function readAnthropicAnswer(a: Obj): AnswerRead | undefined {
  if (a.type !== 'message' || !Array.isArray(a.content)) return undefined;
  const c = newRead('anthropic');
  const kinds: unknown[] = [];
  const other: unknown[] = [];
  let text = '';
  for (const b of a.content) {
    if (!isObj(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') {
      text += b.text;
      // Its citations (web search, documents) are content beside the text.
      const { text: _t, ...more } = b;
      if (holdsMore(more)) other.push(more);
    } else if (b.type === 'tool_use' || b.type === 'server_tool_use' || b.type === 'mcp_tool_use') c.toolCalls.push({ name: String(b.name ?? ''), args: b.input });
    else {
      // Thinking, server tool results and other blocks: their kind is structure, what they hold
      // (the thinking's words, search results, code output) is content.
      kinds.push({ type: b.type });
      other.push(b);
    }
  }
  c.texts.push(text);
  c.finish.push(String(a.stop_reason ?? ''));
  if (a.stop_reason === 'refusal') c.refusal = 'refusal';
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: (count(u.input_tokens) ?? 0) + (count(u.cache_creation_input_tokens) ?? 0) + (count(u.cache_read_input_tokens) ?? 0), output: count(u.output_tokens) ?? 0 };
  const { content: _c, stop_reason: _s, stop_sequence: _q, ...rest } = a;
  c.rest = { ...rest, content: kinds };
  c.other = other;
  const model = modelOf(a);
  if (model !== undefined) c.model = model;
  // A follow-up sends { role, content } back; the bookkeeping members stay behind.
  c.messages = [[{ role: typeof a.role === 'string' ? a.role : 'assistant', content: a.content }]];
  return c;
}

// Anthropic's error types by status, so its SDK picks the matching exception class.
function anthropicType(status: number): string {
  if (status === 400 || status === 413) return status === 413 ? 'request_too_large' : 'invalid_request_error';
  if (status === 404) return 'not_found_error';
  if (status === 504) return 'timeout_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  return 'api_error';
}

/**
 * The Anthropic module. Its error body has a top-level `message` beside the usual `error`: the
 * Anthropic SDK builds `err.message` from it (else from the whole body as JSON text), and
 * exposes `error` as `err.error.error` and `error.details` as `err.details`.
 *
 * @example
 * JSON.parse(anthropic.errorAnswer(new TapedeckError('E_MISS', 'model differs'), 404).body).message
 * // 'tapedeck miss: model differs'
 */
export const anthropic: ProviderModule = {
  name: 'anthropic',
  routes: [
    { method: 'POST', path: /\/v1\/messages$/, operation: 'messages' },
    { method: 'POST', path: /\/v1\/messages\/count_tokens$/, operation: 'messages.count_tokens' },
    { method: 'POST', path: /\/v1\/complete$/, operation: 'complete' },
  ],
  shapes: ['anthropic'],
  ...chatFamily,
  speaks: (path, headers) => path.startsWith('/v1/messages') || path.startsWith('/v1/complete') || headers['anthropic-version'] !== undefined,
  errorAnswer(e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer {
    const message = errorMessage(e, style);
    return {
      body: safeJSON({ type: 'error', message, error: { type: anthropicType(status), message, code: e.code, details: { error_code: e.code }, tapedeck: errorDetails(e, style) } }),
    };
  },
  fault(fault: StatusFault, message: string): FaultAnswer {
    // 529 overloaded_error is Anthropic's own status; its SDK retries 429 and every 5xx.
    const status = Number(fault);
    const type = fault === '429' ? 'rate_limit_error' : fault === '500' ? 'api_error' : 'overloaded_error';
    return { status, body: JSON.stringify({ type: 'error', error: { type, message } }) };
  },
  credentials: { headers: ['x-api-key', 'anthropic-admin-key'], query: [], fields: [] },
  // A beta changes the answer to the same body (`betas` in the SDK, joined into this header).
  keyHeaders: ['anthropic-beta'],
};
