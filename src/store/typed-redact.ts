/**
 * Redaction of the values a tape keeps with their types (docs/tape-format.md): a Map's keys and
 * values, a Set's items, an Error's message and cause, the text in a byte array. The redactor's
 * walk (./redact.ts) hands every value that is no plain object or array here; a key in one of
 * them reached the tape in clear while the same key in a string was masked. Browser builds take
 * typed-redact.browser.ts: a page stores no value (it keys requests, which are JSON).
 */
import { sameLengthRedaction } from './binary-answer.ts';
import { isBytes } from '../bytes.ts';

/** What of the redactor a typed value's redaction uses. */
export interface TypedMasks {
  /** A value redacted within (strings, arrays, objects, and typed values again). */
  value(v: unknown): unknown;
  /** A Map member's value when its key names a secret (`authorization`): masked whole; else undefined. */
  member(key: string, v: unknown): unknown;
  /** Bytes redacted as a body is (credentials in their text). */
  bytes(b: Uint8Array): Uint8Array;
}

/**
 * `v` with its secrets masked, of the same type; `v` itself when nothing changed or it is of a
 * type that holds no text (a Date, a number array, a user class).
 *
 * @example
 * typedValue(new Set(['sk-proj-…']), masks) // Set { '[REDACTED:…]' }
 */
export function typedValue(v: object, masks: TypedMasks): unknown {
  if (v instanceof Map) {
    let changed = false;
    const out = new Map<unknown, unknown>();
    for (const [k, x] of v as Map<unknown, unknown>) {
      const nk = masks.value(k);
      const nx = (typeof k === 'string' ? masks.member(k, x) : undefined) ?? masks.value(x);
      if (nk !== k || nx !== x) changed = true;
      out.set(nk, nx);
    }
    return changed ? out : v;
  }
  if (v instanceof Set) {
    let changed = false;
    const out = new Set<unknown>();
    for (const x of v) {
      const r = masks.value(x);
      if (r !== x) changed = true;
      out.add(r);
    }
    return changed ? out : v;
  }
  if (v instanceof Error) {
    const message = masks.value(v.message);
    const cause = 'cause' in v ? masks.value(v.cause) : undefined;
    if (message === v.message && cause === v.cause) return v;
    // The same class and name (a tape keeps an Error's name, message and cause).
    const out = Object.create(Object.getPrototypeOf(v) as object) as Error;
    Object.defineProperty(out, 'message', { value: message, writable: true, configurable: true });
    if (v.name !== Object.getPrototypeOf(v)?.name) Object.defineProperty(out, 'name', { value: v.name, writable: true, configurable: true });
    if ('cause' in v) Object.defineProperty(out, 'cause', { value: cause, writable: true, configurable: true });
    return out;
  }
  if (isBytes(v)) {
    // Bytes that are a file (audio, an image: a NUL or no UTF-8 in them) keep their length, as a
    // binary answer does (./binary-answer.ts).
    const r = sameLengthRedaction(v, masks.bytes(v), undefined, masks.bytes);
    if (r === v) return v;
    // A Buffer stays a Buffer, a Uint8Array a Uint8Array.
    return Buffer.isBuffer(v) ? Buffer.from(r) : new Uint8Array(r);
  }
  return v;
}
