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
 *   - `api-version` is in neither the key nor the route a recording is filed under: the openai
 *     SDK sends the version it was told, and a bumped version must not orphan every tape. An
 *     answer shape a new version brings is had by re-recording.
 * Credentials: the `api-key` header, or an Entra ID token as `Authorization: Bearer`; both are
 * redacted like every provider's (src/store/redact.ts), and `api-key` in a query string too.
 */

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
