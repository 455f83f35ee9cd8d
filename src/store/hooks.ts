/**
 * Recording hooks: `beforeRecord(recording)` sees an exchange before it is stored, and
 * `beforeReplay(recording)` sees a recording before it answers. Each may change the recording
 * (in place or by returning a new one) or return `null`: not recorded, or not served (a miss).
 * Hooks see the request and the answer in a readable form: JSON bodies parsed, streams as their
 * server-sent events (each `data` parsed where it is JSON). Redaction runs on what a hook
 * returns, so a hook cannot put back what redaction removes. docs/hooks.md.
 *
 * Hooks are synchronous: they run on the replay hot path, and a proxy answers a replayed
 * request in the tick its body arrived.
 */
import { TapedeckError } from '../errors.ts';
import type { HttpRecord, StoredHeaders } from './records.ts';
import { parseSse } from '../providers/sse-assemble.ts';

/** A request as hooks and custom matchers see it. */
export interface HookRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: StoredHeaders;
  /** JSON bodies parsed; text bodies as text; other bodies as bytes; absent without a body. */
  body?: unknown;
}

/** One server-sent event of a streamed answer. */
export interface HookEvent {
  /** The `event:` name; absent for the default ("message"). */
  event?: string;
  /** The event's data: parsed where it is JSON, else the text (`[DONE]`). */
  data: unknown;
}

/** An answer as hooks see it: `events` for a stream, else `body`. */
export interface HookResponse {
  status: number;
  statusText?: string;
  headers: StoredHeaders;
  body?: unknown;
  events?: HookEvent[];
}

/** What a hook receives, and returns. */
export interface HookRecording {
  request: HookRequest;
  response: HookResponse;
}

/**
 * A hook: returns the recording to use (the same object, changed or not, or a new one), `null`
 * to skip it, or nothing (the recording as it is now, changes made in place included).
 *
 * @example
 * const beforeRecord: RecordingHook = (r) => { delete r.response.headers['openai-organization'] }
 */
export type RecordingHook = (recording: HookRecording) => HookRecording | null | undefined | void;

/** The hooks an entry point takes (createFetch, the proxy, the test tapes, ReplayCache). */
export interface RecordingHooks {
  /** Before an exchange is stored: change it, or return null to not record it. */
  beforeRecord?: RecordingHook;
  /** Before a recording answers a request: change the answer, or return null to treat it as a miss. */
  beforeReplay?: RecordingHook;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function contentType(h: StoredHeaders): string {
  const v = h['content-type'];
  return (Array.isArray(v) ? v[0] : v)?.split(';')[0]?.trim().toLowerCase() ?? '';
}

const isJsonType = (ct: string) => /[/+]json$/.test(ct);
const isTextType = (ct: string) => ct.startsWith('text/') || ct === 'application/xml' || ct === 'application/x-www-form-urlencoded';

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Checks a name given as a hook is a function, and not an async one (E_ARG otherwise). */
export function checkHooks(hooks: RecordingHooks, where = 'options'): void {
  for (const name of ['beforeRecord', 'beforeReplay'] as const) {
    const h = hooks[name];
    if (h !== undefined && typeof h !== 'function') {
      throw new TapedeckError('E_ARG', `${name} in the ${where} must be a function; got ${typeof h}.`, { hint: `e.g. ${name}: (recording) => recording` });
    }
    if (h !== undefined && isAsyncFunction(h)) throw asyncHook(name, `the ${where}`);
  }
}

/** The user functions tapedeck calls: the two hooks and the custom matcher. */
export type HookName = 'beforeRecord' | 'beforeReplay' | 'match';

/**
 * Whether a function is declared `async` (or is an async generator): it always returns a
 * promise, so it can be refused before it is ever called. A plain function that returns a
 * promise cannot be told apart; that one is refused when it returns it ({@link returnedPromise}).
 */
export function isAsyncFunction(f: unknown): boolean {
  const tag = typeof f === 'function' ? Object.prototype.toString.call(f) : '';
  return tag === '[object AsyncFunction]' || tag === '[object AsyncGeneratorFunction]';
}

/**
 * The E_ARG for a hook declared `async`, found where it is given (a `--hooks` module as it
 * loads, createFetch or proxy options): refused then rather than on the first request, where
 * a streamed answer can only be cut once it has started.
 *
 * @example
 * if (isAsyncFunction(h)) throw asyncHook('beforeRecord', 'the hooks module ./hooks.mjs')
 */
export function asyncHook(name: HookName, where: string): TapedeckError {
  return new TapedeckError('E_ARG', `The ${name} hook in ${where} is an async function; hooks must be synchronous (they run while the request is answered, and tapedeck does not wait for a promise).`, {
    hook: name,
    hint: `Make ${name} a plain function (drop "async"); do any asynchronous work before the proxy or the test starts.`,
  });
}

/**
 * What a user's hook threw, as an `E_HOOK` naming the hook (the thrown value is its `cause`).
 * The stack goes to stderr, the only place whoever runs a proxy sees it: the client gets the
 * error's message, never a stack. Said to be the hook's, so it is not taken for tapedeck's bug.
 *
 * @example
 * try { hook(view) } catch (e) { throw hookFailed('beforeRecord', e) }
 */
export function hookFailed(name: HookName, thrown: unknown): TapedeckError {
  const what = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  const stack = thrown instanceof Error && thrown.stack ? thrown.stack : what;
  console.error(`tapedeck: E_HOOK the ${name} hook threw (the error is in the hook, not in tapedeck):\n${stack}`);
  const err = new TapedeckError('E_HOOK', `The ${name} hook threw: ${what}. The error is in the hook, not in tapedeck.`, {
    hook: name,
    hint: `Fix the ${name} hook (its stack is on the standard error of the process that ran it), or catch the error inside it.`,
  });
  (err as { cause?: unknown }).cause = thrown;
  return err;
}

/** Calls a user's hook; what it throws becomes {@link hookFailed}. */
export function callHook<A extends unknown[], R>(name: HookName, hook: (...args: A) => R, ...args: A): R {
  try {
    return hook(...args);
  } catch (e) {
    throw hookFailed(name, e);
  }
}

/**
 * An E_ARG for a hook that returned a promise (an `async` function, say): tapedeck cannot wait
 * for it on the replay path, and taking the promise as the answer would turn every call into a
 * silent miss or a wrong recording. The promise is given a handler so that its own rejection,
 * which nobody will await, is not reported as unhandled on top of this error.
 *
 * @example
 * if (isPromise(out)) throw returnedPromise('match', out, 'a boolean')
 */
export function returnedPromise(name: HookName, promise: PromiseLike<unknown>, mustReturn: string, hint: string): TapedeckError {
  Promise.resolve(promise).catch(() => {});
  return new TapedeckError('E_ARG', `The ${name} hook returned a promise; it must return ${mustReturn} synchronously.`, { hook: name, hint });
}

/**
 * Whether an error is a user's hook failing (it threw, or returned a promise or something that
 * is not a recording): those errors name the hook in `details.hook`.
 */
export const isHookError = (e: unknown): e is TapedeckError => e instanceof TapedeckError && typeof e.details.hook === 'string';

/** Whether a hook's result is a promise (or any thenable). */
export const isPromise = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && (typeof v === 'object' || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function';

/**
 * Runs a hook on a fresh view and returns the view it left (null: skipped). A hook that returns
 * a promise or something that is not a recording is an E_ARG naming it; one that throws, E_HOOK.
 */
export function runHook(name: 'beforeRecord' | 'beforeReplay', hook: RecordingHook, view: HookRecording): HookRecording | null {
  const out = callHook(name, hook, view);
  if (out === null) return null;
  if (out === undefined) return view;
  if (isPromise(out)) {
    throw returnedPromise(name, out, 'the recording (or null, or nothing)', 'Do the asynchronous work before the test, and keep the hook a plain function (not async).');
  }
  if (typeof out !== 'object' || !out.request || !out.response || typeof out.response.status !== 'number') {
    throw new TapedeckError('E_ARG', `The ${name} hook returned something that is not a recording.`, {
      hook: name,
      hint: 'Return the recording it was given (changed or not), or null to skip it.',
    });
  }
  return out;
}

/**
 * The readable view of an HTTP record (a copy: changing it changes nothing until it is applied).
 *
 * @example
 * httpView(rec).response.events?.map((e) => e.data)
 */
export function httpView(rec: Pick<HttpRecord, 'request' | 'response'>): HookRecording {
  const { request: q, response: r } = rec;
  const ct = contentType(r.headers);
  const response: HookResponse = { status: r.status, ...(r.statusText ? { statusText: r.statusText } : {}), headers: structuredClone(r.headers) };
  const text = () => decoder.decode(r.body);
  if (ct === 'text/event-stream') {
    response.events = parseSse(text()).map((e) => ({ ...(e.event !== 'message' ? { event: e.event } : {}), data: parseOr(e.data) }));
  } else if (r.body.length > 0) {
    response.body = isJsonType(ct) ? parseOr(text()) : isTextType(ct) ? text() : new Uint8Array(r.body);
  }
  return {
    request: { method: q.method, url: q.url, headers: structuredClone(q.headers), ...(q.body !== undefined ? { body: structuredClone(q.body) } : {}) },
    response,
  };
}

/** Deep equality of view values (JSON values and byte arrays). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array && b instanceof Uint8Array) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Server-sent events as text: `event:` when named, one `data:` line per line of data. */
function sseText(events: readonly HookEvent[]): string[] {
  return events.map((e) => {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    return `${e.event ? `event: ${e.event}\n` : ''}${data.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('')}\n`;
  });
}

function bodyBytes(body: unknown, ct: string): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string' && !isJsonType(ct)) return encoder.encode(body);
  return encoder.encode(JSON.stringify(body));
}

/**
 * The stored response a view stands for: the original when the hook left the answer alone
 * (bytes and chunk times kept exactly), else rebuilt from the view. A rebuilt stream has one
 * chunk per event, at the times the original chunks arrived.
 *
 * @example
 * const response = responseFromView(rec.response, before.response, after.response)
 */
export function responseFromView(original: HttpRecord['response'], before: HookResponse, after: HookResponse): HttpRecord['response'] {
  if (sameValue(before, after)) return original;
  const head = { status: after.status, ...(after.statusText ? { statusText: after.statusText } : {}), headers: after.headers };
  if (sameValue(before.body, after.body) && sameValue(before.events, after.events)) {
    const out: HttpRecord['response'] = { ...original, ...head };
    if (!after.statusText) delete out.statusText;
    return out;
  }
  if (after.events) {
    const parts = sseText(after.events).map((t) => encoder.encode(t));
    const times = (original.chunks ?? [[0, original.body.length]]).map(([ms]) => ms);
    const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    const chunks: [number, number][] = [];
    let end = 0;
    parts.forEach((p, i) => {
      body.set(p, end);
      end += p.length;
      chunks.push([times[Math.min(i, times.length - 1)] ?? 0, end]);
    });
    return { ...head, body, ...(chunks.length > 1 ? { chunks } : {}) };
  }
  return { ...head, body: bodyBytes(after.body, contentType(after.headers)) };
}

/** A ReplayCache recording as its hooks see it: the request and the value put for it. */
export interface CacheHookRecording {
  request: unknown;
  response: unknown;
}

/** A ReplayCache hook: the recording to use, null to skip it, or nothing (changed in place). */
export type CacheHook = (recording: CacheHookRecording) => CacheHookRecording | null | undefined | void;

const copyOf = <T>(v: T): T => {
  try {
    return structuredClone(v);
  } catch {
    return v; // functions or class instances in a request: the hook sees them as they are
  }
};

/**
 * Runs a ReplayCache hook on copies of the request and value; null when it skipped them.
 *
 * @example
 * const r = runCacheHook('beforeRecord', hook, request, value); if (!r) return
 */
export function runCacheHook(name: 'beforeRecord' | 'beforeReplay', hook: CacheHook, request: unknown, response: unknown): CacheHookRecording | null {
  const view = { request: copyOf(request), response: copyOf(response) };
  const out = callHook(name, hook, view);
  if (out === null) return null;
  if (out === undefined) return view;
  if (isPromise(out)) {
    throw returnedPromise(name, out, 'the recording (or null, or nothing)', 'Keep the hook a plain function (not async).');
  }
  if (typeof out !== 'object' || !('request' in out) || !('response' in out)) {
    throw new TapedeckError('E_ARG', `The ${name} hook returned something that is not a recording.`, { hook: name, hint: 'Return { request, response } (the object it was given), or null to skip it.' });
  }
  return out;
}
