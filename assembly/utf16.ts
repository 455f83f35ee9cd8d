// UTF-16 -> UTF-8 transcoding inside the module. JavaScript strings are UTF-16; copying one into
// memory as UTF-16 is a plain memcpy for V8's two-byte strings, whereas Node's UTF-8 encoders
// cost ~1 ms per 500 KB of non-ASCII text (measured on the L workload). Transcoding here, with
// 16 ASCII units per step in the SIMD build, is several times cheaper.
//
// Text that mixes scripts (the L-intl workload: 30% non-ASCII words, 22,000 runs of non-ASCII
// units in 500,000) stops the ASCII step every few words. Encoding those runs one unit at a time
// made this the largest single cost of hashing that workload from JavaScript objects after
// JSON.stringify and SHA-256 (0.48 ms of 3.8 ms; 0.04 ms for the mostly ASCII L). So the SIMD
// build encodes a step of 16 units holding non-ASCII ones as a whole, two blocks of 8 built in
// every UTF-8 width and packed by table (encode8), surrogate pairs included (encodePairs8). It
// does not test the blocks for ASCII first: mixed text mispredicts that branch so often that
// testing cost more than it saved, as did going back to the ASCII step after every block.
// Measured alone on the L-intl message list: 0.48 -> 0.30 ms; 500K units of CJK text 0.53 ->
// 0.23 ms; the L list 0.038 -> 0.045 ms.

/**
 * Transcodes `units` UTF-16LE code units at src to UTF-8 at dst (room for 3 bytes per unit, and
 * 16 bytes of slack after them: the SIMD build stores whole vectors and keeps what it needs).
 * Returns the number of bytes written, or -(i + 1) if unit i is an unpaired surrogate.
 */
export function utf16ToUtf8(src: usize, units: u32, dst: usize): i32 {
  return ASC_FEATURE_SIMD ? simd(src, units, dst) : scalar(src, units, dst);
}

// For 4 units whose UTF-8 bytes are laid out one unit per 32-bit lane ([b0, b1, b2, -]), entry
// k (16 bytes) is the swizzle that packs the bytes in use to the front. k's low nibble has a bit
// per unit of 2 bytes or more, its high nibble a bit per unit of 3 bytes (a subset of the low).
const PACK: usize = ASC_FEATURE_SIMD ? memory.data(256 * 16, 16) : 0;
let packReady = false;

/** Builds the PACK table on first use (encode8 and encodePairs8 read it). */
@inline export function ensurePack(): void {
  if (!packReady) initPack();
}

function initPack(): void {
  for (let k = 0; k < 256; k++) {
    const at = PACK + (<usize>k << 4);
    let n: usize = 0;
    for (let lane = 0; lane < 4; lane++) {
      const len = 1 + ((k >> lane) & 1) + ((k >> (lane + 4)) & 1);
      for (let j = 0; j < len; j++) store<u8>(at + n++, <u8>(lane * 4 + j));
    }
    while (n < 16) store<u8>(at + n++, 0x80); // out of range: a zero byte, never kept
  }
  packReady = true;
}

/**
 * Packs the UTF-8 of 8 units, given per 16-bit lane as its first two bytes (`head`, little-endian)
 * and third byte (`third`), to o; returns the new cursor. `wide` marks units of 2 bytes or more,
 * `wider` those of 3. Two swizzles pack the used bytes of each half together.
 */
@inline function pack8(head: v128, third: v128, wide: v128, wider: v128, o: usize): usize {
  const lo = i8x16.shuffle(head, third, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const hi = i8x16.shuffle(head, third, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  const k = <u32>i16x8.bitmask(wide) | (<u32>i16x8.bitmask(wider) << 8);
  const kLo = (k & 0x0f) | ((k >> 4) & 0xf0);
  const kHi = ((k >> 4) & 0x0f) | ((k >> 8) & 0xf0);
  v128.store(o, i8x16.swizzle(lo, v128.load(PACK + (<usize>kLo << 4))));
  o += 4 + <usize>popcnt(kLo);
  v128.store(o, i8x16.swizzle(hi, v128.load(PACK + (<usize>kHi << 4))));
  return o + 4 + <usize>popcnt(kHi);
}

/** Per 16-bit lane: 10xxxxxx of the unit's bits 0-5, a UTF-8 continuation byte. */
@inline function last6(c: v128): v128 {
  return v128.or(v128.and(c, i16x8.splat(0x3f)), i16x8.splat(0x80));
}

/**
 * Per 16-bit lane, the first two UTF-8 bytes (little-endian) of a BMP unit that is not a
 * surrogate: the unit itself (1 byte), 110xxxxx + last6, or 1110xxxx + 10xxxxxx of bits 6-11.
 * `wide` marks units of 2 bytes or more, `wider` those of 3; a 3-byte unit's last byte is last6.
 */
@inline function bmpHead(c: v128, wide: v128, wider: v128): v128 {
  const mid = v128.or(v128.and(i16x8.shr_u(c, 6), i16x8.splat(0x3f)), i16x8.splat(0x80));
  const two = v128.or(v128.or(i16x8.shr_u(c, 6), i16x8.splat(0xc0)), i16x8.shl(last6(c), 8));
  const three = v128.or(v128.or(i16x8.shr_u(c, 12), i16x8.splat(0xe0)), i16x8.shl(mid, 8));
  return v128.bitselect(three, v128.bitselect(two, c, wide), wider);
}

/** UTF-8 of 8 units, none a surrogate, at o; returns the new cursor. */
@inline function encode8(c: v128, o: usize): usize {
  const wide = i16x8.ge_u(c, i16x8.splat(0x80));
  const wider = i16x8.ge_u(c, i16x8.splat(0x800));
  return pack8(bmpHead(c, wide, wider), last6(c), wide, wider, o);
}

/**
 * encode8 for 8 units, none a surrogate, of which the ASCII ones marked in `esc` are written as
 * the two bytes of their lane of `escHead` (little-endian) instead: a backslash and a letter.
 */
@inline function encodeEscaped8(c: v128, esc: v128, escHead: v128, o: usize): usize {
  const wide = v128.or(i16x8.ge_u(c, i16x8.splat(0x80)), esc);
  const wider = i16x8.ge_u(c, i16x8.splat(0x800));
  return pack8(v128.bitselect(escHead, bmpHead(c, wide, wider), esc), last6(c), wide, wider, o);
}

/**
 * UTF-8 of 16 units a, b, none a surrogate, at o, the ASCII ones marked in escA / escB written
 * as the two bytes of their lane of headA / headB (see encodeEscaped8); returns the new cursor.
 */
@inline export function encodeEscaped16(a: v128, b: v128, escA: v128, escB: v128, headA: v128, headB: v128, o: usize): usize {
  return encodeEscaped8(b, escB, headB, encodeEscaped8(a, escA, headA, o));
}

/**
 * encode8 for 8 units that hold surrogates: `surr` marks them, `high` the high ones, lane i of
 * `prev` is the unit before unit i, and every low surrogate follows a high one. A pair's 4 bytes
 * come two from each unit: the high unit's bits 2-9 (plus 0x40: the code point's bits 10-20)
 * give the first two, the low unit's bits 0-9 with the high unit's bits 0-1 the last two. The
 * ASCII units marked in `esc` are written as the two bytes of their lane of `escHead`, as in
 * encodeEscaped8.
 */
@inline function encodePairs8(c: v128, prev: v128, surr: v128, high: v128, esc: v128, escHead: v128, o: usize): usize {
  const cont = i16x8.splat(0x80);
  const wide = v128.or(i16x8.ge_u(c, i16x8.splat(0x80)), esc); // surrogates: 2 bytes each
  const wider = v128.andnot(i16x8.ge_u(c, i16x8.splat(0x800)), surr);
  const u = i16x8.add(v128.and(c, i16x8.splat(0x3ff)), i16x8.splat(0x40));
  const first = v128.or(v128.or(i16x8.shr_u(u, 8), i16x8.splat(0xf0)), i16x8.shl(v128.or(v128.and(i16x8.shr_u(u, 2), i16x8.splat(0x3f)), cont), 8));
  const bits = v128.or(v128.and(i16x8.shr_u(c, 6), i16x8.splat(0x0f)), i16x8.shl(v128.and(prev, i16x8.splat(3)), 4));
  const second = v128.or(v128.or(bits, cont), i16x8.shl(last6(c), 8));
  const head = v128.bitselect(escHead, v128.bitselect(v128.bitselect(first, second, high), bmpHead(c, wide, wider), surr), esc);
  return pack8(head, last6(c), wide, wider, o);
}

/** Input bytes the last encode16() took: 32, or 30 when it left a high surrogate for the next step. */
export let stepBytes: usize = 32;

/** Sets stepBytes for a step taken whole by the caller (32 bytes of input). */
@inline export function wholeStep(): void {
  stepBytes = 32;
}

/**
 * UTF-8 of 16 units a, b (at least one of them non-ASCII) at o; returns the new cursor, or 0 when
 * the step holds a lone surrogate (for the caller's unit-by-unit loop to find). Sets stepBytes.
 */
@inline export function encode16(a: v128, b: v128, o: usize): usize {
  const surrMask = i16x8.splat(<i16>0xf800);
  const surrBits = i16x8.splat(<i16>0xd800);
  const sa = i16x8.eq(v128.and(a, surrMask), surrBits);
  const sb = i16x8.eq(v128.and(b, surrMask), surrBits);
  stepBytes = 32;
  if (!v128.any_true(v128.or(sa, sb))) return encode8(b, encode8(a, o));
  const zero = v128.splat<i16>(0);
  return encodePairsEscaped16(a, b, sa, sb, zero, zero, zero, zero, o);
}

/**
 * encode16 for 16 units a, b holding surrogates (sa / sb: their lanes), the ASCII ones marked in
 * escA / escB written as the two bytes of their lane of headA / headB (see encodeEscaped8);
 * returns the new cursor, or 0 when the step holds a lone surrogate. Sets stepBytes.
 */
@inline export function encodePairsEscaped16(a: v128, b: v128, sa: v128, sb: v128, escA: v128, escB: v128, headA: v128, headB: v128, o: usize): usize {
  const highMask = i16x8.splat(<i16>0xfc00);
  const surrBits = i16x8.splat(<i16>0xd800);
  stepBytes = 32;
  // Surrogates. Every low surrogate must follow a high one, or the step holds a lone
  // surrogate. A high one in the last lane pairs with the next unit: 15 units are encoded (the
  // high one's 2 bytes, the last written, are dropped) and the next step starts at it.
  const ha = i16x8.eq(v128.and(a, highMask), surrBits);
  const hb = i16x8.eq(v128.and(b, highMask), surrBits);
  const highs = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(ha, hb));
  const lows = <u32>i8x16.bitmask(i8x16.narrow_i16x8_s(sa, sb)) & ~highs;
  if (lows != ((highs << 1) & 0xffff)) return 0;
  const cut = <usize>(highs >> 15);
  // Lane i of prevA / prevB: the unit before unit i of a / b (none before a's first).
  const prevA = i8x16.shuffle(a, a, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
  const prevB = i8x16.shuffle(a, b, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29);
  stepBytes = 32 - (cut << 1);
  return encodePairs8(b, prevB, sb, hb, escB, headB, encodePairs8(a, prevA, sa, ha, escA, headA, o)) - (cut << 1);
}

function simd(src: usize, units: u32, dst: usize): i32 {
  ensurePack();
  const hiMask = i16x8.splat(<i16>0xff80);
  let p = src;
  const end = src + (<usize>units << 1);
  let o = dst;
  while (p + 32 <= end) {
    const a = v128.load(p);
    const b = v128.load(p + 16);
    if (!v128.any_true(v128.and(v128.or(a, b), hiMask))) {
      v128.store(o, i8x16.narrow_i16x8_u(a, b));
      p += 32;
      o += 16;
      continue;
    }
    // 16 units holding non-ASCII ones, 8 at a time, ASCII ones included (see the top).
    const w = encode16(a, b, o);
    if (w == 0) break;
    o = w;
    p += stepBytes;
  }
  while (p < end) {
    const c = <u32>load<u16>(p);
    p += 2;
    if (c < 0x80) {
      store<u8>(o++, <u8>c);
      continue;
    }
    const n = encodeWide(c, p, end, o);
    if (n < 0) return -<i32>(((p - 2 - src) >> 1) + 1);
    if (n == 4) p += 2;
    o += n;
  }
  return <i32>(o - dst);
}

/**
 * Writes the UTF-8 of unit c (>= 0x80; the unit after it at p, if p < end, completes a high
 * surrogate) at o. Returns the bytes written (4: two units taken), or -1 for a lone surrogate.
 */
@inline export function encodeWide(c: u32, p: usize, end: usize, o: usize): i32 {
  if (c < 0x800) {
    store<u8>(o, <u8>(0xc0 | (c >> 6)));
    store<u8>(o + 1, <u8>(0x80 | (c & 0x3f)));
    return 2;
  }
  if (c < 0xd800 || c > 0xdfff) {
    store<u8>(o, <u8>(0xe0 | (c >> 12)));
    store<u8>(o + 1, <u8>(0x80 | ((c >> 6) & 0x3f)));
    store<u8>(o + 2, <u8>(0x80 | (c & 0x3f)));
    return 3;
  }
  const d = p < end ? <u32>load<u16>(p) : 0;
  if (c > 0xdbff || d < 0xdc00 || d > 0xdfff) return -1;
  const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
  store<u8>(o, <u8>(0xf0 | (cp >> 18)));
  store<u8>(o + 1, <u8>(0x80 | ((cp >> 12) & 0x3f)));
  store<u8>(o + 2, <u8>(0x80 | ((cp >> 6) & 0x3f)));
  store<u8>(o + 3, <u8>(0x80 | (cp & 0x3f)));
  return 4;
}

/** The scalar build: 4 ASCII units per 64-bit word, the rest unit by unit. */
function scalar(src: usize, units: u32, dst: usize): i32 {
  let p = src;
  const end = src + (<usize>units << 1);
  let o = dst;
  while (p < end) {
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
    // One unit at a time: ASCII up to the first non-ASCII unit (the partial word), then the run
    // of non-ASCII units, until ASCII follows again.
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
      const n = encodeWide(c, p, end, o);
      if (n < 0) return -<i32>(((p - 2 - src) >> 1) + 1);
      if (n == 4) p += 2;
      o += n;
    }
  }
  return <i32>(o - dst);
}
