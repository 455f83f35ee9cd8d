/**
 * How an upstream base URL is joined with a request's path: its trailing slashes dropped, all
 * of them, then the path. One rule for every place that does it (the HTTP proxy, its realtime
 * and MCP endpoints, the redirects it points back at itself, `tapedeck rerecord`), so that a
 * request re-recorded from a tape goes to the URL the proxy sent it to, whatever slashes the
 * user wrote after `--upstream https://gateway.example/prefix`.
 */

/**
 * `s` without its trailing slashes (a loop, not a regex: no backtracking on a run of slashes).
 *
 * @example
 * withoutTrailingSlashes('https://gw.example/prefix//') // 'https://gw.example/prefix'
 */
export function withoutTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x2f) end--;
  return end === s.length ? s : s.slice(0, end);
}

/**
 * The path prefix an upstream URL puts before every request path, '' when it has none; throws
 * TypeError for a string that is not a URL (callers check it first).
 *
 * @example
 * upstreamPrefix('https://gateway.ai.cloudflare.com/v1/acct/gw/openai/') // '/v1/acct/gw/openai'
 * upstreamPrefix('https://api.openai.com') // ''
 */
export function upstreamPrefix(upstream: string): string {
  return withoutTrailingSlashes(new URL(upstream).pathname);
}
