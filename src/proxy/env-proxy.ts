/**
 * The forward proxy the environment names for an upstream URL, read as curl and most HTTP clients
 * read it: `https_proxy` / `HTTPS_PROXY` for an https URL, `http_proxy` / `HTTP_PROXY` for an
 * http one (lower case first), unless `no_proxy` / `NO_PROXY` excludes the host. Node's fetch,
 * and so tapedeck's own connection to the upstream, reads none of them: behind a corporate proxy
 * the upstream looks unreachable, and the error must say why instead of "check the network".
 */

/**
 * The name of the variable that names a proxy for `url` (`HTTPS_PROXY`, as it is spelled in the
 * environment), or undefined. Only the name: a proxy URL carries a password, so its value is
 * never quoted.
 *
 * @example
 * proxyVariableFor('https://api.openai.com/v1/chat/completions', { HTTPS_PROXY: 'http://proxy:3128' }) // 'HTTPS_PROXY'
 * proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: '.openai.com' }) // undefined
 */
export function proxyVariableFor(url: string, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = u.protocol === 'https:' ? 'https' : u.protocol === 'http:' ? 'http' : undefined;
  if (scheme === undefined) return undefined;
  const name = [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`].find((n) => (env[n] ?? '').trim() !== '');
  if (name === undefined) return undefined;
  const noProxy = (env.no_proxy ?? env.NO_PROXY ?? '').trim();
  return noProxy !== '' && excluded(u, noProxy) ? undefined : name;
}

/** Whether a NO_PROXY list (`*`, `host`, `.suffix`, `host:port`, comma or space separated) excludes the URL's host. */
function excluded(u: URL, list: string): boolean {
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  for (const raw of list.split(/[\s,]+/)) {
    let entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const m = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[|\]$/g, ''));
    if (m?.[2] !== undefined && m[2] !== port) continue;
    entry = (m?.[1] ?? entry).replace(/^\*?\./, '.');
    if (entry.startsWith('.') ? host.endsWith(entry) || host === entry.slice(1) : host === entry || host.endsWith(`.${entry}`)) return true;
  }
  return false;
}
