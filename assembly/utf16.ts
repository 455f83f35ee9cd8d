// UTF-16 -> UTF-8 transcoding inside the module. JavaScript strings are UTF-16; copying one into
// memory as UTF-16 is a plain memcpy for V8's two-byte strings, whereas Node's UTF-8 encoders
// cost ~1 ms per 500 KB of non-ASCII text (measured on the L workload). Transcoding here, with
// 16 ASCII units per step in the SIMD build, is several times cheaper.
//
// Text that mixes scripts (the L-intl workload: 30% non-ASCII words) stops the 16-unit step
// every few words. The step therefore keeps the ASCII units before the first non-ASCII one
// (found from the lane mask) and the scalar part then takes the whole run of non-ASCII units,
// so no unit is looked at twice; retrying the full step one unit at a time after each stop made
// the transcoder the largest single cost of hashing that workload from JavaScript objects.

/**
 * Transcodes `units` UTF-16LE code units at src to UTF-8 at dst (room for 3 bytes per unit).
 * Returns the number of bytes written, or -(i + 1) if unit i is an unpaired surrogate.
 */
export function utf16ToUtf8(src: usize, units: u32, dst: usize): i32 {
  let p = src;
  const end = src + (<usize>units << 1);
  let o = dst;
  while (p < end) {
    if (ASC_FEATURE_SIMD) {
      const hiMask = i16x8.splat(<i16>0xff80);
      const zero = i16x8.splat(0);
      while (p + 32 <= end) {
        const a = v128.load(p);
        const b = v128.load(p + 16);
        // Narrowing saturates non-ASCII lanes; only the ASCII prefix is kept (o advances by it),
        // and the bytes after it are overwritten next. There is room: 16 units remain, and the
        // output has 3 bytes per unit.
        v128.store(o, i8x16.narrow_i16x8_u(a, b));
        if (!v128.any_true(v128.and(v128.or(a, b), hiMask))) {
          p += 32;
          o += 16;
          continue;
        }
        const bits = i16x8.bitmask(i16x8.ne(v128.and(a, hiMask), zero)) | (i16x8.bitmask(i16x8.ne(v128.and(b, hiMask), zero)) << 8);
        const k = <usize>ctz(bits);
        p += k << 1;
        o += k;
        break;
      }
    } else {
      while (p + 8 <= end) {
        const w = load<u64>(p);
        if ((w & 0xff80ff80ff80ff80) != 0) break;
        store<u8>(o, <u8>w);
        store<u8>(o + 1, <u8>(w >> 16));
        store<u8>(o + 2, <u8>(w >> 32));
        store<u8>(o + 3, <u8>(w >> 48));
        p += 8;
        o += 4;
      }
    }
    // One unit at a time: ASCII up to the first non-ASCII unit (the scalar build's partial word),
    // then the run of non-ASCII units, until ASCII follows again.
    let seenWide = false;
    while (p < end) {
      const c = <u32>load<u16>(p);
      if (c < 0x80) {
        if (seenWide) break;
        store<u8>(o++, <u8>c);
        p += 2;
        continue;
      }
      seenWide = true;
      p += 2;
      if (c < 0x800) {
        store<u8>(o, <u8>(0xc0 | (c >> 6)));
        store<u8>(o + 1, <u8>(0x80 | (c & 0x3f)));
        o += 2;
      } else if (c < 0xd800 || c > 0xdfff) {
        store<u8>(o, <u8>(0xe0 | (c >> 12)));
        store<u8>(o + 1, <u8>(0x80 | ((c >> 6) & 0x3f)));
        store<u8>(o + 2, <u8>(0x80 | (c & 0x3f)));
        o += 3;
      } else {
        const d = p < end ? <u32>load<u16>(p) : 0;
        if (c > 0xdbff || d < 0xdc00 || d > 0xdfff) return -<i32>(((p - 2 - src) >> 1) + 1);
        p += 2;
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        store<u8>(o, <u8>(0xf0 | (cp >> 18)));
        store<u8>(o + 1, <u8>(0x80 | ((cp >> 12) & 0x3f)));
        store<u8>(o + 2, <u8>(0x80 | ((cp >> 6) & 0x3f)));
        store<u8>(o + 3, <u8>(0x80 | (cp & 0x3f)));
        o += 4;
      }
    }
  }
  return <i32>(o - dst);
}
