/**
 * Byte arrays compared by their contents, for every layer: the proxy's known bodies, the kept
 * tool lists of request keys, the drift report's answers.
 */

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
