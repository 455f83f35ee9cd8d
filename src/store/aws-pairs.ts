/**
 * An AWS secret access key and its id in two strings of one document: two messages of a chat
 * request (`"content":"id AKIA…"`, then `"content":"secret wJalr…"`), two members
 * (`{"a":"AKIA…","b":"wJalr…"}`), an answer that quotes them apart. Redaction reads a document a
 * string at a time, and no one string held the pair (./aws-secret.ts): the id was masked and the
 * secret stored as typed. Read in the document's JSON text, the two stand a short way apart, as
 * they do in one string; the secret is then masked wherever it stands in the document, keyed as
 * the id is (two secrets stay two requests). Only a document where redaction met an id is read
 * again (credential.ts, awsIdSeen), so one without pays nothing.
 *
 * Node only: a page keys its requests without it (./aws-pairs.browser.ts), as it does without
 * the pair rule in one string (credential.browser.ts).
 */
import { awsSecretsIn } from './aws-secret.ts';
import { awsIdSeen, searchedJsonText } from './credential.ts';

/** A secret found beside its id in a document: as written in its string, and the secret itself. */
export interface PairedSecret {
  text: string;
  value: string;
}

/** The characters of a secret's run (./aws-secret.ts): a match beside one is part of a longer run, no secret. */
const inRun = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2f || c === 0x2b;

/** A document's JSON text (bytes, a value JSON has no form for, as null); '' for one it cannot write (a cycle). */
function jsonText(doc: unknown): string {
  try {
    return JSON.stringify(doc, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : ArrayBuffer.isView(x) || x instanceof ArrayBuffer ? null : x)) ?? '';
  } catch {
    return '';
  }
}

/**
 * The AWS secret access keys of a document (a parsed JSON value) that stand a short way from an
 * access key id in its JSON text, each once, as written in their strings.
 *
 * @example
 * pairedSecretsIn({ a: 'AKIAIOSFODNN7EXAMPLE', b: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' })
 * // [{ text: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', value: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }]
 */
export function pairedSecretsIn(doc: unknown): PairedSecret[] {
  const s = jsonText(doc);
  return s.indexOf('AKIA') < 0 && s.indexOf('ASIA') < 0 ? [] : pairedIn(s);
}

/** `s` with each of the secrets replaced by `mask` of it wherever it stands alone (not inside a longer run of its alphabet); the same string when it holds none. */
function maskPaired(s: string, paired: readonly PairedSecret[], mask: (v: string) => string): string {
  for (const p of paired) {
    for (let i = s.indexOf(p.text); i >= 0; i = s.indexOf(p.text, i + 1)) {
      const end = i + p.text.length;
      if (inRun(s.charCodeAt(i - 1)) || inRun(s.charCodeAt(end))) continue;
      const m = mask(p.value);
      s = s.slice(0, i) + m + s.slice(end);
      i += m.length - 1;
    }
  }
  return s;
}

/** Past this nesting a document's strings are left as they are (no API's bodies come near). */
const MAX_DEPTH = 1000;

/** A redacted document with the paired secrets masked in its strings and member names (copied where it changes). */
function masked(v: unknown, paired: readonly PairedSecret[], mask: (v: string) => string, depth: number): unknown {
  if (typeof v === 'string') return v.length < 40 ? v : maskPaired(v, paired, mask);
  if (v === null || typeof v !== 'object' || depth > MAX_DEPTH) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    v.forEach((x, i) => {
      const y = masked(x, paired, mask, depth + 1);
      if (y !== x) (out ??= v.slice())[i] = y;
    });
    return out ?? v;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  let changed = false;
  const entries = keys.map((k): [string, unknown] => {
    const n = masked(k, paired, mask, depth) as string;
    const y = masked(obj[k], paired, mask, depth + 1);
    if (n !== k || y !== obj[k]) changed = true;
    return [n, y];
  });
  if (!changed) return v;
  const out: Record<string, unknown> = {};
  const has = (o: object, n: string): boolean => Object.prototype.hasOwnProperty.call(o, n);
  entries.forEach(([n, y], i) => {
    // A masked name another member holds already gets `#2`, `#3`, ... after it: two members
    // made one would drop a value, and make two requests one.
    let name = n;
    for (let j = 2; name !== keys[i] && (has(out, name) || has(obj, name)); j++) name = `${n}#${j}`;
    out[name] = y;
  });
  return out;
}

/**
 * `out`, the redaction of the document `doc`, with the AWS secret access keys that stand beside
 * an id in another of its strings masked too (see the top); `out` itself when redaction met no
 * id in it, or none has such a secret.
 *
 * @example
 * pairsMasked(redacted, doc, mask) // redacted, `wJalr…` in its second message masked as well
 */
export function pairsMasked<T>(out: T, doc: unknown, mask: (v: string) => string): T {
  const seen = awsIdSeen();
  if (!seen || out === doc) return out;
  const paired = pairedSecretsIn(doc);
  return paired.length === 0 ? out : (masked(out, paired, mask, 0) as T);
}

/** A form's text (`name=value&…`, `+` a space) decoded; a piece that does not decode as it is. */
function decodedForm(text: string): string {
  return text
    .split('&')
    .map((p) => formDecoded(p) ?? p)
    .join('&');
}

/** A form's piece decoded (`+` a space), or undefined for a malformed escape. */
function formDecoded(p: string): string | undefined {
  try {
    return decodeURIComponent(p.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * A form body redacted a field at a time (`masked`), with the AWS secret access keys masked that
 * stand beside an id in another field of `text`, the form as sent (`id=AKIA…&secret=wJalr…`, or
 * `note=my+secret+is+wJalr…`): searched in the form decoded, as the API reads it, and each field
 * that holds one written again with its mask (percent-encoded, as a secret field's mask is).
 * `masked` itself when the form has no id.
 *
 * @example
 * formPairsMasked('id=%5BREDACTED%3A…%5D&s=wJalr…', 'id=AKIA…&s=wJalr…', mask) // 'id=%5BREDACTED%3A…%5D&s=%5BREDACTED%3A…%5D'
 */
export function formPairsMasked(masked: string, text: string, mask: (v: string) => string): string {
  if (text.indexOf('AKIA') < 0 && text.indexOf('ASIA') < 0) return masked;
  const paired = pairedIn(decodedForm(text));
  if (paired.length === 0) return masked;
  return masked
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const value = eq < 0 ? undefined : formDecoded(pair.slice(eq + 1));
      if (value === undefined) return pair;
      const m = maskPaired(value, paired, mask);
      return m === value ? pair : `${pair.slice(0, eq + 1)}${encodeURIComponent(m)}`;
    })
    .join('&');
}

/** The secrets beside their ids in a text, each once. */
function pairedIn(s: string): PairedSecret[] {
  const out: PairedSecret[] = [];
  for (const x of awsSecretsIn(s, searchedJsonText(s, 0))) if (!out.some((y) => y.text === x.text)) out.push({ text: x.text, value: x.value });
  return out;
}

/**
 * A text redacted in pieces (`masked`: a multipart body's parts, one at a time), with the AWS
 * secret access keys masked that stand beside an id in another piece of `text`, the whole as
 * sent (an id in one part, its secret in the next); `masked` itself when `text` has no id.
 *
 * @example
 * textPairsMasked(normalized, body, mask) // normalized, `wJalr…` in the part after the id's masked
 */
export function textPairsMasked(masked: string, text: string, mask: (v: string) => string): string {
  if (text.indexOf('AKIA') < 0 && text.indexOf('ASIA') < 0) return masked;
  const paired = pairedIn(text);
  return paired.length === 0 ? masked : maskPaired(masked, paired, mask);
}

/** Whether a header's value holds an access key id. */
const idIn = (x: unknown): boolean => typeof x === 'string' && (x.indexOf('AKIA') >= 0 || x.indexOf('ASIA') >= 0);

/**
 * Request headers redacted (`out`, from `h` as sent), with the AWS secret access keys masked that
 * a header of a plain name holds beside an id in another (`x-aws-access-key: AKIA…`,
 * `x-aws-sak: wJalr…`): a header is redacted alone, so the secret was stored as sent. Read as the
 * headers' lines (`name: value`), as a credentials file's two lines are; masked keyed, as the
 * id's secret is elsewhere. `out` itself when no header holds an id (one search of each value).
 *
 * @example
 * headerPairsMasked(redacted, { 'x-aws-access-key': 'AKIA…', 'x-aws-sak': 'wJalr…' }, mask) // redacted, `x-aws-sak` masked
 */
export function headerPairsMasked<H extends Record<string, unknown>>(out: H, h: H, mask: (v: string) => string): H {
  const names = Object.keys(h);
  if (!names.some((k) => idIn(h[k]) || (Array.isArray(h[k]) && (h[k] as unknown[]).some(idIn)))) return out;
  // Each other header's line read just after the ids' lines: a secret stands within a short way
  // of its id, and other headers (a long user agent) between them must not part them.
  const lines = names.flatMap((k) => (Array.isArray(h[k]) ? (h[k] as unknown[]) : [h[k]]).filter((x): x is string => typeof x === 'string').map((x) => `${k}: ${x}`));
  const ids = lines.filter(idIn).join('\n');
  const paired = lines.flatMap((l) => (idIn(l) || l.length > 256 ? [] : pairedIn(`${ids}\n${l}`)));
  if (paired.length === 0) return out;
  const res: Record<string, unknown> = { ...out };
  for (const k of names) {
    const x = res[k];
    if (typeof x === 'string') res[k] = maskPaired(x, paired, mask);
    else if (Array.isArray(x)) res[k] = x.map((y: unknown) => (typeof y === 'string' ? maskPaired(y, paired, mask) : y));
  }
  return res as H;
}
