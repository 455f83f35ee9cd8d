// Lowercase hex encoding of digests, done here because reading ASCII out of memory as a Latin-1
// string is ~5x cheaper for JavaScript than Node's own hex encoder (measured: 3.7 us vs 0.75 us
// for 100 digests).

const DIGITS: usize = memory.data<u8>([0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66]);

/** Writes 2n hex characters for the n bytes at src to dst. */
export function hexEncode(src: usize, n: usize, dst: usize): void {
  let i: usize = 0;
  if (ASC_FEATURE_SIMD) {
    const table = v128.load(DIGITS);
    const low = i8x16.splat(0x0f);
    for (; i + 16 <= n; i += 16) {
      const v = v128.load(src + i);
      const hi = i8x16.swizzle(table, i8x16.shr_u(v, 4));
      const lo = i8x16.swizzle(table, v128.and(v, low));
      v128.store(dst + 2 * i, i8x16.shuffle(hi, lo, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
      v128.store(dst + 2 * i + 16, i8x16.shuffle(hi, lo, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
    }
  }
  for (; i < n; i++) {
    const b = <usize>load<u8>(src + i);
    store<u8>(dst + 2 * i, load<u8>(DIGITS + (b >> 4)));
    store<u8>(dst + 2 * i + 1, load<u8>(DIGITS + (b & 15)));
  }
}
