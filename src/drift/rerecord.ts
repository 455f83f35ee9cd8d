// Re-recording on purpose: every request of a tape (or those a filter picks) sent again to the
// live API through a recording fetch (createFetch in record mode, handed in by the command line,
// so this layer stays below the proxy), within a budget, a few at a time, with 429s retried.
// Each request goes to the host its recording names (its `origin`, under its `upstreamPath` when
// the proxy forwarded it to an upstream with a path prefix), or to the upstream given for all of
// them; one that stores no origin (an older or hand-written recording) goes to the upstream given
// for those alone, so a tape that mixes them with several hosts' recordings is done in one run.
// The recording fetch stores where it went on the new record, so a tape of two hosts is
// re-recorded as two hosts' recordings. The original tape is only read; the new answers go to
// another tape, made with the original's redaction salt, which also gets every record not sent
// again, as it was (placeRerecorded). A request holding a secret the tape keeps masked is not
// sent (heldMasks): the API would be asked with the mask's text, and its answer filed for the
// real request.

import { createHash } from 'node:crypto';
import { TapedeckError } from '../errors.ts';
import { readAnswer, sigV4ServicesOf } from '../providers/index.ts';
import { multipartBoundary } from '../store/http-body.ts';
import { isMask } from '../store/redact.ts';
import { holdsKeyedMaskText, holdsMask } from './masks.ts';
import { queryDecode } from '../store/query-pairs.ts';
import { isHttpRecord, type HttpRecord } from '../store/records.ts';
import { inRecordOrder } from '../store/record-order.ts';
import { isHandWrittenRun } from '../store/hand-written-run.ts';
import { upstreamPrefix, withoutTrailingSlashes } from '../store/upstream-prefix.ts';
import { assembleRecorded, liveAnswerVerdict } from './answer.ts';
import { failureReason } from './failure-reason.ts';
import { priceOf, type Price } from './prices.ts';
import { callStats, usageOf } from './stats.ts';
import { isBytes } from '../bytes.ts';

/** A fetch that records what it fetches, and writes its records at close(). */
export interface Recorder {
  /**
   * Sends the request and records it. `upstreamPath`, when given, is the part of the URL's path
   * that is the upstream's prefix: recorded beside the request's path, as the proxy records a
   * request it forwards under a prefix (a plain fetch ignores it and records the whole path).
   */
  fetch(input: string, init: RequestInit, upstreamPath?: string): Promise<Response>;
  close(): Promise<void>;
}

export interface RerecordOptions {
  /**
   * Base URL every request is sent to, e.g. https://api.openai.com (the recorded path is
   * appended). Without it each request goes to the origin its recording stores, under the path
   * prefix it stores (`upstreamPath`) if any. Wins over `hostlessUpstream` (the command line
   * refuses both).
   */
  upstream?: string;
  /**
   * Base URL (a path prefix included) for the requests of recordings that store no origin only;
   * every other one goes to its own host, as without `upstream`.
   */
  hostlessUpstream?: string;
  recorder: Recorder;
  prices: Readonly<Record<string, Price>>;
  /** Stop before a call whose estimated cost would take the spending past this (USD). */
  budget?: number;
  /** Calls in flight at once (default 4). */
  concurrency?: number;
  /** Retries of a 429 (or 529 overloaded) answer (default 5). */
  retries?: number;
  /** Longest wait between retries, ms (default 60 s). */
  maxBackoffMs?: number;
  /**
   * The value to send for a header the tape holds redacted (lowercase name), by route and by
   * where the request goes (see destinationOf); none drops it. `named` is true when the caller
   * named where this request goes (`upstream`, or `hostlessUpstream` for a recording that stores
   * no origin; see upstreamFor): a key may follow a request there, and only there.
   */
  credentials?: (route: string, header: string, to: string, named: boolean) => string | undefined;
  /**
   * Signs a request with AWS SigV4 (the caller's credentials): used for the recordings that were
   * signed so ({@link sigV4Signed}: Bedrock through the AWS SDK), whose signature the tape holds
   * masked and which would be stale anyway (it covers the date). Without it they go unsigned
   * (the command line refuses them first).
   */
  sign?: AwsSigner;
  /** The AWS region to sign for when the destination's host names none (a local stand-in); default us-east-1. */
  region?: string;
  /** Called after each call ends (done of total, spent so far). */
  onProgress?: (done: number, total: number, spent: number) => void;
}

/**
 * Signs a request with AWS SigV4 for the host of its URL and the given scope; returns the
 * headers to send (the request's, with `authorization`, `x-amz-date`, `x-amz-content-sha256` and
 * `x-amz-security-token` set).
 */
export type AwsSigner = (req: { method: string; url: string; headers: Record<string, string>; body: Uint8Array }, scope: { region: string; service: string }) => Record<string, string | string[]>;

/** The headers of a SigV4 signature, masked on a tape and made again by a signer. */
export const SIGV4_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token']);

/**
 * Whether a recorded request was signed with AWS SigV4 (it carried an `X-Amz-Date` beside its
 * `Authorization`), so that sending it again needs a new signature rather than a key.
 *
 * @example
 * sigV4Signed(bedrockConverseRecord) // true
 * sigV4Signed(openAiChatRecord)      // false
 */
export function sigV4Signed(r: HttpRecord): boolean {
  const names = Object.keys(r.request.headers).map((k) => k.toLowerCase());
  return names.includes('x-amz-date') && names.includes('authorization');
}

/** The region an AWS host names (`bedrock-runtime.us-west-2.amazonaws.com`), else undefined. */
function regionOf(url: string): string | undefined {
  const host = URL.canParse(url) ? new URL(url).hostname.toLowerCase() : '';
  return /^[^.]+\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$/.exec(host)?.[1];
}

/** The request as sent, signed again with SigV4 when it was recorded signed and a signer is given. */
function signed(r: HttpRecord, url: string, init: RequestInit, opts: RerecordOptions): RequestInit {
  if (!opts.sign || !sigV4Signed(r)) return init;
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((v, k) => {
    if (!SIGV4_HEADERS.has(k)) headers[k] = v;
  });
  const b = init.body;
  const body = b === undefined || b === null ? new Uint8Array() : typeof b === 'string' ? new TextEncoder().encode(b) : new Uint8Array(b as Uint8Array);
  const service = sigV4ServicesOf({ method: r.request.method, url: r.request.url })[0] ?? 'bedrock';
  const region = regionOf(url) ?? opts.region ?? 'us-east-1';
  const out = opts.sign({ method: r.request.method, url, headers, body }, { region, service });
  return { ...init, headers: Object.entries(out).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v] as [string, string]) };
}

/** One request to send again. */
export interface Planned {
  /** Position of the record in the original tape. */
  index: number;
  record: HttpRecord;
  /** Estimated cost from the recorded usage (0 without usage or price). */
  estimate: number;
}

export interface RerecordResult {
  planned: number;
  recorded: number;
  /** Calls that got no whole answer (after retries), or a cut stream: nothing recorded for them. */
  failed: { index: number; reason: string }[];
  /** Calls not sent because the budget would have been exceeded. */
  notSent: number[];
  /** What the new answers cost, from their usage. */
  spent: number;
}

/**
 * The requests of a tape to send again: its HTTP exchange records (ReplayCache records hold no
 * HTTP request), those whose route, origin, model or body contain `only` when given (an origin:
 * one host's recordings of a tape that holds several), and only those that store no origin when
 * `hostlessOnly` (both must hold when both are given).
 *
 * `hostlessOnly` is its own switch rather than a text `only` would match (`(no host)`, `-`):
 * any text can occur in a route or a body, and one that did would pick recordings of a host
 * along with the hostless ones, then send them where the hostless ones go.
 *
 * @example
 * const plan = planRerecord(tape.records.map((r) => r.value), DEFAULT_PRICES, 'chat/completions')
 * const old = planRerecord(tape.records.map((r) => r.value), DEFAULT_PRICES, undefined, true) // the recordings that name no host
 *
 * Hand-written recordings (`tapedeck add`, addRecordings) that would be picked are not planned:
 * their places are in `handWritten`. The API cannot be asked for a 429 or a cut stream again, and
 * a record run never replaces one either; sent again, a written 429 came back a 200 in its place.
 */
export function planRerecord(records: readonly unknown[], prices: Readonly<Record<string, Price>>, only?: string, hostlessOnly = false): { plan: Planned[]; skipped: number; handWritten: number[] } {
  const plan: Planned[] = [];
  const handWritten: number[] = [];
  let skipped = 0;
  const needle = only?.toLowerCase();
  records.forEach((record, index) => {
    if (!isHttpRecord(record)) {
      if (record !== null && typeof record === 'object') skipped++;
      return;
    }
    if (hostlessOnly && typeof record.origin === 'string') return;
    if (needle) {
      const body = record.request.body as { model?: unknown } | undefined;
      const hay = `${record.route} ${record.origin ?? ''} ${typeof body?.model === 'string' ? body.model : ''} ${JSON.stringify(body ?? '')}`.toLowerCase();
      if (!hay.includes(needle)) return;
    }
    if (isHandWrittenRun(record.run)) {
      handWritten.push(index);
      return;
    }
    plan.push({ index, record, estimate: callStats(record, prices)?.cost ?? 0 });
  });
  return { plan, skipped, handWritten };
}

/**
 * The base URL the caller named for a recording's request: `upstream` for every one, else
 * `hostlessUpstream` for one that stores no origin; undefined when it goes to the host it was
 * recorded for. What it returns is the `upstream` to give {@link destinationOf} and
 * {@link upstreamPathFor}, and whether a key may follow the request (credentials' `named`).
 *
 * @example
 * upstreamFor(recordWithoutOrigin, { hostlessUpstream: 'https://api.openai.com' }) // 'https://api.openai.com'
 * upstreamFor(recordForGroq, { hostlessUpstream: 'https://api.openai.com' }) // undefined: to https://api.groq.com, its own
 * upstreamFor(recordForGroq, { upstream: 'http://127.0.0.1:8080' }) // 'http://127.0.0.1:8080'
 */
export function upstreamFor(r: HttpRecord, opts: { upstream?: string | undefined; hostlessUpstream?: string | undefined }): string | undefined {
  return opts.upstream ?? (typeof r.origin === 'string' ? undefined : opts.hostlessUpstream);
}

/**
 * Where a recording's request is sent again (its recorded path is appended): `upstream` when
 * given (every request goes there), else the origin the recording stores followed by the
 * upstream's path prefix it stores, if any; undefined for one that stores no origin (tapes
 * written before origins were stored, hand-written recordings with a path alone).
 *
 * @example
 * destinationOf(record, undefined) // 'https://api.groq.com' for a recording made for that host
 * destinationOf(record, undefined) // 'https://gw.example.com/prefix' for one the proxy made with --upstream https://gw.example.com/prefix
 * destinationOf(record, 'http://127.0.0.1:8080/') // 'http://127.0.0.1:8080'
 */
export function destinationOf(r: HttpRecord, upstream: string | undefined): string | undefined {
  if (upstream !== undefined) return withoutTrailingSlashes(upstream);
  return typeof r.origin === 'string' ? r.origin + upstreamPathFor(r, undefined) : undefined;
}

/**
 * The part of {@link destinationOf}'s URL that is an upstream's path prefix, '' for none: the
 * path of `upstream` when given, else the recording's `upstreamPath`. Only a path that starts
 * with `/` counts (a hand-edited `@other.host` must not move the request to another host).
 *
 * @example
 * upstreamPathFor(record, undefined) // '/prefix' for a recording the proxy made with --upstream https://gw.example.com/prefix
 * upstreamPathFor(record, 'https://gateway.ai.cloudflare.com/v1/acct/gw/openai/') // '/v1/acct/gw/openai'
 * upstreamPathFor(record, 'https://api.openai.com') // ''
 */
export function upstreamPathFor(r: HttpRecord, upstream: string | undefined): string {
  if (upstream !== undefined) return URL.canParse(upstream) ? upstreamPrefix(upstream) : '';
  return typeof r.upstreamPath === 'string' && r.upstreamPath.startsWith('/') ? r.upstreamPath : '';
}

// Request headers fetch sets itself, or that described the recorded hop only.
const DROP = new Set(['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'accept-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-connection']);

/**
 * A multipart Content-Type naming the boundary of the body as the tape stores it: the body was
 * rebuilt with a normalized boundary when it was recorded (src/store/http-body.ts), while the
 * recorded header still names the one the client picked, and no server reads a form whose
 * delimiters are not the boundary it is told. Any other type is as it was.
 */
function storedBoundary(contentType: string, body: Uint8Array | string): string {
  const told = multipartBoundary(contentType);
  if (told === undefined) return contentType;
  const head = typeof body === 'string' ? body.slice(0, 256) : Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 256)).toString('latin1');
  const stored = /^--([^\r\n]{1,70})\r\n/.exec(head)?.[1];
  if (stored === undefined || stored === told) return contentType;
  return contentType.replace(/(;\s*boundary\s*=\s*)(?:"[^"]*"|[^;\s]+)/i, (_, lead: string) => `${lead}${/^[\w'()+,./:=?-]+$/.test(stored) ? stored : JSON.stringify(stored)}`);
}

function requestInit(r: HttpRecord, credentials: ((route: string, header: string) => string | undefined) | undefined): RequestInit {
  const headers = new Headers();
  for (const [k, v] of Object.entries(r.request.headers)) {
    const name = k.toLowerCase();
    if (DROP.has(name)) continue;
    const value = Array.isArray(v) ? v.join(', ') : v;
    // A keyed mask is filled too (a --header value): one nothing fills was held back (heldMasks).
    if (holdsMask(value)) {
      const cred = credentials?.(r.route, name);
      if (cred !== undefined) headers.set(name, cred);
      continue;
    }
    headers.set(name, value);
  }
  const b = r.request.body;
  const type = headers.get('content-type');
  if (type !== null && b !== undefined && (isBytes(b) || typeof b === 'string')) headers.set('content-type', storedBoundary(type, b));
  let body: RequestInit['body'];
  if (isBytes(b)) body = Buffer.from(b);
  else if (typeof b === 'string') body = b;
  else if (b !== undefined) body = JSON.stringify(b);
  return { method: r.request.method, headers, ...(body !== undefined && r.request.method !== 'GET' && r.request.method !== 'HEAD' ? { body } : {}) };
}

/**
 * The recorded URL with its masked query values filled where `credentials` knows them (the
 * parameter as `?name`: Gemini's `?key=`); a masked value nothing fills is left masked (the
 * command warned of it before sending). Query values are masked as `[REDACTED]` or a keyed mask,
 * percent-encoded.
 *
 * @example
 * liveUrl({ route: 'POST /v1beta/models/g:generateContent', request: { url: '/v1beta/models/g:generateContent?key=%5BREDACTED%5D' } } as HttpRecord, () => 'AIza...')
 * // '/v1beta/models/g:generateContent?key=AIza...'
 */
export function liveUrl(r: HttpRecord, credentials: ((route: string, header: string) => string | undefined) | undefined): string {
  const url = r.request.url;
  const q = url.indexOf('?');
  if (q < 0 || !/REDACTED/i.test(url)) return url;
  const params = url.slice(q + 1).split('&').map((p) => {
    const eq = p.indexOf('=');
    if (eq < 0 || !maskedQueryValue(p.slice(eq + 1))) return p;
    // A name as meant, or as written when its escapes are malformed (decodeURIComponent threw).
    const cred = credentials?.(r.route, `?${queryDecode(p.slice(0, eq))}`);
    return cred === undefined ? p : `${p.slice(0, eq)}=${encodeURIComponent(cred)}`;
  });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/** Whether a raw query value is a mask (`[REDACTED]` or a keyed one), as a URL holds it. */
export function maskedQueryValue(raw: string): boolean {
  let v = raw;
  try {
    v = decodeURIComponent(raw);
  } catch {
    // a malformed escape: judged as it is
  }
  return isMask(v);
}

/**
 * Where a recorded request holds a mask rerecord cannot fill, so that sending it would not be
 * sending the request that was recorded: the masked value is gone from the tape, and the live API
 * would get the text `[REDACTED:…]` in its place. Its answer, recorded under the key of the
 * masked request (which is also the key of the application's real request), would then answer
 * that request with what the API said to another: the recording is kept instead.
 *
 * Held: any mask in the body (a key pasted into a prompt, a `session_token` member; a tape made
 * before salts masks those `[REDACTED]`) or in the URL's path; a keyed mask in a query value or a
 * header that `fill` does not fill (`--header "Name: value"`, `--header "?token: value"`). A
 * provider credential (`[REDACTED]` in `authorization`, Gemini's `?key=`) is not held: it never
 * takes part in the key, and the command line warns of one nothing fills.
 *
 * Returns the places, in words (`body messages[0].content`, `URL ?token`, `header x-gateway-token`),
 * empty when the request can be sent again.
 *
 * @example
 * heldMasks(record, (name) => credentials(record.route, name, to, false))
 * // ['body messages[0].content', 'body metadata.session_token']
 */
export function heldMasks(r: HttpRecord, fill: (name: string) => string | undefined): string[] {
  const out: string[] = [];
  const b = r.request.body;
  if (typeof b === 'string') {
    if (holdsMask(b)) out.push('body');
  } else if (isBytes(b)) {
    if (holdsMask(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1'))) out.push('body');
  } else if (b !== undefined) {
    for (const path of maskedMembers(b)) out.push(`body ${path}`);
  }
  const url = r.request.url;
  const q = url.indexOf('?');
  if (holdsMask(q < 0 ? url : url.slice(0, q))) out.push('URL path');
  for (const pair of q < 0 ? [] : url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    const raw = eq < 0 ? pair : pair.slice(eq + 1);
    if (!holdsMask(raw)) continue;
    const name = eq < 0 ? pair : queryDecode(pair.slice(0, eq));
    // A whole `[REDACTED]` is a credential the command line fills or warns of; a keyed mask, or
    // a mask inside other text, is a value only the application had.
    const credential = maskedQueryValue(raw) && !holdsKeyedMaskText(raw);
    if (credential || (maskedQueryValue(raw) && fill(`?${name}`) !== undefined)) continue;
    out.push(`URL ?${name}`);
  }
  for (const [k, v] of Object.entries(r.request.headers)) {
    const value = Array.isArray(v) ? v.join(', ') : String(v);
    if (holdsKeyedMaskText(value) && fill(k.toLowerCase()) === undefined) out.push(`header ${k.toLowerCase()}`);
  }
  return out;
}

/** The paths of a JSON value's strings that hold a mask (`messages[0].content`), in document order. */
function maskedMembers(v: unknown): string[] {
  const out: string[] = [];
  // An explicit stack: a request body may nest deeper than the call stack goes.
  const stack: [unknown, string][] = [[v, '']];
  while (stack.length) {
    const [x, path] = stack.pop()!;
    if (typeof x === 'string') {
      if (holdsMask(x)) out.push(path || '(the whole body)');
    } else if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push([x[i], `${path}[${i}]`]);
    } else if (x !== null && typeof x === 'object') {
      const entries = Object.entries(x as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], path ? `${path}.${entries[i]![0]}` : entries[i]![0]]);
    }
  }
  return out;
}

/** A record of the new tape: the old tape's k-th record carried over, or the new tape's j-th. */
export type Placed = { old: number } | { fresh: number };

/** What identifies a request as sent again: its method, URL and body as stored. */
function requestId(r: HttpRecord): string {
  const b = r.request.body;
  const body = b === undefined ? '' : isBytes(b) ? `b:${createHash('sha256').update(b).digest('hex')}` : typeof b === 'string' ? `s:${b}` : `j:${JSON.stringify(b)}`;
  return `${r.request.method} ${r.request.url} ${body}`;
}

/**
 * The records of the re-recorded tape, in order: every record of the original in its place, each
 * one re-recorded replaced by its new recording, every other (not picked, held back, not HTTP, a
 * call that failed or that the budget stopped) carried over as it was. `recorded` are the
 * original positions whose calls were recorded; `fresh` the records the recorder wrote, in its
 * order (calls in flight finish in any order). A new record is found for its call by the request
 * it stores (method, URL and body, which rerecord sent as recorded), repeats of one request in the
 * recorder's order; one not found that way takes the place of the first call left, in order. A new
 * record left over after that (none, unless the recorder stored more records than calls) goes at
 * the end. `replaced` maps an original position to the new record that took it.
 *
 * @example
 * const { order } = placeRerecorded(old.records.map((r) => r.value), [0, 2], fresh.records.map((r) => r.value))
 * // [{ fresh: 1 }, { old: 1 }, { fresh: 0 }, { old: 3 }]
 */
export function placeRerecorded(original: readonly unknown[], recorded: readonly number[], fresh: readonly unknown[]): { order: Placed[]; replaced: Map<number, number> } {
  const byRequest = new Map<string, number[]>();
  fresh.forEach((f, j) => {
    if (!isHttpRecord(f)) return;
    const id = requestId(f);
    const list = byRequest.get(id);
    if (list) list.push(j);
    else byRequest.set(id, [j]);
  });
  const used = new Set<number>();
  const replaced = new Map<number, number>();
  for (const i of recorded) {
    const o = original[i];
    const j = isHttpRecord(o) ? byRequest.get(requestId(o))?.shift() : undefined;
    if (j === undefined) continue;
    used.add(j);
    replaced.set(i, j);
  }
  const rest = fresh.map((_, j) => j).filter((j) => !used.has(j));
  for (const i of recorded) {
    if (replaced.has(i) || rest.length === 0) continue;
    replaced.set(i, rest.shift()!);
  }
  const order: Placed[] = original.map((_, i) => (replaced.has(i) ? { fresh: replaced.get(i)! } : { old: i }));
  for (const j of rest) order.push({ fresh: j });
  return { order, replaced };
}

/**
 * A new recording as it takes an original's place: with the test that made the original (and its
 * place among that test's recordings of the request), on a tape tests share. The recorder runs
 * outside any test, so its record names none: moved over the original, one test replayed another
 * test's answer, and the next prune dropped the other as unused. Undefined when the original
 * names no test (the new record is kept byte for byte).
 *
 * @example
 * withTestOf({ kind: 'http', test: 'chat.test.ts > second', repeat: 0 }, fresh) // fresh, with test and repeat
 */
export function withTestOf(original: unknown, fresh: unknown): Record<string, unknown> | undefined {
  if (!isHttpRecord(original) || !isHttpRecord(fresh)) return undefined;
  const { test, repeat } = original as HttpRecord & { test?: unknown; repeat?: unknown };
  if (typeof test !== 'string') return undefined;
  return inRecordOrder({ ...(fresh as unknown as Record<string, unknown>), test, ...(typeof repeat === 'number' ? { repeat } : {}) });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Milliseconds a 429 asks to wait: retry-after-ms, retry-after in seconds or as a date. */
export function retryDelay(headers: Headers, attempt: number, maxMs: number): number {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return Math.min(ms, maxMs);
  const ra = headers.get('retry-after');
  if (ra !== null) {
    const s = Number(ra);
    if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, maxMs);
    const at = Date.parse(ra);
    if (Number.isFinite(at)) return Math.min(Math.max(0, at - Date.now()), maxMs);
  }
  // Exponential backoff with jitter when the answer does not say.
  return Math.min(500 * 2 ** attempt * (0.5 + Math.random() / 2), maxMs);
}

function costOf(bytes: Uint8Array, contentType: string, r: HttpRecord, prices: Readonly<Record<string, Price>>): number {
  // A stream in any framing is assembled by the module of its route; a plain answer is JSON.
  let body: unknown = assembleRecorded(r.request, contentType, bytes);
  if (body === undefined && !contentType.startsWith('text/event-stream')) {
    try {
      body = JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch {
      return 0;
    }
  }
  const usage = usageOf(body, r.request);
  const answerModel = readAnswer(r.request, body)?.model;
  const asked = (r.request.body as { model?: unknown } | undefined)?.model;
  const price = (typeof answerModel === 'string' ? priceOf(answerModel, prices) : undefined) ?? (typeof asked === 'string' ? priceOf(asked, prices) : undefined);
  return usage && price ? (usage.input * price.input + usage.output * price.output) / 1e6 : 0;
}

/**
 * Sends the planned requests again through the recorder and closes it. Never more than the
 * budget: a call starts only if what was spent, plus the estimates of the calls in flight and
 * its own, stays within it.
 *
 * @example
 * const rec = createFetch({ tape: 'new.tape', mode: 'record' })
 * const result = await rerecord(plan, { recorder: rec, prices: DEFAULT_PRICES, budget: 1 }) // each to its recording's host
 * await rerecord(plan, { recorder: rec, prices: DEFAULT_PRICES, hostlessUpstream: 'https://api.openai.com' }) // those with no host there
 */
export async function rerecord(plan: readonly Planned[], opts: RerecordOptions): Promise<RerecordResult> {
  const result: RerecordResult = { planned: plan.length, recorded: 0, failed: [], notSent: [], spent: 0 };
  // Refused before any call: a run that sends half its requests is harder to act on than none.
  const nowhere = plan.filter((p) => destinationOf(p.record, upstreamFor(p.record, opts)) === undefined);
  if (nowhere.length) {
    await opts.recorder.close();
    throw new TapedeckError('E_ARG', `${nowhere.length} of the ${plan.length} recordings name no host to send ${nowhere.length === 1 ? 'its request' : 'their requests'} to (records ${nowhere.slice(0, 5).map((p) => `#${p.index}`).join(', ')}${nowhere.length > 5 ? ', ...' : ''}).`, { hint: 'Give the upstream they go to (tapedeck rerecord --hostless-upstream URL; the others still go to their own hosts).' });
  }
  const retries = opts.retries ?? 5;
  const maxBackoff = opts.maxBackoffMs ?? 60_000;
  let reserved = 0;
  let next = 0;
  let done = 0;
  let stopped = false;
  const one = async (p: Planned): Promise<void> => {
    // Named by the caller (--upstream, or --hostless-upstream for a recording with no host), or
    // the recording's own host: this decides the URL, its prefix, and whether a key may go there.
    const named = upstreamFor(p.record, opts);
    const base = destinationOf(p.record, named)!;
    const under = upstreamPathFor(p.record, named);
    const credentials = opts.credentials && ((route: string, header: string) => opts.credentials!(route, header, base, named !== undefined));
    const init = requestInit(p.record, credentials);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        const url = `${base}${liveUrl(p.record, credentials)}`;
        // Signed at each attempt: a retry after a 429 backoff needs a current date.
        res = await opts.recorder.fetch(url, signed(p.record, url, init, opts), under || undefined);
      } catch (e) {
        // fetch's own "fetch failed" says nothing; the reason is its cause's (ECONNREFUSED ...).
        const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
        const why = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
        result.failed.push({ index: p.index, reason: `${(e as Error).message}${why ? ` (${why})` : ''}` });
        return;
      }
      if ((res.status === 429 || res.status === 529) && attempt < retries) {
        await res.body?.cancel();
        await sleep(retryDelay(res.headers, attempt, maxBackoff));
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await res.arrayBuffer());
      } catch (e) {
        result.failed.push({ index: p.index, reason: `the answer was cut: ${(e as Error).message}` });
        return;
      }
      const ct = res.headers.get('content-type') ?? '';
      const verdict = liveAnswerVerdict(p.record.request, ct, bytes);
      if (!verdict.whole) {
        result.failed.push({ index: p.index, reason: verdict.cut ? `the stream ended before the answer was complete${verdict.missing ? ` (${verdict.missing})` : ''}` : `the stream carried an error event (${verdict.error})` });
        return;
      }
      if (res.status >= 400) {
        result.failed.push({ index: p.index, reason: failureReason(res.status, res.headers, bytes) });
        return;
      }
      result.spent += costOf(bytes, ct, p.record, opts.prices);
      result.recorded++;
      return;
    }
  };
  const worker = async () => {
    while (next < plan.length) {
      const p = plan[next++]!;
      if (stopped || (opts.budget !== undefined && result.spent + reserved + p.estimate > opts.budget)) {
        // Once the budget stops one call, none after it starts: the new tape is a prefix.
        stopped = true;
        result.notSent.push(p.index);
        continue;
      }
      reserved += p.estimate;
      try {
        await one(p);
      } finally {
        reserved -= p.estimate;
        done++;
        opts.onProgress?.(done, plan.length, result.spent);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, plan.length)) }, worker));
  } finally {
    await opts.recorder.close();
  }
  result.notSent.sort((a, b) => a - b);
  return result;
}
