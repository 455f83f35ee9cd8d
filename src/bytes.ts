/**
 * Byte arrays for every layer: told apart from other values in any realm, and compared by their
 * contents (the proxy's known bodies, the kept tool lists of request keys, the drift report's
 * answers).
 */

// Told apart in any realm (./bytes-realm.ts; a page bundle's have only this realm's).
export { isArrayBuffer, isBytes } from './bytes-realm.ts';

// Node defines the global `Buffer` as a getter: read once here rather than twice per call (it
// showed as ~900 instructions per replayed request of the proxy under callgrind).
const NodeBuffer: typeof Buffer | undefined = typeof Buffer === 'undefined' ? undefined : Buffer;

/**
 * Whether two byte arrays hold the same bytes: memcmp through Buffer.compare where there is a
 * Buffer (no view is made of either side), a loop elsewhere (a browser).
 *
 * @example
 * sameBytes(new TextEncoder().encode('{"a":1}'), Buffer.from('{"a":1}')) // true
 */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (NodeBuffer !== undefined) return NodeBuffer.compare(a, b) === 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Whether a[at, at + n) and b[from, from + n) hold the same bytes: memcmp of the two ranges
 * through Buffer.prototype.compare where there is a Buffer (no view made of either; any
 * Uint8Array will do), a loop for short ranges and elsewhere.
 *
 * @example
 * sameRange(new TextEncoder().encode('{"a":1}'), 1, Buffer.from('x"a"'), 1, 3) // true
 */
export function sameRange(a: Uint8Array, at: number, b: Uint8Array, from: number, n: number): boolean {
  if (NodeBuffer !== undefined && n > 16) return NodeBuffer.prototype.compare.call(a, b, from, from + n, at, at + n) === 0;
  for (let j = 0; j < n; j++) if (a[at + j] !== b[from + j]) return false;
  return true;
}
