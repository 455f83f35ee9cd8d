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
import { isBytes } from '../bytes.ts';

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
// Streams of JSON lines (Ollama's answers) are one text to a hook, as the docs promise text:
// none of them is one JSON value, and a hook edits them as the lines they are.
const LINE_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonl', 'application/jsonlines', 'application/x-jsonlines']);
const TEXT_TYPES = new Set(['application/xml', 'application/x-www-form-urlencoded', 'application/javascript', 'application/ecmascript', 'application/yaml', 'application/x-yaml', 'application/graphql', 'application/sql']);
const isTextType = (ct: string) => ct.startsWith('text/') || ct.endsWith('+xml') || TEXT_TYPES.has(ct) || LINE_TYPES.has(ct);

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Checks the hooks given to an entry point, where it is made: each hook is a function, and
 * neither a hook nor a `match` function is declared `async` (E_ARG otherwise). Entry points
 * call it synchronously as they are created, so the mistake is an error there and not a 500 on
 * the first request (or, through a test tape's fetch, an SDK's "Connection error." after its
 * retries). A `match` that is neither a function nor a mode name is the deck's to refuse
 * (Deck.check), with the list of modes.
 *
 * @example
 * checkHooks({ beforeRecord: (r) => r })                 // fine
 * checkHooks({ match: async () => true }, 'openTestTape options') // throws E_ARG
 */
export function checkHooks(hooks: RecordingHooks & { match?: unknown }, where = 'options'): void {
  for (const name of ['beforeRecord', 'beforeReplay'] as const) {
    const h = hooks[name];
    if (h !== undefined && typeof h !== 'function') {
      throw new TapedeckError('E_ARG', `${name} in the ${where} must be a function; got ${typeof h}.`, { hint: `e.g. ${name}: (recording) => recording` });
    }
    if (h !== undefined && isAsyncFunction(h)) throw asyncHook(name, `the ${where}`);
  }
  // An async matcher returns a promise for every recording: each request would fail with E_ARG
  // at its first comparison, so it is refused now, as the hooks are.
  if (typeof hooks.match === 'function' && isAsyncFunction(hooks.match)) throw asyncHook('match', `the ${where}`);
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
  // Lasting: every call gets it, so an answer says it once (a 400, which SDKs do not retry).
  return new TapedeckError('E_ARG', `The ${name} hook returned a promise; it must return ${mustReturn} synchronously.`, { hook: name, hint, lasting: true });
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
 * Runs a hook on a fresh view and returns the recording it left, checked (null: skipped). A
 * hook that returns a promise is an E_ARG naming it; one that throws, or that leaves (returned
 * or changed in place) something tapedeck cannot store or serve, E_HOOK (see checkLeft).
 *
 * @example
 * const after = runHook('beforeReplay', hook, httpView(rec)) // null: the hook skipped it
 */
export function runHook(name: 'beforeRecord' | 'beforeReplay', hook: RecordingHook, view: HookRecording): HookRecording | null {
  // Named before the hook runs: it may change the URL, or leave it unusable.
  const route = `${view.request.method} ${view.request.url.split('?')[0]}`;
  const out = callHook(name, hook, view);
  if (out === null) return null;
  if (isPromise(out)) {
    throw returnedPromise(name, out, 'the recording (or null, or nothing)', 'Do the asynchronous work before the test, and keep the hook a plain function (not async).');
  }
  // Nothing returned: the view as the hook changed it in place, checked as a returned one is.
  return checkLeft(name, out === undefined ? view : out, out !== undefined, route);
}

/** What is wrong with a value a hook left: where (a member path), the rule it breaks, the fix. */
interface Flaw {
  path: string;
  value: unknown;
  rule: string;
  fix: string;
}

/**
 * The hook's result checked against what tapedeck can store and serve, or E_HOOK naming the
 * route, the hook, the member (`response.headers["x-a"]`) and the fix. Without this a bad value
 * went on the tape unnoticed and failed later, far from its cause, as "a bug in tapedeck" (a
 * status 999 at every replay, a header with CR LF rejected by the HTTP stack) or as a stream
 * "cut by the upstream". The rules are what an answer can be on the wire: a status from 200 to
 * 599 (the range a fetch Response takes: 1xx are interim answers, never the answer itself),
 * header names that are HTTP tokens and values HTTP can carry (no CR, LF or NUL: they would
 * split or end the header), bodies of the kinds the view gives (JSON values, text, bytes; an
 * event stream as its events). Header members left `undefined` are taken as removed, as
 * JSON.stringify takes a body's.
 */
function checkLeft(name: 'beforeRecord' | 'beforeReplay', rec: unknown, returned: boolean, route: string): HookRecording {
  const skip = name === 'beforeRecord' ? 'not record this exchange' : 'make the request a miss';
  if (!isPlainObject(rec)) {
    throw leftFlawed(name, route, `The ${name} hook returned ${shown(rec)} for ${route}, which is not a recording.`, 'recording', `In the ${name} hook, return the recording it was given (changed or not), or nothing; or return null to ${skip}.`);
  }
  const flaw = recordingFlaw(rec);
  if (flaw) {
    const verb = returned ? 'returned a recording with' : 'left';
    throw leftFlawed(name, route, `The ${name} hook ${verb} ${flaw.path} ${shown(flaw.value)} for ${route}: ${flaw.rule}.`, flaw.path, `In the ${name} hook, ${flaw.fix}; or return null to ${skip}.`);
  }
  return rec as unknown as HookRecording;
}

/**
 * The E_HOOK for a hook's result tapedeck cannot use. A beforeReplay's is said on stderr too, as
 * the stack of a hook that throws is (hookFailed): for the proxy that is where whoever runs it
 * looks, and nothing else reports it there. A beforeRecord's is reported with its route and what
 * the client got by whoever records (reportRecordHookFailure), so it is not said twice.
 */
function leftFlawed(name: 'beforeRecord' | 'beforeReplay', route: string, what: string, path: string, hint: string): TapedeckError {
  const err = new TapedeckError('E_HOOK', `${what} The error is in the hook, not in tapedeck.`, { hook: name, route, path, hint });
  if (name === 'beforeReplay') console.error(`tapedeck: E_HOOK ${err.message}`);
  return err;
}

/** The first flaw of a recording a hook left, or undefined when tapedeck can use it. */
function recordingFlaw(rec: Record<string, unknown>): Flaw | undefined {
  const { request: q, response: r } = rec;
  if (!isPlainObject(q)) return { path: 'request', value: q, rule: 'a recording has a request object', fix: 'keep the request it was given (change its members, not the whole)' };
  if (!isPlainObject(r)) return { path: 'response', value: r, rule: 'a recording has a response object', fix: 'keep the response it was given (change its members, not the whole)' };
  // The path and query, as stored and as routes are named: no spaces or control characters,
  // which a request line cannot carry.
  if (typeof q.url !== 'string' || !/^\/[^\x00-\x20\x7f]*$/.test(q.url)) {
    return { path: 'request.url', value: q.url, rule: 'a request URL is a path and query string starting with "/", without spaces or control characters', fix: "set request.url to a path such as '/v1/chat/completions' (percent-encode what a URL cannot hold)" };
  }
  const flaw = headersFlaw(q.headers, 'request.headers') ?? bodyFlaw(q.body, 'request.body');
  if (flaw) return flaw;
  if (typeof r.status !== 'number' || !Number.isInteger(r.status) || r.status < 200 || r.status > 599) {
    const fix = typeof r.status === 'string' && /^\d+$/.test(r.status) ? `set response.status to the number ${r.status}, not a string` : 'set response.status to an integer from 200 to 599';
    return { path: 'response.status', value: r.status, rule: 'a replayed answer has an integer status from 200 to 599', fix };
  }
  if (r.statusText !== undefined && (typeof r.statusText !== 'string' || BAD_FIELD_VALUE.test(r.statusText))) {
    return { path: 'response.statusText', value: r.statusText, rule: 'a status text is a string without line breaks or control characters', fix: 'set response.statusText to a short phrase such as "OK", or delete it' };
  }
  const headers = headersFlaw(r.headers, 'response.headers');
  if (headers) return headers;
  // The view gives a stream as its events and any other answer as its body, by content type;
  // an answer is rebuilt from the one its content type says (responseFromView).
  const ct = contentType(r.headers as StoredHeaders);
  if (ct === 'text/event-stream') {
    if (r.body !== undefined) return { path: 'response.body', value: r.body, rule: 'a text/event-stream answer is served from response.events', fix: 'change response.events instead (or set content-type to the body\'s type for an answer that is not a stream)' };
    if (!Array.isArray(r.events)) return { path: 'response.events', value: r.events, rule: 'a text/event-stream answer is an array of events { event?, data }', fix: "keep response.events an array, e.g. [{ data: { ... } }, { data: '[DONE]' }]" };
    for (const [i, e] of r.events.entries()) {
      const at = `response.events[${i}]`;
      if (!isPlainObject(e)) return { path: at, value: e, rule: 'an event is an object { event?, data }', fix: `make ${at} an object such as { data: { ... } }` };
      if (e.event !== undefined && (typeof e.event !== 'string' || /[\r\n\0]/.test(e.event))) {
        return { path: `${at}.event`, value: e.event, rule: 'an event name is a string on one line', fix: `set ${at}.event to a name without line breaks, or delete it for the default ("message")` };
      }
      if (e.data === undefined) return { path: `${at}.data`, value: e.data, rule: 'an event carries data (text, or a JSON value)', fix: `give ${at} its data, or remove the event from response.events` };
      const data = typeof e.data === 'string' ? undefined : jsonFlaw(e.data, `${at}.data`, []);
      if (data) return data;
    }
    return undefined;
  }
  if (r.events !== undefined) {
    return { path: 'response.events', value: r.events, rule: `an answer whose content-type is ${ct ? JSON.stringify(ct) : 'not set'} is served from response.body, not from events`, fix: "put the answer in response.body, or set response.headers['content-type'] to 'text/event-stream' for a stream" };
  }
  return bodyFlaw(r.body, 'response.body');
}

// HTTP header names are tokens (RFC 9110, 5.1).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// What a header value (or a status text) cannot hold: control characters but tab (CR and LF
// would end the header and start another, NUL ends it in many readers), DEL, and characters past
// U+00FF, which are not bytes (Node's HTTP and a fetch Headers both refuse them).
const BAD_FIELD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** The first flaw of a headers object a hook left; removes members left `undefined` (deleted). */
function headersFlaw(headers: unknown, path: string): Flaw | undefined {
  if (!isPlainObject(headers)) return { path, value: headers, rule: 'headers are a plain object of names and string values', fix: `keep ${path} an object (delete a header with delete ${path}['name'])` };
  for (const name of Object.keys(headers)) {
    const v = headers[name];
    const at = `${path}[${JSON.stringify(name)}]`;
    if (v === undefined) {
      delete headers[name];
      continue;
    }
    if (!TOKEN.test(name)) return { path: at, value: v, rule: 'a header name is an HTTP token (letters, digits and !#$%&\'*+-.^_`|~)', fix: `rename the header ${JSON.stringify(name)}` };
    const values = Array.isArray(v) ? v : [v];
    for (const s of values) {
      if (typeof s !== 'string') return { path: at, value: s, rule: 'a header value is a string (or an array of strings)', fix: `set ${at} to a string${typeof s === 'number' ? ` ('${s}')` : ' (JSON.stringify an object)'}` };
      if (BAD_FIELD_VALUE.test(s)) return { path: at, value: s, rule: 'a header value holds no line break (CR, LF), NUL or other control character, nor characters past U+00FF', fix: `remove those characters from ${at} (percent-encode text that needs them)` };
    }
  }
  return undefined;
}

/** The first flaw of a request or response body a hook left: absent, text, bytes or a JSON value. */
function bodyFlaw(body: unknown, path: string): Flaw | undefined {
  if (body === undefined || typeof body === 'string' || isBytes(body)) return undefined;
  return jsonFlaw(body, path, []);
}

/**
 * The first member of a JSON body JSON cannot write as it is: a BigInt (JSON.stringify throws),
 * a function or symbol (dropped, or null in an array), NaN or Infinity (null), an array hole
 * left undefined (null), bytes or a Map inside the JSON (`{"0":…}`, `{}`), a cycle. Members
 * left `undefined` in an object are dropped, as JSON.stringify does: that is how the docs'
 * example removes `usage`. An object with its own toJSON (a Date) writes what that gives.
 */
function jsonFlaw(v: unknown, path: string, within: object[]): Flaw | undefined {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(v) ? undefined : { path, value: v, rule: 'JSON has no form for NaN or Infinity', fix: `set ${path} to a finite number, a string or null` };
    case 'bigint':
      return { path, value: v, rule: 'JSON has no form for a BigInt', fix: `set ${path} to a string (exact) or a Number (if it fits in 2^53)` };
    case 'undefined':
      return { path, value: v, rule: 'JSON has no form for undefined in an array (it would be written as null)', fix: `remove the element, or set ${path} to null` };
    case 'function':
    case 'symbol':
      return { path, value: v, rule: `JSON has no form for a ${typeof v}`, fix: `set ${path} to a JSON value` };
  }
  if (v === null) return undefined;
  const o = v as object;
  if (within.includes(o)) return { path, value: v, rule: 'the body refers to itself (a cycle), which JSON cannot write', fix: `set ${path} to a copy, not to an object that contains it` };
  if (Array.isArray(o)) {
    within.push(o);
    for (let i = 0; i < o.length; i++) {
      const f = jsonFlaw(o[i], `${path}[${i}]`, within);
      if (f) return f;
    }
    within.pop();
    return undefined;
  }
  if (!isPlainObject(o)) {
    if (typeof (o as { toJSON?: unknown }).toJSON === 'function') return undefined;
    return { path, value: v, rule: 'JSON has no form for it inside a body (bytes, a Map or a class instance would be written as {} or as numbered members)', fix: `set ${path} to a plain object, an array, a string or a number` };
  }
  within.push(o);
  for (const k of Object.keys(o)) {
    const m = (o as Record<string, unknown>)[k];
    if (m === undefined) continue;
    const f = jsonFlaw(m, `${path}${/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}`, within);
    if (f) return f;
  }
  within.pop();
  return undefined;
}

/** An object literal's kind: not null, an array, bytes, a Headers or another class's instance. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A value as a message shows it: short, one line. */
function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'function' || typeof v === 'symbol') return `a ${typeof v}`;
  if (Array.isArray(v)) return 'an array';
  if (isBytes(v)) return 'bytes';
  const kind = (Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return kind && kind !== 'Object' ? `a ${kind}` : 'an object';
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
  if (isBytes(a) || isBytes(b)) {
    if (!(isBytes(a) && isBytes(b)) || a.length !== b.length) return false;
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
  if (isBytes(body)) return body;
  if (typeof body === 'string' && !isJsonType(ct)) return encoder.encode(body);
  return encoder.encode(JSON.stringify(body));
}

/**
 * The stored response a view stands for: the original when the hook left the answer alone
 * (bytes and chunk times kept exactly), else rebuilt from the view. A rebuilt stream has one
 * chunk per event (per line, for a stream of JSON lines), at the times the original chunks
 * arrived.
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
  if (after.events) return { ...head, ...chunked(sseText(after.events), original) };
  // A stream of JSON lines is paced as it was too: a line per chunk (`timing: 'recorded'`).
  const ct = contentType(after.headers);
  if (typeof after.body === 'string' && LINE_TYPES.has(ct) && original.chunks) return { ...head, ...chunked(after.body.split(/(?<=\n)/), original) };
  return { ...head, body: bodyBytes(after.body, ct) };
}

/** A rebuilt stream's bytes, one chunk per piece, at the times the original chunks arrived. */
function chunked(pieces: readonly string[], original: HttpRecord['response']): Pick<HttpRecord['response'], 'body' | 'chunks'> {
  const parts = pieces.map((t) => encoder.encode(t));
  const times = (original.chunks ?? [[0, original.body.length]]).map(([ms]) => ms);
  const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  const chunks: [number, number][] = [];
  let end = 0;
  parts.forEach((p, i) => {
    body.set(p, end);
    end += p.length;
    chunks.push([times[Math.min(i, times.length - 1)] ?? 0, end]);
  });
  return { body, ...(chunks.length > 1 ? { chunks } : {}) };
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
