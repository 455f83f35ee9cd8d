/**
 * The request shape a ReplayCache recording was made with, against the shape of the request it
 * would be served to.
 *
 * The chat completions and Responses forms of one conversation (`messages` or `input`), and an
 * OpenAI chat body and an Anthropic one with the same content and arguments, normalize to the same
 * view, so they share a request key: the conversation tree and the matcher's fallbacks want them
 * alike. createFetch and the proxy tell them apart by the route the request went to; a cache has
 * no route, so a tape recorded with chat completions served its chat answers to the same
 * conversation sent to Responses (an app moving API got the old API's answer, silently). A
 * recording is therefore served only to a request read as the same shape.
 */
import { detectProvider } from '../providers/index.ts';
import type { Provider } from '../providers/types.ts';

/** How a miss names each shape. */
const NAMES: Readonly<Record<string, string>> = {
  'openai-chat': 'OpenAI chat completions',
  'openai-responses': 'OpenAI Responses',
  'openai-embeddings': 'OpenAI embeddings',
  anthropic: 'Anthropic messages',
  generic: 'a generic request',
  gemini: 'Gemini',
  'gemini-embeddings': 'Gemini embeddings',
};

/**
 * The shape a request reads as, as given (not as normalized: LangChain message instances and
 * their stored JSON both read as generic, where their normalized view reads as chat), or
 * undefined when it reads as none (nothing to compare, so nothing refused). Both sides of a
 * comparison are read this way.
 *
 * @example
 * shapeOf({ model: 'm', input: 'hi' }) // 'openai-responses'
 */
export function shapeOf(request: unknown): Provider | undefined {
  try {
    return detectProvider(request);
  } catch {
    return undefined;
  }
}

/** Each served record's shape, read once: a record is the same object each time it is served. */
const shapes = new WeakMap<object, Provider | undefined>();

/**
 * The shape `recorded` (a stored request) was made with, when it is another than `sent` (the
 * shape the request being served reads as, by shapeOf); undefined when they agree or cannot be
 * told.
 *
 * @example
 * otherShape({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'openai-responses') // 'openai-chat'
 */
export function otherShape(recorded: unknown, sent: Provider | undefined): Provider | undefined {
  if (sent === undefined) return undefined;
  let shape: Provider | undefined;
  if (recorded !== null && typeof recorded === 'object') {
    if (shapes.has(recorded)) shape = shapes.get(recorded);
    else shapes.set(recorded, (shape = shapeOf(recorded)));
  } else shape = shapeOf(recorded);
  // A generic body says no API (LangChain messages as given or as their stored JSON, a custom
  // shape): it is served to any, as the key says.
  return shape !== undefined && shape !== sent && shape !== 'generic' && sent !== 'generic' ? shape : undefined;
}

/**
 * A shape as a miss names it.
 *
 * @example
 * shapeName('openai-responses') // 'OpenAI Responses'
 */
export function shapeName(shape: Provider): string {
  return Object.hasOwn(NAMES, shape) ? NAMES[shape]! : shape;
}
