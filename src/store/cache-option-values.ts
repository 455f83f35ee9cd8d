/**
 * The values of ReplayCache's key options and put's `raw`, checked where they are given.
 *
 * `ReplayCache.open(tape, { ignoredArgs: 'temperature' })` opened fine and then every get()
 * threw an E_ARG from normalizeRequest about `ignoreArgs` (another function's option, spelt
 * another way): a server started healthy and answered every request with an error. Checked at
 * open, the message names the option as the caller wrote it. Node-only (the page bundle has no
 * ReplayCache).
 */
import { TapedeckError, withContext } from '../errors.ts';
import { describeArgument } from '../option-names.ts';
import { VOLATILE_PATTERNS, volatilePatterns } from '../providers/volatile-text.ts';

/** What a wrong value is, in an E_ARG's "got …" (a RegExp and a byte view by name, not "object"). */
function given(v: unknown): string {
  if (v instanceof RegExp) return `a regular expression (${String(v).slice(0, 40)})`;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && v.constructor !== Object && typeof v.constructor?.name === 'string') return `a ${v.constructor.name}`;
  if (v === undefined || v === null || typeof v === 'string' || typeof v === 'object') return describeArgument(v);
  return `a ${typeof v}`;
}

/**
 * Throws E_ARG unless `value` is undefined or an array of strings: the `ignoredArgs` of
 * ReplayCache.open, put and get. `where` names the function.
 *
 * @example
 * checkIgnoredArgs('temperature', 'ReplayCache.open')
 * // throws E_ARG: ReplayCache.open: ignoredArgs must be an array of strings; got the string "temperature". hint: List the request arguments to leave out of the key, e.g. { ignoredArgs: ['temperature'] }.
 */
export function checkIgnoredArgs(value: unknown, where: string): void {
  if (value === undefined || (Array.isArray(value) && value.every((k) => typeof k === 'string'))) return;
  const example = typeof value === 'string' ? `['${value}']` : "['temperature', 'user']";
  throw new TapedeckError('E_ARG', `${where}: ignoredArgs must be an array of strings; got ${Array.isArray(value) ? 'an array with something else in it' : given(value)}.`, {
    hint: `List the request arguments to leave out of the key, e.g. { ignoredArgs: ${example} }.`,
  });
}

/**
 * Throws E_ARG unless `value` is undefined or a list of patterns (RegExps or strings) that each
 * match some text: ReplayCache.open's `volatileText`. A single pattern given bare (not in a
 * list) is shown in one.
 *
 * @example
 * checkVolatileText(VOLATILE_PATTERNS.uuid, 'ReplayCache.open')
 * // throws E_ARG: ReplayCache.open: volatileText must be an array of patterns (...); got VOLATILE_PATTERNS.uuid, a single regular expression. Put it in a list: { volatileText: [VOLATILE_PATTERNS.uuid] }.
 */
export function checkVolatileText(value: unknown, where: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    // One of the package's own patterns is named as the caller wrote it, not as its source.
    const named = Object.entries(VOLATILE_PATTERNS).find(([, re]) => re === value)?.[0];
    const shown = named !== undefined ? `VOLATILE_PATTERNS.${named}` : value instanceof RegExp || typeof value === 'string' ? (String(value).length <= 60 ? (value instanceof RegExp ? String(value) : JSON.stringify(value)) : 'thePattern') : undefined;
    const got = named !== undefined ? `${shown}, a single regular expression` : value instanceof RegExp ? 'a single regular expression' : given(value);
    throw new TapedeckError('E_ARG', `${where}: volatileText must be an array of patterns (regular expressions or strings); got ${got}.`, {
      hint: shown !== undefined ? `Put it in a list: { volatileText: [${shown}] }.` : 'e.g. { volatileText: [VOLATILE_PATTERNS.isoTimestamp, /\\d{4}-\\d{2}-\\d{2}/] }.',
    });
  }
  try {
    volatilePatterns(value);
  } catch (e) {
    // The pattern's own problem (not a RegExp, matches the empty string), said for this entry.
    throw e instanceof TapedeckError ? withContext(e, `${where}: `) : e;
  }
}

/**
 * Throws E_ARG unless put's `raw` is undefined or an object `{ body, contentType? }` with a body.
 * The body's type is checked where it is stored.
 *
 * @example
 * checkRaw('abc') // throws E_ARG: ReplayCache.put: raw must be { body, contentType? }; got the string "abc". hint: { raw: { body: 'abc' } } ...
 */
export function checkRaw(raw: unknown): void {
  if (raw === undefined) return;
  const bytesGiven = typeof raw === 'string' || raw instanceof ArrayBuffer || ArrayBuffer.isView(raw);
  const isObject = raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !bytesGiven;
  if (isObject && (raw as { body?: unknown }).body !== undefined) return;
  const got = isObject ? 'an object without `body`' : given(raw);
  throw new TapedeckError('E_ARG', `ReplayCache.put: raw must be { body, contentType? } (the response bytes as received, and their media type); got ${got}.`, {
    hint: bytesGiven
      ? 'Wrap the bytes: { raw: { body: bytes, contentType: res.headers.get(\'content-type\') } }.'
      : "e.g. { raw: { body: new Uint8Array(await res.arrayBuffer()), contentType: res.headers.get('content-type') } }.",
  });
}
