// RFC 8785 serialization of JavaScript values, with JSON.stringify's data model: toJSON() is
// honoured, boxed primitives unwrap, undefined/functions/symbols are dropped from objects and
// become null in arrays. RFC 8785 is defined in terms of ECMAScript's own serializer, so strings
// use JSON.stringify's escaping and numbers use String(x); what is added is key order (UTF-16
// code units, which is what Array.prototype.sort compares) and strictness: values that
// JSON.stringify would quietly turn into null or throw on with no location are rejected here
// with a path.

import { MAX_DEPTH, TapedeckError } from '../errors.ts';

export type IgnoreSet = ReadonlySet<string>;

function pathOf(segments: readonly (string | number)[]): string {
  let s = '$';
  for (const seg of segments) {
    if (typeof seg === 'number') s += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(seg)) s += `.${seg}`;
    else s += `[${JSON.stringify(seg)}]`;
  }
  return s;
}

/** JSON.stringify's view of a value: toJSON applied, boxed primitives unwrapped. */
function jsonView(v: unknown, key: string): unknown {
  if (v !== null && typeof v === 'object') {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') v = toJSON.call(v, key);
    if (v instanceof Number) return Number(v);
    if (v instanceof String) return String(v);
    if (v instanceof Boolean) return v.valueOf();
  } else if (typeof v === 'bigint') {
    const toJSON = (BigInt.prototype as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return toJSON.call(v, key);
  }
  return v;
}

function skippable(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** The first index of an unpaired surrogate in s, or -1. */
export function loneSurrogateIndex(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}

class Serializer {
  private readonly path: (string | number)[] = [];
  private readonly ancestors = new Set<object>();

  constructor(
    private readonly ignore: IgnoreSet,
    private readonly rootOnly: boolean,
  ) {}

  private error(code: string, what: string, hint: string): never {
    const path = pathOf(this.path);
    throw new TapedeckError(code, `${what} at ${path}.`, { path, hint });
  }

  private string(s: string): string {
    if (!s.isWellFormed()) {
      const i = loneSurrogateIndex(s);
      this.error(
        'E_LONE_SURROGATE',
        `String has a lone UTF-16 surrogate (U+${s.charCodeAt(i).toString(16).toUpperCase()} at index ${i})`,
        'Unpaired surrogates have no UTF-8 form, so no canonical bytes. Use s.toWellFormed() to replace them with U+FFFD, or fix the source.',
      );
    }
    return JSON.stringify(s);
  }

  value(v: unknown, key: string, depth: number): string | undefined {
    v = jsonView(v, key);
    switch (typeof v) {
      case 'string':
        return this.string(v);
      case 'number':
        if (!Number.isFinite(v)) {
          this.error(
            'E_NON_FINITE',
            `${v} is not a JSON number`,
            'JSON has no NaN or Infinity; JSON.stringify would silently write null. Replace it with null or a string before hashing.',
          );
        }
        return String(v);
      case 'boolean':
        return v ? 'true' : 'false';
      case 'bigint':
        this.error(
          'E_BIGINT',
          `BigInt ${v}n has no JSON form`,
          'Convert it to a string (exact) or a Number (if it fits in 2^53) first.',
        );
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
    }
    if (v === null) return 'null';
    const obj = v as object;
    if (depth >= MAX_DEPTH) {
      this.error(
        'E_DEPTH',
        `Nesting deeper than ${MAX_DEPTH} levels`,
        'Flatten the structure or send the deep part as a string.',
      );
    }
    if (this.ancestors.has(obj)) {
      this.error('E_CYCLE', 'Circular reference', 'A value refers back to one of its own ancestors; JSON cannot express cycles. Remove the back-reference.');
    }
    this.ancestors.add(obj);
    let out: string;
    if (Array.isArray(obj)) {
      const parts: string[] = new Array(obj.length);
      for (let i = 0; i < obj.length; i++) {
        this.path.push(i);
        const item = this.value(obj[i], String(i), depth + 1);
        parts[i] = item === undefined ? 'null' : item;
        this.path.pop();
      }
      out = `[${parts.join(',')}]`;
    } else {
      const keys = Object.keys(obj).sort();
      // A boxed BigInt (Object(5n)) has no members, so it would be written as {}: JSON.stringify
      // throws on it, as on 5n. Checked only for an object with no members, so that objects in
      // general pay nothing for it.
      if (keys.length === 0 && obj instanceof BigInt) {
        this.error('E_BIGINT', `BigInt object ${String(obj.valueOf())}n has no JSON form`, 'Convert it to a string (exact) or a Number (if it fits in 2^53) first.');
      }
      const parts: string[] = [];
      for (const k of keys) {
        if (this.ignore.has(k) && (!this.rootOnly || depth === 0)) continue;
        const item = (obj as Record<string, unknown>)[k];
        if (skippable(item)) continue;
        this.path.push(k);
        const s = this.value(item, k, depth + 1);
        if (s !== undefined) parts.push(`${this.string(k)}:${s}`);
        this.path.pop();
      }
      out = `{${parts.join(',')}}`;
    }
    this.ancestors.delete(obj);
    return out;
  }
}

/**
 * Canonical RFC 8785 text of a JavaScript value (a JS string; UTF-8 encode it for bytes).
 * Throws TapedeckError with a JSON path for values that have no JSON form.
 */
export function canonicalText(value: unknown, ignore: IgnoreSet, rootOnly = false): string {
  const s = new Serializer(ignore, rootOnly).value(value, '', 0);
  if (s === undefined) {
    throw new TapedeckError('E_TYPE', `${typeof value} has no JSON form at $.`, {
      path: '$',
      hint: 'Pass a JSON value: object, array, string, number, boolean or null.',
    });
  }
  return s;
}

/**
 * True if the value contains no NaN/Infinity where JSON.stringify would write `null`. The wasm
 * path serializes with JSON.stringify (native, fast) and runs this walk only when the module
 * read a `null` literal, so values without nulls pay nothing. Recursive and specialized for
 * plain objects and arrays (a generic stack walk calling jsonView() on every value cost 1.4 ms
 * of the 5.6 ms object path on the 1,000-message workload, whose messages carry nulls).
 */
export function allFinite(value: unknown, ignore: IgnoreSet, rootOnly = false): boolean {
  return finite(value, '', ignore, rootOnly, true);
}

function finite(v: unknown, key: string | number, ignore: IgnoreSet, rootOnly: boolean, atRoot: boolean): boolean {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v);
    case 'object':
      break;
    case 'bigint':
      return finiteView(jsonView(v, String(key)), ignore, rootOnly, atRoot);
    default:
      return true;
  }
  if (v === null) return true;
  const proto = Object.getPrototypeOf(v);
  if ((proto !== Object.prototype && proto !== Array.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    return finiteView(jsonView(v, String(key)), ignore, rootOnly, atRoot);
  }
  return finiteView(v, ignore, rootOnly, atRoot);
}

/** finite() of a value whose jsonView() was already taken: only its members get theirs. */
function finiteView(v: unknown, ignore: IgnoreSet, rootOnly: boolean, atRoot: boolean): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  if (v === null || typeof v !== 'object') return true;
  // Strings and nulls, most of a request's leaves, are settled here without a call.
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'string' || x === null) continue;
      if (!finite(x, i, ignore, rootOnly, false)) return false;
    }
    return true;
  }
  const skip = ignore.size > 0 && (!rootOnly || atRoot);
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (typeof x === 'string' || x === null) continue;
    if (skip && ignore.has(k)) continue;
    if (!finite(x, k, ignore, rootOnly, false)) return false;
  }
  return true;
}
