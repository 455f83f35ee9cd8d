/**
 * A gateway's description of a provider call, in a JSON body, carries the headers to send that
 * provider: Cloudflare AI Gateway's universal endpoint takes
 * `[{ provider: 'openai', endpoint: 'chat/completions', headers: { authorization: 'Bearer sk-…' }, query: {…} }]`.
 * The credential headers of such a `headers` map (an object beside a string `provider`:
 * `authorization`, `x-api-key`, `api-key`, ...) are the provider's credentials, judged as the
 * request's own headers are: `[REDACTED]`, the same whoever's key was sent, so a tape recorded
 * with one developer's key replays with another's and with CI's placeholder. Any other
 * `headers` member (an MCP tool's, whose server may answer each user differently) and any other
 * secret-named member keep their keyed mask. Node only: a page records nothing, and its bundle
 * has a 100 KB budget.
 */
import { REDACTED, type Redactor } from './redact.ts';

/**
 * `redacted` (the redactor's copy of `parent.headers`, `given`) with the credential headers of
 * the map as `[REDACTED]` when `parent` describes a provider call; `redacted` itself otherwise.
 *
 * @example
 * headersMember({ provider: 'openai' }, { authorization: 'Bearer sk-1' }, { authorization: '[REDACTED:3f9a…]' }, redactor()) // { authorization: '[REDACTED]' }
 */
export function headersMember(parent: Record<string, unknown>, given: unknown, redacted: unknown, r: Pick<Redactor, 'isCredentialHeader'>): unknown {
  // value() copies an object it changes and returns it as it was otherwise: a header map whose
  // credential member was masked is a fresh copy, ours to set.
  if (redacted === given || typeof parent.provider !== 'string' || given === null || typeof given !== 'object' || Array.isArray(given) || redacted === null || typeof redacted !== 'object') return redacted;
  const src = given as Record<string, unknown>;
  const out = redacted as Record<string, unknown>;
  for (const name of Object.keys(src)) {
    const v = src[name];
    if (typeof v === 'string' && v !== '' && Object.prototype.hasOwnProperty.call(out, name) && r.isCredentialHeader(name)) out[name] = REDACTED;
  }
  return out;
}
