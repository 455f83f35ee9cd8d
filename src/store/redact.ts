/**
 * Redaction: secrets never reach a tape. Every writer (ReplayCache, the proxy, createFetch,
 * importers) passes what it stores through here first, so the only way to get a key onto disk
 * is to ask for it explicitly with `keepSecrets: true`.
 *
 * What counts as a secret, by name (case-insensitive, `-` and `_` treated alike):
 * - headers: authorization, proxy-authorization, x-api-key, api-key, cookie, set-cookie,
 *   openai-organization, openai-project, x-goog-api-key, anthropic-admin-key, x-amz-security-token;
 * - JSON fields anywhere in a value: api_key / apiKey / api-key, authorization, x-api-key,
 *   access_token, refresh_token, client_secret, password, secret_key, session_token,
 *   aws_secret_access_key, cookie, set-cookie, openai-organization;
 * - URL query parameters: key, api_key, apikey, access_token, token, sig, signature, code.
 * Plus whatever names the user adds (`headers`, `fields`, `query`).
 *
 * Values are replaced, never removed, so a reviewer sees that a header was sent and the shape
 * of the record is unchanged. Strings elsewhere that carry an obvious credential (`Bearer …`,
 * `Basic …`, or a known provider key prefix followed by a long token) are masked too: a key
 * pasted into a prompt or an error message must not end up in git either.
 */

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

export interface RedactOptions {
  /** Store secrets as they are. Only for tapes that never leave the machine. Default false. */
  keepSecrets?: boolean;
  /** More header names to redact (case-insensitive). */
  headers?: readonly string[];
  /** More JSON field names to redact wherever they occur (case-insensitive, - and _ alike). */
  fields?: readonly string[];
  /** More URL query parameter names to redact. */
  query?: readonly string[];
  /** Mask credential-looking substrings in other strings (default true). */
  scanStrings?: boolean;
}

export const SECRET_HEADERS: readonly string[] = Object.freeze([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'openai-organization',
  'openai-project',
  'x-goog-api-key',
  'anthropic-admin-key',
  'x-amz-security-token',
]);

export const SECRET_FIELDS: readonly string[] = Object.freeze([
  'api_key',
  'apikey',
  'authorization',
  'x_api_key',
  'access_token',
  'refresh_token',
  'client_secret',
  'password',
  'secret_key',
  'session_token',
  'aws_secret_access_key',
  'cookie',
  'set_cookie',
  'openai_organization',
]);

export const SECRET_QUERY: readonly string[] = Object.freeze(['key', 'api_key', 'apikey', 'access_token', 'token', 'sig', 'signature', 'code']);

const fold = (name: string) => name.toLowerCase().replace(/-/g, '_');

// `Bearer x`, `Basic x`, and key formats of the providers tapedeck records (OpenAI `sk-`,
// `sk-proj-`, Anthropic `sk-ant-`, Google `AIza`, GitHub, Slack, AWS access key ids). A token
// must be long enough that ordinary prose ("sk-learn", "Bearer of bad news") is left alone.
const CREDENTIAL =
  /\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{16,}|\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abposr]-[A-Za-z0-9-]{20,}|AKIA[0-9A-Z]{16})/g;

/** Compiled redaction rules; build once with {@link redactor} and reuse on the hot path. */
export interface Redactor {
  readonly keepSecrets: boolean;
  /** Header map with secret values replaced; a new object, names unchanged. */
  headers<H extends Record<string, string | string[] | number | undefined>>(headers: H): H;
  /** Deep copy of a JSON-like value with secret fields and credential-looking strings masked. */
  value<T>(value: T): T;
  /** A URL (absolute or path + query) with secret query parameters masked. */
  url(url: string): string;
  /** A string with credential-looking substrings masked. */
  text(s: string): string;
  /** Whether a header name is redacted. */
  isSecretHeader(name: string): boolean;
}

/**
 * Builds a redactor from options; `keepSecrets: true` gives one that changes nothing.
 *
 * @example
 * const r = redactor({ headers: ['x-internal-token'] })
 * r.headers({ authorization: 'Bearer sk-…', accept: 'application/json' }) // { authorization: '[REDACTED]', accept: … }
 */
export function redactor(opts: RedactOptions = {}): Redactor {
  const keep = opts.keepSecrets === true;
  const headerSet = new Set([...SECRET_HEADERS, ...(opts.headers ?? [])].map((h) => h.toLowerCase()));
  const fieldSet = new Set([...SECRET_FIELDS, ...SECRET_HEADERS, ...(opts.fields ?? [])].map(fold));
  const querySet = new Set([...SECRET_QUERY, ...(opts.query ?? [])].map((q) => q.toLowerCase()));
  const scan = opts.scanStrings !== false;

  const text = (s: string): string => {
    if (keep || !scan || s.length < 20) return s;
    CREDENTIAL.lastIndex = 0;
    return CREDENTIAL.test(s) ? s.replace(CREDENTIAL, REDACTED) : s;
  };

  const url = (u: string): string => {
    if (keep) return u;
    const q = u.indexOf('?');
    if (q < 0) return text(u);
    const hashAt = u.indexOf('#', q);
    const query = u.slice(q + 1, hashAt < 0 ? undefined : hashAt);
    const parts = query.split('&').map((p) => {
      const eq = p.indexOf('=');
      if (eq < 0) return p;
      let name = p.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: compare the raw name
      }
      return querySet.has(name.toLowerCase()) ? `${p.slice(0, eq)}=${encodeURIComponent(REDACTED)}` : p;
    });
    return text(u.slice(0, q + 1) + parts.join('&') + (hashAt < 0 ? '' : u.slice(hashAt)));
  };

  const value = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (v === null || typeof v !== 'object' || depth > 256) return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const r = value(v[i], depth + 1);
        if (r !== v[i] && !out) out = v.slice(0, i);
        if (out) out.push(r);
      }
      return out ?? v;
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (v instanceof Map) {
      let changed = false;
      const out = new Map<unknown, unknown>();
      for (const [k, x] of v as Map<unknown, unknown>) {
        const r = typeof k === 'string' && fieldSet.has(fold(k)) && x != null ? REDACTED : value(x, depth + 1);
        if (r !== x) changed = true;
        out.set(k, r);
      }
      return changed ? out : v;
    }
    if (proto !== Object.prototype && proto !== null) return v; // Dates, typed arrays, user classes
    const obj = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(obj)) {
      const x = obj[k];
      const r = fieldSet.has(fold(k)) && x != null && x !== '' ? REDACTED : value(x, depth + 1);
      if (r !== x && !out) out = { ...obj };
      if (out) out[k] = r;
    }
    return out ?? obj;
  };

  return {
    keepSecrets: keep,
    isSecretHeader: (name) => !keep && headerSet.has(name.toLowerCase()),
    headers<H extends Record<string, string | string[] | number | undefined>>(h: H): H {
      if (keep) return h;
      const out: Record<string, string | string[] | number | undefined> = {};
      for (const [k, x] of Object.entries(h)) {
        if (x === undefined) continue;
        if (headerSet.has(k.toLowerCase())) out[k] = Array.isArray(x) ? x.map(() => REDACTED) : REDACTED;
        else out[k] = typeof x === 'string' ? text(x) : Array.isArray(x) ? x.map(text) : x;
      }
      return out as H;
    },
    value: <T>(v: T): T => (keep ? v : (value(v, 0) as T)),
    url,
    text,
  };
}

const defaultRedactor = redactor();

/**
 * Deep copy of `value` with secrets masked by the default rules (unchanged parts are shared,
 * not copied).
 *
 * @example
 * redact({ model: 'gpt-4o', api_key: 'sk-…' }) // { model: 'gpt-4o', api_key: '[REDACTED]' }
 */
export function redact<T>(value: T, opts?: RedactOptions): T {
  return (opts ? redactor(opts) : defaultRedactor).value(value);
}
