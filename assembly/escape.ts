// Backslash escapes in a 16- or 32-byte block of a JSON string, found for the whole block at
// once: the string scanners (tape.ts scanString, json.ts writeString) pass over the escapes they
// need not look at (tool-call arguments and tool results are JSON in JSON: a `\"` every few
// bytes) with no loop over them, and an escape cut by a step's end is carried into the next step
// as one bit.

/**
 * The bytes that backslashes escape in a block of 16 or 32 bytes (`even`: 0x5555 or 0x55555555,
 * its even positions), as bits 0-16 or 0-32 (the last: the first byte of the next block, escaped
 * by a backslash that ends this one), given the block's backslashes and `carry` (1: the block's
 * first byte is escaped by a backslash that ended the block before). Escaped backslashes are
 * left out: a bit marks the second byte of every escape but `\\`, which is always valid.
 *
 * In a run of backslashes every second one is escaped, and the byte after the run is when the
 * run's length is odd. Adding a run's lowest bit to the run carries to the byte after it, so the
 * runs that start at an even position and end at an odd one have odd length, and the other way
 * round (the odd-sequence trick of simdjson).
 */
// @ts-ignore: decorator
@inline export function escapedBytes<T>(slashes: T, carry: T, even: T): T {
  const odd = even << 1;
  const s = slashes & ~carry; // a first byte escaped by the last block is no escape's backslash
  const starts = s & ~(s << 1);
  const afterEven = (s + (starts & even)) & ~s;
  const afterOdd = (s + (starts & odd)) & ~s;
  // The bit after the block's last one counts as even (blocks have an even number of bytes).
  return (afterEven & odd) | (afterOdd & (even | (even + odd + <T>1))) | (carry & ~slashes);
}

/**
 * Per byte of v: one bit when the byte is a letter of a short escape (`"` 1, `/` 2, `b` 4, `f`
 * 8, `n` 16, `r` 32, `t` 64), else 0; with `slash` false, `/` is 0 too (RFC 8785 writes `\/` as
 * `/`). A byte is a letter when the classes of its high and its low nibble share a bit.
 */
// @ts-ignore: decorator
@inline export function escapeLetters(v: v128, slash: bool): v128 {
  // Static data declared here, so that builds without SIMD leave it out.
  const HIGH: usize = memory.data<u8>([0, 0, 1 | 2, 0, 0, 0, 4 | 8 | 16, 32 | 64, 0, 0, 0, 0, 0, 0, 0, 0], 16);
  const HIGH_CANONICAL: usize = memory.data<u8>([0, 0, 1, 0, 0, 0, 4 | 8 | 16, 32 | 64, 0, 0, 0, 0, 0, 0, 0, 0], 16);
  const LOW: usize = memory.data<u8>([0, 0, 1 | 4 | 32, 0, 64, 0, 8, 0, 0, 0, 0, 0, 0, 0, 16, 2], 16);
  const high = i8x16.swizzle(v128.load(slash ? HIGH : HIGH_CANONICAL), i8x16.shr_u(v, 4));
  const low = i8x16.swizzle(v128.load(LOW), v128.and(v, i8x16.splat(0x0f)));
  return v128.and(high, low);
}
