/**
 * Non-JSON request bodies as the proxy and createFetch key and store them: decoded from their
 * Content-Encoding, secrets masked, multipart boundaries normalized. docs/proxy.md ("Non-JSON
 * bodies") is the reference.
 *
 * Why a body is keyed by its bytes: two uploads of different files to the same route are
 * different requests, and answering one with the other's transcript is a wrong answer that no
 * test would notice. Matching by route alone is an explicit option (`bodyMatch: 'route'`).
 */
import type * as Zlib from 'node:zlib';
import { uploadedFileSecrets } from './upload-secrets.ts';
import { formPairsMasked, textPairsMasked } from './aws-pairs.ts';
import { TapedeckError } from '../errors.ts';
// The latin1 conversions that fall back to plain loops where there is no Buffer: a page keys
// non-JSON bodies with this file too (llm-tapedeck/browser).
import { latin1Bytes, latin1Text, type Redactor } from './redact.ts';
import { grantCode } from './secret-words.ts';
import { storedText } from './stored-text.ts';

// Looked up, not imported: the replay engine also runs in browsers (llm-tapedeck/browser), where
// a compressed request body cannot be decoded and is answered as undecodable (400).
const zlib = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:zlib') as typeof Zlib | undefined;

type Headers = Record<string, string | string[] | undefined>;

function header(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The body with its Content-Encoding undone (gzip, x-gzip, deflate, br, in the order they were
 * applied; `identity` is nothing). The decoded size is capped at `max` bytes, so a small
 * compressed body cannot expand past the body limit. An unknown coding or bytes that do not
 * decode are a 400 (E_REQUEST_ENCODING).
 *
 * @example
 * decodeContentEncoding({ 'content-encoding': 'gzip' }, gzipSync('{"a":1}'), 1 << 20) // bytes of {"a":1}
 */
export function decodeContentEncoding(headers: Headers, body: Uint8Array, max: number): Uint8Array {
  const coding = header(headers, 'content-encoding');
  if (coding === undefined || body.length === 0) return body;
  const codings = coding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let out = body;
  // Codings are listed in the order they were applied: undo them last to first.
  for (const c of codings.reverse()) {
    const opts = { maxOutputLength: max };
    try {
      if (c === 'gzip' || c === 'x-gzip') out = zlib!.gunzipSync(out, opts);
      else if (c === 'br') out = zlib!.brotliDecompressSync(out, opts);
      else if (c === 'deflate') {
        // RFC 9110 deflate is zlib-wrapped; some clients send raw deflate: accept both.
        try {
          out = zlib!.inflateSync(out, opts);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw e;
          out = zlib!.inflateRawSync(out, opts);
        }
      } else {
        throw new TapedeckError('E_REQUEST_ENCODING', `Request Content-Encoding ${JSON.stringify(c)} is not supported.`, {
          contentEncoding: coding,
          hint: 'Send the body uncompressed, or with gzip, deflate or br.',
        });
      }
    } catch (e) {
      if (e instanceof TapedeckError) throw e;
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || (e as Error).message?.includes('maxOutputLength')) {
        throw new TapedeckError('E_BODY_TOO_LARGE', `Request body decodes (${c}) to more than the limit of ${max} bytes.`, {
          limit: max,
          hint: 'Raise the limit with --max-body (maxBodyBytes), or send a smaller request.',
        });
      }
      throw new TapedeckError('E_REQUEST_ENCODING', `Request body is not valid ${c} (Content-Encoding: ${coding}): ${(e as Error).message}.`, {
        contentEncoding: coding,
        hint: 'Check the client that compresses the body, or send it uncompressed.',
      });
    }
  }
  return out;
}

/** The `boundary` parameter of a multipart content type, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^\s*multipart\//i.test(contentType)) return undefined;
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/**
 * The boundary every stored and keyed multipart body is rewritten to. Clients pick a random
 * boundary per request (the same file uploaded twice has different bytes); the parts are what
 * the request says, so the key must not depend on it.
 */
export const NORMALIZED_BOUNDARY = 'tapedeck-normalized-boundary';

export interface Part {
  /** Header block as sent (latin1), without the blank line. */
  head: string;
  body: string;
}

/** Splits a multipart body (latin1 text) into parts; undefined when it is not well formed. */
export function parts(text: string, boundary: string): Part[] | undefined {
  const delim = `--${boundary}`;
  let at = text.indexOf(delim);
  if (at < 0) return undefined;
  const out: Part[] = [];
  for (;;) {
    at += delim.length;
    if (text.startsWith('--', at)) return out; // closing delimiter
    if (text.startsWith('\r\n', at)) at += 2;
    else return undefined;
    const next = text.indexOf(`\r\n${delim}`, at);
    if (next < 0) return undefined;
    const whole = text.slice(at, next);
    const sep = whole.indexOf('\r\n\r\n');
    out.push(sep < 0 ? { head: whole, body: '' } : { head: whole.slice(0, sep), body: whole.slice(sep + 4) });
    at = next + 2;
  }
}

/** The field name of a part, from its Content-Disposition. */
export function partName(head: string): string | undefined {
  const disp = /^content-disposition:(.*)$/im.exec(head)?.[1] ?? '';
  const name = /(?:^|;)\s*name\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(disp);
  return name ? (name[1] ?? name[2]) : undefined;
}

/** A multipart body rebuilt with the normalized boundary, secret fields and credentials masked. */
function normalizeMultipart(text: string, boundary: string, r: Redactor): string | undefined {
  const ps = parts(text, boundary);
  if (!ps) return undefined;
  const done = ps.map((p) => {
    const name = partName(p.head);
    // Files are scanned too: an ASCII key inside an uploaded file is still a key, and so is a
    // secret-named variable's value in a `.env` file (`DB_PASSWORD=…`), which has no key format.
    const body = name !== undefined && r.isSecretField(name) && p.body !== '' ? r.mask(p.body) : r.text(uploadedFileSecrets(p.body, r));
    return `${r.text(p.head)}\r\n\r\n${body}`;
  });
  // A part holding the boundary would read back as other parts (two uploads, one key): then one
  // no part holds, so the text names its parts alone; readers take it from the first line.
  let b = NORMALIZED_BOUNDARY;
  while (done.some((d) => d.includes(b))) b += '-';
  return `${done.map((d) => `--${b}\r\n${d}\r\n`).join('')}--${b}--\r\n`;
}

/** A form body with the values of secret fields masked (order and encoding of the rest kept). */
/** How a form's text starts: a field name and its `=` (also how `tapedeck scan` tells one). */
export const FORM_START = /^[\w.%[\]-]+=/;

function redactForm(text: string, r: Redactor): string {
  const fields = text
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the raw name
      }
      let value = pair.slice(eq + 1);
      let decoded: string | undefined;
      try {
        decoded = decodeURIComponent(value.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: judge the raw value
      }
      // A secret's value is masked as sent (the keys of the tapes made so far), unless it is a
      // mask already, percent-encoded (a HAR export imported again): masking it again would key
      // it under a mask of the mask, which no request ever sends.
      if (r.isSecretField(name) || grantCode(name, text)) return `${pair.slice(0, eq)}=${encodeURIComponent(r.mask(decoded !== undefined && r.mask(decoded) === decoded ? decoded : value))}`;
      if (decoded === undefined) value = r.text(value);
      else {
        const masked = r.text(decoded);
        if (masked !== decoded) value = encodeURIComponent(masked);
      }
      return `${pair.slice(0, eq)}=${value}`;
    })
    .join('&');
  // An AWS secret in another field than its id's (./aws-pairs.ts): no one field shows the pair.
  return formPairsMasked(fields, text, r.mask);
}

/**
 * The first byte of a body after JSON's white space (space, tab, CR, LF), or undefined for a
 * body of white space alone: `{` or `[` tells JSON text where a label does not.
 *
 * @example
 * firstNonSpace(Buffer.from(' {"a":1}')) // 0x7b
 */
export function firstNonSpace(body: Uint8Array): number | undefined {
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  return body[i];
}

/**
 * A body's JSON parse when it is a JSON object or array (UTF-8), else undefined. A form's text
 * (`a=1&b=2`) never parses as one, so real forms are keyed and stored as they were.
 *
 * @example
 * jsonDocument(Buffer.from('{"model":"m"}')) // { value: { model: 'm' } }
 * jsonDocument(Buffer.from('model=m'))        // undefined
 */
export function jsonDocument(body: Uint8Array): { value: unknown } | undefined {
  const first = firstNonSpace(body);
  if (first !== 0x7b && first !== 0x5b) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    return value !== null && typeof value === 'object' ? { value } : undefined;
  } catch {
    return undefined;
  }
}

/** What the engine keys and stores for a non-JSON body. */
export interface NormalizedBody {
  /** Bytes that take part in the request key: normalized and redacted. */
  bytes: Uint8Array;
  /** The body as stored in the record: text for textual types (when UTF-8), bytes for the rest. */
  stored: string | Uint8Array;
}

function isTextual(contentType: string): boolean {
  return /^text\/|x-www-form-urlencoded|xml|charset=/i.test(contentType);
}

/**
 * The key bytes and stored form of a non-JSON body (already decoded from its Content-Encoding):
 * - multipart: parts rebuilt with {@link NORMALIZED_BOUNDARY}, a field whose name is a secret
 *   masked, credential-looking text masked in every part; part headers and contents are kept
 *   otherwise, so a different file gives a different key and a new boundary does not;
 * - a form (`application/x-www-form-urlencoded`, or text that starts as one does): secret
 *   fields' values masked; a JSON object or array labelled as a form is masked as JSON is
 *   (secret members at any depth, credential-looking strings, names included);
 * - anything else: credential-looking text masked (in binary bodies too: an ASCII key inside a
 *   file is still a key).
 * A multipart body that does not parse is keyed and stored as its (masked) bytes.
 *
 * @example
 * normalizeBody({ 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from('client_secret=s3&a=1'), redactor()).stored
 * // 'client_secret=%5BREDACTED%5D&a=1' (with a store's salt: a keyed mask of the value, %5BREDACTED%3A…%5D)
 */
export function normalizeBody(headers: Headers, body: Uint8Array, r: Redactor): NormalizedBody {
  const ct = header(headers, 'content-type') ?? '';
  const text = latin1Text(body);
  const boundary = multipartBoundary(ct);
  if (boundary !== undefined) {
    const n = normalizeMultipart(text, boundary, r);
    if (n !== undefined) {
      // An AWS secret in the part after its id's (./aws-pairs.ts): no one part shows the pair.
      const bytes = latin1Bytes(textPairsMasked(n, text, r.mask));
      return { bytes, stored: bytes };
    }
  }
  if (/x-www-form-urlencoded/i.test(ct)) {
    // JSON sent with a form's label (curl -d, axios given a string, a fetch so labelled): the
    // API reads JSON, so its secrets are JSON's, masked as a JSON body's are. Read as a form it
    // was one field named after the whole text, and nothing in it was masked.
    const json = r.keepSecrets ? undefined : jsonDocument(body);
    if (json !== undefined) {
      const bytes = r.bytes(body, 'application/json', { parsed: json });
      return { bytes, stored: storedText(bytes) };
    }
    const masked = r.keepSecrets ? text : redactForm(text, r);
    const bytes = latin1Bytes(masked);
    return { bytes, stored: storedText(bytes) };
  }
  // A form sent without its content type (nock keeps none; a client may label it text/plain)
  // still names its secret fields: they are masked as a form's are.
  // Google's resumable upload sends a file's bytes alone: masked as a multipart file part is.
  const file = uploadedFileSecrets(text, r, headers);
  const masked = r.text(!r.keepSecrets && FORM_START.test(file) ? redactForm(file, r) : file);
  const bytes = masked === text ? body : latin1Bytes(masked);
  return { bytes, stored: isTextual(ct) ? storedText(bytes) : new Uint8Array(bytes) };
}
