/**
 * `tapedeck scan`: a safety net for tapes whose records did not pass through today's redaction
 * (tapes made by older versions, hand-written recordings, imports, `keepSecrets: true`). Every
 * record is walked, request and answer, headers and bodies, and every body in every framing is
 * read: JSON, text, server-sent events and NDJSON line by line, AWS event-stream frames and the
 * base64 JSON chunks inside them. It reports
 *   - the credential formats redaction masks (redact.ts, credentialMatches): bearer and basic
 *     tokens, SigV4 credentials and signatures, known provider key prefixes, JSON Web Tokens,
 *     an AWS secret access key beside its access key id (on one line or the next), in values
 *     and in member names;
 *   - secret-named members (the redactor's names: `api_key`, `authorization`, `*_password`,
 *     `*Token`, ...) holding a high-entropy string that is not a mask, and form fields so named;
 *   - those credential formats cut across the events of a stream (a key the model repeated,
 *     one text delta at a time), found in the events' text joined (stream-redact.ts).
 * A finding names the file, the record (index and byte offset) and the path inside it, and
 * shows only the first characters of what was found.
 */
import { decodeEventStream, mayBeEventStream } from '../providers/wire/aws-eventstream.ts';
import { pairedSecretsIn } from './aws-pairs.ts';
import { awsSecrets, privateKeysIn } from './credential.ts';
import { base64TextFile, credentialMatches as patternMatches, dataUrlHead, EMBEDDED_MEMBER, embeddedSecret, isMask, redactor } from './redact.ts';
import { TOKEN_CHARS } from './credential.ts';
import { childPath } from './tape-json.ts';
import { echoedSecrets } from './echoed-secret-scan.ts';
import { FORM_START } from './http-body.ts';
import { queryPairs } from './query-pairs.ts';
import { grantCode } from './secret-words.ts';
import { ENV_LINE, YAML_LINE, valueMayBeSecret } from './env-secrets.ts';
import { base64Document, documentOf, frameEvent, splitCredentials, type StreamEvent } from './stream-redact.ts';
import { isArrayBuffer, isBytes } from '../bytes.ts';

/** One thing that looks like a credential. */
export interface SecretFinding {
  /** The record's index in the tape (0-based) and its byte offset. */
  record: number;
  offset: number;
  /** Where in the record: a JSON path, then where inside a body (`event 3`, `line 2`, `frame 1`). */
  path: string;
  kind: 'bearer token' | 'key format' | 'secret member' | 'secret query parameter' | 'echoed secret';
  /** The first characters of the value and its length; never the whole value. */
  excerpt: string;
  /**
   * Set when today's recorder stores such a value as it is, so re-recording does not mask it: a
   * secret-named `NAME=value` or YAML `name: value` line in a text that is no uploaded file (a text body, a prompt).
   */
  kept?: true;
}

/** Entropy of a string in bits per character (Shannon, over its characters). */
export function entropyBits(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  const n = [...s].length;
  let h = 0;
  for (const k of counts.values()) h -= (k / n) * Math.log2(k / n);
  return h;
}

// A value in a secret-named member is reported when it is long and random-looking: a random
// 16-character token has about 4 bits per character, while `none`, `true`, `changeme` or a
// placeholder such as `sk-test` fall well below these bounds.
const MIN_SECRET_LENGTH = 16;
const MIN_SECRET_ENTROPY = 3.5;

const MAX_DEPTH = 1000;
/** A multipart part's field name and its content's first line (its headers skipped). */
const MULTIPART_FIELD = /content-disposition:[^\r\n]*?;\s*name="([^"\r\n]*)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n([^\r\n]*)/gi;
const utf8 = new TextDecoder('utf-8');
const names = redactor();

const excerpt = (s: string): string => `${JSON.stringify(s.slice(0, 4) + '…')} (${s.length} chars)`;

type Report = (path: string, kind: SecretFinding['kind'], value: string, kept?: boolean) => void;

/**
 * The credential formats in a text (redact.ts's credentialMatches), and an AWS secret access key
 * beside its access key id (./aws-secret.ts, which redaction masks with them): looked for only in
 * a text where an id was found.
 */
function credentialMatches(s: string): { index: number; text: string }[] {
  const out = patternMatches(s);
  if (out.some((m) => m.text.startsWith('AKIA') || m.text.startsWith('ASIA'))) for (const x of awsSecrets(s)) out.push({ index: x.index, text: x.value });
  return out;
}

const kindOf = (text: string): SecretFinding['kind'] => (/^(?:Bearer|Basic|Token)\s/.test(text) ? 'bearer token' : 'key format');

/** Text: a JSON document is walked, lines (SSE events, NDJSON) one by one, anything else matched whole. */
function scanText(s: string, path: string, secretName: boolean, report: Report, depth: number, isString: boolean, framed = false, inFile = false): void {
  // A data URL of a text file (an uploaded `.env`): its text is read, as redaction reads it.
  const head = isString ? dataUrlHead(s) : undefined;
  const file = head && base64TextFile(s.slice(head.at), head.mediaType);
  if (file !== undefined) return scanText(file, `${path} (base64 file)`, false, report, depth + 1, false, false, true);
  const doc = documentOf(s) ?? (isString ? base64Document(s) : undefined);
  if (doc !== undefined) return walkDocument(doc, framed ? path : `${path} (JSON)`, report, depth + 1);
  if (/[\r\n]/.test(s)) {
    // Multipart text (an answer echoing the body it got): a secret-named part's one-line content,
    // judged as a secret-named member's value is.
    // A PEM private key's body spans lines, so no one line shows it.
    for (const m of privateKeysIn(s)) report(path, 'key format', m.text);
    // An AWS secret access key on a line after (or before) its id's: no one line shows the pair.
    for (const m of awsSecrets(s)) if (/[\r\n]/.test(s.slice(Math.min(m.index, m.id), Math.max(m.index, m.id)))) report(path, 'key format', m.value);
    if (/content-disposition:/i.test(s)) for (const m of s.matchAll(MULTIPART_FIELD)) if (names.isSecretField(m[1]!)) scanText(m[2]!, `${path} part ${JSON.stringify(m[1])}`, true, report, depth + 1, false);
    return scanLines(s, path, report, depth, inFile);
  }
  const found = credentialMatches(s);
  for (const m of found) report(path, kindOf(m.text), m.text);
  // A URL's query parameters of secret names (`?api-key=`, `?access_token=`, `?sig=`), as
  // redaction masks them by name: their values have no known format for the patterns above.
  if (found.length === 0 && (s.indexOf('?') >= 0 || s.indexOf('#') >= 0) && s.indexOf('=') >= 0) for (const v of secretQueryValues(s)) report(path, 'secret query parameter', v);
  if (found.length === 0 && secretName && !isMask(s) && s.length >= MIN_SECRET_LENGTH && entropyBits(s) >= MIN_SECRET_ENTROPY) report(path, 'secret member', s);
  // JSON text inside a string that is no document of its own (`config: {"client_secret":"…"}` in
  // a prompt or a batch line's message): its secret-named members, as the recorder masks them.
  if (found.length === 0 && !secretName && isString && s.indexOf('"') >= 0) {
    for (const m of s.matchAll(EMBEDDED_MEMBER)) {
      const v = embeddedSecret(m[1]!, m[3]!, names.isSecretField);
      if (v !== undefined) scanText(v, `${path} member ${m[1]!}`, true, report, depth + 1, false);
    }
  }
  // A secret-named `name=value` in a line of prose (`repeat: client_secret=…`): the recorder keeps
  // it (it masks such pairs only as whole lines of uploaded files).
  // A string that is one YAML `name: value` line (`password: hunter2hunter2` as the whole prompt)
  // too, as the same line in a longer text is read (scanLines).
  if (found.length === 0 && !secretName && !inFile && (s.indexOf('=') >= 0 || s.indexOf(':') >= 0) && !FORM_START.test(s)) for (const v of envValues(s)) report(path, 'secret member', v, true);
  // A form (sent as one, or as text without its content type): its secret-named fields, and an
  // OAuth token request's `code`, are judged as secret-named members are.
  if (found.length === 0 && !secretName && FORM_START.test(s)) {
    // The recorder masks a form that is the request body itself; one that is text inside a
    // document (a prompt that is one `DB_PASSWORD=…` line) it keeps, so re-recording fixes nothing.
    const kept = isString && path !== '$.request.body';
    const said: Report = kept ? (p, kind, value) => report(p, kind, value, true) : report;
    for (const [k, x] of new URLSearchParams(s)) {
      if (!names.isSecretField(k) && !grantCode(k, s)) continue;
      const at = `${path} field ${JSON.stringify(k)}`;
      // A password a person typed (`DB_PASSWORD=hunter2hunter2`, the whole prompt) is short and
      // far from random: judged as after a password name in a line of prose, not by entropy.
      if (PASSWORD_NAME.test(k) && humanPassword(x) && !isMask(x) && !randomEnough(x)) said(at, 'secret member', x);
      else scanText(x, at, true, said, depth + 1, false);
    }
  }
}

/** A URL's (or a route's) query values that redaction masks by their parameter's name, not masked yet. */
function secretQueryValues(s: string): string[] {
  const q = s.indexOf('?');
  // The string is a URL or a route (`POST /v1/x?key=...`: a query after a path), or text with
  // absolute URLs in it (a prompt, an error message).
  const whole = q >= 0 && /^(?:[A-Z]+ )?(?:[a-z][a-z0-9+.-]*:\/\/[^\s/?#]*)?\/[^\s?#]*$/.test(s.slice(0, q));
  // A fragment's parameters (`#access_token=…`) and those after `;` too, as redaction reads them.
  const queries = whole ? [s.slice(q + 1)] : [...s.matchAll(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\?#]*[?#]([^\s"'<>\\]+)/gi)].map((m) => m[1]!);
  const out: string[] = [];
  for (const { pair, value } of queries.flatMap((x) => x.split(/#|;(?=[^&;=]+=)/)).flatMap(queryPairs)) {
    if (value === undefined || value === '' || isMask(value) || names.url(`/?${pair}`) === `/?${pair}`) continue;
    out.push(value);
  }
  return out;
}

/**
 * A `name=value` pair inside a line (`repeat: client_secret=…`, `export A=1 DB_PASSWORD="…"`):
 * its name (group 1) and value (group 3). Not after `?`, `&` or `;`: a URL's query is judged by
 * secretQueryValues.
 */
const INLINE_PAIR = /(?<![\w.?&;/-])([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*(["']?)([^\s"'&;,]+)\2/g;

// A password is what people type, short and far from random (`hunter2hunter2`), so the
// long-and-random rule of envValues missed the very values a `DB_PASSWORD=…` line pasted into a
// prompt holds. After a name that ends in a password word, any value of 6 characters or more is one,
// unless it is a placeholder: a template (`<…>`, `${…}`, `{{…}}`, `%…%`), one character repeated
// (`********`) or a word that stands for a password.
const PASSWORD_NAME = /(?:pass(?:word|wd|phrase)?|pwd)$/i;
const PLACEHOLDER = /^(?:<.*>|\$\{.*\}|\{\{.*\}\}|%.*%|(.)\1*|(?:your|my|the|db|user|app)?[_-]?(?:pass(?:word|wd)?|secret)|changeme|change[_-]?me|none|null|nil|undefined|empty|example|placeholder|redacted|secret|xxx+|\*+)$/i;
const humanPassword = (v: string): boolean => v.length >= 6 && !PLACEHOLDER.test(v);
/** Long and random-looking: the rule for a secret-named value that is no password. */
const randomEnough = (v: string): boolean => v.length >= MIN_SECRET_LENGTH && entropyBits(v) >= MIN_SECRET_ENTROPY;

/**
 * The values of a line's secret-named `NAME=value` or YAML `name: value` (see envSecrets), and of
 * its secret-named `name=value` pairs anywhere in it, that look like secrets: long and random
 * enough, or after a password name anything but a placeholder; never masks.
 */
function envValues(line: string, inline = true): string[] {
  const out = new Set<string>();
  const judge = (name: string, v: string): void => {
    if (!valueMayBeSecret(v) || !names.isSecretField(name) || isMask(v)) return;
    if ((v.length >= MIN_SECRET_LENGTH && entropyBits(v) >= MIN_SECRET_ENTROPY) || (PASSWORD_NAME.test(name) && humanPassword(v))) out.add(v);
  };
  for (const re of [ENV_LINE, YAML_LINE]) {
    if (line.indexOf(re === ENV_LINE ? '=' : ':') < 0) continue;
    for (const m of line.matchAll(re)) judge(m[2]!, m[5]!);
  }
  if (inline && line.indexOf('=') >= 0) for (const m of line.matchAll(INLINE_PAIR)) judge(m[1]!, m[3]!);
  return [...out];
}

/**
 * What a stream's events hold only joined: credentials cut across them, and secret-named members
 * of the JSON text they join into (tool-call arguments a few characters an event), the latter
 * judged as a secret-named member's value is (long and random-looking).
 */
const splitFinds = (events: readonly StreamEvent[]) =>
  splitCredentials(events, names.isSecretField).filter((c) => !c.member || (c.text.length >= MIN_SECRET_LENGTH && entropyBits(c.text) >= MIN_SECRET_ENTROPY));

/** Server-sent events (`data:` lines) and NDJSON lines: JSON lines walked, others matched. */
function scanLines(text: string, path: string, report: Report, depth: number, inFile = false): void {
  // The recorder masks `.env` lines only in uploaded files (multipart parts, base64 text files).
  const keptLines = !inFile && !/content-disposition:/i.test(text);
  let event = 0;
  // Each JSON line as an event of the stream, for the credentials cut across them; `event:` names the next one's kind.
  const events: (StreamEvent & { at: number })[] = [];
  let kind = '';
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    const sse = /^data:\s?(.*)$/.exec(line);
    if (sse) event++;
    else if (line.startsWith('event:')) kind = line.slice(6).trim();
    const at = sse ? `${path} event ${event}` : `${path} line ${i + 1}`;
    const doc = documentOf(sse ? sse[1]! : line);
    if (doc !== undefined) {
      walkDocument(doc, at, report, depth + 1);
      events.push({ kind, docs: [doc], at: sse ? event : i + 1 });
    } else {
      const found = credentialMatches(line);
      for (const m of found) report(at, kindOf(m.text), m.text);
      // A `.env` line (`DB_PASSWORD=…`), judged as a secret-named member's value is.
      if (found.length === 0) {
        const lines = envValues(line, false);
        for (const v of lines) report(at, 'secret member', v, keptLines);
        // A pair inside the line: kept by the recorder in an uploaded file too.
        for (const v of envValues(line)) if (!lines.includes(v)) report(at, 'secret member', v, true);
      }
    }
    if (line === '') kind = '';
  });
  const word = /^data:/m.test(text) ? 'events' : 'lines';
  for (const c of splitFinds(events)) report(`${path} ${word} ${events[c.first]!.at}-${events[c.last]!.at}`, c.member ? 'secret member' : kindOf(c.text), c.text);
}

function scanBytes(b: Uint8Array, path: string, report: Report, depth: number): void {
  // AWS event-stream frames: their payloads are JSON (with base64 JSON chunks inside).
  let frames: ReturnType<typeof decodeEventStream> | undefined;
  try {
    // A body that cannot be one is not tried: the decoder's error costs more than the rest of a
    // small record's scan.
    frames = mayBeEventStream(b) ? decodeEventStream(b) : undefined;
  } catch {
    frames = undefined;
  }
  if (frames && frames.length > 0) {
    frames.forEach((f, i) => scanText(utf8.decode(f.body), `${path} frame ${i + 1}`, false, report, depth, false, true));
    // The frames' JSON (an InvokeModel chunk's base64 JSON in its place) as events of the stream, for the credentials cut across them.
    const events = frames.map(frameEvent);
    for (const c of splitFinds(events)) report(`${path} frames ${c.first + 1}-${c.last + 1}`, c.member ? 'secret member' : kindOf(c.text), c.text);
    return;
  }
  scanText(utf8.decode(b), path, false, report, depth, false);
}

/** An access key id as a finding holds it. */
const AWS_ID = /^A[KS]IA[0-9A-Z]{16}$/;

/**
 * walk() of a document, and the AWS secret access keys that stand beside an id in another of its
 * strings (two messages, two members: ./aws-pairs.ts, which redaction masks), each reported at
 * the string that holds it. Looked for only in a document where an id was reported.
 */
function walkDocument(doc: unknown, path: string, report: Report, depth: number): void {
  let id = false;
  const found = new Set<string>();
  walk(doc, path, false, (p, kind, value, kept) => {
    if (AWS_ID.test(value)) id = true;
    found.add(value);
    report(p, kind, value, kept);
  }, depth);
  if (id) for (const x of pairedSecretsIn(doc)) if (!found.has(x.value)) report(placeOf(doc, x.text, path), 'key format', x.value);
}

/** The path of the first string in a document (in its order) that holds `text`; the document's own path if none does. */
function placeOf(doc: unknown, text: string, path: string): string {
  const stack: [unknown, string][] = [[doc, path]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes(text)) return at;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], childPath(at, i)]);
    } else if (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v)) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]!], childPath(at, keys[i]!)]);
    }
  }
  return path;
}

function walk(v: unknown, path: string, secretName: boolean, report: Report, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof v === 'string') return scanText(v, path, secretName, report, depth, true);
  if (v === null || typeof v !== 'object') return;
  if (isBytes(v)) return scanBytes(v, path, report, depth);
  if (ArrayBuffer.isView(v)) return scanBytes(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), path, report, depth);
  if (isArrayBuffer(v)) return scanBytes(new Uint8Array(v), path, report, depth);
  if (Array.isArray(v)) {
    v.forEach((x, i) => walk(x, childPath(path, i), secretName, report, depth + 1));
    return;
  }
  if (v instanceof Map) {
    let i = 0;
    for (const [k, x] of v) {
      const at = childPath(childPath(path, 'entries'), i++);
      walk(k, childPath(at, 0), false, report, depth + 1);
      walk(x, childPath(at, 1), typeof k === 'string' && names.isSecretField(k), report, depth + 1);
    }
    return;
  }
  if (v instanceof Set) {
    let i = 0;
    for (const x of v) walk(x, childPath(childPath(path, 'values'), i++), secretName, report, depth + 1);
    return;
  }
  if (v instanceof Error) {
    walk(v.message, childPath(path, 'message'), false, report, depth + 1);
    return;
  }
  // Under a `headers` member, names by the header rules too (`x-api-token`, `x-functions-key`),
  // as redaction judges them there. Elsewhere only by the member rules: a `next_page_token` is a
  // cursor and an Anthropic thinking block's `signature` is no secret, though a header so named is.
  const headers = path.endsWith('.headers');
  const namedSecret = (k: string) => names.isSecretField(k) || (headers && names.isSecretHeader(k));
  // A base64 `data` member whose sibling names a text media type (Anthropic's document source,
  // Gemini's inlineData): the file's text is read, as redaction reads it.
  const media = (['media_type', 'mimeType', 'mime_type'] as const).map((k) => (v as Record<string, unknown>)[k]).find((x) => typeof x === 'string') as string | undefined;
  for (const [k, x] of Object.entries(v)) {
    // A key used as a member's name (`metadata: { "xai-…": 1 }`), which redaction masks too. The
    // paths name it by its first characters only, as a finding is shown.
    const found = k.length >= 16 ? credentialMatches(k) : [];
    let at = childPath(path, k);
    if (found.length > 0) {
      let shown = k;
      for (const m of found) shown = shown.replace(m.text, `${m.text.slice(0, 4)}…`);
      at = childPath(path, shown);
      for (const m of found) report(`${at} (name)`, kindOf(m.text), m.text);
    }
    const file = media !== undefined && k === 'data' && typeof x === 'string' ? base64TextFile(x, media) : undefined;
    if (file !== undefined) scanText(file, `${at} (base64 file)`, false, report, depth + 1, false);
    else walk(x, at, namedSecret(k), report, depth + 1);
  }
}

/**
 * What in one record value looks like a credential: paths below `$`, each with what was found.
 *
 * @example
 * secretsInValue({ request: { headers: { authorization: 'Bearer sk-abcdefghijklmnopqrstuvwxyz' } } })
 * // [{ path: '$.request.headers.authorization', kind: 'bearer token', excerpt: '"Bear…" (...)' }]
 */
export function secretsInValue(value: unknown): Omit<SecretFinding, 'record' | 'offset'>[] {
  const out: Omit<SecretFinding, 'record' | 'offset'>[] = [];
  const seen = new Set<string>();
  walkDocument(value, '$', (path, kind, found, kept) => {
    const id = `${path}\u0000${found}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ path, kind, excerpt: excerpt(found), ...(kept ? { kept: true as const } : {}) });
  }, 0);
  // A realtime client's key that the server's frame repeating it has masked (./echoed-secret-scan.ts).
  for (const e of echoedSecrets(value)) out.push({ path: e.path, kind: 'echoed secret', excerpt: excerpt(e.found) });
  return out;
}

/** Latin-1 text of this many bytes at a time, at least, is searched by {@link secretsInBytes}. */
const BYTES_CHUNK = 1 << 20;
/** How far past a chunk's end its last token may run before the chunk is cut inside it anyway. */
const BYTES_RUN = 1 << 16;
/**
 * Bytes a credential match can hold (its tokens' characters, the white space after `Bearer`,
 * Latin-1 no-break space included, and the colon after a bot token's id): a chunk ends at a byte
 * that is none of these, so no match is cut in two.
 */
const TOKEN_BYTE = new Uint8Array(256);
TOKEN_BYTE.set(TOKEN_CHARS);
for (const c of ' \t\n\v\f\r\u00a0:') TOKEN_BYTE[c.charCodeAt(0)] = 1;

/**
 * How many length bytes follow a msgpack str or bin type byte (str8/16/32, bin8/16/32): they may
 * be letters or digits (a 56-character string's length byte is `8`), which would join the
 * string's first word and hide a `Bearer` or a key prefix behind a missing word boundary.
 */
const LENGTH_BYTES: Partial<Record<number, number>> = { 0xc4: 1, 0xc5: 2, 0xc6: 4, 0xd9: 1, 0xda: 2, 0xdb: 4 };

/**
 * The credential formats in raw bytes that are not a record (a damaged region of a tape): each
 * with its offset in `bytes`. msgpack stores strings and binary bodies as their bytes, so a key
 * in a header, a URL or a body is found as it is in a record; what needs a record's structure
 * (secret-named members, base64 chunks of a Bedrock stream) is not. The bytes are read as
 * Latin-1, a character a byte, a megabyte at a time; they are searched as they are and again
 * with the length bytes of what may be msgpack strings blanked, and a match found inside
 * another (`sk-…` inside `Bearer sk-…`) is left out.
 *
 * @example
 * secretsInBytes(Buffer.from('\xd9\x38Bearer sk-proj-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR', 'latin1'))
 * // [{ offset: 2, kind: 'bearer token', excerpt: '"Bear…" (59 chars)' }]
 */
export function secretsInBytes(bytes: Uint8Array): { offset: number; kind: SecretFinding['kind']; excerpt: string }[] {
  const out: { offset: number; kind: SecretFinding['kind']; excerpt: string }[] = [];
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let start = 0; start < buf.length; ) {
    let end = Math.min(buf.length, start + BYTES_CHUNK);
    const limit = Math.min(buf.length, end + BYTES_RUN);
    while (end < limit && TOKEN_BYTE[buf[end]!] === 1) end++;
    const blanked = Buffer.from(buf.subarray(start, end));
    for (let i = Math.max(0, start - 4); i < end; i++) {
      const n = LENGTH_BYTES[buf[i]!];
      if (n !== undefined) for (let j = Math.max(i + 1, start); j <= i + n && j < end; j++) blanked[j - start] = 0;
    }
    // A secret is one piece of text: a match that takes in a byte no text holds (a msgpack type
    // or length byte between two strings) is none.
    const found = [...credentialMatches(buf.toString('latin1', start, end)), ...credentialMatches(blanked.toString('latin1'))].filter((m) => oneText(m.text));
    // Earliest first, the longer of two at the same place first: a match inside one kept is dropped.
    found.sort((a, b) => a.index - b.index || b.text.length - a.text.length);
    let kept = -1;
    for (const m of found) {
      if (m.index + m.text.length <= kept) continue;
      kept = m.index + m.text.length;
      out.push({ offset: start + m.index, kind: kindOf(m.text), excerpt: excerpt(m.text) });
    }
    start = end;
  }
  return out;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Whether text read from raw bytes as Latin-1 could be one string of a record: UTF-8 without
 * control characters other than tab and line breaks. A record's origin with a port and the member
 * after it, `http://127.0.0.1:8091¥traceÙ@d6e4…`, reads as a URL whose password is `8091¥traceÙ`;
 * `¥` and `Ù` there are msgpack bytes (a string of 5, a string whose length follows), not UTF-8.
 *
 * @example
 * oneText('Db777fMoaSjuBkwK7ZZm') // true
 * oneText('8091\xa5trace\xd9')    // false
 */
function oneText(s: string): boolean {
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(s)) return false;
  // ASCII is UTF-8 as it is; only a match with other bytes is decoded.
  if (!/[^\x00-\x7f]/.test(s)) return true;
  try {
    UTF8.decode(Buffer.from(s, 'latin1'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Every finding in a tape's records (as readTape gives them).
 *
 * @example
 * const { records } = await readTape('chat.tape')
 * secretsInRecords(records).length // 0 for a clean tape
 */
export function secretsInRecords(records: readonly { offset: number; value: unknown }[]): SecretFinding[] {
  return records.flatMap((r, i) => secretsInValue(r.value).map((f) => ({ record: i, offset: r.offset, ...f })));
}
