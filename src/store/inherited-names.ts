/**
 * Whether Object.prototype lends an enumerable member. for-in lists such a member for every
 * plain object, Object.keys does not: the import's hot loops over plain objects (the frame
 * writer, the mask count, the stored response headers) walk names with for-in, which makes no
 * array of names per object (~3x faster than Object.keys and a lookup by name for a header
 * map), and skip or decline inherited names while this is true. Nothing lends one unless a
 * program adds an enumerable member to Object.prototype. (Not in redaction: it is in the
 * browser bundle, whose size budget the few bytes more did not fit.)
 *
 * @example
 * const inherited = prototypeLends()
 * for (const k in o) if (!inherited || Object.hasOwn(o, k)) use(k, o[k])
 */
export function prototypeLends(): boolean {
  for (const name in PROBE) return typeof name === 'string';
  return false;
}

/** An object no one adds to: for-in of it lists only what Object.prototype lends. */
const PROBE: object = Object.freeze({});
