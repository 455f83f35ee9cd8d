/**
 * Bytes told apart from other values in any realm. A component test under jsdom runs with the DOM
 * window's Uint8Array and ArrayBuffer as the global ones, while Node's own bytes (Buffers,
 * TextEncoder output, decoded tape bodies, `await res.arrayBuffer()`) keep Node's: `instanceof`
 * alone took those for no bytes at all. A page bundle has one realm (./bytes-realm.browser.ts).
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
