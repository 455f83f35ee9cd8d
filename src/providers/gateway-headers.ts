/**
 * Headers by which an LLM gateway picks who answers. A gateway's OpenAI-compatible endpoint takes
 * the same URL and body for every provider behind it and routes by a header: Portkey by
 * `x-portkey-provider`, `x-portkey-virtual-key` (a stored provider key), `x-portkey-config` (a
 * saved or inline routing config) and `x-portkey-custom-host`; Helicone's gateway by
 * `Helicone-Target-Url`. Two calls that differ only there get two providers' answers, so their
 * recordings are filed apart by these values, as Anthropic's `anthropic-beta` files them
 * (keyedHeaders in ./index.ts). The gateway's credential (`x-portkey-api-key`, `Helicone-Auth`)
 * and its per-run headers (`x-portkey-trace-id`, `Helicone-Session-Id`) are not among them: they
 * never change the answer.
 */
import { keyedHeaders, type RouteRequest } from './index.ts';

/** The routing headers, lower-case, in the order a route name lists them. */
const GATEWAY_HEADERS: readonly string[] = ['x-portkey-provider', 'x-portkey-virtual-key', 'x-portkey-config', 'x-portkey-custom-host', 'helicone-target-url'];

/** What masks a header's value as the tape stores it (the store's redactor). */
export interface HeaderMasker {
  headers(headers: Record<string, string>): Record<string, unknown>;
}

/**
 * What a route name adds for the headers its recordings are filed by: the module's own
 * (` (anthropic-beta: a)`, see keyedHeaders; read only when `req.keyed` is not false, the deck's
 * note that the route's module has some) and the gateway's routing headers the request sends,
 * joined in one part (` (x-portkey-virtual-key: [REDACTED:3f9a…])`), or ''. Each gateway value
 * is masked by `store`'s redactor as the tape stores the header, so a virtual key never reaches
 * a route name on disk, and the same value under the same salt always files alike.
 *
 * @example
 * filedHeaders({ method: 'POST', url: '/v1/chat/completions' }, { 'x-portkey-provider': 'anthropic' }, { redactor: redactor() })
 * // ' (x-portkey-provider: anthropic)'
 */
export function filedHeaders(req: RouteRequest & { keyed?: boolean }, headers: Readonly<Record<string, string | readonly string[] | undefined>> | undefined, store: { readonly redactor: HeaderMasker }): string {
  const keyed = req.keyed !== false && headers ? keyedHeaders(req, headers) : '';
  let part = '';
  if (headers !== undefined) {
    for (const name of GATEWAY_HEADERS) {
      const v = headers[name];
      if (v === undefined || v === '') continue;
      const value = String(store.redactor.headers({ [name]: Array.isArray(v) ? v.join(', ') : String(v) })[name]).trim();
      part += `; ${name}: ${value}`;
    }
  }
  if (part === '') return keyed;
  return keyed === '' ? ` (${part.slice(2)})` : `${keyed.slice(0, -1)}${part})`;
}
