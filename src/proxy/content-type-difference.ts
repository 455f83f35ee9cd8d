/**
 * A miss whose only change is the request's content type. A JSON body is keyed as an LLM or JSON
 * request when its content type says JSON (or it has none), and as bytes otherwise: a page's
 * `fetch(url, { body: JSON.stringify(x) })` goes out as `text/plain;charset=UTF-8`, and the same
 * body sent with `application/json` has another key. The miss used to say that no recording has
 * the body, or that the recording "has another request", when a recording held these very bytes.
 */
import { canonicalize } from '../core/index.ts';
import type { Redactor } from '../store/redact.ts';
import { headerValue } from './http-difference.ts';
import { isBytes } from '../bytes.ts';

/** A recording's request as the tape keeps it (only what the comparison reads). */
interface StoredRequest {
  headers: Record<string, string | string[]>;
  body?: unknown;
}

const utf8 = new TextDecoder('utf-8');

/** A body's JSON as canonical text, secret members masked as they were stored; undefined when it is no JSON. */
function canonicalJson(body: unknown, r: Redactor, parsed: boolean): string | undefined {
  let v = body;
  if (!parsed) {
    const text = isBytes(body) ? utf8.decode(body) : typeof body === 'string' ? body : undefined;
    if (text === undefined || !/^\s*[[{]/.test(text)) return undefined;
    try {
      v = r.value(JSON.parse(text));
    } catch {
      return undefined;
    }
  }
  try {
    return utf8.decode(canonicalize(v));
  } catch {
    return undefined;
  }
}

const shown = (ct: string | undefined) => (ct === undefined ? 'no content-type' : `content-type ${JSON.stringify(ct.length > 40 ? `${ct.slice(0, 39)}…` : ct)}`);

/**
 * The difference when a recording of the route holds this request's JSON body (compared as
 * canonical JSON, masked as stored) but was sent with a content type that keys it the other way
 * (JSON against text); undefined otherwise.
 *
 * @example
 * contentTypeDifference(utf8.encode('{"a":1}'), { 'content-type': 'text/plain' }, false, [{ headers: { 'content-type': 'application/json' }, body: { a: 1 } }], redactor())
 * // 'the body is a recording\'s, but sent with content-type "text/plain", recorded with content-type "application/json"'
 */
export function contentTypeDifference(bytes: Uint8Array, headers: Record<string, string | string[] | undefined>, askedAsJson: boolean, recorded: Iterable<StoredRequest>, r: Redactor): string | undefined {
  let mine: string | undefined | null = null;
  for (const rec of recorded) {
    const theirs = headerValue(rec.headers, 'content-type');
    // Stored JSON bodies are parsed values; text bodies are strings, other bodies bytes.
    const recAsJson = rec.body !== undefined && !isBytes(rec.body) && typeof rec.body !== 'string';
    if (recAsJson === askedAsJson) continue;
    if (mine === null) mine = canonicalJson(bytes, r, false);
    if (mine === undefined) return undefined;
    if (canonicalJson(rec.body, r, recAsJson) === mine) return `the body is a recording's, but sent with ${shown(headerValue(headers, 'content-type'))}, recorded with ${shown(theirs)}`;
  }
  return undefined;
}

/** The fix for such a miss: the content type the recording was made with. */
export const contentTypeFix = (fix: string): string => `send the content type the recording was made with (it decides how the body is keyed), or ${fix}`;
