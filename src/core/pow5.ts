// The 128-bit powers of five the core's number conversions read (assembly/number.ts), written
// into a build's memory by the loader. The builds for Node embed the table (it is data, 10 KB
// that gzip cannot shrink); the browser's build leaves the space empty and asks for it
// (pow5Table() exports its address), which keeps a page's download ~10 KB smaller. Computed
// exactly with BigInt as scripts/gen-tables.mjs does for the embedded table (test/build.test.ts
// holds the two to the same bytes).

/** The table covers 5^q for q in [POW5_QMIN, POW5_QMAX] (assembly/generated/number-tables.ts). */
export const POW5_QMIN = -342;
export const POW5_QMAX = 324;

/**
 * Writes the table at `at` in `memory`: per q, the 128 most significant bits of 5^q with bit 127
 * set (truncated for q >= 0, rounded up for q < 0), as the u64 pair (high, low), little-endian.
 *
 * @example
 * writePow5Table(memory.buffer, exports.pow5Table())
 */
export function writePow5Table(memory: ArrayBuffer, at: number): void {
  const view = new DataView(memory, at, (POW5_QMAX - POW5_QMIN + 1) * 16);
  const low = (1n << 64n) - 1n;
  let up = 1n; // 5^q for q >= 0, growing
  let down = 1n; // 5^-q for q < 0, growing as q falls
  const put = (q: number, t: bigint) => {
    view.setBigUint64((q - POW5_QMIN) * 16, t >> 64n, true);
    view.setBigUint64((q - POW5_QMIN) * 16 + 8, t & low, true);
  };
  for (let q = 0; q <= POW5_QMAX; q++, up *= 5n) {
    const p = up.toString(2).length - 1;
    put(q, p <= 127 ? up << BigInt(127 - p) : up >> BigInt(p - 127));
  }
  for (let q = -1; q >= POW5_QMIN; q--) {
    down *= 5n;
    // 5^q lies in [2^p, 2^(p+1)) with p = -bitLength(5^-q) (never a power of two): ceil(2^(127-p) / 5^-q).
    const num = 1n << BigInt(127 + down.toString(2).length);
    put(q, (num + down - 1n) / down);
  }
}
