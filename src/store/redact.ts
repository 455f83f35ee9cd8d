/**
 * Redaction: secrets never reach a tape. Every writer (ReplayCache, the proxy, createFetch,
 * importers) passes what it stores through here first, so the only way to get a key onto disk
 * is to ask for it explicitly with `keepSecrets: true`. docs/proxy.md ("Secrets") lists what is
 * redacted and why; keep the two in step.
 *
 * Names are compared folded: lowercase with `-` and `_` removed, so `api_key`, `apiKey`,
 * `API-KEY` and `x-goog-api-key` are judged alike.
 * - headers: the credential headers of every provider the proxy serves (OpenAI, Azure OpenAI and
 *   Azure API Management, Anthropic, Google, AWS SigV4 / Bedrock, Mistral, Cohere, Groq and other
 *   bearer-token APIs, gateways), plus any header whose name ends in a credential word, and any
 *   whose last word is a secret's (`x-functions-key`, `x-custom-auth`: ./secret-words.ts);
 * - fields (JSON at any depth, form fields, multipart field names): the same names and the
 *   credential words (`password`, `client_secret`, `accessToken`, `apiKey`, ...) as a suffix;
 * - URL query parameters: `key` (Google), `api-key` (Azure OpenAI), `subscription-key` (Azure
 *   API Management), SigV4's `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`,
 *   tokens, signatures and codes, the field rules, and names whose last word is a secret's
 *   (`?auth=`, `?jwt=`, `?session=`, `?private_token=`: ./secret-words.ts).
 * Plus whatever names the user adds (`headers`, `fields`, `query`).
 *
 * Values are replaced, never removed, so a reviewer sees that a header was sent and the shape
 * of the record is unchanged. Strings elsewhere that carry an obvious credential (`Bearer …`,
 * `Basic …`, a SigV4 `Credential=…, Signature=…`, or a known provider key prefix followed by a
 * long token) are masked too: a key pasted into a prompt or an error message must not end up in
 * git either.
 *
 * Two kinds of masks, because requests are keyed from what is stored (docs/matching.md):
 * - a provider credential (the credential headers; SigV4's query signature; in the request's own
 *   URL, a client's credential parameter whose value is shaped like one: Google's
 *   `?key=AIza…`, Azure's `?api-key=`, `?access_token=ya29.…`, ./query-credential.ts) becomes
 *   `[REDACTED]`: it never takes part in a key, so recordings made with one developer's key
 *   replay with another's (the same parameter of a URL pasted into a prompt is keyed, below:
 *   there it is what the user wrote; so is `?key=alpha-report`, a lookup key, not a credential);
 * - every other masked value (a `?token=`, a `client_secret` member, a key pasted into a prompt)
 *   still decides the answer: it becomes `[REDACTED:<16 hex>]`, the first 64 bits of
 *   HMAC-SHA256 under the store's random salt (kept in the tape header), so two values stay two
 *   keys and one value stays one key, and the value itself is never stored. A store without a
 *   salt (made before salts existed) gets `[REDACTED]` for both, as it always did.
 */
import { sha256 } from '@noble/hashes/sha2.js';

import { CREDENTIALS } from '../providers/index.ts';
import { headerPairsMasked, pairsMasked } from './aws-pairs.ts';
import { CREDENTIAL, credentialFrom, mayHoldCredential, maskCredential, maskShapes, replaceCredentials, searchedJsonText, shapesIn } from './credential.ts';
import { envSecrets } from './env-secrets.ts';
import { headersMember } from './headers-member.ts';
import { queryCredential } from './query-credential.ts';
import { secretByLastWord } from './secret-words.ts';
import { typedValue } from './typed-redact.ts';

/** What a redacted value is replaced with (credentials; every value in a store without a salt). */
export const REDACTED = '[REDACTED]';

/** A whole keyed mask: `[REDACTED:` + 16 lowercase hex digits + `]`. */
const WHOLE_MASK = /^\[REDACTED:[0-9a-f]{16}\]$/;

/**
 * What is masked before anything is written (docs/proxy.md, "Secrets"): more headers, fields and
 * query parameters, or nothing (keepSecrets).
 */
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
  /**
   * The store's redaction salt (32 hex digits, from the tape header or the Redis namespace's
   * header). Set by the store, not by users: with it, masked values that are not credentials
   * become distinct keyed masks; without it, `[REDACTED]`.
   */
  salt?: string;
}

/** Header names whose values are always masked (lower case). */
export const SECRET_HEADERS: readonly string[] = Object.freeze([
  'authorization', // OpenAI, Mistral, Cohere, Groq, Together, OpenRouter, Bedrock API keys (Bearer); AWS SigV4 (AWS4-HMAC-SHA256 …)
  'proxy-authorization',
  'x-api-key', // Anthropic
  'api-key', // Azure OpenAI
  'ocp-apim-subscription-key', // Azure API Management
  'x-goog-api-key', // Google Gemini
  'x-amz-security-token', // AWS temporary credentials
  'cookie',
  'set-cookie',
  'openai-organization',
  'openai-project',
  'anthropic-admin-key',
  'cf-aig-authorization', // Cloudflare AI Gateway
  'x-portkey-api-key',
  'helicone-auth',
  'x-auth-token',
  'x-access-token',
]);

/** Field names redacted wherever they occur (exact, folded). */
export const SECRET_FIELDS: readonly string[] = Object.freeze([
  'api_key',
  'authorization',
  'access_token',
  'refresh_token',
  'id_token',
  // OAuth PKCE's verifier: with the authorization code, it obtains the token.
  'code_verifier',
  'client_secret',
  'password',
  'passwd',
  'secret',
  'secret_key',
  'session_token',
  'security_token',
  'aws_secret_access_key',
  'private_key',
  'subscription_key',
  'cookie',
  'set_cookie',
  'credentials',
  'credential',
  'openai_organization',
  // Short names and other words for a password or a key's secret (`pwd` as `passwd` is masked).
  'pass',
  'pwd',
  'passphrase',
  'auth',
  'bearer',
  'jwt',
  'mnemonic',
  'seed_phrase',
  'connection_string',
]);

/**
 * Credential words: a header or field whose folded name ends in one of these is a secret too
 * (`openaiApiKey`, `db_password`, `githubAccessToken`, `x-custom-api-key`). A bare `token` is not
 * among them on purpose: `token` fields are logprob tokens and `next_page_token` is a cursor that
 * decides which answer comes back.
 */
const SECRET_SUFFIXES = ['apikey', 'secret', 'password', 'passwd', 'passphrase', 'accesstoken', 'refreshtoken', 'sessiontoken', 'securitytoken', 'authtoken', 'bearertoken', 'idtoken', 'privatekey', 'secretkey', 'subscriptionkey'];

/**
 * A service's or a bot's token (`api_token`, `github_token`, `HF_TOKEN`, `secret_token`), and a key
 * that opens or signs something (`encryption_key`, `OPENAI_KEY`), folded: not every `_token` (a
 * tokenizer's `eos_token`, a `page_token` cursor) nor every `_key` (`idempotency_key`,
 * `prompt_cache_key`). Their last two letters are those of `accesstoken` and `apikey`, which the
 * letter tables of namedSecret hold already.
 */
const NAMED_SECRET = /(?:api|bot|github|gitlab|hf|slack|discord|npm|secret|oauth|private|user|app)token$|(?:encryption|master|license|signing|openai|anthropic|stripe)key$/;

/**
 * Provider credentials: never part of a request key, stored as `[REDACTED]` (headers take part in
 * a key only through `matchHeaders`, which skips these). SigV4's `x-amz-date` and
 * `x-amz-content-sha256` are not secret, but they change with every signature: redacted too, so
 * a tape re-recorded with the same answers does not differ in them.
 */
export const CREDENTIAL_HEADERS: readonly string[] = Object.freeze([
  'authorization', // OpenAI, Mistral, Cohere, Groq, ..., Bedrock API keys (Bearer), SigV4
  'proxy-authorization',
  'x-api-key', // Anthropic
  'api-key', // Azure OpenAI
  'ocp-apim-subscription-key', // Azure API Management
  'x-goog-api-key', // Google Gemini
  'x-amz-security-token', // SigV4 temporary credentials
  'x-amz-date', // SigV4
  'x-amz-content-sha256', // SigV4
  'anthropic-admin-key',
  'cf-aig-authorization',
  'x-portkey-api-key',
  'helicone-auth',
]);

/**
 * Query parameters that carry the client's credential. SigV4's (`X-Amz-…`) are never part of a
 * key, stored as `[REDACTED]` whatever their value (the date is none, but new with every
 * signature); the others are too when the value is shaped like a credential, and keyed like
 * SECRET_QUERY's otherwise (./query-credential.ts): `?key=` is a lookup key on some APIs.
 */
export const CREDENTIAL_QUERY: readonly string[] = Object.freeze([
  'key', // Google
  'api-key', // Azure OpenAI
  'api_key',
  'apikey',
  'subscription-key', // Azure API Management
  'sig', // Azure SAS
  // OAuth's bearer token in a URL (RFC 6750): Google's `ya29.…`, Gemini Live's ephemeral tokens.
  'access_token',
  'x-amz-signature', // SigV4 presigned URLs
  'x-amz-credential',
  'x-amz-security-token',
  // Not secret, but new with every signature (as the header is): a keyed mask of it made every
  // presigned URL signed again a route of its own, which never replayed.
  'x-amz-date',
]);

/** Query parameter names whose values are always masked. */
export const SECRET_QUERY: readonly string[] = Object.freeze([
  'key', // Google (?key=AIza…)
  'api-key', // Azure OpenAI
  'api_key',
  'apikey',
  'subscription-key', // Azure API Management
  'access_token',
  'token',
  'sig', // Azure SAS
  'signature',
  'code',
  'x-amz-signature', // SigV4 presigned URLs
  'x-amz-credential',
  'x-amz-security-token',
  'client_secret',
  'password',
]);

const fold = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/**
 * `Location` and `Content-Location`: headers whose value is a URL, often relative; and Google's
 * resumable upload URLs (`x-goog-upload-url`, `-control-url`), which echo the start's `?key=`. Each
 * is the URL the client asks next, so its query is masked as a request's own (the key
 * `[REDACTED]`, as the request that follows has it), not as a URL quoted in text (keyed).
 */
const isLocation = (name: string) => /^(?:(?:content-)?location|x-goog-upload(?:-control)?-url)$/i.test(name);

const isSecretName = (folded: string, exact: ReadonlySet<string>) => exact.has(folded) || SECRET_SUFFIXES.some((w) => folded.endsWith(w)) || NAMED_SECRET.test(folded);

/**
 * A header whose name ends in `token` (`x-api-token`, `x-gateway-token`, `x-csrf-token`: how
 * gateways take their credentials) is a secret: the reason a bare `token` member is not (logprob
 * tokens, page cursors) does not hold for header names.
 */
const isSecretHeaderName = (folded: string, exact: ReadonlySet<string>) => isSecretName(folded, exact) || folded.endsWith('token');

/** A member of JSON text with a string value: its raw name, what lies between, its raw value. */
export const EMBEDDED_MEMBER = /"((?:[^"\\\n]|\\.){1,200})"([ \t\n\r]*:[ \t\n\r]*)"((?:[^"\\]|\\.)*)"/g;

/**
 * The value of a member EMBEDDED_MEMBER found (its name and value as written in the JSON text),
 * decoded, when its name is a secret and the value is not empty; undefined otherwise, and for
 * raw text that does not decode as a JSON string (then it was no member). One reading for the
 * redactor, the stream redactor and the echo search, so they judge such a member alike.
 *
 * @example
 * embeddedSecret('password', 'hunter2', (n) => n === 'password') // 'hunter2'
 * embeddedSecret('city', 'Paris', (n) => n === 'password')       // undefined
 */
export function embeddedSecret(rawName: string, rawValue: string, secretField: (name: string) => boolean): string | undefined {
  try {
    if (!secretField(JSON.parse(`"${rawName}"`) as string)) return undefined;
    const v = JSON.parse(`"${rawValue}"`) as string;
    return v === '' ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * What every EMBEDDED_MEMBER match holds: a quote, a colon and a quote. One pass of the
 * regular expression engine over a string; prose has colons and quotes but seldom in that order,
 * and hopping from colon to colon in JavaScript cost a call per colon (about 20 µs on the
 * quote-heavy 36 KB chat body of the benchmarks, 15% of value()).
 */
const EMBEDDED_GATE = /"[ \t\n\r]*:[ \t\n\r]*"/;

/** A character past ASCII. */
const NON_ASCII = /[^\x00-\x7f]/;
// An absolute URL with a query or a fragment, up to what ends it in JSON or prose: a quote, a
// backslash (an escape in JSON text), whitespace or an angle bracket. Its secret parameters are
// masked by name, as a request's own URL query is (an MCP tool's `server_url?token=`, a presigned
// URL, an OAuth redirect's `#access_token=`).
const URL_WITH_QUERY = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\?#]*[?#][^\s"'<>\\]+/gi;
/**
 * A relative URL with a query, standing alone (a `Location`, a JSON answer's `next`): a path from
 * `/` or a bare `?query`, and no white space anywhere. Only such a whole string is read as one:
 * prose that merely holds a `/`, or begins with `?key=` (a question, an answer about the
 * parameter), is left alone; read as a URL it lost everything after `key=`. RELATIVE_URL_LITERAL
 * (the live key's test) rejects white space too, so both judge a text alike.
 */
const RELATIVE_URL = /^(?:\/[^\s?#]*)?\?\S*$/;
/** A JSON string literal that may be such a URL (`"/v1/files?after=…"`, `"\/done?…"`, `"?token=…"`). */
const RELATIVE_URL_LITERAL = /"((?:\\?\/|\?)[^"\s]*)"/g;
/** `&`, `=` and `?` as JSON escapes (Go writes `&` as `\u0026`): a URL's query only its parse shows. */
const JSON_URL_ESCAPE = /\\u00(?:26|3[dDfF])/;

/** A text read one character a byte, as the UTF-8 text its bytes are (unchanged if they are not UTF-8). */
function asUtf8(s: string): string {
  if (/[^\x00-\xff]/.test(s)) return s;
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return utf8Decoder.decode(bytes);
}

/** A text file's media type: `text/*`, JSON (`application/json`, `application/x-ndjson`, `…+json`). */
const TEXT_MEDIA = /^(?:text\/|application\/(?:[\w.+-]*[/+-])?json\b)/i;
/** A data URL's head: its media type, then base64. */
const DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,/i;
/** The sibling members that give a base64 `data` member's media type (Anthropic, Gemini). */
const MEDIA_MEMBERS = ['media_type', 'mimeType', 'mime_type'];
/** Where a JSON text may hold a base64 text file (cheap; a body that has one is parsed). */
const TEXT_FILE_GATE = /data:(?:text\/|application\/[\w.+-]*json)[^,"]*;base64,|"(?:media_type|mimeType|mime_type)"[ \t\n\r]*:[ \t\n\r]*"(?:text\/|application\/[\w.+-]*json)/i;
/** Base64 files past this many characters (about 3 MB decoded) are not decoded. */
const MAX_FILE_BASE64 = 4 << 20;

/**
 * The text of a base64 text file (an uploaded `.env` in a JSON body: OpenAI's `file_data` data
 * URL, Anthropic's `{type:'base64', media_type:'text/plain', data}`), or undefined when the media
 * type is not text or JSON, the file is too large, or it is not base64 of UTF-8.
 *
 * @example
 * base64TextFile('T1BFTkFJX0FQSV9LRVk9c2stLi4u', 'text/plain') // 'OPENAI_API_KEY=sk-...'
 */
export function base64TextFile(b64: string, mediaType: string): string | undefined {
  if (b64.length > MAX_FILE_BASE64 || !TEXT_MEDIA.test(mediaType)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(latin1Bytes(atob(b64)));
  } catch {
    return undefined;
  }
}

/** A data URL's media type and where its base64 begins, or undefined. */
export function dataUrlHead(s: string): { mediaType: string; at: number } | undefined {
  const m = s.startsWith('data:') ? DATA_URL.exec(s) : null;
  return m ? { mediaType: m[1]!, at: m[0].length } : undefined;
}

/**
 * A `\u` escape of a character keys are made of (letters, digits, `+-./=_~`), also escaped again
 * (`\\u002d`: JSON text inside a JSON string).
 */
const ESCAPED_TOKEN = /\\\\?u00(?:2[bdef]|3[0-9d]|4[1-9a-f]|5[0-9af]|6[1-9a-f]|7[0-9ae])/i;
const ESCAPED_TOKEN_G = new RegExp(ESCAPED_TOKEN.source, 'gi');
/**
 * A run of key characters, some maybe written as such escapes. Every run, not only those with an
 * escape: a pattern requiring one backtracked quadratically on a long run without.
 */
const TOKEN_RUN = new RegExp(`(?:[\\w.~+/=-]|${ESCAPED_TOKEN.source})+`, 'gi');

/** A `\u` escape of an ASCII character or the Kelvin sign (see namedSecret in redactor()). */
const ASCII_ESCAPE = /\\u(?:00[2-7][0-9a-f]|212a)/i;

/** Whether the character at i is JSON's whitespace (space, tab, line feed, carriage return). */
function spaceAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Whether a backslash at i escapes a line feed, carriage return or tab (`\n` `\r` `\t`). */
function escapedSpaceAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i + 1);
  return s.charCodeAt(i) === 0x5c && (c === 0x6e || c === 0x72 || c === 0x74);
}

/**
 * From i on, by `step` (1 or -1), the first index that is no whitespace, raw or escaped inside a
 * string; -1 or s.length if none.
 */
function skipSpace(s: string, i: number, step: 1 | -1): number {
  while (i >= 0 && i < s.length) {
    if (spaceAt(s, i)) i += step;
    else if (escapedSpaceAt(s, step === 1 ? i : i - 1)) i += 2 * step;
    else break;
  }
  return i;
}

/**
 * Header and query parameter kinds: kept (credential-looking text masked), masked (keyed), a
 * credential (`[REDACTED]`), a query's credential by its value (either mask, see param()).
 */
const PLAIN_NAME = 0;
const SECRET_NAME = 1;
const CREDENTIAL_NAME = 2;
/** A query parameter that is the client's credential on some hosts only: plain or keyed by its value. */
const SHAPED_NAME = 3;

/**
 * The credential-looking substrings of a text (the patterns `text()` masks): bearer and basic
 * tokens, SigV4 credentials and signatures, known provider key formats. `tapedeck scan` looks
 * for these in tapes written before redaction existed, by hand, or by other tools.
 *
 * @example
 * credentialMatches('call with sk-proj-abcdefghijklmnopqrstuvwx please') // [{ index: 10, text: 'sk-proj-abcdefghijklmnopqrstuvwx' }]
 */
export function credentialMatches(s: string): { index: number; text: string }[] {
  // The shared expression, searched from the start: a new RegExp and its match iterator per call
  // cost ~2.9 us on a short string (most of `tapedeck scan`'s time, ~30 strings a record), and
  // most strings hold no credential.
  const out = shapesIn(s);
  const from = credentialFrom(s);
  if (from < 0) return out;
  const view = searchedJsonText(s, from);
  CREDENTIAL.lastIndex = from;
  for (let m = CREDENTIAL.exec(view); m !== null; m = CREDENTIAL.exec(view)) out.push({ index: m.index, text: m[0] });
  CREDENTIAL.lastIndex = 0;
  return out;
}

/** Whether a string is one of redaction's masks (`[REDACTED]`, `[REDACTED:<16 hex>]`). */
export const isMask = (v: string): boolean => v === REDACTED || WHOLE_MASK.test(v);

/**
 * Another tool's placeholder for a secret it kept out (VCR.py's `filter_headers` writes the
 * string it is given, `REDACTED` or `DUMMY` most often; others write `***`, `<API_KEY>`,
 * `Bearer XXXX`): no secret, though redaction masks it again. An import counts only the values
 * that were secrets as masked, so such a value is not counted.
 *
 * @example
 * isOtherToolMask('Bearer REDACTED') // true
 * isOtherToolMask('sk-proj-abc123') // false
 */
export const isOtherToolMask = (v: string): boolean => isMask(v) || OTHER_TOOL_MASK.test(v);

/** A placeholder word, bracketed or not, after an optional auth scheme; or no letter or digit at all (`***`). */
const OTHER_TOOL_MASK = /^(?:(?:bearer|basic|token|apikey)\s+)?(?:[<[({*"']*\s*(?:redacted|dummy|filtered|removed|hidden|masked|secret|placeholder|fake|none|null|x{3,}|api[_-]?key|(?:your|my|fake|test|dummy)[_-]?(?:api[_-]?)?(?:key|token))\s*[>\])}*"']*|[^a-z0-9]+)$/i;

/**
 * `judge`, with each name's answer kept: up to 4096 names, since names come from the traffic.
 *
 * @example
 * const kind = judgedOnce((name) => (name.endsWith('-key') ? SECRET_NAME : PLAIN_NAME))
 * kind('x-functions-key') // SECRET_NAME, judged; asked again, looked up
 */
function judgedOnce(judge: (name: string) => number): (name: string) => number {
  const kinds = new Map<string, number>();
  return (name) => {
    let kind = kinds.get(name);
    if (kind === undefined) {
      kind = judge(name);
      if (kinds.size < 4096) kinds.set(name, kind);
    }
    return kind;
  };
}

/**
 * Below this depth values are redacted recursively (sharing unchanged parts); deeper ones are
 * copied with an explicit stack, so no nesting depth can hide a field or overflow the stack.
 */
const RECURSION_LIMIT = 1000;

/**
 * What a caller already has of a body, so redaction does not make it again: its JSON parse
 * (`parsed.value`), and its text when every byte is ASCII (`ascii`: one character a byte, the
 * body's Latin-1 and UTF-8 decoding alike). Both must be of exactly these bytes.
 */
export interface KnownBody {
  parsed?: { value: unknown };
  ascii?: string;
}

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
  /**
   * A response or raw body (bytes) with secrets masked: a JSON body (by its content type, or
   * sniffed) has secret members masked by name and is re-serialized; any body has
   * credential-looking text masked byte for byte. The same array when nothing changed.
   * `known`: what the caller has of the body already (not made again).
   */
  bytes(body: Uint8Array, contentType?: string, known?: KnownBody): Uint8Array;
  /** The mask of a value that is not a credential: keyed under the store's salt, or `[REDACTED]`. */
  mask(value: string): string;
  /** Whether a header name is redacted. */
  isSecretHeader(name: string): boolean;
  /** Whether a header carries a provider credential (never part of a request key). */
  isCredentialHeader(name: string): boolean;
  /** Whether a field (JSON member, form or multipart field) of this name is redacted. */
  isSecretField(name: string): boolean;
  /**
   * A cheap superset test on raw JSON text: false means redaction cannot change this body (no
   * member name that is a secret, no credential-looking string), so it may be matched as bytes.
   */
  mayHaveSecrets(text: string): boolean;
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
  // Each provider module's own credentials (src/providers) on top of the general lists.
  const headerSet = new Set([...SECRET_HEADERS, ...CREDENTIALS.headers, ...(opts.headers ?? [])].map(fold));
  const fieldSet = new Set([...SECRET_FIELDS, ...SECRET_HEADERS, ...CREDENTIALS.headers, ...CREDENTIALS.fields, ...(opts.fields ?? [])].map(fold));
  const querySet = new Set([...SECRET_QUERY, ...CREDENTIALS.query, ...(opts.query ?? [])].map(fold));
  const credentialHeaders = new Set([...CREDENTIAL_HEADERS, ...CREDENTIALS.headers].map(fold));
  const credentialQuery = new Set([...CREDENTIAL_QUERY, ...CREDENTIALS.query].map(fold));
  const scan = opts.scanStrings !== false;
  const salt = opts.salt !== undefined && /^[0-9a-f]{32}$/.test(opts.salt) ? hexBytes(opts.salt) : undefined;
  // A value that is a mask already stays as it is: redacting a stored record again changes nothing.
  const mask = (v: string): string => (v === REDACTED || WHOLE_MASK.test(v) ? v : salt ? `[REDACTED:${hexOf(hmacSha256(salt, utf8.encode(v))).slice(0, 16)}]` : REDACTED);
  const maskValue = (x: unknown): string => mask(typeof x === 'string' ? x : jsonText(x));
  // Judged once per name, as header names are below: bodies repeat the same member names, and
  // folding a name costs more than the rest of a member's redaction. Bounded (names come from
  // the traffic).
  const fieldKinds = new Map<string, boolean>();
  const secretField = (k: string): boolean => {
    let secret = fieldKinds.get(k);
    if (secret === undefined) {
      secret = isSecretName(fold(k), fieldSet) || secretByLastWord(k, true);
      if (fieldKinds.size < 4096) fieldKinds.set(k, secret);
    }
    return secret;
  };
  // The last letter, and the last two letters, of every secret name (folded) and credential
  // word: most member names end in a letter, or a pair ("content", "role", "model"), that no
  // secret name ends in (~12 pairs do), judged before the name is read back. Tables by character
  // code, not Sets: looked up at every member of a body, where a Set's lookup was a sixth of the
  // name scan. `k` also as the Kelvin sign and as the last of its UTF-8 bytes read one character
  // a byte; a name of one letter pairs with its opening quote. A name with a non-ASCII letter may
  // be read as its UTF-8 bytes, whose last bytes are no letters of the name: such a name turns
  // the letter tests off.
  const lettersJudge = ![...fieldSet].some((n) => NON_ASCII.test(n));
  const lastLetters = new Uint8Array(0x212b);
  const lastPairs = new Uint8Array(128 * 128);
  // The last words of the names secret-words.ts judges by their words too (`otp`, `sentry_dsn`, `otp_code`).
  for (const n of lettersJudge ? [...fieldSet, ...SECRET_SUFFIXES, 'pin', 'otp', 'dsn', 'code'] : []) {
    if (n.length === 0) continue;
    const last = n.charCodeAt(n.length - 1);
    lastLetters[last] = 1;
    lastPairs[(n.length >= 2 ? n.charCodeAt(n.length - 2) : 0x22) * 128 + last] = 1;
  }
  if (lastLetters[0x6b] === 1) lastLetters[0x212a] = lastLetters[0xaa] = 1;
  // Whether a text holds a quoted name before a colon that value() would judge secret
  // (`members`), also such a name in JSON text inside a string (`both`: `\"password\": \"...`, with
  // a string value, the only values embedded() masks), or only the latter (`embedded`); and,
  // except for `embedded`, a `\u` escape of an ASCII character or the Kelvin sign anywhere (a
  // name spelled `api\u005fkey` is read only by a parse; other escapes decode to no letter of a
  // secret name, and JSON writers escape only control and non-ASCII characters, so ordinary
  // bodies have none). A superset: a body it passes is parsed
  // and judged by name (value()). Found by hopping from colon to colon (members' and the text's:
  // few against the body's characters) and reading back to the name: a regular expression
  // trying every quote as a name's start read every string of the body again (a 36 KB chat
  // body: the whole test 390 -> 220 µs, most of the rest the credential patterns;
  // test/store/redact-bytes.test.ts holds it to value()).
  /** The last name of each length (up to 63) namedSecret judged plain, past its letter tests. */
  const plainNames: (string | undefined)[] = new Array<string | undefined>(64).fill(undefined);
  const namedSecret = (s: string, which: 'members' | 'both' | 'embedded'): boolean => {
    if (which !== 'embedded' && s.indexOf('\\u') >= 0 && ASCII_ESCAPE.test(s)) return true;
    for (let c = s.indexOf(':'); c >= 0; c = s.indexOf(':', c + 1)) {
      let e = skipSpace(s, c - 1, -1);
      if (e < 1 || s.charCodeAt(e) !== 0x22) continue;
      const inText = s.charCodeAt(e - 1) === 0x5c;
      if (inText ? which === 'members' : which === 'embedded') continue;
      const close = inText ? e - 1 : e;
      // Most names end in a letter no secret name ends in: judged without making their string.
      let z = close - 1;
      while (z >= 0 && (s.charCodeAt(z) === 0x2d || s.charCodeAt(z) === 0x5f)) z--;
      const last = s.charCodeAt(z);
      const lastFolded = last >= 0x41 && last <= 0x5a ? last | 0x20 : last;
      if (lettersJudge) {
        if (lastLetters[lastFolded] !== 1) continue;
        let y = z - 1;
        while (y >= 0 && (s.charCodeAt(y) === 0x2d || s.charCodeAt(y) === 0x5f)) y--;
        const prev = s.charCodeAt(y);
        // A non-ASCII letter (a Kelvin sign, its bytes) at either place is read with the name.
        if (lastFolded < 128 && prev < 128 && lastPairs[(prev >= 0x41 && prev <= 0x5a ? prev | 0x20 : prev) * 128 + lastFolded] === 0) continue;
      }
      // Back to the opening quote; a name holding a backslash is judged by the escape test above.
      let b = close - 1;
      while (b >= 0) {
        const ch = s.charCodeAt(b);
        if (ch === 0x22 || ch === 0x5c) break;
        b--;
      }
      if (b < 0 || s.charCodeAt(b) !== 0x22) continue;
      // Inside a string the opening quote is escaped too: `\"name\"`.
      if (inText && (b < 1 || s.charCodeAt(b - 1) !== 0x5c)) continue;
      // A name judged plain a moment ago (a stream's events repeat theirs): compared in place,
      // without making its string.
      const len = close - b - 1;
      const plain = len < plainNames.length ? plainNames[len] : undefined;
      if (plain !== undefined && s.startsWith(plain, b + 1)) continue;
      const name = s.slice(b + 1, close);
      if (!secretName(name)) {
        if (len < plainNames.length) plainNames[len] = name;
        continue;
      }
      if (!inText) return true;
      // Inside a string: a string value after the colon.
      e = skipSpace(s, c + 1, 1);
      if (s.charCodeAt(e) === 0x5c && s.charCodeAt(e + 1) === 0x22) return true;
    }
    return false;
  };
  // A name as read: the proxy reads a body one character a byte, so a non-ASCII letter (a user's
  // `contraseña`, the Kelvin sign that folds to k) may stand as its UTF-8 bytes.
  const secretName = (name: string): boolean => secretField(name) || (NON_ASCII.test(name) && secretField(asUtf8(name)));
  /**
   * JSON text inside a string (an MCP tool's result listing the environment, a model quoting a
   * config): members whose names are secret get their string values masked where they stand,
   * the text around them kept byte for byte. Only strings where a secret-looking member name is
   * quoted before a colon are looked at.
   */
  const embedded = (s: string): string => {
    // Without a quote there is no member to mask (most text): one search, not the name scan.
    if (s.indexOf('"') < 0 || !EMBEDDED_GATE.test(s) || !namedSecret(s, 'members')) return s;
    return s.replace(EMBEDDED_MEMBER, (whole: string, rawName: string, between: string, rawValue: string) => {
      const v = embeddedSecret(rawName, rawValue, secretField);
      return v === undefined ? whole : `"${rawName}"${between}${JSON.stringify(mask(v))}`;
    });
  };

  /** Credential-looking tokens in a text, masked where they stand. */
  const credentials = (s: string): string => {
    if (keep || !scan || s.length < 16) return s;
    // JSON text in a string (an answer echoing the body it got) may write a key's characters as
    // escapes (`sk\u002dproj\u002d…`): such a run is read decoded, and masked whole if it is one.
    if (s.indexOf('\\u') >= 0 && ESCAPED_TOKEN.test(s))
      s = s.replace(TOKEN_RUN, (run) => {
        if (run.indexOf('\\') < 0) return run;
        const d = run.replace(ESCAPED_TOKEN_G, (e) => String.fromCharCode(parseInt(e.slice(-2), 16)));
        const m = plainCredentials(d);
        return m === d ? run : m;
      });
    return plainCredentials(shapes(s));
  };
  /** A PEM private key's body and a URL's userinfo password, masked where they stand (keyed: two keys stay two requests). */
  const shapes = (s: string): string => maskShapes(s, mask);
  const plainCredentials = (s: string): string => {
    const from = credentialFrom(s);
    if (from < 0) return s;
    // Read as JSON text may be (a raw body, JSON quoted in a string): a key after `\n` is seen.
    const view = searchedJsonText(s, from);
    CREDENTIAL.lastIndex = from;
    return CREDENTIAL.test(view) ? replaceCredentials(s, view, maskFound) : s;
  };
  const maskFound = maskCredential(mask);

  // A short text holds no credential nor member to mask, but may be a relative URL (`?code=4f1a`).
  const text = (s: string): string => (keep || !scan ? s : s.length < 16 ? urlsIn(s) : credentials(embedded(urlsIn(dataFile(s)))));

  /**
   * A base64 text file with its credentials masked (and a `.env`'s secret-named variables, as in
   * a multipart upload), encoded again: still base64 of the file, masked, so the request keyed
   * from it is keyed alike each time it is sent. The same string when nothing changed.
   */
  const file = (b64: string, mediaType: string): string => {
    const t = base64TextFile(b64, mediaType);
    if (t === undefined) return b64;
    const m = text(envSecrets(t, self));
    return m === t ? b64 : btoa(latin1Text(utf8.encode(m)));
  };
  /** A data URL of a text file (OpenAI's `file_data`) with the file masked (see file()). */
  const dataFile = (s: string): string => {
    const h = dataUrlHead(s);
    if (h === undefined) return s;
    const b64 = s.slice(h.at);
    const m = file(b64, h.mediaType);
    return m === b64 ? s : s.slice(0, h.at) + m;
  };
  /** The media type a base64 `data` member's siblings give it ('' if none). */
  const mediaOf = (o: Record<string, unknown>): string => {
    for (const k of MEDIA_MEMBERS) if (typeof o[k] === 'string') return o[k] as string;
    return '';
  };

  /**
   * The URLs in a text with their secret query parameters masked (see {@link query}): absolute
   * ones wherever they stand, a relative one when it is the whole text (RELATIVE_URL).
   */
  const urlsIn = (s: string): string => {
    if (s.indexOf('?') < 0 && s.indexOf('#') < 0) return s;
    const t = RELATIVE_URL.test(s) ? query(s, true) : s;
    return t.indexOf('://') < 0 ? t : t.replace(URL_WITH_QUERY, urlInText);
  };
  /** query() of a URL standing in a text (a replace callback: its offset argument is no `inText`). */
  const urlInText = (u: string): string => query(u, true);

  /**
   * Whether a text (a body as sent) holds a URL with a secret query parameter, or may hold one
   * only its parse shows (JSON escapes in it: `:\/\/`, `\u0026`): such a body is redacted before
   * it is keyed, as it is before it is stored.
   */
  const secretUrlIn = (s: string): boolean => {
    // The whole text a relative URL (a text body, not JSON), as urlsIn() reads it.
    const c0 = s.charCodeAt(0);
    if ((c0 === 0x2f || c0 === 0x3f) && RELATIVE_URL.test(s) && query(s, true) !== s) return true;
    // A string literal that is a relative URL (an escape in it: judged on the parse).
    if (s.indexOf('"/') >= 0 || s.indexOf('"\\/') >= 0 || s.indexOf('"?') >= 0) {
      RELATIVE_URL_LITERAL.lastIndex = 0;
      for (let m = RELATIVE_URL_LITERAL.exec(s); m !== null; m = RELATIVE_URL_LITERAL.exec(s)) {
        const u = m[1]!;
        if (u.indexOf('?') >= 0 && (u.indexOf('\\') >= 0 || query(u, true) !== u)) {
          RELATIVE_URL_LITERAL.lastIndex = 0;
          return true;
        }
      }
    }
    const slashes = s.indexOf('://') >= 0;
    // Escaped slashes, or an escaped `&`, `=` or `?`: the URLs are read from the parse.
    if (!slashes) return s.indexOf(':\\/\\/') >= 0 && (s.indexOf('?') >= 0 || JSON_URL_ESCAPE.test(s));
    if (s.indexOf('\\u') >= 0 && JSON_URL_ESCAPE.test(s)) return true;
    if (s.indexOf('?') < 0 && s.indexOf('#') < 0) return false;
    // From the start: an exec loop left early keeps its place in the shared expression.
    URL_WITH_QUERY.lastIndex = 0;
    for (let m = URL_WITH_QUERY.exec(s); m !== null; m = URL_WITH_QUERY.exec(s)) if (query(m[0], true) !== m[0]) return true;
    return false;
  };

  const url = (u: string): string => (keep ? u : text(query(u, false)));

  /**
   * A URL with its secret query parameters masked: other secrets keyed; credentials (SigV4's
   * parameters, and a client's credential parameter whose value is shaped like one: `?key=AIza…`,
   * `?access_token=ya29.…`) plainly in the request's own URL (`inText` false: the client's key, not
   * part of the request, so a tape replays with another's), keyed in a URL inside a text
   * (`inText`: a prompt, an answer, a JSON value), where the value is what the user wrote: a plain
   * mask made two prompts differing only in it one request, and replay swapped their answers.
   * An empty value in a text is kept: nothing secret, and a mask would change prose
   * (`?key=&foo`).
   */
  const query = (u: string, inText: boolean): string => {
    let q = u.indexOf('?');
    const hashAt = u.indexOf('#');
    if (hashAt >= 0 && (q < 0 || q > hashAt)) q = -1;
    if (q < 0 && hashAt < 0) return u;
    const base = q >= 0 ? u.slice(0, q + 1) + params(u.slice(q + 1, hashAt < 0 ? undefined : hashAt), inText) : u.slice(0, hashAt < 0 ? undefined : hashAt);
    // A fragment of parameters (the OAuth implicit flow's `#access_token=…&token_type=bearer`) is
    // read as a query is; a plain fragment (`#section-2`) has none to mask.
    return hashAt < 0 ? base : `${base}#${u.indexOf('=', hashAt) < 0 ? u.slice(hashAt + 1) : params(u.slice(hashAt + 1), inText)}`;
  };
  /**
   * A query's (or a fragment's) parameters, split on `&` and on a `;` before another `name=`
   * (`?a=1;access_token=…`; a `;` inside a value stays in it), with the secret ones masked (see query()).
   */
  const params = (query: string, inText: boolean): string => {
    const split = query.split(/(&|;(?=[^&;=]+=))/);
    for (let i = 0; i < split.length; i += 2) split[i] = param(split[i]!, inText);
    return split.join('');
  };
  /** One `name=value` of a query, its value masked when its name is a secret's (see query()). */
  const param = (p: string, inText: boolean): string => {
    const eq = p.indexOf('=');
    if (eq < 0) return p;
    const kind = queryKind(p.slice(0, eq));
    if (kind === PLAIN_NAME) return p;
    const raw = p.slice(eq + 1);
    if (inText && raw === '') return p;
    let shown = raw;
    try {
      shown = decodeURIComponent(raw);
    } catch {
      // a malformed escape: the raw value is masked
    }
    // In the request's own URL, SigV4's parameters always, and the client's credential (`?key=`,
    // `?access_token=`) when its value is shaped like one (./query-credential.ts says why a
    // doubtful one is keyed); a keyed mask, stored before, stays as it is (its hex is random).
    if (!inText && (kind === CREDENTIAL_NAME || (kind === SHAPED_NAME && !WHOLE_MASK.test(shown) && queryCredential(shown, OTHER_TOOL_MASK)))) return `${p.slice(0, eq)}=${encodeURIComponent(REDACTED)}`;
    return mask(shown) === shown ? p : `${p.slice(0, eq)}=${encodeURIComponent(mask(raw))}`;
  };

  // What a header or query parameter name is, judged once per name: traffic repeats the same few
  // dozen names, and folding, the suffix test and splitting a name into words cost more than the
  // rest of its redaction.
  const headerKind = judgedOnce((k) => {
    const f = fold(k);
    return credentialHeaders.has(f) && headerSet.has(f) ? CREDENTIAL_NAME : isSecretHeaderName(f, headerSet) || secretByLastWord(k) ? SECRET_NAME : PLAIN_NAME;
  });
  // By the name as written in the URL (`api%2Dkey`), judged as decoded.
  const queryKind = judgedOnce((written) => {
    let name = written;
    try {
      name = decodeURIComponent(written.replace(/\+/g, ' '));
    } catch {
      // a malformed escape: the name as written is judged
    }
    const f = fold(name);
    return credentialQuery.has(f) ? (f.startsWith('xamz') ? CREDENTIAL_NAME : SHAPED_NAME) : querySet.has(f) || isSecretName(f, fieldSet) || secretByLastWord(name) ? SECRET_NAME : PLAIN_NAME;
  });

  const masks = (k: string, x: unknown) => x != null && x !== '' && typeof x !== 'boolean' && secretField(k);

  /**
   * A member name with the credentials in it masked (`{"xai-…": 1}`: a key used as a name reaches
   * the tape as surely as one used as a value); the same string for the rest. Names shorter than
   * a credential's token are passed over at once.
   */
  const memberName = (k: string): string => {
    if (k.length < 16) return k;
    // Judged once per name, as field names are (bodies repeat theirs; a long plain name such as
    // `max_completion_tokens` is a token run the credential patterns are tried on). Bounded.
    let n = memberNames.get(k);
    if (n === undefined) {
      n = credentials(k);
      if (memberNames.size < 4096) memberNames.set(k, n);
    }
    return n;
  };
  const memberNames = new Map<string, string>();
  /**
   * A masked member name that no other member of the object holds: with a salt, two keys give two
   * keyed masks, but a store without one masks both as `[REDACTED]`, and an object's member may
   * already be named so. Two members made one would make two different requests one (and drop a
   * value), so a taken name gets `#2`, `#3`, ... after it.
   */
  const freeName = (name: string, taken: (n: string) => boolean): string => {
    if (!taken(name)) return name;
    let i = 2;
    while (taken(`${name}#${i}`)) i++;
    return `${name}#${i}`;
  };
  /** Whether a member's name holds a credential, which value() masks (see memberName). */
  const nameHoldsCredential = (k: string): boolean => scan && k.length >= 16 && memberName(k) !== k;
  /** Whether an object has a member whose name holds a credential. */
  const credentialNamed = (keys: readonly string[]): boolean => scan && keys.some(nameHoldsCredential);
  /**
   * A copy of an object with its members' names masked (memberName), in their order, each value
   * as `valueOf` gives it.
   */
  const renamed = (obj: Record<string, unknown>, keys: readonly string[], valueOf: (k: string, x: unknown) => unknown): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    // Names kept as they are hold their place first: a masked name must not take one of them.
    const kept = new Set<string>();
    for (const k of keys) if (memberName(k) === k) kept.add(k);
    for (const k of keys) {
      const n = memberName(k);
      const name = n === k ? k : freeName(n, (c) => kept.has(c) || Object.prototype.hasOwnProperty.call(out, c));
      out[name] = valueOf(k, obj[k]);
    }
    return out;
  };

  /** A full copy of a deep plain value, redacted, without recursion. */
  const deep = (root: unknown): unknown => {
    const leaf = (x: unknown): { done: true; v: unknown } | { done: false } =>
      typeof x === 'string' ? { done: true, v: text(x) } : x === null || typeof x !== 'object' ? { done: true, v: x } : { done: false };
    const first = leaf(root);
    if (first.done) return first.v;
    const out: unknown = Array.isArray(root) ? [] : {};
    const stack: [unknown, unknown][] = [[root, out]];
    while (stack.length > 0) {
      const [src, dst] = stack.pop()!;
      if (Array.isArray(src)) {
        const d = dst as unknown[];
        for (const x of src) {
          const l = leaf(x);
          if (l.done) d.push(l.v);
          else {
            const c: unknown = Array.isArray(x) ? [] : {};
            d.push(c);
            stack.push([x, c]);
          }
        }
        continue;
      }
      const proto = Object.getPrototypeOf(src) as unknown;
      const d = dst as Record<string, unknown>;
      if (proto !== Object.prototype && proto !== null) continue; // left empty: not plain data
      const srcObj = src as Record<string, unknown>;
      const keys = Object.keys(srcObj);
      // Members named with a credential: their names masked, as value() masks them.
      const names = credentialNamed(keys) ? Object.keys(renamed(srcObj, keys, () => undefined)) : keys;
      keys.forEach((k, i) => {
        const x = srcObj[k];
        const name = names[i]!;
        if (masks(k, x)) {
          d[name] = maskValue(x);
          return;
        }
        const l = leaf(x);
        if (l.done) d[name] = l.v;
        else {
          const c: unknown = Array.isArray(x) ? [] : {};
          d[name] = c;
          stack.push([x, c]);
        }
      });
    }
    return out;
  };

  /** A member's value as value() stores it (by its name: masked, a base64 file read, or redacted within). */
  const memberValue = (obj: Record<string, unknown>, k: string, x: unknown, depth: number): unknown =>
    masks(k, x) ? maskValue(x) : k === 'data' && typeof x === 'string' && scan ? text(file(x, mediaOf(obj))) : k === 'headers' ? headersMember(obj, x, value(x, depth + 1), self) : value(x, depth + 1);

  const value = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (v === null || typeof v !== 'object') return v;
    if (depth > RECURSION_LIMIT) return deep(v);
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
    // Maps, Sets, Errors, byte arrays (./typed-redact.ts); Dates, other typed arrays and user classes as they are.
    if (proto !== Object.prototype && proto !== null) return typedValue(v, { value: (x) => value(x, depth + 1), member: (k, x) => (masks(k, x) ? maskValue(x) : undefined), bytes: (b) => bytes(b) });
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj);
    // Rare (a key used as a member's name): a closure per object only then, off the hot path.
    if (credentialNamed(keys)) return renamed(obj, keys, (k, x) => memberValue(obj, k, x, depth));
    let out: Record<string, unknown> | undefined;
    for (const k of keys) {
      const x = obj[k];
      const r = memberValue(obj, k, x, depth);
      if (r !== x && !out) out = { ...obj };
      if (out) out[k] = r;
    }
    return out ?? obj;
  };

  /** Whether value() masks a member of a parsed JSON value (by its name), at any depth. */
  const hasSecretMember = (root: unknown): boolean => {
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const v = stack.pop();
      if (Array.isArray(v)) {
        for (const x of v) if (x !== null && typeof x === 'object') stack.push(x);
        continue;
      }
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        const x = o[k];
        // A name holding a credential is masked by value() too (renamed, so two stay two).
        if (masks(k, x) || nameHoldsCredential(k)) return true;
        if (x !== null && typeof x === 'object') stack.push(x);
      }
    }
    return false;
  };

  const bytes = (body: Uint8Array, contentType?: string, known?: KnownBody): Uint8Array => {
    if (keep || body.length === 0) return body;
    const ascii = known?.ascii;
    const whole = ascii !== undefined && ascii.length === body.length ? ascii : latin1Text(body);
    // A JSON body with a secret member (a token endpoint's access_token, an echo of the
    // request) has it masked by name, like a request body, and is stored re-serialized. Judged
    // on the parse, not the text: a name can be spelled with escapes, doubled separators or
    // letters that lowercase to ASCII ones (`api\u005fkey`, `api__key`, a Kelvin sign for k),
    // which a scan of the text for the names missed.
    // application/stream+json (Cohere's v1 chat stream) is lines of JSON, read as NDJSON is.
    const json = contentType === undefined ? /^\s*[[{]/.test(whole) : /[/+]json\b/i.test(contentType) && !/\/stream\+json\b/i.test(contentType);
    let judged = false;
    if (json) {
      let doc = known?.parsed;
      if (doc === undefined) {
        try {
          doc = { value: JSON.parse(utf8Decoder.decode(body)) };
        } catch {
          // not JSON after all: masked as text below
        }
      }
      // Secret members of JSON text inside its strings too (escaped quotes in the raw body: none, none to look for).
      judged = doc !== undefined && doc.value !== null && typeof doc.value === 'object';
      if (judged && (hasSecretMember(doc!.value) || (scan && ((whole.includes('\\"') && namedSecret(whole, 'embedded')) || secretUrlIn(whole))))) {
        // As value() redacts a document: an AWS secret apart from its id too (./aws-pairs.ts).
        const red = self.value(doc!.value);
        if (red !== doc!.value) return utf8.encode(JSON.stringify(red));
      }
    }
    // A parsed object's members were judged by name on the parse (and the JSON text in its
    // strings by the test above): only credential-looking tokens are left to look for. Other
    // text (an event stream, a JSON body that did not parse) may hold members to mask.
    const masked = judged ? credentials(whole) : text(whole);
    // Credential patterns and masks are ASCII, so masking latin1 text keeps every other byte.
    return masked === whole ? body : latin1Bytes(masked);
  };

  const mayHaveSecrets = (s: string): boolean => {
    if (keep) return false;
    if (namedSecret(s, scan ? 'both' : 'members')) return true;
    // A URL with a password may have its slashes escaped (`https:\/\/u:pw@h`): its parse shows it.
    return scan && (mayHoldCredential(s) || secretUrlIn(s) || textFileMasked(s) || shapesIn(s).length > 0 || (s.indexOf(':\\/\\/') >= 0 && s.indexOf('@') >= 0));
  };

  /** Whether a JSON text holds a base64 text file that redaction changes (judged on the parse: only bodies that may hold one). */
  const textFileMasked = (s: string): boolean => {
    if (!TEXT_FILE_GATE.test(s)) return false;
    try {
      const doc = JSON.parse(asUtf8(s)) as unknown;
      return value(doc, 0) !== doc;
    } catch {
      return false;
    }
  };

  /** A secret header's value masked, an empty one kept (see headers()). */
  const headerMask = (x: string | number): string => (x === '' ? '' : mask(String(x)));

  // Named: a base64 file's `.env` lines are masked by this redactor's own names (file()).
  const self: Redactor = {
    keepSecrets: keep,
    isSecretHeader: (name) => !keep && headerKind(name) !== PLAIN_NAME,
    isCredentialHeader: (name) => credentialHeaders.has(fold(name)),
    isSecretField: (name) => !keep && secretField(name),
    mayHaveSecrets,
    headers<H extends Record<string, string | string[] | number | undefined>>(h: H): H {
      if (keep) return h;
      const out: Record<string, string | string[] | number | undefined> = {};
      // Names, not entries: an array per header is garbage on the recording hot path.
      for (const k of Object.keys(h)) {
        const x = h[k];
        if (x === undefined) continue;
        const kind = headerKind(k);
        if (kind === CREDENTIAL_NAME) out[k] = Array.isArray(x) ? x.map(() => REDACTED) : REDACTED;
        // An empty value is no secret (the Mistral SDK sends `cookie: ""`): kept, so a tape holds
        // no mask that `tapedeck rerecord` would take for a secret it cannot send again.
        else if (kind === SECRET_NAME) out[k] = Array.isArray(x) ? x.map(headerMask) : headerMask(x);
        // A redirect's `Location` may be relative to the request (`done?token=…`, no leading `/`).
        else if (isLocation(k)) out[k] = typeof x === 'string' ? url(x) : Array.isArray(x) ? x.map(url) : x;
        else out[k] = typeof x === 'string' ? text(x) : Array.isArray(x) ? x.map(text) : x;
      }
      // An AWS secret in a header of a plain name, its id in another (./aws-pairs.ts).
      return headerPairsMasked(out, h, mask) as H;
    },
    // An AWS secret whose id is in another string of the document (./aws-pairs.ts).
    value: <T>(v: T): T => (keep ? v : pairsMasked(value(v, 0) as T, v, mask)),
    url,
    text,
    bytes,
    mask: (v) => (keep ? v : mask(v)),
  };
  return self;
}

const defaultRedactor = redactor();

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

function hexBytes(h: string): Uint8Array {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * HMAC-SHA-256 (RFC 2104) of `message` under `key`, on the SHA-256 the redactor already ships:
 * @noble/hashes' generic hmac cost the page bundle ~0.5 KB gzipped for this one use.
 * test/store/redact-hmac.test.ts holds it to node:crypto's createHmac.
 *
 * @example
 * hmacSha256(key16, utf8.encode('sk-...')) // 32 bytes
 */
export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  const k = key.length > 64 ? sha256(key) : key;
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    const b = k[i] ?? 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

function hexOf(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

/** The text a non-string secret member is masked by (its JSON, or String() where JSON fails). */
function jsonText(x: unknown): string {
  try {
    return JSON.stringify(x) ?? String(x);
  } catch {
    return String(x);
  }
}

/** Bytes as latin1 text, one character per byte (Buffer's native path where there is one). */
export function latin1Text(b: Uint8Array): string {
  if (typeof Buffer !== 'undefined') return Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return s;
}

/** The inverse of latin1Text (every character is below 256). */
export function latin1Bytes(s: string): Uint8Array {
  // A plain view of Buffer's bytes: a Buffer stored in a record stays a Buffer on the tape, and
  // the JSON export then shows a masked body as base64 instead of its text.
  if (typeof Buffer !== 'undefined') {
    const b = Buffer.from(s, 'latin1');
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  }
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

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
