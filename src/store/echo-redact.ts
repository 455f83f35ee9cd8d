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
import { pairedSecretsIn } from './aws-pairs.ts';
import { awsSecrets } from './credential.ts';
import { ENV_LINE, YAML_LINE, valueMayBeSecret } from './env-secrets.ts';
import { FORM_START, multipartBoundary, partName, parts } from './http-body.ts';
import { isFrozenHeaders } from './frozen-headers.ts';
import { formPairs, queryPairs, urlQuery } from './query-pairs.ts';
import { EMBEDDED_MEMBER, embeddedSecret, REDACTED, latin1Bytes, latin1Text, type KnownBody, type Redactor } from './redact.ts';

/** The shortest value looked for in answers. */
const MIN_ECHO = 8;

/**
 * Headers (and presigned query parameters) stored masked that are no secret: SigV4's date and
 * body digest change with every signature (docs/proxy.md), and an AWS error quoting the date
 * must keep it.
 */
const NOT_SECRET = new Set(['x-amz-date', 'x-amz-content-sha256']);

/** `<scheme> <token>`: the token. */
const SCHEME_TOKEN = /^[A-Za-z][\w.+-]*\s+(\S+)$/;

/** The value of each `name=value` of a header (a cookie's, an authorization's parameters). */
const PAIR_VALUE = /[^\s,;=]=([^\s,;]+)/g;

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/** What a request carried that echoing() looks for: its headers, URL and body as sent. */
export interface EchoSource {
  headers: Record<string, string | string[] | undefined>;
  url: string;
  body: Uint8Array;
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
export function echoing(r: Redactor, req: EchoSource, bodyPlain = false): EchoingRedactor {
  if (r.keepSecrets) return r;
  const secrets = requestSecrets(r, req, bodyPlain);
  if (secrets === undefined) return r;
  // Longest first: a value that holds another is masked whole.
  const values = [...secrets.keys()].sort((a, b) => b.length - a.length);
  const forms: (readonly [string, string])[] = [];
  for (const v of values) for (const f of secrets.get(v)!.forms) forms.push([f, secrets.get(v)!.mask]);
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
    // Only strings change: a parse that revives each string with its values masked. (Values here
    // are parsed JSON, an event's payload: nothing JSON text would not give back.)
    return r.value(JSON.parse(text, (_k, x: unknown) => (typeof x === 'string' ? replace(x) : x)) as T);
  };
  return {
    ...r,
    echoes: values,
    mask: (v) => secrets.get(v)?.mask ?? r.mask(v),
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

/** A value looked for in answers: its mask, and the forms it takes in an answer. */
interface Echo {
  mask: string;
  forms: readonly string[];
}

/**
 * Each redactor's judged values (`1` + a credential's value, `0` + another's): its Echo, or null
 * for one left alone. Requests repeat their keys and tokens, and judging one (a credential
 * pattern's test, an HMAC for its mask) cost more than the rest of recording a small exchange.
 */
const judged = new WeakMap<Redactor, Map<string, Echo | null>>();

/** How many values a redactor keeps judged: they come from the traffic. */
const JUDGED_MAX = 1024;

/**
 * The Echo of a value, or null when it is left alone (see the top). `sent`: the value as the
 * request carried it, when that is not `v` (a query or form value with escapes): the request's
 * copy is masked as sent, and the answer's copy gets the same mask.
 */
function echoOf(r: Redactor, v: string, credential: boolean, sent = v): Echo | null {
  let seen = judged.get(r);
  if (seen === undefined) judged.set(r, (seen = new Map()));
  const id = (credential ? '1' : '0') + (sent === v ? v : `${v}\u0000${sent}`);
  let e = seen.get(id);
  if (e !== undefined) return e;
  // A value the credential patterns find (an `sk-…` key) is theirs: masked wherever it stands,
  // with the keyed mask its copy in a prompt gets too.
  e = v.length >= MIN_ECHO && /\p{L}/u.test(v) && !v.startsWith(REDACTED.slice(0, -1)) && r.text(v) === v ? { mask: credential ? REDACTED : r.mask(sent), forms: formsOf(v) } : null;
  if (seen.size >= JUDGED_MAX) seen.clear();
  seen.set(id, e);
  return e;
}

/**
 * The forms a value takes in an answer: as it is, escaped in a JSON string (its slashes also as
 * `\/`), escaped in a URL;
 * each also as text one character a byte (how bodies are read), for values beyond ASCII. The
 * value as it is only when JSON needs no escape in it: with a quote or a backslash it could
 * match across a JSON body's structure.
 */
function formsOf(v: string): string[] {
  const json = JSON.stringify(v).slice(1, -1);
  const out = new Set<string>();
  // JSON's `\/` for a slash too, as PHP's json_encode writes every one.
  for (const f of [json === v ? v : undefined, json, json.indexOf('/') >= 0 ? json.replace(/\//g, '\\/') : undefined, encodeURIComponent(v)]) {
    if (f === undefined) continue;
    out.add(f);
    out.add(latin1Text(utf8.encode(f)));
  }
  return [...out];
}

/**
 * Each secret value the request carried, with what its answer is searched and masked with;
 * undefined when it carried none (most requests: nothing is made for them). `bodyPlain`: the
 * caller knows redaction left the body as it was (no member to look for).
 */
function requestSecrets(r: Redactor, req: EchoSource, bodyPlain: boolean): Map<string, Echo> | undefined {
  let out: Map<string, Echo> | undefined;
  const add = (v: string, credential: boolean, sent?: string, masked?: string): void => {
    if (out?.has(v)) return;
    // A base64 text file the request's redaction changed: an answer repeating it gets the file as the request's copy was stored.
    const e = masked !== undefined ? { mask: masked, forms: formsOf(v) } : echoOf(r, v, credential, sent);
    if (e !== null) (out ??= new Map()).set(v, e);
  };
  // Listed once each (headerSecrets leaves out repeats).
  const fromHeaders = headerSecrets(r, req.headers);
  if (fromHeaders.length > 0) out = new Map(fromHeaders);
  const query = urlQuery(req.url);
  if (query !== undefined) {
    for (const { pair, name, raw, value } of queryPairs(query)) {
      if (raw === undefined || NOT_SECRET.has(name.toLowerCase())) continue;
      const masked = r.url(`/?${pair}`);
      if (masked === `/?${pair}`) continue;
      add(value!, masked.endsWith(`=${encodeURIComponent(REDACTED)}`), raw);
    }
  }
  if (req.body.length > 0 && !bodyPlain) bodySecrets(r, req, add);
  return out;
}

/**
 * The last frozen header map judged (an importer's entries that list the same headers share one,
 * src/store/frozen-headers.ts), with its values: walking the headers again for each entry was
 * ~1.5 us of a HAR import's ~40 us an entry.
 */
let lastHeaders: { r: Redactor; headers: object; found: readonly (readonly [string, Echo])[] } | undefined;

/** The secret values of a request's headers, with their Echo (see the top). */
function headerSecrets(r: Redactor, headers: EchoSource['headers']): readonly (readonly [string, Echo])[] {
  if (lastHeaders !== undefined && lastHeaders.headers === headers && lastHeaders.r === r) return lastHeaders.found;
  const found: [string, Echo][] = [];
  const add = (v: string, credential: boolean): void => {
    const e = echoOf(r, v, credential);
    if (e !== null && !found.some(([x]) => x === v)) found.push([v, e]);
  };
  for (const name of Object.keys(headers)) {
    const given = headers[name];
    if (given === undefined || !r.isSecretHeader(name) || NOT_SECRET.has(name.toLowerCase())) continue;
    const credential = r.isCredentialHeader(name);
    for (const v of Array.isArray(given) ? given : [given]) {
      add(v, credential);
      // The parts a server is likelier to repeat alone: a scheme's token (`Bearer <token>`), the
      // values of `name=value` pairs (a cookie's, SigV4's `Signature=`). Not the names, nor a
      // scheme's (`AWS4-HMAC-SHA256` stands in AWS's own error messages).
      const token = SCHEME_TOKEN.exec(v)?.[1];
      if (token !== undefined && /\d/.test(token)) add(token, credential);
      if (v.includes('=')) for (const m of v.matchAll(PAIR_VALUE)) if (/\d/.test(m[1]!)) add(m[1]!, credential);
    }
  }
  if (isFrozenHeaders(headers)) lastHeaders = { r, headers, found };
  return found;
}

/** The secret members of a JSON body and the secret fields of a form or multipart body. */
function bodySecrets(r: Redactor, req: EchoSource, add: (v: string, credential: boolean, sent?: string, masked?: string) => void): void {
  const given = String(req.headers['content-type'] ?? '');
  const type = given.toLowerCase();
  const text = latin1Text(req.body);
  // A multipart body's secret fields (`api_key` beside an uploaded file): the request's redaction
  // masks such a part's content whole, as it was sent (its bytes read one character a byte).
  const boundary = multipartBoundary(given);
  if (boundary !== undefined) {
    for (const p of parts(text, boundary) ?? []) {
      const name = partName(p.head);
      if (name !== undefined && p.body !== '' && r.isSecretField(name)) add(utf8Text.decode(latin1Bytes(p.body)), false, p.body);
      else fileSecrets(r, p.body, add);
    }
    // An AWS secret access key beside its id, in its part or the next (./aws-pairs.ts).
    for (const x of awsSecrets(text)) add(x.value, false);
    return;
  }
  // A form by its type, or by how it starts (nock keeps no headers; fetch labels a string body
  // text/plain), as the request's redaction reads it (src/store/http-body.ts).
  if (type.startsWith('application/x-www-form-urlencoded') || (!type.includes('json') && FORM_START.test(text))) {
    for (const { name, raw, value } of formPairs(utf8Text.decode(req.body))) {
      if (raw !== undefined && r.isSecretField(name)) add(value!, false, raw);
    }
    // An AWS secret access key beside its id, in its field or another (./aws-pairs.ts).
    for (const x of awsSecrets(text)) add(x.value, false);
    return;
  }
  // The redactor's cheap test: a body it passes has no member it masks by name.
  if (!/^\s*[[{]/.test(text) || !r.mayHaveSecrets(text)) return;
  let doc: unknown;
  try {
    doc = JSON.parse(utf8Text.decode(req.body));
  } catch {
    return;
  }
  // An AWS secret whose id is in another string of the body (./aws-pairs.ts), which the
  // request's redaction masks too: an answer may repeat it alone.
  if (text.indexOf('AKIA') >= 0 || text.indexOf('ASIA') >= 0) for (const x of pairedSecretsIn(doc)) add(x.value, false);
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      embeddedSecrets(r, v, add);
      // An AWS secret access key beside its id (a prompt's "AKIA… wJalr…"): an answer may repeat
      // the secret alone, where no id beside it makes it one.
      for (const x of awsSecrets(v)) add(x.value, false);
      // A data URL of a text file with a key inside (OpenAI's `file_data`): no credential pattern
      // sees the key in its base64, so an answer echoing the body is searched for the URL sent.
      if (v.startsWith('data:')) {
        const m = r.text(v);
        if (m !== v) add(v, false, undefined, m);
      }
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'string' || (x !== null && typeof x === 'object')) stack.push(x);
      continue;
    }
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (typeof x === 'string' && r.isSecretField(k)) add(x, false);
      else if (k === 'data' && typeof x === 'string') {
        // A base64 `data` member with its media type beside it (Anthropic's document source), as above.
        const m = (r.value(v) as Record<string, unknown>).data;
        if (typeof m === 'string' && m !== x) add(x, false, undefined, m);
      }
      else if (typeof x === 'string' || (x !== null && typeof x === 'object')) stack.push(x);
    }
  }
}

/**
 * The values of an uploaded file's secret-named `NAME=value` and YAML `name: value` lines (an
 * `.env`'s `DB_PASSWORD=…`), read as the request's redaction reads the part (./env-secrets.ts,
 * one character a byte): it masks them there, so an answer repeating the file has them masked too.
 */
function fileSecrets(r: Redactor, text: string, add: (v: string, credential: boolean, sent?: string) => void): void {
  for (const re of [ENV_LINE, YAML_LINE]) {
    if (text.indexOf(re === ENV_LINE ? '=' : ':') < 0) continue;
    for (const m of text.matchAll(re)) {
      const v = m[5]!;
      if (valueMayBeSecret(v) && r.isSecretField(m[2]!)) add(utf8Text.decode(latin1Bytes(v)), false, v);
    }
  }
}

/**
 * The secret members of JSON text inside a string (a prompt quoting a config): the request's
 * redaction masks their values where they stand, so an answer that repeats them (a debug echo of
 * the whole body, where they sit one escape deeper) is masked too.
 */
function embeddedSecrets(r: Redactor, s: string, add: (v: string, credential: boolean, sent?: string) => void): void {
  if (s.indexOf('"') < 0) return;
  for (const m of s.matchAll(EMBEDDED_MEMBER)) {
    // Not a JSON string after all (undefined): the request's redaction left it too.
    const v = embeddedSecret(m[1]!, m[3]!, (n) => r.isSecretField(n));
    if (v !== undefined) add(v, false);
  }
}
