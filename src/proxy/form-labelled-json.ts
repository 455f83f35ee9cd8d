// Ollama's server reads a request body as JSON whatever its content type says, and Ollama's own
// documentation sends requests with `curl http://localhost:11434/api/chat -d '{...}'`, which
// curl labels application/x-www-form-urlencoded. The ollama clients send the same body as
// application/json. Keyed by its label, the curl request was an opaque form that the client's
// request never matched, with a miss that could not say why. So on Ollama's keyed routes such a
// body is taken for the JSON it is: keyed, matched, recorded and forwarded as application/json,
// which is how Ollama reads it anyway.

import type { IncomingHttpHeaders } from 'node:http';
import { routeOf } from '../providers/index.ts';
import { firstNonSpace } from '../store/http-body.ts';

// Tested in place: a slice lowercased would make a string for every request the proxy reads.
const FORM = /^application\/x-www-form-urlencoded/i;

/**
 * The headers a request is keyed and forwarded with: its own, or for a JSON object body labelled
 * as a form on one of Ollama's keyed routes, the same with `content-type: application/json`.
 *
 * @example
 * jsonLabelled({ 'content-type': 'application/x-www-form-urlencoded' }, 'POST', '/api/chat', Buffer.from('{"model":"llama3"}'))
 * // { 'content-type': 'application/json' }
 */
export function jsonLabelled(headers: IncomingHttpHeaders, method: string, url: string, body: Uint8Array): IncomingHttpHeaders {
  const type = headers['content-type'];
  if (type === undefined || !FORM.test(type)) return headers;
  if (firstNonSpace(body) !== 0x7b || routeOf({ method, url })?.provider.name !== 'ollama') return headers;
  return { ...headers, 'content-type': 'application/json' };
}
