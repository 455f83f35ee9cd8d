/**
 * The request's own secrets, masked where its answer repeats them.
 *
 * A server may echo what it was sent: an error that quotes the URL with its `?token=`, a debug
 * endpoint that lists the headers, a model asked to repeat a `client_secret` it was given. The
 * request side masks these by name (a header, a query parameter, a member), but in the answer
 * they stand in free text under no name, and a value with no provider prefix (a gateway's key, a
 * random token) matches no credential pattern, so it reached the tape. Here each secret value the
 * request carried is looked for in the answer (its body, its headers, a stream's pieces joined)
 * and masked as the request's copy is: `[REDACTED]` for a provider credential, else its keyed
 * mask, so a reviewer sees that the answer repeated the request's value.
 *
 * Only values of at least {@link MIN_ECHO} characters with a letter among them: a shorter or
 * all-digit value is too likely to stand in an answer by chance (a word, a number), and masking
 * it there would change answers that never held the secret. The parts of a header's value (the
 * token after `Bearer`, a cookie's value) count when they hold a letter and a digit too. A value
 * in a known key format is left to the credential patterns, which mask it everywhere already.
 */
import { REDACTED, latin1Bytes, latin1Text, type KnownBody, type Redactor } from './redact.ts';

/** The shortest value looked for in answers. */
const MIN_ECHO = 8;

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/** What a request carried that echoing() looks for: its headers, URL and body as sent. */
export interface EchoSource {
  headers: Record<string, string | string[] | undefined>;
  url: string;
  body: Uint8Array;
  /** The caller knows redaction left the body as it was (no member to look for). */
  bodyPlain?: boolean;
}

/** A redactor that also masks the request's secrets in an answer; `echoes` are the values (for a stream's pieces). */
export type EchoingRedactor = Redactor & { readonly echoes?: readonly string[] };

/**
 * The redactor for an answer to `req`: `r`, plus each secret value of the request masked where
 * the answer holds it (see the top). `r` itself when the request carried no such value, or when
 * secrets are kept.
 *
 * @example
 * const masks = echoing(redactor({ salt }), { headers: { 'x-api-key': 'gw5Kq8Zt3Lm9Pw2R' }, url: '/v1/x', body: new Uint8Array() })
 * masks.text('your key is gw5Kq8Zt3Lm9Pw2R') // 'your key is [REDACTED:…]'
 */
export function echoing(r: Redactor, req: EchoSource): EchoingRedactor {
  if (r.keepSecrets) return r;
  const secrets = requestSecrets(r, req);
  if (secrets.size === 0) return r;
  // Longest first: a value that holds another is masked whole.
  const values = [...secrets.keys()].sort((a, b) => b.length - a.length);
  // The forms a value takes in an answer: as it is, escaped in a JSON string, escaped in a URL;
  // as text one character a byte too (how bodies are read), for values beyond ASCII.
  const forms: [string, string][] = [];
  for (const v of values) {
    const m = secrets.get(v)!;
    const json = JSON.stringify(v).slice(1, -1);
    const seen = new Set<string>();
    for (const f of [json === v ? v : undefined, json, encodeURIComponent(v)]) {
      if (f === undefined) continue;
      for (const g of [f, latin1Text(utf8.encode(f))]) {
        if (seen.has(g)) continue;
        seen.add(g);
        forms.push([g, m]);
      }
    }
  }
  const replace = (s: string): string => {
    let out = s;
    for (const [f, m] of forms) if (out.includes(f)) out = out.split(f).join(m);
    return out;
  };
  const value = <T>(v: T): T => {
    if (typeof v === 'string') return r.value(replace(v)) as T;
    if (v === null || typeof v !== 'object') return r.value(v);
    let text: string;
    try {
      text = JSON.stringify(v);
    } catch {
      return r.value(v);
    }
    if (replace(text) === text) return r.value(v);
    // Only strings change: a parse that revives each string with its values masked.
    return r.value(JSON.parse(text, (_k, x: unknown) => (typeof x === 'string' ? replace(x) : x)) as T);
  };
  return {
    ...r,
    echoes: values,
    mask: (v) => secrets.get(v) ?? r.mask(v),
    text: (s) => r.text(replace(s)),
    value,
    bytes(body: Uint8Array, contentType?: string, known?: KnownBody): Uint8Array {
      const whole = known?.ascii !== undefined && known.ascii.length === body.length ? known.ascii : latin1Text(body);
      const masked = replace(whole);
      return masked === whole ? r.bytes(body, contentType, known) : r.bytes(latin1Bytes(masked), contentType);
    },
    headers<H extends Record<string, string | string[] | number | undefined>>(h: H): H {
      const out: Record<string, string | string[] | number | undefined> = r.headers(h);
      for (const k of Object.keys(out)) {
        const x = out[k];
        if (typeof x === 'string') out[k] = replace(x);
        else if (Array.isArray(x)) out[k] = x.map(replace);
      }
      return out as H;
    },
  };
}

/** Each secret value the request carried, with the mask its answer gets for it. */
function requestSecrets(r: Redactor, req: EchoSource): Map<string, string> {
  const out = new Map<string, string>();
  const add = (v: string, mask: string): void => {
    // A value the credential patterns find (an `sk-…` key) is theirs: masked wherever it stands,
    // with the keyed mask its copy in a prompt gets too.
    if (v.length >= MIN_ECHO && /\p{L}/u.test(v) && !v.startsWith(REDACTED.slice(0, -1)) && !out.has(v) && r.text(v) === v) out.set(v, mask);
  };
  for (const name of Object.keys(req.headers)) {
    const given = req.headers[name];
    if (given === undefined || !r.isSecretHeader(name)) continue;
    const credential = r.isCredentialHeader(name);
    for (const v of Array.isArray(given) ? given : [given]) {
      add(v, credential ? REDACTED : r.mask(v));
      // A scheme's token, a cookie's value: the parts a server is likelier to repeat alone.
      for (const part of v.split(/[\s,;=]+/)) if (part !== v && /\d/.test(part)) add(part, credential ? REDACTED : r.mask(part));
    }
  }
  const q = req.url.indexOf('?');
  if (q >= 0) {
    const hash = req.url.indexOf('#', q);
    for (const p of req.url.slice(q + 1, hash < 0 ? undefined : hash).split('&')) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const masked = r.url(`/?${p}`);
      if (masked === `/?${p}`) continue;
      const v = decoded(p.slice(eq + 1));
      add(v, masked.endsWith(`=${encodeURIComponent(REDACTED)}`) ? REDACTED : r.mask(v));
    }
  }
  if (req.body.length > 0 && req.bodyPlain !== true) bodySecrets(r, req, add);
  return out;
}

/** The secret members of a JSON body and the secret fields of a form body. */
function bodySecrets(r: Redactor, req: EchoSource, add: (v: string, mask: string) => void): void {
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(utf8Text.decode(req.body))) if (r.isSecretField(k)) add(v, r.mask(v));
    return;
  }
  const text = latin1Text(req.body);
  // The redactor's cheap test: a body it passes has no member it masks by name.
  if (!/^\s*[[{]/.test(text) || !r.mayHaveSecrets(text)) return;
  let doc: unknown;
  try {
    doc = JSON.parse(utf8Text.decode(req.body));
  } catch {
    return;
  }
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push(x);
      continue;
    }
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (typeof x === 'string' && r.isSecretField(k)) add(x, r.mask(x));
      else if (x !== null && typeof x === 'object') stack.push(x);
    }
  }
}

/** A query value as its parameter meant it; the raw text when its escapes are malformed. */
function decoded(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
