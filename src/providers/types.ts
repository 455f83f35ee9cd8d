// Types shared by the request normalizer and the matcher built on it. The rules behind them are
// in docs/matching.md.

/** The request shapes of the shared chat normalizer (src/providers/normalize.ts). */
export type BuiltinProvider = 'openai-chat' | 'openai-responses' | 'openai-embeddings' | 'anthropic' | 'generic';

/**
 * The request shapes tapedeck understands: the built-in ones, and those of the provider modules
 * (src/providers/index.ts lists them: `gemini`, `gemini-embeddings`, ...).
 */
export type Provider = BuiltinProvider | 'gemini' | 'gemini-embeddings' | (string & {});

/**
 * Where a request was sent: the HTTP method and the URL's path and query (`/v1beta/models/
 * gemini-2.5-flash:generateContent?alt=sse`). APIs that put the model or the operation in the URL
 * (Gemini, Vertex AI, Bedrock, Azure deployments) are keyed with it; for the others it is unused.
 */
export interface Endpoint {
  method?: string;
  url: string;
}

/**
 * How a request body is normalized before it is keyed: the provider shape, the endpoint, and the
 * arguments and text left out of the key.
 */
export interface NormalizeOptions {
  /** Use this shape instead of detecting one. */
  provider?: Provider;
  /**
   * The method and URL the body was sent to. A provider module that owns the route (Gemini's
   * `models/{model}:generateContent`, ...) keys the body with the model and operation the URL
   * names; without it, the shape is detected from the body alone.
   */
  endpoint?: Endpoint;
  /**
   * Top-level request arguments left out of the key (DSPy's `ignored_args_for_cache_key`),
   * e.g. `['temperature']`. For the generic shape, members of its `options` object too.
   */
  ignoreArgs?: readonly string[];
  /**
   * Member names dropped at any depth from the normalized messages, system prompt and tools
   * (inside tool arguments and schemas too), e.g. `['timestamp']`.
   */
  volatileKeys?: readonly string[];
  /**
   * Text that changes from run to run inside messages (a date or a UUID in the system prompt):
   * each match in a message's text is replaced by `<volatile>` before keying. Regular
   * expressions, or their sources as strings. src/providers/volatile-text.ts has common patterns.
   */
  volatileText?: readonly (RegExp | string)[];
}

/**
 * What a request looks like to the matcher.
 *
 * @example
 * const r = normalizeRequest({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
 * r.view     // { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], options: {} }
 * hashValue(r.view) // the request key
 */
export interface RequestView {
  provider: Provider;
  /**
   * The JSON value whose digest is the request key: `{ model, system?, messages, tools, options }`
   * after normalization. `system` is present only for shapes that carry the system prompt
   * outside the message list (Anthropic `system`, Responses `instructions`, generic `system`).
   */
  view: Record<string, unknown>;
  /**
   * Normalized messages (what path hashes are computed over), in order: `view.messages`, preceded
   * by `{ role: 'system', content: view.system }` when the view has a separate system prompt, so
   * that path hashes cover the system prompt whichever shape carried it.
   */
  messages: unknown[];
  /** Names of the request's tools: sorted, unique. */
  toolNames: string[];
  /** Keys of the request's top-level `context` object (the generic shape), sorted; else []. */
  contextKeys: string[];
}

/**
 * How an attachment enters the view: by the SHA-256 of its bytes (base64 data, data: URLs,
 * Anthropic text sources), by URL, by local path, or by provider file id. `textSha256` is the
 * SHA-256 of the UTF-8 text of data that claimed to be base64 but was not.
 */
export type Attachment =
  | { sha256: string; mediaType?: string }
  | { textSha256: string; mediaType?: string }
  | { url: string }
  | { path: string }
  | { fileId: string };
