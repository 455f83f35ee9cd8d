// JSON.stringify of a long array, some dozens of elements at a time. V8 builds a long result as a
// chain of parts (a cons string), and native code reads a string only once it is flat: writing
// it into wasm memory first copies it into one fresh string. Above ~64K UTF-16 units (128 KB)
// that copy is a large-object allocation in pages the kernel must zero on first touch, which cost
// 0.42 ms for the 500K units of the L-intl message list (measured: flattening alone, after a
// 1.18 ms JSON.stringify). Pieces of PIECE_UNITS stay in the young generation, where allocation
// is cheap: stringifying the list and writing it into memory took 1.39 ms in pieces against
// 1.69 ms whole.
//
// Pieces live until the whole text is written, though, and the young generation copies what
// survives it: for the 5.5M units of the XL list, pieces all the way made the object path slower
// (37.5 -> 41.4 ms). So a list whose text is projected (from the part made so far) to pass
// MAX_PIECED units has the rest in one piece, and a list of more than MAX_ELEMENTS is
// stringified whole. So is a list of at most FIRST elements: short lists gain nothing from
// splitting and paid for it (one message, the S workload: 3.3 -> 4.3 us; 50 messages, M: 115
// -> 119 us).

/**
 * About how many UTF-16 units of JSON text each piece holds: under 64K, and not much less, as
 * every piece costs a JSON.stringify call (16K-unit pieces took 0.06 ms more on L-intl).
 */
const PIECE_UNITS = 32768;
/** Elements in the first piece; a list of no more is stringified whole (see the top). */
const FIRST = 64;
/** Longest text, in UTF-16 units, made in pieces (see the top). */
const MAX_PIECED = 1 << 20;
/**
 * Longest list made in pieces. Reading every element first (for toJSON) costs ~0.1 ms per
 * 10,000 messages, which a list whose text passes MAX_PIECED pays for nothing (the XL and
 * SMALL10K lists: 1-2% slower); past 4,096 elements a list of chat messages is that long.
 */
const MAX_ELEMENTS = 4096;

/**
 * JSON.stringify's text of a value: of an array, possibly as the texts of consecutive runs of
 * its elements ("[a,b]" and "[c]" stand for "[a,b,c]": each boundary "][" is a ","); of any
 * value, as one piece. Being JSON.stringify's output, its strings and numbers are already in
 * RFC 8785's spelling, which the core relies on (F_STRINGIFIED in assembly/json.ts): text from
 * anywhere else must not be wrapped in one. Internal to src/core.
 */
export class ArrayText {
  /** Length of the whole text in UTF-16 units. */
  readonly units: number;

  constructor(readonly pieces: readonly string[]) {
    let units = 1 - pieces.length;
    for (const p of pieces) units += p.length;
    this.units = units;
  }

  /** The whole text as one string (for error reports and engines without a UTF-16 path). */
  text(): string {
    return this.pieces.length === 1 ? this.pieces[0]! : `[${this.pieces.map((p) => p.slice(1, -1)).join(',')}]`;
  }

  /** Writes the whole text as UTF-16LE at byte `at` of buf (room for 2 x units bytes). */
  writeUtf16(buf: Buffer, at: number): void {
    const pieces = this.pieces;
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i]!;
      // After the first, each piece goes over the previous piece's "]", and its "[" becomes ",".
      if (i > 0) at -= 2;
      buf.write(p, at, p.length * 2, 'utf16le');
      if (i > 0) buf[at] = 0x2c;
      at += p.length * 2;
    }
  }
}

/**
 * JSON.stringify(array) in pieces (see ArrayText), or undefined when it is better stringified
 * whole: a short or very long array (see FIRST and MAX_ELEMENTS), or one that has a toJSON
 * method or whose elements do, which JSON.stringify calls with the element's index (a piece
 * would pass its index within the piece), or with a BigInt element (BigInt.prototype.toJSON, if
 * defined, likewise). Each element is read once, before any is stringified. Throws what
 * JSON.stringify throws.
 *
 * @example
 * const list = Array.from({ length: 1000 }, (_, i) => ({ role: 'user', content: `message ${i}` }))
 * stringifyPieces(list)?.text() === JSON.stringify(list) // true
 */
export function stringifyPieces(array: readonly unknown[]): ArrayText | undefined {
  if (typeof (array as { toJSON?: unknown }).toJSON === 'function') return undefined;
  const n = array.length;
  if (n <= FIRST || n > MAX_ELEMENTS) return undefined;
  // Filled by push, so that V8 keeps it a packed array: JSON.stringify walks a holey one (what
  // new Array(n) makes) more slowly, 0.4 ms more for the 10,000 messages of XL.
  const items: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const v: unknown = array[i];
    if (typeof v === 'bigint') return undefined;
    if (((typeof v === 'object' && v !== null) || typeof v === 'function') && typeof (v as { toJSON?: unknown }).toJSON === 'function') return undefined;
    items.push(v);
  }
  const pieces: string[] = [];
  let units = 0;
  let per = FIRST; // elements in the next piece, then adapted to the sizes seen so far
  let rest = false; // the rest of the list goes in one piece
  for (let i = 0; i < n; ) {
    const k = rest ? n - i : Math.min(per, n - i);
    const s = JSON.stringify(items.slice(i, i + k));
    pieces.push(s);
    units += s.length;
    i += k;
    per = Math.max(1, Math.floor((k * PIECE_UNITS) / s.length));
    // The whole text, projected from the part made so far, is too long for pieces.
    rest = units * (n / i) > MAX_PIECED;
  }
  return new ArrayText(pieces);
}
