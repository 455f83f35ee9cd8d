/**
 * The OpenAI-compatible APIs (Mistral, Groq, OpenRouter, DeepSeek, xAI, Together, vLLM, LM
 * Studio, Ollama's /v1): chat-completions bodies with their own extra members, on a
 * `.../chat/completions` path of their own host. The OpenAI module's routes take them (the
 * path is all tapedeck sees of a request behind the proxy, and every one of them ends in
 * `/chat/completions`), and the chat rules key them: an argument tapedeck does not know is in
 * the key, since a wrong replay is worse than a miss. This table says, per provider, which of
 * its extra members that is on purpose (deciding) and which are left out (volatile), so the
 * choice is written down and tested, not an accident of the default. docs/providers.md
 * ("OpenAI-compatible APIs") is built from the same table.
 *
 * A member's name means one thing wherever it appears (no two of these APIs use one name for
 * different purposes), so the rules hold on any host: that is why the table can work without
 * knowing which provider a request went to.
 */

/** One OpenAI-compatible API: where it lives and what its extra members mean to the key. */
export interface CompatibleApi {
  name: string;
  /** The base URL its SDKs and docs use (point the client's baseURL at the proxy instead). */
  baseURL: string;
  /** Extra request members that decide the answer: in the key. */
  deciding: readonly string[];
  /** Extra request members that do not change the answer: never in the key. */
  volatile: readonly string[];
  /** Delta members of its streamed answers that stream assembly keeps (of REASONING_DELTAS). */
  answer: readonly string[];
  /**
   * How its answers are told from OpenAI's, so `tapedeck stats` counts them under its name (a
   * recording behind the proxy keeps the path, not the host): model names only it serves, or
   * answer members only it writes. An API with neither is counted as OpenAI's.
   */
  recognize?: { models?: RegExp; members?: readonly string[]; fingerprint?: string };
}

/**
 * Every OpenAI-compatible API tapedeck documents, with its extra members.
 *
 * @example
 * COMPATIBLE_APIS.find((a) => a.name === 'OpenRouter')?.deciding // ['models', 'provider', 'route', 'transforms', ...]
 */
export const COMPATIBLE_APIS: readonly CompatibleApi[] = Object.freeze([
  {
    name: 'Mistral',
    recognize: { models: /^(?:mistral|open-mistral|open-mixtral|codestral|ministral|pixtral|magistral|devstral)/ },
    baseURL: 'https://api.mistral.ai/v1',
    // random_seed is Mistral's seed; safe_prompt prepends a safety system prompt.
    deciding: ['random_seed', 'safe_prompt', 'prompt_mode', 'prediction', 'parallel_tool_calls'],
    volatile: [],
    answer: [],
  },
  {
    name: 'Groq',
    recognize: { members: ['x_groq'] },
    baseURL: 'https://api.groq.com/openai/v1',
    deciding: ['reasoning_format', 'reasoning_effort', 'include_reasoning', 'search_settings', 'compound_custom'],
    volatile: [],
    answer: ['reasoning'],
  },
  {
    name: 'OpenRouter',
    recognize: { members: ['provider'] },
    baseURL: 'https://openrouter.ai/api/v1',
    // Which models and upstream providers may answer, and the prompt transforms applied.
    deciding: ['models', 'provider', 'route', 'transforms', 'plugins', 'reasoning', 'usage', 'top_k', 'min_p', 'top_a', 'repetition_penalty'],
    volatile: [],
    answer: ['reasoning'],
  },
  {
    name: 'DeepSeek',
    recognize: { models: /^deepseek-/ },
    baseURL: 'https://api.deepseek.com',
    deciding: ['thinking'],
    volatile: [],
    // deepseek-reasoner streams its chain of thought as delta.reasoning_content.
    answer: ['reasoning_content'],
  },
  {
    name: 'xAI',
    recognize: { models: /^grok-/ },
    baseURL: 'https://api.x.ai/v1',
    deciding: ['search_parameters', 'reasoning_effort'],
    volatile: [],
    answer: ['reasoning_content'],
  },
  {
    name: 'Together',
    baseURL: 'https://api.together.xyz/v1',
    deciding: ['top_k', 'min_p', 'repetition_penalty', 'safety_model', 'context_length_exceeded_behavior'],
    volatile: [],
    answer: ['reasoning'],
  },
  {
    name: 'vLLM',
    recognize: { members: ['kv_transfer_params', 'prompt_logprobs'] },
    baseURL: 'http://localhost:8000/v1',
    deciding: ['top_k', 'min_p', 'repetition_penalty', 'length_penalty', 'guided_json', 'guided_regex', 'guided_choice', 'guided_grammar', 'structured_outputs', 'chat_template', 'chat_template_kwargs', 'add_generation_prompt', 'continue_final_message', 'skip_special_tokens', 'min_tokens', 'ignore_eos', 'bad_words'],
    // Scheduling and cache placement: the same request gets the same answer whatever they are.
    volatile: ['priority', 'cache_salt', 'kv_transfer_params'],
    answer: ['reasoning_content', 'reasoning'],
  },
  {
    name: 'LM Studio',
    recognize: { members: ['stats'] },
    baseURL: 'http://localhost:1234/v1',
    deciding: ['top_k', 'min_p', 'repeat_penalty', 'draft_model'],
    // How long the model stays loaded after the call (Ollama's keep_alive).
    volatile: ['ttl'],
    answer: ['reasoning_content'],
  },
  {
    name: 'Ollama (/v1)',
    recognize: { fingerprint: 'fp_ollama' },
    baseURL: 'http://localhost:11434/v1',
    deciding: ['reasoning_effort'],
    volatile: ['keep_alive'],
    answer: ['reasoning'],
  },
]);

/**
 * Top-level chat arguments of the OpenAI-compatible APIs that never enter the key (the union of
 * the table's `volatile` lists). The chat normalizer drops them as it drops `user`.
 */
export const COMPATIBLE_VOLATILE_ARGS: readonly string[] = Object.freeze([...new Set(COMPATIBLE_APIS.flatMap((a) => a.volatile))]);

/**
 * Delta members holding a model's reasoning text, which stream assembly concatenates into the
 * message like `content` (DeepSeek, xAI, LM Studio and vLLM `reasoning_content`; OpenRouter,
 * Groq, Together, Ollama and newer vLLM `reasoning`).
 */
export const REASONING_DELTAS: readonly string[] = Object.freeze(['reasoning_content', 'reasoning']);

/**
 * The OpenAI-compatible API an answer in OpenAI's shape came from, by the table's `recognize`
 * rules, or undefined (OpenAI's own, or an API that cannot be told apart).
 *
 * @example
 * compatibleApiOf({ model: 'deepseek-chat', choices: [] })?.name // 'DeepSeek'
 */
export function compatibleApiOf(answer: Record<string, unknown>): CompatibleApi | undefined {
  const model = typeof answer.model === 'string' ? answer.model : '';
  return COMPATIBLE_APIS.find(({ recognize: r }) => {
    if (!r) return false;
    if (r.models?.test(model)) return true;
    if (r.members?.some((m) => Object.hasOwn(answer, m))) return true;
    return r.fingerprint !== undefined && answer.system_fingerprint === r.fingerprint;
  });
}

/** Azure OpenAI's hosts (resources, AI Foundry, API Management): their `/openai/v1/...` paths are Azure's. */
const AZURE_HOST = /(?:^|\.)(?:openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com|azure-api\.net)$/i;

/**
 * The OpenAI-compatible API a recording made for `origin` at `path` went to, told by the URL
 * where its answer does not tell it (a stream with no marks in its first chunk): the API whose
 * base URL has that host, else the one whose base URL's distinctive path the request's starts
 * with (Groq's `/openai/v1`, OpenRouter's `/api/v1`). Undefined for Azure's hosts (Azure OpenAI
 * serves `/openai/v1/...` too), an origin that is no URL, and a URL no API claims.
 *
 * @example
 * compatibleApiAt('https://api.groq.com', '/openai/v1/chat/completions')?.name // 'Groq'
 * compatibleApiAt('https://my-res.openai.azure.com', '/openai/v1/chat/completions') // undefined
 */
export function compatibleApiAt(origin: string, path: string): CompatibleApi | undefined {
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return undefined;
  }
  if (AZURE_HOST.test(host)) return undefined;
  const byHost = COMPATIBLE_APIS.find((a) => new URL(a.baseURL).hostname === host && !/^(?:localhost|127\.0\.0\.1)$/.test(host));
  if (byHost) return byHost;
  return COMPATIBLE_APIS.find((a) => {
    const prefix = new URL(a.baseURL).pathname;
    return prefix !== '/' && prefix !== '/v1' && path.startsWith(`${prefix}/`);
  });
}
