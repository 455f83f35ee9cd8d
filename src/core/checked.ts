/**
 * The core's hashing entries as the package's main entry gives them: each checks the names in
 * its options object before the core runs. In plain JavaScript `hashValue(body, { ignorekeys:
 * ['ts'] })` otherwise hashed with `ts` in, silently, and every run's digest differed. The
 * core's own functions (./index.ts) stay unchecked: the rest of the package calls them with
 * options it built, and the page bundle, which has a 100 KB budget, exports them as they are.
 * An options object is checked once (kept in a WeakSet): a caller that passes the same object
 * on every call pays one lookup.
 */
import { checkOptionNames, optionNames } from '../option-names.ts';
import {
  canonicalize as canonicalizeOf,
  canonicalizeJSON as canonicalizeJSONOf,
  hashJSON as hashJSONOf,
  hashMany as hashManyOf,
  hashValue as hashValueOf,
  pathHashes as pathHashesOf,
  type CanonicalOptions,
  type PathHashes,
  type PathHashOptions,
} from './index.ts';

const CANONICAL_OPTIONS = optionNames<CanonicalOptions>()(['ignoreKeys', 'rootOnly']);
const PATH_OPTIONS = optionNames<PathHashOptions>()(['ignoreKeys', 'rootOnly', 'member']);
const checked = new WeakSet<object>();

/** Throws E_ARG for a name `where` does not take; objects seen before pass at once. */
function check(opts: unknown, known: readonly string[], where: string): void {
  if (opts === null || typeof opts !== 'object' || checked.has(opts)) return;
  checkOptionNames(opts, known, where, 'docs/api.md');
  checked.add(opts);
}

/**
 * RFC 8785 canonical bytes of a JavaScript value (JSON.stringify's data model: toJSON honoured,
 * undefined members dropped).
 *
 * @example
 * new TextDecoder().decode(canonicalize({ b: 1, a: [1.0, 'x'] })) // '{"a":[1,"x"],"b":1}'
 */
export function canonicalize(value: unknown, opts?: CanonicalOptions): Uint8Array {
  if (opts !== undefined) check(opts, CANONICAL_OPTIONS, 'canonicalize');
  return canonicalizeOf(value, opts);
}

/**
 * RFC 8785 canonical bytes of JSON text (a string or UTF-8 bytes), validated strictly.
 *
 * @example
 * new TextDecoder().decode(canonicalizeJSON('{ "b": 1E2, "a": 0.70 }')) // '{"a":0.7,"b":100}'
 */
export function canonicalizeJSON(json: string | Uint8Array, opts?: CanonicalOptions): Uint8Array {
  if (opts !== undefined) check(opts, CANONICAL_OPTIONS, 'canonicalizeJSON');
  return canonicalizeJSONOf(json, opts);
}

/**
 * Hex SHA-256 of a value's canonical bytes.
 *
 * @example
 * hashValue({ role: 'user', content: 'hi' }) === hashJSON('{"content":"hi","role":"user"}') // true
 */
export function hashValue(value: unknown, opts?: CanonicalOptions): string {
  if (opts !== undefined) check(opts, CANONICAL_OPTIONS, 'hashValue');
  return hashValueOf(value, opts);
}

/**
 * Hex SHA-256 of the canonical bytes of JSON text.
 *
 * @example
 * hashJSON('{"a": 1}') === hashJSON('{ "a" : 1.0 }') // true
 */
export function hashJSON(json: string | Uint8Array, opts?: CanonicalOptions): string {
  if (opts !== undefined) check(opts, CANONICAL_OPTIONS, 'hashJSON');
  return hashJSONOf(json, opts);
}

/**
 * Message hashes and path hashes of a conversation (an array, or with `member` the array held
 * by that member of a root object, whose whole digest comes too).
 *
 * @example
 * pathHashes([{ role: 'user', content: 'hi' }]).pathHashes.length // 1
 */
export function pathHashes(messages: unknown[] | object | string | Uint8Array, opts?: PathHashOptions): PathHashes {
  if (opts !== undefined) check(opts, PATH_OPTIONS, 'pathHashes');
  return pathHashesOf(messages, opts);
}

/**
 * The digest of each element of a list, as hashValue() of each would give, in one call.
 *
 * @example
 * hashMany([{ a: 1 }, 'x'])[1] === hashValue('x') // true
 */
export function hashMany(values: unknown[] | string | Uint8Array, opts?: CanonicalOptions): string[] {
  if (opts !== undefined) check(opts, CANONICAL_OPTIONS, 'hashMany');
  return hashManyOf(values, opts);
}
