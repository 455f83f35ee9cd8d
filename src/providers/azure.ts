/**
 * Azure OpenAI: OpenAI's chat, embeddings and Responses bodies on Azure's paths. docs/providers.md
 * ("Azure OpenAI") states these rules for users.
 *
 *   - `/openai/deployments/{deployment}/chat/completions?api-version=...` (and `/completions`,
 *     `/embeddings`): the deployment plays the model's role. It is the model in the key, and the
 *     body's `model` (which Azure ignores on these paths; the openai SDK sends whatever the caller
 *     passed) is not;
 *   - `/openai/v1/chat/completions`, `/openai/v1/embeddings`, `/openai/v1/responses`: the v1 API,
 *     model (a deployment name) in the body, as OpenAI's own API has it;
 *   - `api-version` is in neither the key nor the route a recording is filed under, on every
 *     `/openai/...` path (the keyed routes above, and transcriptions, speech, images, files,
 *     models, a background response polled with GET /openai/responses/{id}: recordingUrl() in
 *     ./index.ts asks `speaks` for the paths no route here names): the openai SDK sends the
 *     version it was told, and a bumped version must not orphan every tape. An answer shape a
 *     new version brings is had by re-recording.
 * Credentials: the `api-key` header, or an Entra ID token as `Authorization: Bearer`; both are
 * redacted like every provider's (src/store/redact.ts), and `api-key` in a query string too.
 */

import type { TapedeckError } from '../errors.ts';
import type { ErrorStyle } from './error-shape.ts';
import { normalizeRequest } from './normalize.ts';
import { chatFamily, openai } from './openai.ts';
import type { NormalizeContext, ProviderModule, StatusFault } from './provider.ts';
import type { RequestView } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What an Azure OpenAI path addresses: its operation, and the deployment when the path names one. */
export interface AzureRoute {
  /** `chat/completions`, `completions`, `embeddings`, `responses`, ... */
  operation: string;
  /** The deployment from `/openai/deployments/{deployment}/...`; undefined on the v1 paths. */
  deployment?: string;
}

const DEPLOYMENT = /^\/openai\/deployments\/([^/?#]+)\/([^?#]+?)\/?$/;
const V1 = /^\/openai\/v1\/([^?#]+?)\/?$/;
const UNVERSIONED = /^\/openai\/(responses|chat\/completions|embeddings)\/?$/;

/**
 * The Azure OpenAI route of a path (query ignored), or undefined for a path that is not one.
 *
 * @example
 * azureRoute('/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21') // { operation: 'chat/completions', deployment: 'gpt-4o' }
 * azureRoute('/openai/v1/chat/completions')                                      // { operation: 'chat/completions' }
 */
export function azureRoute(url: string): AzureRoute | undefined {
  const path = url.split(/[?#]/)[0]!;
  const d = DEPLOYMENT.exec(path);
  if (d) {
    let deployment = d[1]!;
    try {
      deployment = decodeURIComponent(deployment);
    } catch {
      // a malformed escape: the name as sent
    }
    return { operation: d[2]!, deployment };
  }
  const v = V1.exec(path) ?? UNVERSIONED.exec(path);
  return v ? { operation: v[1]! } : undefined;
}

/**
 * A URL with its `api-version` query parameter removed (the other parameters kept in order): the
 * route a recording is filed under, so recordings outlive an SDK upgrade that bumps the version.
 *
 * @example
 * withoutApiVersion('/openai/deployments/d/chat/completions?api-version=2024-10-21') // '/openai/deployments/d/chat/completions'
 */
export function withoutApiVersion(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((p) => p !== '' && decodeURIComponent(p.split('=')[0]!.replace(/\+/g, ' ')).toLowerCase() !== 'api-version');
  return kept.length > 0 ? `${url.slice(0, q)}?${kept.join('&')}` : url.slice(0, q);
}

/**
 * The body keyed for an Azure request: on a deployment path, the deployment as `model` (the
 * body's own `model` replaced); on the v1 paths, the body as sent.
 *
 * @example
 * azureKeyedBody({ operation: 'chat/completions', deployment: 'prod-4o' }, { model: 'gpt-4o', messages })
 * // { model: 'prod-4o', messages }
 */
export function azureKeyedBody(route: AzureRoute, body: unknown): unknown {
  if (route.deployment === undefined || !isObj(body)) return body;
  return { ...body, model: route.deployment };
}

// Deployment operations whose body is keyed, and the chat-family shape each is keyed as.
const DEPLOYMENT_SHAPES = {
  'chat/completions': ['azure-chat', 'openai-chat'],
  completions: ['azure-completions', undefined],
  embeddings: ['azure-embeddings', 'openai-embeddings'],
} as const;
const CHAT_SHAPE_OF: Record<string, 'openai-chat' | 'openai-embeddings' | undefined> = {
  'azure-chat': 'openai-chat',
  'azure-completions': undefined,
  'azure-embeddings': 'openai-embeddings',
};

/**
 * The Azure OpenAI module. Its deployment routes key the deployment as the model; its v1 routes
 * are OpenAI's (model in the body, keyed from the raw bytes like any chat body) and are listed
 * here so that their recordings too are filed without `api-version`.
 *
 * @example
 * azure.routeUrl?.('/openai/deployments/d/chat/completions?api-version=2024-10-21') // '/openai/deployments/d/chat/completions'
 */
export const azure: ProviderModule = {
  name: 'azure',
  routes: [
    ...Object.entries(DEPLOYMENT_SHAPES).map(([op, [shape]]) => ({
      method: 'POST',
      path: new RegExp(`/openai/deployments/(?<model>[^/]+)/${op.replace('/', '\\/')}$`),
      operation: op.replace('/', '.'),
      shape,
    })),
    { method: 'POST', path: /\/openai\/(?:v1\/)?chat\/completions$/, operation: 'chat.completions' },
    { method: 'POST', path: /\/openai\/(?:v1\/)?embeddings$/, operation: 'embeddings' },
    { method: 'POST', path: /\/openai\/(?:v1\/)?responses$/, operation: 'responses' },
  ],
  shapes: ['azure-chat', 'azure-completions', 'azure-embeddings'],
  ...chatFamily,
  // The deployment routes' key has the model from the path, which the raw-bytes walk (body
  // only) cannot know; routes without a shape (v1) are still keyed from the raw bytes.
  rawKeys: false,
  normalize(body: unknown, ctx: NormalizeContext): RequestView {
    const route = ctx.route ? azureRoute(ctx.route.path) : undefined;
    const keyed = route ? azureKeyedBody(route, body) : body;
    const provider = ctx.shape === undefined ? undefined : CHAT_SHAPE_OF[String(ctx.shape)];
    const { provider: _p, ...opts } = ctx.opts;
    const r = normalizeRequest(keyed, provider ? { ...opts, provider } : opts);
    return ctx.shape === undefined ? r : { ...r, provider: ctx.shape };
  },
  // Also which paths' recordings routeUrl files (recordingUrl() in ./index.ts): all of them.
  speaks: (path: string) => path.startsWith('/openai/'),
  routeUrl: withoutApiVersion,
  // The style too: its `/openai/v1/...` paths are Groq's, whose SDK shows the whole body.
  errorAnswer: (e: TapedeckError, status: number, style?: ErrorStyle) => openai.errorAnswer(e, status, style),
  fault: (fault: StatusFault, message: string) => openai.fault!(fault, message),
  credentials: { headers: ['api-key', 'authorization'], query: ['api-key'], fields: [] },
};
