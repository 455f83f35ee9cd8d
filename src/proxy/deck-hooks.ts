/**
 * What the deck does with the user's hooks and custom matcher (docs/hooks.md): runs
 * `beforeRecord` on an exchange about to be stored and re-keys a request the hook changed,
 * runs `beforeReplay` on a recording about to answer, and picks a recording with a custom
 * `match(request, recording)` among those of a route. Redaction stays the deck's: it runs on
 * whatever comes out of here.
 */
import { hashValue } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { requestDigests, requestKeys } from '../match/matcher.ts';
import type { NormalizeOptions } from '../providers/normalize.ts';
import { callHook, httpView, isHookError, isPromise, returnedPromise, responseFromView, runHook, sameValue, type HookRecording, type HookRequest, type RecordingHook } from '../store/hooks.ts';
import type { HttpRecord, MatchKind, StoredHeaders } from '../store/records.ts';
import { isBytes } from '../bytes.ts';

// The deck checks its hooks through this module, so a browser build, which swaps this module for
// deck-hooks.browser.ts, carries none of the hook code.
export { checkHooks } from '../store/hooks.ts';

/**
 * A custom matcher: whether `recording` answers `request`. Consulted for each recording of the
 * request's route (method and path) in recorded order, instead of the request key: slower
 * than the key, for what the key cannot express.
 *
 * @example
 * const match: MatchFunction = (req, rec) => (req.body as any)?.messages?.at(-1)?.content === (rec.request.body as any)?.messages?.at(-1)?.content
 */
export type MatchFunction = (request: HookRequest, recording: HookRecording) => boolean;

/** The request parts beforeRecord may change, and the key they are filed under. */
export interface HookedExchange {
  match: MatchKind;
  key: string;
  signature?: HttpRecord['signature'];
  url: string;
  headers: StoredHeaders;
  body?: unknown;
  response: HttpRecord['response'];
  /** Whether the hook changed what the request is keyed by. */
  rekeyed: boolean;
}

/**
 * Runs beforeRecord on an exchange; null when the hook skipped it. A changed JSON request body
 * is keyed again (the stored request and its key always agree).
 *
 * @example
 * const x = beforeRecord(hook, { match: 'llm', key, url, headers, body }, method, response, norm)
 */
export function beforeRecord(
  hook: RecordingHook,
  ex: Omit<HookedExchange, 'response' | 'rekeyed'>,
  method: string,
  response: HttpRecord['response'],
  norm: NormalizeOptions,
): HookedExchange | null {
  const rec = { request: { method, url: ex.url, headers: ex.headers, ...(ex.body !== undefined ? { body: ex.body } : {}) }, response };
  const before = httpView(rec);
  const after = runHook('beforeRecord', hook, httpView(rec));
  if (!after) return null;
  const out: HookedExchange = { ...ex, url: after.request.url, headers: after.request.headers, body: after.request.body, response: responseFromView(response, before.response, after.response), rekeyed: false };
  if (ex.match !== 'http' && !sameValue(before.request.body, after.request.body)) {
    try {
      const k = requestKeys(after.request.body, norm);
      Object.assign(out, { match: 'llm', key: k.key, signature: k.signature });
    } catch (e) {
      if (!(e instanceof TapedeckError && e.code === 'E_REQUEST')) throw e;
      Object.assign(out, { match: 'json', key: hashValue(after.request.body), signature: undefined });
    }
    out.rekeyed = out.key !== ex.key;
  }
  return out;
}

/**
 * Reports an exchange that a user's hook kept from being recorded (beforeRecord threw, or
 * returned a promise or not a recording), naming the route, the hook, the fix and what the
 * client got: on a stream that has started the client sees only a cut, and the one who runs
 * the proxy (or the test) must learn why. False, and nothing said, for any other error.
 *
 * @example
 * if (reportRecordHookFailure((m) => d.warnOnce(m), p.route, e, 'the stream was cut before its end')) d.countError()
 */
export function reportRecordHookFailure(warn: (m: string) => void, route: string, e: unknown, outcome: string): boolean {
  if (!isHookError(e)) return false;
  warn(`tapedeck: ${route}: ${e.code} ${e.message} Not recorded: ${outcome}.`);
  return true;
}

/**
 * Runs beforeReplay on a recording about to answer: the recording (the stored one when the hook
 * changed nothing; a changed copy otherwise, the tape keeps its own), or null for a miss.
 *
 * @example
 * const served = beforeReplay(hook, rec) ?? miss()
 */
export function beforeReplay(hook: RecordingHook, rec: HttpRecord): HttpRecord | null {
  const before = httpView(rec);
  const after = runHook('beforeReplay', hook, httpView(rec));
  if (!after) return null;
  const response = responseFromView(rec.response, before.response, after.response);
  if (response === rec.response) return rec;
  // The view has no `cut`: a stream rebuilt from its events would end cleanly, and a test of a
  // dropped connection would get half an answer with no error. A cut stream stays cut (one the
  // hook made a plain answer is whole).
  const cut = rec.response.cut === true && after.response.events !== undefined;
  return { ...rec, response: cut ? { ...response, cut: true } : response };
}

/**
 * The answer shape a request asks for, as its key holds it (RequestDigests.shape: `stream`, `n`,
 * the format, Gemini's streaming operation...; '' for a plain answer), or undefined for a body
 * the key does not understand (no shape to keep apart: the matcher alone decides).
 *
 * @example
 * answerShapeOf({ method: 'POST', url: '/v1/chat/completions', body: { model: 'm', stream: true, messages: [] } }) // '{"stream":true}'
 */
export function answerShapeOf(request: Pick<HookRequest, 'method' | 'url' | 'body'>): string | undefined {
  const { method, url, body } = request;
  if (body === null || typeof body !== 'object' || isBytes(body)) return undefined;
  try {
    return requestDigests(body, { endpoint: { method, url } }).shape;
  } catch (e) {
    if (e instanceof TapedeckError) return undefined;
    throw e;
  }
}

/** Each recording's answer shape, computed once (a recording's request never changes). */
const recordedShapes = new WeakMap<HttpRecord, string | undefined>();

/** The E_HOOK for a match function that returned something else than true or false. */
function matchNotBoolean(v: unknown, request: HookRequest): TapedeckError {
  const what = typeof v === 'string' ? JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v) : v === null || typeof v !== 'object' ? String(v) : Array.isArray(v) ? 'an array' : 'an object';
  const route = `${request.method} ${request.url.split('?')[0]}`;
  return new TapedeckError('E_HOOK', `The match hook returned ${what} for ${route}, which is not a boolean. The error is in the hook, not in tapedeck.`, {
    hook: 'match',
    route,
    hint: 'Make match return true (this recording answers the request) or false (it does not), e.g. with Boolean(...).',
  });
}

/**
 * The recording a custom matcher picks among a route's recordings: the first unused one it
 * accepts, in recorded order; past those, with `repeatLast`, the last one it accepted. Marks the
 * pick used. Views of recordings are made once each. Only recordings of the request's answer
 * shape are offered to the matcher (see answerShapeOf).
 *
 * @example
 * const rec = pickByMatch(match, request, route.records, used, views, true)
 */
export function pickByMatch(
  match: MatchFunction,
  request: HookRequest,
  records: readonly HttpRecord[],
  used: Set<HttpRecord>,
  views: WeakMap<HttpRecord, HookRecording>,
  repeatLast: boolean,
  /** Counts the recordings the matcher was asked about (a miss says when none had the shape). */
  asked?: { count: number },
): HttpRecord | undefined {
  let last: HttpRecord | undefined;
  // The key never answers a streamed request with a plain recording or the reverse (nor another
  // n or format): the client could not read it. A matcher that compares only the prompt, as the
  // docs' example does, would otherwise serve an event stream to a plain call (its SDK returns
  // the SSE text as the completion) without a word, so the shape is kept apart here as the key
  // keeps it, and the matcher decides among recordings of the request's shape.
  const shape = answerShapeOf(request);
  for (const rec of records) {
    if (shape !== undefined) {
      if (!recordedShapes.has(rec)) recordedShapes.set(rec, answerShapeOf(rec.request));
      const theirs = recordedShapes.get(rec);
      if (theirs !== undefined && theirs !== shape) continue;
    }
    if (asked) asked.count++;
    let view = views.get(rec);
    if (!view) views.set(rec, (view = httpView(rec)));
    // A copy: a matcher that changes what it is given must not change the next comparison.
    const accepted = callHook('match', match, structuredClone(request), structuredClone(view));
    // A promise is not `true`: without this an async matcher would make every request a miss
    // that blames the recordings instead of the matcher.
    if (isPromise(accepted)) {
      throw returnedPromise('match', accepted, 'a boolean', 'Make match a plain function (not async) that returns true or false; do any asynchronous work before the test.');
    }
    // Anything else taken as "no" made the miss say the function accepted none, and the user
    // debugged the comparison instead of what it returns.
    if (typeof accepted !== 'boolean') throw matchNotBoolean(accepted, request);
    if (!accepted) continue;
    if (!used.has(rec)) {
      used.add(rec);
      return rec;
    }
    last = rec;
  }
  return repeatLast ? last : undefined;
}
