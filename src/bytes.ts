/**
 * Byte arrays for every layer: told apart from other values in any realm, and compared by their
 * contents (the proxy's known bodies, the kept tool lists of request keys, the drift report's
 * answers).
 */

/**
 * Whether a value is a Uint8Array, from this realm or another. A component test under jsdom
 * runs with the DOM window's Uint8Array as the global one, while Node's own bytes (Buffers,
 * TextEncoder output, decoded tape bodies) keep Node's: `instanceof` alone took those for no
 * bytes at all. The plain `instanceof` comes first, so the common case costs nothing more.
 *
 * @example
 * isBytes(Buffer.from('a')) // true, whichever Uint8Array is global
 * isBytes(new Uint16Array(1)) // false
 */
export function isBytes(x: unknown): x is Uint8Array {
  // A typed array's tag is read from its [[TypedArrayName]], which no realm changes.
  return x instanceof Uint8Array || (ArrayBuffer.isView(x) && (x as Uint8Array)[Symbol.toStringTag] === 'Uint8Array');
}

/**
 * Whether a value is an ArrayBuffer, from this realm or another (see {@link isBytes}): what
 * `await res.arrayBuffer()` gives under jsdom is Node's, not the global one.
 *
 * @example
 * isArrayBuffer(await new Response('a').arrayBuffer()) // true
 */
export function isArrayBuffer(x: unknown): x is ArrayBuffer {
  return x instanceof ArrayBuffer || (x as ArrayBuffer | undefined)?.[Symbol.toStringTag] === 'ArrayBuffer';
}

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
