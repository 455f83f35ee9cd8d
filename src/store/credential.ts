/**
 * The credential patterns redaction masks in any text, and where in a text a search for them has
 * to begin; and the credentials of other shapes (a PEM private key's body, a URL's userinfo
 * password), which pages leave to the recorder (./credential.browser.ts).
 *
 * Every pattern ends in a long token (16 characters and more of letters, digits and `._~+/=-`),
 * so a text without such a run holds no credential, and the first run bounds where a match can
 * start. Prose has short words: most strings are passed over by a stride-16 test of single
 * characters, where the regular expression tried every word boundary (on the benchmarks'
 * 36 KB chat body, the credential search was ~60% of redacting a parsed body).
 */

import { awsSecretsIn, type AwsSecret } from './aws-secret.ts';
import { CREDENTIAL as PAGE_CREDENTIAL } from './credential-pattern.ts';

/**
 * The shared patterns, and a Telegram bot token (`123456789:AAHdqTcv…`: a bot's id, a colon and
 * 35 characters, 34 in older tokens) after the `bot` of the Bot API's URL path
 * (`/bot<token>/sendMessage`, also a webhook's path), where no header or query rule looks. Not in
 * pages (their budget, and a page records nothing): docs/browser.md.
 *
 * The match begins at `bot` (kept in view by maskCredential), inside the group of key prefixes:
 * an alternative starting at the id's digits, or outside that group, made every search 1.5-4x
 * slower (a digit or a lone `b` ends none of the fast first-character tests). Its run starts
 * after the id and colon: matchFloor reaches back to the `bot`. A bare token (pasted into a
 * prompt, a tool result, a log line: `123456789:AAHdqTcv…`) is matched from its secret part, which
 * starts with `A`, the id before it looked at behind (kept: a bot's id is public), so the search
 * still starts at a letter the fast tests know. Made from the shared source, so
 * credential-pattern.ts must keep its `\b(?:sk-` (test/store/telegram-bot-token.test.ts fails
 * without the token's alternative). A Google OAuth client secret (`GOCSPX-` and 28 characters: a
 * client's `client_secret.json`) is the alternative after the connection string key's
 * (CONNECTION_KEY), Node only as well: under its member name it was masked, pasted into a prompt
 * it was stored as typed.
 */
export const CREDENTIAL = new RegExp(
  PAGE_CREDENTIAL.source.replace(
    '\\b(?:sk-',
    '\\b(?:bot\\d{6,12}:[A-Za-z0-9_-]{34,36}(?![A-Za-z0-9_-])|A[A-Za-z0-9_-]{33,35}(?![A-Za-z0-9_-])(?<=(?<![\\w:])\\d{6,12}:A[A-Za-z0-9_-]{33,35})|(?:Account|SharedAccess)Key=[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])|GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])|sk-',
  ),
  'g',
);

/**
 * The key of an Azure connection string (`DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…`
 * of a storage account or Cosmos DB, `…;SharedAccessKey=…` of Service Bus and Event Hubs),
 * CREDENTIAL's alternative for it: base64 with no prefix of its own, so the name before it is what
 * makes it one. Pasted into a prompt or a tool's output, the whole account's key was stored as
 * typed. Node only, as the bot token (a page keys such a request apart); its name is kept in view.
 */
const CONNECTION_KEY = /^(?:Account|SharedAccess)Key=/;

/**
 * How many characters at the start of a CREDENTIAL match stay in view when it is masked: a bot
 * token's `bot`, a connection string key's name and `=`; 0 for the rest.
 *
 * @example
 * keptInView('AccountKey=Eby8vdM02xNOcqFl…') // 11
 */
export function keptInView(found: string): number {
  return found.startsWith('bot') ? 3 : (CONNECTION_KEY.exec(found)?.[0].length ?? 0);
}

/**
 * What a CREDENTIAL match is replaced with: `mask` of it, what stays in view kept before the mask
 * of the rest (keptInView: a bot token's `bot`, so the URL still reads as the Bot API's; a
 * connection string key's name, so the string still reads as one).
 *
 * @example
 * '/bot123456789:AAHdqTcv…/getMe'.replace(CREDENTIAL, maskCredential(mask)) // '/bot[REDACTED:…]/getMe'
 * 'AccountName=a;AccountKey=Eby8…==;'.replace(CREDENTIAL, maskCredential(mask)) // 'AccountName=a;AccountKey=[REDACTED:…];'
 */
export function maskCredential(mask: (v: string) => string): (found: string) => string {
  return (found) => {
    const kept = keptInView(found);
    return kept === 0 ? mask(found) : found.slice(0, kept) + mask(found.slice(kept));
  };
}

/** The shortest token any CREDENTIAL alternative ends in. */
const TOKEN_RUN = 16;

/** The union of the characters of CREDENTIAL's tokens, by ASCII code (1: one of them). */
export const TOKEN_CHARS: Readonly<Uint8Array> = (() => {
  const t = new Uint8Array(128);
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-') t[c.charCodeAt(0)] = 1;
  return t;
})();

/** The longest word that stands before a token's whitespace (`Bearer`). */
const WORD_BEFORE = 6;

const tokenAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  return c < 128 && TOKEN_CHARS[c] === 1;
};

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** JavaScript's `\s` (what the `\s+` after `Bearer` takes). */
const JS_SPACE = /\s/;

/**
 * The next run of at least TOKEN_RUN token characters at or after `from`: [start, end), or
 * undefined. Looks at every 16th character while it is no token character, since a run that long
 * must hold one of them.
 */
function nextRun(s: string, from: number): [number, number] | undefined {
  let i = from + TOKEN_RUN - 1;
  while (i < s.length) {
    if (!tokenAt(s, i)) {
      i += TOKEN_RUN;
      continue;
    }
    // The position looked at before was no token character (or before `from`): the walk back is short.
    let start = i;
    while (start > from && tokenAt(s, start - 1)) start--;
    let end = i + 1;
    while (end < s.length && tokenAt(s, end)) end++;
    if (end - start >= TOKEN_RUN) return [start, end];
    i = end + TOKEN_RUN;
  }
  return undefined;
}

/** The earliest index a CREDENTIAL match holding the run that starts at `start` can begin at. */
function matchFloor(s: string, start: number): number {
  // A bot token's id and colon stand before its run, and its `bot` (with the character before
  // it, for the word boundary) before them.
  if (s.charCodeAt(start - 1) === 0x3a) {
    let d = start - 1;
    while (d > 0 && isDigit(s.charCodeAt(d - 1))) d--;
    if (d < start - 1) return Math.max(0, d - 4);
  }
  // A percent-encoded separator before the run (`api_key%3Dsk-…`): its `%`, which searchedText
  // turns into a separator; a JSON escape starting the run (`\nsk-…`): its backslash, which
  // searchedText keeps before the escape's letters made spaces.
  if (s.charCodeAt(start - 1) === 0x25 || s.charCodeAt(start - 1) === 0x5c) return start - 1;
  // Within the run for every alternative but the bearer words, which stand before whitespace.
  let b = start;
  while (b > 0 && JS_SPACE.test(s[b - 1]!)) b--;
  return b === start ? start : Math.max(0, b - WORD_BEFORE);
}

/**
 * Where a search for CREDENTIAL in `s` can begin (no match starts before it), or -1 when `s` holds
 * no credential. Exact: CREDENTIAL from here finds what it finds from 0.
 *
 * @example
 * credentialFrom('a short sentence') // -1
 * credentialFrom('key:sk-abcdefghijklmnopqrstuvwx') // 4 (the run's start)
 * credentialFrom('key: Bearer abcdefghijklmnop0123') // 5 (six before the space that ends the word)
 */
export function credentialFrom(s: string): number {
  const run = nextRun(s, 0);
  return run === undefined ? -1 : matchFloor(s, run[0]);
}

/** A percent-encoded character (`%3D`, `%22`, `%20`). */
const PERCENT_ENCODED = /%[0-9A-Fa-f]{2}/g;

/**
 * The text CREDENTIAL is searched in from `from`: `s`, or, when it holds a percent-encoded
 * character there, `s` with each made `%` and two spaces. The key formats begin at a word
 * boundary, and in `api_key%3Dsk-…` (a URL in a URL's query, a form body quoted into a prompt) the
 * `D` before the key is a word character: the key was written to disk in clear. The view has the
 * length of `s` and no match holds a space or a `%` (bearer words take whitespace, not `%20`),
 * so a match in it is the same text at the same index of `s`. A `\b` in the expression or a look
 * behind for `%` instead made every search 1.4-3x the instructions (a text without `%` pays one
 * native search for it here).
 *
 * @example
 * searchedText('api_key%3Dsk-proj-abc', 0) // 'api_key%  sk-proj-abc'
 */
export function searchedText(s: string, from: number): string {
  return s.indexOf('%', from) < 0 ? s : s.replace(PERCENT_ENCODED, '%  ');
}

/**
 * searchedText for text that is JSON as written (a raw body, a window of one, a stream's pieces
 * joined): also with the letters of each JSON escape (`\\n`, `\\t`, `\\r`, `\\b`, `\\f`,
 * `\\u00a0`) that stands before a run of TOKEN_RUN token characters made spaces, the backslash
 * kept. A model writes a key on a line of its own (`"Here is the key:\\nsk-proj-…"`), and the
 * escape's letter before it is a word character, so the key formats' word boundary failed there
 * and the key was stored in clear. The view keeps the length of `s`, and no match holds a space,
 * so a match in it is still the same text at the same index. An escaped backslash is stepped over
 * whole, so the `n` of `\\\\nsk-…` (a backslash, then the word `nsk-…`) stays a letter.
 *
 * Each backslash is found by a native search and most are passed over at a character or two:
 * raw answers are full of `\\n` before words (a 30 KB answer of prose holds ~500), where a
 * regular expression's scan for them took about a fifth of redacting the body.
 *
 * @example
 * searchedJsonText('key:\\nsk-proj-abcdefghijklmnop', 0) // 'key:\\ sk-proj-abcdefghijklmnop'
 */
export function searchedJsonText(s: string, from: number): string {
  const view = searchedText(s, from);
  let marks: number[] | undefined;
  for (let i = s.indexOf('\\', from); i >= 0; i = s.indexOf('\\', i + 2)) {
    const c = s.charCodeAt(i + 1);
    const n = c === 0x6e || c === 0x74 || c === 0x72 || c === 0x62 || c === 0x66 ? 1 : c === 0x75 ? 5 : 0;
    if (n === 0) continue;
    const k = i + 1 + n;
    // The run's last character first: after a word, a space or a quote is usually there.
    if (!tokenAt(s, k + TOKEN_RUN - 1)) continue;
    let e = k;
    while (e < k + TOKEN_RUN && tokenAt(s, e)) e++;
    if (e === k + TOKEN_RUN) (marks ??= []).push(i + 1, n);
  }
  if (marks === undefined) return view;
  let out = '';
  let at = 0;
  for (let q = 0; q < marks.length; q += 2) {
    out += view.slice(at, marks[q]) + ' '.repeat(marks[q + 1]!);
    at = marks[q]! + marks[q + 1]!;
  }
  return out + view.slice(at);
}

/**
 * `s` with CREDENTIAL's matches in `view` (searchedText of it) replaced by `fn` of each: what
 * `s.replace(CREDENTIAL, fn)` is when `view` is `s`; and the AWS secret access keys standing
 * beside an access key id, which no pattern finds alone, by `fn` of each too.
 *
 * @example
 * replaceCredentials(s, searchedText(s, 0), maskCredential(mask))
 */
export function replaceCredentials(s: string, view: string, fn: (found: string) => string): string {
  // Called only for a text that holds a credential: an AWS access key id's secret beside it
  // (./aws-secret.ts) is looked for here, so a text with none pays nothing for it.
  if (s.indexOf('AKIA') >= 0 || s.indexOf('ASIA') >= 0) {
    idSeen = true;
    const secrets = awsSecretsIn(s, view);
    if (secrets.length > 0) return replaceWithSecrets(s, view, fn, secrets);
  }
  if (view === s) return s.replace(CREDENTIAL, fn);
  let out = '';
  let at = 0;
  CREDENTIAL.lastIndex = 0;
  for (let m = CREDENTIAL.exec(view); m !== null; m = CREDENTIAL.exec(view)) {
    out += s.slice(at, m.index) + fn(m[0]);
    at = m.index + m[0].length;
  }
  CREDENTIAL.lastIndex = 0;
  return out + s.slice(at);
}

/**
 * replaceCredentials of a text with AWS secret access keys beside their ids: both kinds replaced,
 * in order, none inside another; a secret by `fn` of the secret itself (`\/`, `%2F` read as `/`),
 * so it has one mask however it was written.
 */
function replaceWithSecrets(s: string, view: string, fn: (found: string) => string, secrets: readonly AwsSecret[]): string {
  const found: [number, string, string][] = secrets.map((x) => [x.index, x.text, x.value]);
  CREDENTIAL.lastIndex = 0;
  for (let m = CREDENTIAL.exec(view); m !== null; m = CREDENTIAL.exec(view)) found.push([m.index, m[0], m[0]]);
  CREDENTIAL.lastIndex = 0;
  found.sort(([a, x], [b, y]) => a - b || y.length - x.length);
  let out = '';
  let at = 0;
  for (const [i, text, value] of found) {
    if (i < at) continue;
    out += s.slice(at, i) + fn(value);
    at = i + text.length;
  }
  return out + s.slice(at);
}

/**
 * Whether replaceCredentials met an AWS access key id since this was last asked (asking resets
 * it). Redaction of a document asks it once the document is done, and looks for a secret the
 * id's string does not hold (./aws-pairs.ts) only then: a document without an id pays nothing.
 */
let idSeen = false;

/**
 * See idSeen.
 *
 * @example
 * awsIdSeen() // false, until a text with an AKIA… id is redacted
 */
export function awsIdSeen(): boolean {
  const seen = idSeen;
  idSeen = false;
  return seen;
}

/**
 * The AWS secret access keys beside their ids in a text (./aws-secret.ts), searched as the
 * credential patterns search JSON text (searchedJsonText). Nothing is made for a text without an id.
 *
 * @example
 * awsSecrets('{"a":"AKIAIOSFODNN7EXAMPLE","b":"wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYEXAMPLEKEY"}')[0].value
 * // 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
 */
export function awsSecrets(s: string): AwsSecret[] {
  return s.indexOf('AKIA') < 0 && s.indexOf('ASIA') < 0 ? [] : awsSecretsIn(s, searchedJsonText(s, 0));
}

/**
 * Whether `s` holds a credential, looking only around its long token runs: a body whose early
 * run (a model name, a call id) is followed by kilobytes of text is not searched to its end from
 * there. May say yes for a text without one (where a window's start cuts a word); never no for a
 * text with one.
 *
 * @example
 * mayHoldCredential('{"model":"gpt-4o-2024-08-06","input":"hello"}') // false
 */
export function mayHoldCredential(s: string): boolean {
  // A window like the one before holds what it held (a stream's events repeat their model name).
  let last = '';
  // Whether the text holds a `%` at all: asked once, at its first long run.
  let percent: boolean | undefined;
  for (let run = nextRun(s, 0); run !== undefined; run = nextRun(s, run[1])) {
    // A percent-encoded separator just before the floor (`%2Fbot…`) is what starts the word in
    // the view the search reads (searchedText): taken into the window.
    let from = matchFloor(s, run[0]);
    if ((percent ??= s.indexOf('%') >= 0)) for (let k = 1; k <= 3; k++) if (s.charCodeAt(from - k) === 0x25) from -= k;
    // A window is short: read as JSON text (a raw body's), a key after an escape is seen.
    const window = searchedJsonText(s.slice(from, run[1]), 0);
    if (window === last) continue;
    last = window;
    CREDENTIAL.lastIndex = 0;
    if (CREDENTIAL.test(window)) {
      CREDENTIAL.lastIndex = 0;
      return true;
    }
  }
  CREDENTIAL.lastIndex = 0;
  return false;
}

/**
 * A PEM private key block (`-----BEGIN PRIVATE KEY-----`, `RSA`, `EC`, `OPENSSH`, `ENCRYPTED`):
 * its markers (group 1), then its body up to the end marker or the first character no key body
 * holds, its lines broken by real or JSON-escaped newlines. Not in CREDENTIAL: the body is many
 * short lines, no single run the search there starts from. Redaction masks the body (the markers
 * kept, so a reviewer sees what was there) when it holds a run of key characters.
 */
const PEM_PRIVATE_KEY = /(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)((?:[A-Za-z0-9+/=:,.\s]|\\[rnt/]|-(?!----))+)/g;

/**
 * A URL's userinfo password in text (`postgres://app:PASSWORD@db`, `https://admin:PASSWORD@host`):
 * group 1 the scheme and user up to the colon, group 2 the password, an `@` and a host after it.
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@"'<>\\[\]]*:)([^\s/?#@"'<>\\]+)(?=@[\w[])/gi;

/**
 * What a URL's password is when it is none (documentation and templates): stars, `x`s, an
 * `<placeholder>`, a `${VARIABLE}` or `{{template}}`, a port, a mask, or the word password itself.
 */
const PLACEHOLDER_PASSWORD = /^(?:[*x.]+|<[^>]*>|\$\{?[\w.-]+\}?|\{\{[^}]*\}\}|%\w+%|\[[^\]]*\]|\d{1,5}|(?:your|my|db)?[_-]?(?:pass(?:word)?|pwd|pw|secret|changeme))$/i;

/**
 * An Azure SAS token's signature in text without its URL (`sv=…&sp=rwdl&se=…&sig=AbCd…%3D`, pasted
 * into a prompt or a tool's output): group 1 the signature, base64, often percent-encoded. In a URL
 * the query rule masks it; alone, the token was stored as typed and granted its access to whoever
 * read the tape. A masked one (`%5BREDACTED…`, `[REDACTED…]`) is no signature.
 */
const SAS_SIGNATURE = /(?<![\w%.-])sig=((?!%5B)[A-Za-z0-9%+/=]{20,})/gi;

/**
 * A Google OAuth refresh token (`1//0g…`, ~100 characters), JSON's `\/` for its slashes allowed.
 * Not in CREDENTIAL: an alternative starting with a digit slowed every search of it, so it is
 * looked for only in a text holding `1/` or `1\/` (one native search for the rest).
 */
const REFRESH_TOKEN = /(?<![\w/\\-])1(?:\\?\/){2}0[A-Za-z0-9_-]{40,}(?![\w-])/g;

/** Whether a text may hold a SAS signature or a refresh token (the cheap test before their searches). */
const signedText = (s: string): boolean => s.indexOf('sig=') >= 0 || s.indexOf('1//') >= 0 || s.indexOf('1\\/\\/') >= 0;

/** Where a PEM private key body starts and ends in what PEM_PRIVATE_KEY took after the markers: the key, the spaces around it; undefined when it holds no key (prose naming the marker, a masked body). */
function pemCore(body: string): { lead: string; key: string; trail: string } | undefined {
  const m = /^((?:\s|\\[rnt])*)([\s\S]*?)((?:\s|\\[rnt])*)$/.exec(body)!;
  return /[A-Za-z0-9+/]{16}/.test(m[2]!) ? { lead: m[1]!, key: m[2]!, trail: m[3]! } : undefined;
}

/**
 * The PEM private key bodies of a text, unmasked: `tapedeck scan` reads a text of many lines line
 * by line, and a key's body spans lines.
 *
 * @example
 * privateKeysIn('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----') // [{ index: 28, text: 'MIIEvQIBADANBgkqhkiG9w0B' }]
 */
export function privateKeysIn(s: string): { index: number; text: string }[] {
  const out: { index: number; text: string }[] = [];
  if (s.indexOf('PRIVATE KEY-----') >= 0)
    for (const m of s.matchAll(PEM_PRIVATE_KEY)) {
      const core = pemCore(m[2]!);
      if (core !== undefined) out.push({ index: m.index + m[1]!.length + core.lead.length, text: core.key });
    }
  return out;
}

/**
 * The PEM private key bodies, URL userinfo passwords, SAS signatures and Google refresh tokens of
 * a text (what redaction's shapes() masks), for credentialMatches.
 */
export function shapesIn(s: string): { index: number; text: string }[] {
  const out = privateKeysIn(s);
  if (s.indexOf('://') >= 0 && s.indexOf('@') >= 0)
    for (const m of s.matchAll(URL_PASSWORD)) if (!PLACEHOLDER_PASSWORD.test(m[2]!)) out.push({ index: m.index + m[1]!.length, text: m[2]! });
  if (signedText(s)) {
    // One in a URL's query is the query rule's to report (`tapedeck scan` names it so).
    for (const m of s.matchAll(SAS_SIGNATURE)) if (!/[?#]\S*$/.test(s.slice(Math.max(0, m.index - 2048), m.index))) out.push({ index: m.index + 4, text: m[1]! });
    for (const m of s.matchAll(REFRESH_TOKEN)) out.push({ index: m.index, text: m[0] });
  }
  return out;
}

/**
 * A text with its PEM private key bodies and URL userinfo passwords replaced by `mask` of each
 * (the markers, user name and host kept); the same text when it has none. A masked body or a
 * placeholder password (`${DB_PASSWORD}`, `****`, a mask) is kept.
 *
 * @example
 * maskShapes('postgres://app:Db777fMoaSjuBkwK7ZZm@pg/prod', mask) // 'postgres://app:[REDACTED:…]@pg/prod'
 */
export function maskShapes(s: string, mask: (v: string) => string): string {
  if (s.indexOf('PRIVATE KEY-----') >= 0)
    s = s.replace(PEM_PRIVATE_KEY, (whole: string, head: string, body: string) => {
      const core = pemCore(body);
      return core === undefined ? whole : head + core.lead + mask(core.key) + core.trail;
    });
  if (s.indexOf('://') >= 0 && s.indexOf('@') >= 0) s = s.replace(URL_PASSWORD, (whole: string, head: string, pw: string) => (PLACEHOLDER_PASSWORD.test(pw) ? whole : head + mask(pw)));
  // Keyed, `sig=` kept in view; a refresh token masked as its slashes read, however JSON wrote them.
  if (signedText(s)) s = s.replace(SAS_SIGNATURE, (_w: string, sig: string) => `sig=${mask(sig)}`).replace(REFRESH_TOKEN, (t) => mask(t.replace(/\\\//g, '/')));
  return s;
}
