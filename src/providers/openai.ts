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
import type { ErrorAnswer, FaultAnswer, NormalizeContext, ProviderModule, StatusFault } from './provider.ts';
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
  complete: (bytes: Uint8Array, contentType: string | undefined) => streamComplete(contentType, bytes),
} as const;

/**
 * The OpenAI module.
 *
 * @example
 * JSON.parse(openai.errorAnswer(new TapedeckError('E_MISS', 'model differs'), 404).body).error.message
 * // 'tapedeck miss: model differs'
 */
export const openai: ProviderModule = {
  name: 'openai',
  routes: [
    { method: 'POST', path: /\/chat\/completions$/, operation: 'chat.completions' },
    { method: 'POST', path: /\/responses$/, operation: 'responses' },
    { method: 'POST', path: /\/embeddings$/, operation: 'embeddings' },
    { method: 'POST', path: /\/completions$/, operation: 'completions' },
  ],
  shapes: ['openai-chat', 'openai-responses', 'openai-embeddings', 'generic'],
  ...chatFamily,
  errorAnswer(e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer {
    return {
      body: safeJSON({
        error: { message: errorMessage(e, style), type: e.code === 'E_MISS' ? 'tapedeck_miss' : openaiType(status), param: null, code: e.code, tapedeck: errorDetails(e, style) },
      }),
    };
  },
  fault(fault: StatusFault, message: string): FaultAnswer {
    // OpenAI's own: a 429 names the limit hit, a 500 is a server_error, overload is a 503.
    const [status, type, code] = fault === '429' ? [429, 'requests', 'rate_limit_exceeded'] : fault === '500' ? [500, 'server_error', null] : [503, 'server_error', 'overloaded'];
    return { status, body: JSON.stringify({ error: { message, type, param: null, code } }) };
  },
  credentials: { headers: ['authorization', 'openai-organization', 'openai-project'], query: [], fields: ['api_key'] },
};
