// JSON.stringify of a long array, some dozens of elements at a time, each piece written into
// wasm memory as soon as it is made. V8 builds a long result as a chain of parts (a cons
// string), and native code reads a string only once it is flat: writing it into wasm memory
// whole first copies it into one fresh string. Above ~64K UTF-16 units (128 KB) that copy is a
// large-object allocation in pages the kernel must zero on first touch, which cost 0.42 ms for the
// 500K units of the L-intl message list (measured: flattening alone, after a 1.18 ms
// JSON.stringify), and 1-2.5 ms for the 2M units of 10,000 short messages. Pieces of
// PIECE_UNITS stay in the young generation, where allocation is cheap.
//
// Pieces made all at once live until the whole text is written, though, and the young
// generation copies what survives it: for the 5.5M units of the XL list that made the object
// path slower (37.5 -> 41.4 ms), so lists were once made whole past 1M units. Made one at a time
// and written at once (ArrayText.each), no piece outlives its turn, whatever the list's length.
// A list of at most FIRST elements is still stringified whole: short lists gain nothing from
// splitting and paid for it (one message, the S workload: 3.3 -> 4.3 us; 50 messages, M: 115
// -> 119 us).

/**
 * About how many UTF-16 units of JSON text each piece holds: under 64K, and not much less, as
 * every piece costs a JSON.stringify call (16K-unit pieces took 0.06 ms more on L-intl).
 */
const PIECE_UNITS = 32768;
/** Elements in the first piece; a list of no more is stringified whole (see the top). */
const FIRST = 64;

/**
 * JSON.stringify's text of a value: of an array, possibly as the texts of consecutive runs of
 * its elements ("[a,b]" and "[c]" stand for "[a,b,c]": each boundary "][" is a ","), made one
 * at a time as they are written (each()); of any value, as one piece. Being JSON.stringify's
 * output, its strings and numbers are already in RFC 8785's spelling, which the core relies on
 * (F_STRINGIFIED in assembly/json.ts): text from anywhere else must not be wrapped in one.
 * Internal to src/core.
 */
export class ArrayText {
  /**
   * Length of the whole text in UTF-16 units: exact for text given whole, projected from the
   * first piece for a list made piece by piece (sizes decide only where work is done then).
   */
  readonly units: number;
  /** Whether `units` is exact (the text was given in full). */
  readonly exact: boolean;

  /** Text given in full, as pieces; or a list to stringify from `next` on, after `pieces`. */
  constructor(
    private readonly pieces: readonly string[],
    private readonly items?: readonly unknown[],
    private readonly next = 0,
  ) {
    let units = 1 - pieces.length;
    for (const p of pieces) units += p.length;
    this.exact = items === undefined || next >= items.length;
    this.units = this.exact ? units : Math.ceil((units * items!.length) / next);
  }

  /**
   * Calls f with each piece in order (i counts them from 0). A list's pieces after the first are
   * made here, one per call, so none is kept; throws what JSON.stringify throws.
   */
  each(f: (piece: string, i: number) => void): void {
    let i = 0;
    for (const p of this.pieces) f(p, i++);
    const items = this.items;
    if (items === undefined) return;
    const n = items.length;
    // Elements in the next piece, adapted to the size of the last one (the given pieces hold the
    // list's first `next` elements).
    let per = Math.max(1, Math.floor((this.next * PIECE_UNITS) / this.pieces[this.pieces.length - 1]!.length));
    for (let at = this.next; at < n; ) {
      const k = Math.min(per, n - at);
      const s = JSON.stringify(items.slice(at, at + k));
      f(s, i++);
      at += k;
      per = Math.max(1, Math.floor((k * PIECE_UNITS) / s.length));
    }
  }

  /** The whole text as one string (for error reports and engines without a UTF-16 path). */
  text(): string {
    if (this.pieces.length === 1 && this.exact) return this.pieces[0]!;
    const all: string[] = [];
    this.each((p) => all.push(p));
    return all.length === 1 ? all[0]! : `[${all.map((p) => p.slice(1, -1)).join(',')}]`;
  }
}

/**
 * JSON.stringify(array) in pieces (see ArrayText), or undefined when it is better stringified
 * whole: a short array (see FIRST), or one that has a toJSON method or whose elements do, which
 * JSON.stringify calls with the element's index (a piece would pass its index within the
 * piece), or with a BigInt element (BigInt.prototype.toJSON, if defined, likewise). Each element
 * is read once, before any is stringified. Makes the first piece; the rest are made as they are
 * written. Throws what JSON.stringify throws (on the first piece; later ones throw from each()).
 *
 * @example
 * const list = Array.from({ length: 1000 }, (_, i) => ({ role: 'user', content: `message ${i}` }))
 * stringifyPieces(list)?.text() === JSON.stringify(list) // true
 */
export function stringifyPieces(array: readonly unknown[]): ArrayText | undefined {
  if (typeof (array as { toJSON?: unknown }).toJSON === 'function') return undefined;
  const n = array.length;
  if (n <= FIRST) return undefined;
  // Filled by push, so that V8 keeps it a packed array: JSON.stringify walks a holey one (what
  // new Array(n) makes) more slowly, 0.4 ms more for the 10,000 messages of XL.
  const items: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const v: unknown = array[i];
    if (typeof v === 'bigint') return undefined;
    if (((typeof v === 'object' && v !== null) || typeof v === 'function') && typeof (v as { toJSON?: unknown }).toJSON === 'function') return undefined;
    items.push(v);
  }
  return new ArrayText([JSON.stringify(items.slice(0, FIRST))], items, FIRST);
}
