/**
 * The request path as the proxy forwards it: dot segments resolved, and refused when they would
 * climb out of the path. The upstream URL may carry a path prefix (`--upstream
 * http://host/api/openai`): its URL parser resolves `..` in the joined URL, so `/v1/../../admin`
 * would reach `http://host/admin`, outside the API the proxy was pointed at.
 */
import { TapedeckError } from '../errors.ts';
import { redactor, type Redactor } from '../store/redact.ts';

// `.` and `..` as URL parsers see them: `%2e` is a dot (WHATWG URL), `\` separates segments in
// http(s) URLs like `/` does.
const DOT = /^(?:\.|%2e)$/i;
const DOTDOT = /^(?:\.|%2e){2}$/i;

let lastUnchanged = '/';

let masks: Redactor | undefined;

function refuse(url: string, why: string): TapedeckError {
  // The path is what is wrong; its query (a `?key=`) is left out, and a secret in the path (a
  // bot's token) masked: the error goes back to the client, whose SDK raises it into its log.
  const shown = (masks ??= redactor()).url(url.replace(/[?#].*$/s, '')).slice(0, 200);
  return new TapedeckError('E_PROXY_PATH', `Request path ${JSON.stringify(shown)} ${why}.`, {
    path: shown,
    hint: 'Send the path without `..` segments (as an SDK does); the proxy only forwards paths under the upstream URL.',
  });
}

/**
 * The path and query to forward: `.` segments dropped and `..` segments resolved (encoded
 * `%2e%2e` and backslash-separated ones too). A path that would climb above its root, or that
 * hides a dot segment behind an encoded slash (`..%2f`), is refused with E_PROXY_PATH (HTTP 400).
 * Paths without dot segments come back unchanged.
 *
 * @example
 * normalizeRequestPath('/v1/./models?x=1')           // '/v1/models?x=1'
 * normalizeRequestPath('/v1/../../../../admin/keys') // throws E_PROXY_PATH
 */
export function normalizeRequestPath(url: string): string {
  // Every request asks, and clients send one path over and over: the last unchanged one is kept.
  if (url === lastUnchanged) return url;
  const q = url.search(/[?#]/);
  const path = q < 0 ? url : url.slice(0, q);
  const rest = q < 0 ? '' : url.slice(q);
  // Fast path: nothing that could be a dot segment or another separator.
  if (!/[.\\]|%2e/i.test(path)) {
    lastUnchanged = url;
    return url;
  }
  const segments = path.split(/[/\\]/);
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const seg = segments[i]!;
    // An encoded slash or backslash next to dots: an upstream that decodes it would see `..`.
    if (/%2f|%5c/i.test(seg) && seg.split(/%2f|%5c/i).some((p) => DOT.test(p) || DOTDOT.test(p))) {
      throw refuse(url, 'hides a dot segment behind an encoded slash');
    }
    if (DOT.test(seg)) {
      if (i === segments.length - 1) out.push(''); // `/a/.` is `/a/`
      continue;
    }
    if (DOTDOT.test(seg)) {
      if (out.length === 0 || (out.length === 1 && out[0] === '')) throw refuse(url, 'climbs above the root with `..`');
      out.pop();
      if (i === segments.length - 1) out.push('');
      continue;
    }
    out.push(seg);
  }
  return `/${out.join('/')}${rest}`;
}
