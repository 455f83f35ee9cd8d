/**
 * What a request whose body is not JSON (text, bytes, a form, an upload) changes against the
 * closest recording of its route, for its miss. The miss used to say only "none of the N
 * recordings has this body", also when a recording had exactly this body and the request missed
 * for a header listed in `matchHeaders`, or because the tape was recorded with other keying
 * options (`matchHeaders`, `bodyMatch`): the user was sent looking for a change in a body that
 * had none.
 *
 * Both sides are compared as they are keyed and stored (normalized and redacted,
 * src/store/http-body.ts), so a difference named here is one that made the key differ.
 */
import { usedUpFix, type MissEntry } from '../match/diagnose.ts';
import type { Redactor } from '../store/redact.ts';
import { isBytes, sameBytes } from '../bytes.ts';
import { uploadDifference } from './upload-difference.ts';

/** A recording's request as the tape keeps it (only what the comparison reads). */
export interface RecordedHttpRequest {
  headers: Record<string, string | string[]>;
  body?: unknown;
}

/** What the request that missed was keyed from. */
export interface AskedHttpRequest {
  /** The body as keyed (normalized and redacted). */
  bytes: Uint8Array;
  /** Its content type, as sent. */
  contentType: string;
  /** The `matchHeaders` (lower-case) with the values this request sent, redacted as they would be stored. */
  matchHeaders: Record<string, string | undefined>;
  /** `'route'` when the body takes no part in the key. */
  bodyMatch?: string;
}

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder('utf-8', { fatal: true });

function bytesOf(body: unknown): Uint8Array | undefined {
  if (isBytes(body)) return body;
  if (typeof body === 'string') return utf8.encode(body);
  return undefined;
}

/** A header's value, its name matched in any case (hand-written recordings may capitalize it). */
export function headerValue(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v.join(', ') : v;
}

const count = (n: number, what: string) => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;
// Short: a miss's first line holds at most 140 characters (HEADLINE_MAX), with the sentence around.
const quoted = (s: string | undefined) => (s === undefined ? 'none' : JSON.stringify(s.length > 40 ? `${s.slice(0, 39)}…` : s));

/** Text a person can read in a message: valid UTF-8 without control characters other than white space. */
function readable(b: Uint8Array): string | undefined {
  let s: string;
  try {
    s = utf8Text.decode(b);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s) ? undefined : s;
}

/** A form body's fields, in order (undefined when the text is no form). */
function formFields(text: string): [string, string][] | undefined {
  if (text === '') return [];
  const out: [string, string][] = [];
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    try {
      out.push(eq < 0 ? [decode(pair), ''] : [decode(pair.slice(0, eq)), decode(pair.slice(eq + 1))]);
    } catch {
      return undefined;
    }
  }
  return out;
}

/** The differences of a form from a recorded one, first one first. */
function formDifferences(asked: [string, string][], rec: [string, string][]): string[] {
  const out: string[] = [];
  const names = [...new Set([...asked.map(([k]) => k), ...rec.map(([k]) => k)])];
  for (const name of names) {
    const a = asked.filter(([k]) => k === name).map(([, v]) => v);
    const r = rec.filter(([k]) => k === name).map(([, v]) => v);
    if (r.length === 0) out.push(`field ${quoted(name)} is not in the closest recording`);
    else if (a.length === 0) out.push(`field ${quoted(name)} of the closest recording is missing`);
    else if (a.join('\u0000') !== r.join('\u0000')) out.push(`field ${quoted(name)} is ${quoted(a.join(', '))}, the closest recording's ${quoted(r.join(', '))}`);
  }
  if (out.length === 0) out.push('the fields are in another order or spelling than in the closest recording');
  return out;
}

function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Where a text or binary body parts from the closest recording (the longest shared start). */
function bytesDifference(asked: Uint8Array, bodies: Uint8Array[]): string | undefined {
  let best: Uint8Array | undefined;
  let bestAt = -1;
  for (const b of bodies) {
    const at = commonPrefix(asked, b);
    if (at > bestAt || (at === bestAt && best !== undefined && Math.abs(b.length - asked.length) < Math.abs(best.length - asked.length))) [best, bestAt] = [b, at];
  }
  if (best === undefined) return undefined;
  const sizes = asked.length === best.length ? `both ${count(best.length, 'byte')}` : `${count(asked.length, 'byte')}, the recording's ${count(best.length, 'byte')}`;
  const mine = readable(asked);
  const theirs = readable(best);
  if (mine !== undefined && theirs !== undefined) {
    // Back to the start of the character the bodies part in: the shared start then decodes
    // alike on both sides, and its length is where the two texts part.
    let at = bestAt;
    while (at > 0 && (asked[at]! & 0xc0) === 0x80) at--;
    const c = (readable(asked.subarray(0, at)) ?? '').length;
    const excerpt = (s: string) => (c >= s.length ? 'its end' : JSON.stringify(`${c > 12 ? '…' : ''}${s.slice(Math.max(0, c - 12), c + 12)}${c + 12 < s.length ? '…' : ''}`));
    return `the body differs from the closest recording's at character ${(c + 1).toLocaleString('en-US')}: ${excerpt(mine)} here, ${excerpt(theirs)} there`;
  }
  if (bestAt === asked.length && bestAt === best.length) return undefined;
  return `the body differs from the closest recording's from byte ${bestAt.toLocaleString('en-US')} (${sizes})`;
}

/**
 * Why a request with a non-JSON body missed, against the recordings of its route of the same
 * kind; undefined when nothing more can be said than that no recording has the body.
 *
 * @example
 * httpDifference(
 *   { bytes: utf8.encode('hello blub'), contentType: 'text/plain', matchHeaders: {} },
 *   [{ headers: {}, body: 'hello blob' }],
 * )
 * // 'the body differs from the closest recording\'s at character 8: "hello blub" here, "hello blob" there'
 */
export function httpDifference(asked: AskedHttpRequest, recorded: Iterable<RecordedHttpRequest>): string | undefined {
  const recs = [...recorded];
  if (recs.length === 0) return undefined;
  const names = Object.keys(asked.matchHeaders);
  // A recording with this very body: the key differed by a header, or by the keying options.
  const same = asked.bodyMatch === 'route' ? recs : recs.filter((r) => sameBytes(bytesOf(r.body) ?? new Uint8Array(0), asked.bytes));
  if (same.length > 0) {
    for (const name of names) {
      const mine = asked.matchHeaders[name];
      const theirs = headerValue(same[0]!.headers, name);
      if (mine !== theirs) return `header ${quoted(name)} (matchHeaders) is ${quoted(mine)}, ${asked.bodyMatch === 'route' ? 'the route\'s recording' : 'the recording with this body'} has ${quoted(theirs)}`;
    }
    return `${asked.bodyMatch === 'route' ? 'with bodyMatch \'route\', a recording of the route' : 'a recording with this body'} was keyed with other matchHeaders or bodyMatch: replay with its options`;
  }
  const multipart = uploadDifference(asked.bytes, recs.map((r) => r.body as Uint8Array | string | undefined));
  if (multipart !== undefined) return multipart;
  const bodies = recs.map((r) => bytesOf(r.body) ?? new Uint8Array(0));
  if (/x-www-form-urlencoded/i.test(asked.contentType)) {
    // A body that is no text is no form either.
    const formOf = (b: Uint8Array) => {
      const text = readable(b);
      return text === undefined ? undefined : formFields(text);
    };
    const mine = formOf(asked.bytes);
    let best: string[] | undefined;
    for (const b of bodies) {
      const theirs = formOf(b);
      if (mine === undefined || theirs === undefined) continue;
      const d = formDifferences(mine, theirs);
      if (best === undefined || d.length < best.length) best = d;
    }
    if (best !== undefined) return best.length === 1 ? best[0] : `${best[0]} (and ${count(best.length - 1, 'more difference')})`;
  }
  return bytesDifference(asked.bytes, bodies);
}

/** A miss's difference, with its fix and kind where they are not the route's general ones. */
export interface HttpMissDetail {
  text: string;
  fix?: string;
  kind?: 'used-up';
}

/** The request that missed, as the deck has it. */
export interface HttpMiss {
  /** Its key (route, matchHeaders and body). */
  key: string;
  /** The body as keyed. */
  bytes: Uint8Array;
  headers: Record<string, string | string[] | undefined>;
  /** The deck's `matchHeaders`, lower-case. */
  matchHeaders: readonly string[];
  bodyMatch: string | undefined;
  redactor: Redactor;
  entry: MissEntry;
}

/**
 * The miss of a request whose own recordings were each replayed already (only strictOrder stops
 * replaying the last one), worded as an LLM request's; undefined when the key has none.
 *
 * @example
 * usedUpDetail(key, [{ key }], { kind: 'fetch' })
 * // { text: 'the one recording of this request is already used', fix: "re-record: …, or drop strictOrder: true", kind: 'used-up' }
 */
export function usedUpDetail(key: string, recorded: Iterable<{ key: string }>, entry: MissEntry): HttpMissDetail | undefined {
  let same = 0;
  for (const rec of recorded) if (rec.key === key) same++;
  if (same === 0) return undefined;
  return { text: same === 1 ? 'the one recording of this request is already used' : `the ${same} recordings of this request are already used`, fix: usedUpFix(entry), kind: 'used-up' };
}

/**
 * What a deck says of a miss on a request whose body is not JSON, against its route's
 * recordings of that kind (with their keys); undefined for the route's general sentence.
 *
 * @example
 * httpMissDetail({ key, bytes, headers, matchHeaders: [], bodyMatch: undefined, redactor: redactor(), entry: { kind: 'fetch' } }, recordings)
 * // { text: 'the body differs from the closest recording\'s from byte 123 (both 300 bytes)' }
 */
export function httpMissDetail(asked: HttpMiss, recorded: Iterable<{ key: string; request: unknown }>): HttpMissDetail | undefined {
  const recs = [...recorded];
  const used = usedUpDetail(asked.key, recs, asked.entry);
  if (used) return used;
  const values: Record<string, string | undefined> = {};
  for (const h of asked.matchHeaders) values[h] = headerValue(asked.headers, h);
  // As the recordings store them: a secret header's value masked.
  const redacted = asked.redactor.headers(values);
  const stored: Record<string, string | undefined> = {};
  for (const h of asked.matchHeaders) stored[h] = redacted[h];
  const text = httpDifference(
    { bytes: asked.bytes, contentType: headerValue(asked.headers, 'content-type') ?? '', matchHeaders: stored, ...(asked.bodyMatch !== undefined ? { bodyMatch: asked.bodyMatch } : {}) },
    recs.map((rec) => rec.request as RecordedHttpRequest),
  );
  return text === undefined ? undefined : { text };
}
