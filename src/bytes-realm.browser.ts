/**
 * Browser bundles' stand-in for ./bytes-realm.ts (package.json "browser"): a page has one realm,
 * so `instanceof` tells its bytes apart (a component test under jsdom loads the Node build).
 */

/** Whether a value is a Uint8Array. */
export function isBytes(x: unknown): x is Uint8Array {
  return x instanceof Uint8Array;
}

/** Whether a value is an ArrayBuffer. */
export function isArrayBuffer(x: unknown): x is ArrayBuffer {
  return x instanceof ArrayBuffer;
}
