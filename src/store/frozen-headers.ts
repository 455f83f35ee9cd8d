/**
 * Header maps that cannot change: an importer's entries that list the same headers share one
 * such map, and the layers after it (the deck's redaction, the count of masks added, the frame
 * writer) keep their work on it by identity while it repeats. Identity is only sound for a map
 * that nothing can change, so each of them asks {@link isFrozenHeaders} first.
 */

/**
 * Freezes a header map and its arrays of values in place, and returns it.
 *
 * @example
 * const h = freezeHeaders({ accept: 'application/json', 'set-cookie': ['a=1', 'b=2'] })
 * isFrozenHeaders(h) // true
 */
export function freezeHeaders<H extends Record<string, string | string[]>>(h: H): Readonly<H> {
  for (const v of Object.values(h)) if (Array.isArray(v)) Object.freeze(v);
  return Object.freeze(h);
}

/**
 * Whether `o` is a header map that cannot change: frozen, each value a string or a frozen array
 * of strings.
 *
 * @example
 * isFrozenHeaders(Object.freeze({ a: ['x'] })) // false: its array can still change
 */
export function isFrozenHeaders(o: object | undefined): boolean {
  return o !== undefined && Object.isFrozen(o) && Object.values(o).every((v) => typeof v === 'string' || (Array.isArray(v) && Object.isFrozen(v) && v.every((x) => typeof x === 'string')));
}
