// SHA-256 (FIPS 180-4) for the tapedeck core. One source, two builds:
//  - scalar build: plain i32 code throughout; sha256Many loops the one-shot.
//  - SIMD build (ASC_FEATURE_SIMD): sha256Many hashes four independent
//    messages at once, one per i32 lane of v128 registers, with a lane
//    scheduler; single-message hashing keeps the scalar rounds but computes
//    the message schedule four words at a time.
//
// No allocation anywhere: every buffer is a static `memory.data` area, so the
// module works with `--runtime stub` and calls never grow memory. The
// functions are therefore not reentrant (wasm is single-threaded here).
//
// Static memory (bytes): K 256, scalar schedule 256, scalar state 32,
// padding tail 128, path-chain message 192 + previous digest 32 + the 16
// precomputed last-block schedules 4096; SIMD build only: vector schedule
// 1024, lane tails 512, lane records 64, lane state 128, lane masks 64.
// About 4.9 KB (scalar) / 6.6 KB (SIMD), plus alignment padding.
//
// Streaming state layout (caller-owned, 128 bytes; wasm needs no alignment,
// 8 is recommended):
//   [0, 32)    H0..H7, eight u32 in host (little-endian) order
//   [32, 40)   u64 total number of bytes absorbed so far
//   [40, 64)   reserved (unused)
//   [64, 128)  pending partial block; (total & 63) bytes are valid
// sha256Final does not modify the state, so one may keep updating after it
// (it returns the digest of everything absorbed so far).

// ---------------------------------------------------------------------------
// Constants (FIPS 180-4 §4.2.2 and §5.3.3)

// First 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
], 16);

// Initial hash value H(0): fractional parts of the square roots of the first 8 primes.
const IV0: u32 = 0x6a09e667;
const IV1: u32 = 0xbb67ae85;
const IV2: u32 = 0x3c6ef372;
const IV3: u32 = 0xa54ff53a;
const IV4: u32 = 0x510e527f;
const IV5: u32 = 0x9b05688c;
const IV6: u32 = 0x1f83d9ab;
const IV7: u32 = 0x5be0cd19;

// ---------------------------------------------------------------------------
// Static scratch

const W: usize = memory.data(256, 16);     // scalar message schedule W0..W63
const HS: usize = memory.data(32, 16);     // scalar working state for one-shot / final / chain
const TAIL: usize = memory.data(128, 16);  // final 1-2 padded blocks (scalar paths)
const PM: usize = memory.data(192, 16);    // pathChain 129-byte message + padding = 3 blocks
const PPREV: usize = memory.data(32, 16);  // pathChain p_{i-1}, private copy (out may equal msgDigests)
const PW3: usize = memory.data(16 * 256, 16); // pathChain: W+K of block 3 for each final hex char
let pw3Ready = false;

// ---------------------------------------------------------------------------
// Scalar core

// FIPS 180-4 §4.1.2, eq. 4.4-4.7. wasm has a native i32.rotr.
@inline function bigS0(x: u32): u32 { return rotr<u32>(x, 2) ^ rotr<u32>(x, 13) ^ rotr<u32>(x, 22); }
@inline function bigS1(x: u32): u32 { return rotr<u32>(x, 6) ^ rotr<u32>(x, 11) ^ rotr<u32>(x, 25); }
@inline function smallS0(x: u32): u32 { return rotr<u32>(x, 7) ^ rotr<u32>(x, 18) ^ (x >>> 3); }
@inline function smallS1(x: u32): u32 { return rotr<u32>(x, 17) ^ rotr<u32>(x, 19) ^ (x >>> 10); }
// Ch rewritten with one operation fewer than the textbook form (same truth table);
// Maj is done inline in rounds() with a carried xor.
@inline function ch(e: u32, f: u32, g: u32): u32 { return g ^ (e & (f ^ g)); }

@inline function initState(h: usize): void {
  store<u32>(h, IV0, 0);  store<u32>(h, IV1, 4);
  store<u32>(h, IV2, 8);  store<u32>(h, IV3, 12);
  store<u32>(h, IV4, 16); store<u32>(h, IV5, 20);
  store<u32>(h, IV6, 24); store<u32>(h, IV7, 28);
}

// FIPS 180-4 §6.2.2 step 1, words 16..63 (the first 16 are already at w).
// Two words per iteration with W[t-2], W[t-1] carried in locals, so the
// dependency chain does not go through a store and a reload.
@inline function expand(w: usize): void {
  // Offsets relative to w + 4*(t-16): W[t-16] at 0, W[t-15] at 4, W[t-7] at 36.
  let x0 = load<u32>(w, 56), x1 = load<u32>(w, 60);
  for (let q = w, end = w + 192; q < end; q += 8) {
    x0 = smallS1(x0) + (load<u32>(q, 36) + smallS0(load<u32>(q, 4)) + load<u32>(q, 0));
    x1 = smallS1(x1) + (load<u32>(q, 40) + smallS0(load<u32>(q, 8)) + load<u32>(q, 4));
    store<u32>(q, x0, 64);
    store<u32>(q, x1, 68);
  }
}

// The 64 rounds (§6.2.2 steps 2-4) over the schedule at w, updating H at h.
// Unrolled by 8 so the variable rotation a..h is done by renaming instead of
// moves; the state stays in locals (registers). With addK false, w already
// holds W[t] + K[t] (always a literal at the call sites, so it folds away).
@inline function rounds(h: usize, w: usize, addK: bool): void {
  let a = load<u32>(h, 0),  b = load<u32>(h, 4),  c = load<u32>(h, 8),  d = load<u32>(h, 12);
  let e = load<u32>(h, 16), f = load<u32>(h, 20), g = load<u32>(h, 24), hh = load<u32>(h, 28);
  // Maj(a,b,c) = ((a^b) & (b^c)) ^ b, and this round's a^b is the next
  // round's b^c, so one xor is carried in x/y instead of recomputed.
  let x = b ^ c, y: u32;
  for (let i: usize = 0; i < 256; i += 32) {
    const k = K + i, q = w + i;
    let t: u32;
    t = hh + (addK ? load<u32>(k, 0) + load<u32>(q, 0) : load<u32>(q, 0)) + ch(e, f, g) + bigS1(e); d += t; y = a ^ b; hh = t + bigS0(a) + ((y & x) ^ b);
    t = g + (addK ? load<u32>(k, 4) + load<u32>(q, 4) : load<u32>(q, 4)) + ch(d, e, f) + bigS1(d); c += t; x = hh ^ a; g = t + bigS0(hh) + ((x & y) ^ a);
    t = f + (addK ? load<u32>(k, 8) + load<u32>(q, 8) : load<u32>(q, 8)) + ch(c, d, e) + bigS1(c); b += t; y = g ^ hh; f = t + bigS0(g) + ((y & x) ^ hh);
    t = e + (addK ? load<u32>(k, 12) + load<u32>(q, 12) : load<u32>(q, 12)) + ch(b, c, d) + bigS1(b); a += t; x = f ^ g; e = t + bigS0(f) + ((x & y) ^ g);
    t = d + (addK ? load<u32>(k, 16) + load<u32>(q, 16) : load<u32>(q, 16)) + ch(a, b, c) + bigS1(a); hh += t; y = e ^ f; d = t + bigS0(e) + ((y & x) ^ f);
    t = c + (addK ? load<u32>(k, 20) + load<u32>(q, 20) : load<u32>(q, 20)) + ch(hh, a, b) + bigS1(hh); g += t; x = d ^ e; c = t + bigS0(d) + ((x & y) ^ e);
    t = b + (addK ? load<u32>(k, 24) + load<u32>(q, 24) : load<u32>(q, 24)) + ch(g, hh, a) + bigS1(g); f += t; y = c ^ d; b = t + bigS0(c) + ((y & x) ^ d);
    t = a + (addK ? load<u32>(k, 28) + load<u32>(q, 28) : load<u32>(q, 28)) + ch(f, g, hh) + bigS1(f); e += t; x = b ^ c; a = t + bigS0(b) + ((x & y) ^ c);
  }
  store<u32>(h, load<u32>(h, 0) + a, 0);   store<u32>(h, load<u32>(h, 4) + b, 4);
  store<u32>(h, load<u32>(h, 8) + c, 8);   store<u32>(h, load<u32>(h, 12) + d, 12);
  store<u32>(h, load<u32>(h, 16) + e, 16); store<u32>(h, load<u32>(h, 20) + f, 20);
  store<u32>(h, load<u32>(h, 24) + g, 24); store<u32>(h, load<u32>(h, 28) + hh, 28);
}

// Message words are big-endian (§3.1, §5.2.1); wasm loads are little-endian.
@inline function loadBlock(w: usize, p: usize): void {
  for (let i: usize = 0; i < 64; i += 8) {
    store<u32>(w + i, bswap<u32>(load<u32>(p + i)));
    store<u32>(w + i, bswap<u32>(load<u32>(p + i, 4)), 4);
  }
}

// One 64-byte block at p into the state at h. Deliberately a separate small
// function called once per block: V8 starts wasm in its baseline compiler
// and swaps in optimized code only at function entry (no on-stack
// replacement), so a single call looping over a 1 MB input would run
// entirely in baseline code the first time.
function compressBlock(h: usize, p: usize): void {
  if (ASC_FEATURE_SIMD) {
    scheduleX(W, p);
    rounds(h, W, false);
  } else {
    loadBlock(W, p);
    expand(W);
    rounds(h, W, true);
  }
}

// SIMD build: the single-message schedule four words at a time (the vector
// form of §6.2.2 step 1), written as W[t] + K[t]. Only W[t] and W[t+1] of
// each group depend on the group itself (through sigma1 of W[t-2], W[t-1]),
// so sigma1 is applied twice: first for lanes 0-1 from the previous group,
// then for lanes 2-3 from the fresh lanes 0-1. The sliding window of raw
// words stays in registers.
@inline function scheduleX(w: usize, p: usize): void {
  const bs = i8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  let x0 = i8x16.swizzle(v128.load(p, 0), bs);
  let x1 = i8x16.swizzle(v128.load(p, 16), bs);
  let x2 = i8x16.swizzle(v128.load(p, 32), bs);
  let x3 = i8x16.swizzle(v128.load(p, 48), bs);
  v128.store(w, i32x4.add(x0, v128.load(K, 0)), 0);
  v128.store(w, i32x4.add(x1, v128.load(K, 16)), 16);
  v128.store(w, i32x4.add(x2, v128.load(K, 32)), 32);
  v128.store(w, i32x4.add(x3, v128.load(K, 48)), 48);
  for (let i: usize = 64; i < 256; i += 16) {
    // x0..x3 = W[t-16..t-1]; the unaligned windows are palignr shuffles.
    const w15 = i8x16.shuffle(x0, x1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
    const w7 = i8x16.shuffle(x2, x3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
    const base = i32x4.add(i32x4.add(x0, w7), vs0(w15));
    const s1a = vs1(x3);
    const lo = i32x4.add(base, i32x4.shuffle(s1a, s1a, 2, 3, 2, 3));
    const s1b = vs1(lo);
    const hi = i32x4.add(base, i32x4.shuffle(s1b, s1b, 0, 1, 0, 1));
    x0 = x1; x1 = x2; x2 = x3;
    x3 = i64x2.shuffle(lo, hi, 0, 3);
    v128.store(w + i, i32x4.add(x3, v128.load(K + i)));
  }
}

// Compress n consecutive 64-byte blocks at p into the state at h.
@inline function compress(h: usize, p: usize, n: usize): void {
  for (; n; n--, p += 64) compressBlock(h, p);
}

// Writes the padded final block(s) for a message whose last r (< 64) bytes
// are at src and whose total length is len bytes (§5.1.1): the bytes, 0x80,
// zeros, then the 64-bit big-endian bit length. Returns 1 or 2 blocks.
@inline function writeTail(dst: usize, src: usize, r: usize, len: u64): usize {
  // Zero first so only the message bytes, 0x80 and the length need writing.
  for (let i: usize = 0; i < 128; i += 16) {
    store<u64>(dst + i, 0);
    store<u64>(dst + i, 0, 8);
  }
  let i: usize = 0;
  for (; i + 8 <= r; i += 8) store<u64>(dst + i, load<u64>(src + i));
  for (; i < r; i++) store<u8>(dst + i, load<u8>(src + i));
  store<u8>(dst + r, 0x80);
  // 0x80 plus the 8-byte length must fit: r <= 55 gives one block.
  const n: usize = r < 56 ? 1 : 2;
  store<u64>(dst + (n << 6) - 8, bswap<u64>(len << 3));
  return n;
}

@inline function writeDigest(h: usize, out: usize): void {
  store<u32>(out, bswap<u32>(load<u32>(h, 0)), 0);
  store<u32>(out, bswap<u32>(load<u32>(h, 4)), 4);
  store<u32>(out, bswap<u32>(load<u32>(h, 8)), 8);
  store<u32>(out, bswap<u32>(load<u32>(h, 12)), 12);
  store<u32>(out, bswap<u32>(load<u32>(h, 16)), 16);
  store<u32>(out, bswap<u32>(load<u32>(h, 20)), 20);
  store<u32>(out, bswap<u32>(load<u32>(h, 24)), 24);
  store<u32>(out, bswap<u32>(load<u32>(h, 28)), 28);
}

// ---------------------------------------------------------------------------
// Public scalar API

export function sha256(ptr: usize, len: usize, out: usize): void {
  initState(HS);
  const full = len >>> 6;
  compress(HS, ptr, full);
  const n = writeTail(TAIL, ptr + (full << 6), len & 63, <u64>len);
  compress(HS, TAIL, n);
  writeDigest(HS, out);
}

export function sha256Init(state: usize): void {
  initState(state);
  store<u64>(state, 0, 32);
}

export function sha256Update(state: usize, ptr: usize, len: usize): void {
  const total = load<u64>(state, 32);
  store<u64>(state, total + <u64>len, 32);
  const used = <usize>(total & 63);
  const buf = state + 64;
  if (used) {
    const free: usize = 64 - used;
    const take = len < free ? len : free;
    memory.copy(buf + used, ptr, take);
    ptr += take;
    len -= take;
    if (used + take < 64) return;
    compress(state, buf, 1);
  }
  const full = len >>> 6;
  compress(state, ptr, full);
  ptr += full << 6;
  len &= 63;
  if (len) memory.copy(buf, ptr, len);
}

export function sha256Final(state: usize, out: usize): void {
  const total = load<u64>(state, 32);
  // Work on a copy of H so the caller's state stays valid.
  memory.copy(HS, state, 32);
  const n = writeTail(TAIL, state + 64, <usize>(total & 63), total);
  compress(HS, TAIL, n);
  writeDigest(HS, out);
}

// ---------------------------------------------------------------------------
// sha256Many: jobs are count records {ptr: u32, len: u32}; digest i goes to
// out + 32*i. out must not overlap the job records or any input (the SIMD
// build writes digests as lanes finish, out of job order).

export function sha256Many(jobs: usize, count: i32, out: usize): void {
  if (ASC_FEATURE_SIMD) {
    manyX4(jobs, count, out);
  } else {
    for (let i = 0; i < count; i++) {
      const j = jobs + (<usize>i << 3);
      sha256(load<u32>(j, 0), load<u32>(j, 4), out + (<usize>i << 5));
    }
  }
}

// ---------------------------------------------------------------------------
// 4-lane multi-buffer SHA-256 (SIMD build only)
//
// Lane l of every v128 holds message l's word. Each step compresses one block
// per lane; the block comes from the message itself or, for its last 1-2
// blocks, from the lane's padded tail buffer. When a lane's message is done,
// its digest is extracted and the lane is refilled with the next job, so
// lanes never wait for each other. Idle lanes (no jobs left) hash junk
// whose result is ignored; once a single job remains it is finished with the
// single-message code instead (a 1-of-4-lanes step costs as much as 4).

// The scalar build does not reserve these.
const WV: usize = ASC_FEATURE_SIMD ? memory.data(64 * 16, 16) : 0;   // schedule, one v128 per t
const LTAIL: usize = ASC_FEATURE_SIMD ? memory.data(4 * 128, 16) : 0; // per-lane padded tail blocks
// Per-lane record, 16 bytes: [0] current block ptr, [4] blocks left (0 = idle),
// [8] number of tail blocks, [12] job index.
const LREC: usize = ASC_FEATURE_SIMD ? memory.data(4 * 16, 16) : 0;
const SV: usize = ASC_FEATURE_SIMD ? memory.data(8 * 16, 16) : 0; // 4-lane state: a..h, one v128 each
const LMASK: usize = !ASC_FEATURE_SIMD ? 0 : memory.data<u32>([
  0xffffffff, 0, 0, 0,
  0, 0xffffffff, 0, 0,
  0, 0, 0xffffffff, 0,
  0, 0, 0, 0xffffffff,
], 16);

// wasm SIMD has no lane rotate; two shifts and an or. (32 - n) folds to a constant.
@inline function vrotr(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n));
}
@inline function vS0(x: v128): v128 { return v128.xor(v128.xor(vrotr(x, 2), vrotr(x, 13)), vrotr(x, 22)); }
@inline function vS1(x: v128): v128 { return v128.xor(v128.xor(vrotr(x, 6), vrotr(x, 11)), vrotr(x, 25)); }
@inline function vs0(x: v128): v128 { return v128.xor(v128.xor(vrotr(x, 7), vrotr(x, 18)), i32x4.shr_u(x, 3)); }
@inline function vs1(x: v128): v128 { return v128.xor(v128.xor(vrotr(x, 17), vrotr(x, 19)), i32x4.shr_u(x, 10)); }
// Ch(e,f,g): e selects f, else g, which is exactly a bitselect.
@inline function vch(e: v128, f: v128, g: v128): v128 { return v128.bitselect(f, g, e); }

// Transposes 16 bytes (4 words) from each of 4 blocks into 4 v128s, word t of
// all lanes, byte-swapped to big-endian. Interleaves are cheap unpack
// instructions; the byte swap is a single pshufb per output.
@inline function gather4(p0: usize, p1: usize, p2: usize, p3: usize, o: usize, dst: usize): void {
  const A = v128.load(p0 + o), B = v128.load(p1 + o), C = v128.load(p2 + o), D = v128.load(p3 + o);
  const ab01 = i32x4.shuffle(A, B, 0, 4, 1, 5);
  const cd01 = i32x4.shuffle(C, D, 0, 4, 1, 5);
  const ab23 = i32x4.shuffle(A, B, 2, 6, 3, 7);
  const cd23 = i32x4.shuffle(C, D, 2, 6, 3, 7);
  const bs = i8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  v128.store(dst, i8x16.swizzle(i64x2.shuffle(ab01, cd01, 0, 2), bs), 0);
  v128.store(dst, i8x16.swizzle(i64x2.shuffle(ab01, cd01, 1, 3), bs), 16);
  v128.store(dst, i8x16.swizzle(i64x2.shuffle(ab23, cd23, 0, 2), bs), 32);
  v128.store(dst, i8x16.swizzle(i64x2.shuffle(ab23, cd23, 1, 3), bs), 48);
}

@inline function laneStart(l: usize, jobs: usize, j: i32): void {
  const jr = jobs + (<usize>j << 3);
  const p = <usize>load<u32>(jr, 0);
  const len = <usize>load<u32>(jr, 4);
  const full = len >>> 6;
  const tail = LTAIL + (l << 7);
  const n = writeTail(tail, p + (full << 6), len & 63, <u64>len);
  const rec = LREC + (l << 4);
  store<u32>(rec, full ? p : tail, 0);
  store<u32>(rec, full + n, 4);
  store<u32>(rec, n, 8);
  store<i32>(rec, j, 12);
}

// One compression step for all four lanes: block pointers p0..p3, state in SV.
// Kept out of line, with the state in memory between steps rather than in
// locals of the scheduler loop, so the engine's register allocator only has
// the round working set to place (x64 has 16 xmm registers; 8 go to a..h).
function stepX4(p0: usize, p1: usize, p2: usize, p3: usize): void {
  gather4(p0, p1, p2, p3, 0, WV);
  gather4(p0, p1, p2, p3, 16, WV + 64);
  gather4(p0, p1, p2, p3, 32, WV + 128);
  gather4(p0, p1, p2, p3, 48, WV + 192);
  // §6.2.2 step 1, t = 16..63, two words per iteration; offsets relative to
  // W[t-16] as in expand(). W[t-2] and W[t-1] are carried in registers: going
  // through memory would put a store-to-load forward on the critical path.
  let x0 = v128.load(WV, 14 * 16), x1 = v128.load(WV, 15 * 16);
  for (let q = WV, end = WV + 48 * 16; q < end; q += 32) {
    x0 = i32x4.add(vs1(x0), i32x4.add(v128.load(q, 9 * 16), i32x4.add(vs0(v128.load(q, 16)), v128.load(q, 0))));
    x1 = i32x4.add(vs1(x1), i32x4.add(v128.load(q, 10 * 16), i32x4.add(vs0(v128.load(q, 32)), v128.load(q, 16))));
    v128.store(q, x0, 16 * 16);
    v128.store(q, x1, 17 * 16);
  }
  let A = v128.load(SV, 0),  B = v128.load(SV, 16), C = v128.load(SV, 32),  D = v128.load(SV, 48);
  let E = v128.load(SV, 64), F = v128.load(SV, 80), G = v128.load(SV, 96), H = v128.load(SV, 112);
  // Maj carry as in the scalar rounds: this round's a^b is next round's b^c.
  let x = v128.xor(B, C), y: v128, t: v128;
  for (let i: usize = 0; i < 64; i += 8) {
    const k = K + (i << 2), q = WV + (i << 4);
    t = i32x4.add(i32x4.add(i32x4.add(H, v128.load32_splat(k, 0)), v128.load(q, 0)), i32x4.add(vch(E, F, G), vS1(E)));
    D = i32x4.add(D, t); y = v128.xor(A, B); H = i32x4.add(t, i32x4.add(vS0(A), v128.xor(v128.and(y, x), B)));
    t = i32x4.add(i32x4.add(i32x4.add(G, v128.load32_splat(k, 4)), v128.load(q, 16)), i32x4.add(vch(D, E, F), vS1(D)));
    C = i32x4.add(C, t); x = v128.xor(H, A); G = i32x4.add(t, i32x4.add(vS0(H), v128.xor(v128.and(x, y), A)));
    t = i32x4.add(i32x4.add(i32x4.add(F, v128.load32_splat(k, 8)), v128.load(q, 32)), i32x4.add(vch(C, D, E), vS1(C)));
    B = i32x4.add(B, t); y = v128.xor(G, H); F = i32x4.add(t, i32x4.add(vS0(G), v128.xor(v128.and(y, x), H)));
    t = i32x4.add(i32x4.add(i32x4.add(E, v128.load32_splat(k, 12)), v128.load(q, 48)), i32x4.add(vch(B, C, D), vS1(B)));
    A = i32x4.add(A, t); x = v128.xor(F, G); E = i32x4.add(t, i32x4.add(vS0(F), v128.xor(v128.and(x, y), G)));
    t = i32x4.add(i32x4.add(i32x4.add(D, v128.load32_splat(k, 16)), v128.load(q, 64)), i32x4.add(vch(A, B, C), vS1(A)));
    H = i32x4.add(H, t); y = v128.xor(E, F); D = i32x4.add(t, i32x4.add(vS0(E), v128.xor(v128.and(y, x), F)));
    t = i32x4.add(i32x4.add(i32x4.add(C, v128.load32_splat(k, 20)), v128.load(q, 80)), i32x4.add(vch(H, A, B), vS1(H)));
    G = i32x4.add(G, t); x = v128.xor(D, E); C = i32x4.add(t, i32x4.add(vS0(D), v128.xor(v128.and(x, y), E)));
    t = i32x4.add(i32x4.add(i32x4.add(B, v128.load32_splat(k, 24)), v128.load(q, 96)), i32x4.add(vch(G, H, A), vS1(G)));
    F = i32x4.add(F, t); y = v128.xor(C, D); B = i32x4.add(t, i32x4.add(vS0(C), v128.xor(v128.and(y, x), D)));
    t = i32x4.add(i32x4.add(i32x4.add(A, v128.load32_splat(k, 28)), v128.load(q, 112)), i32x4.add(vch(F, G, H), vS1(F)));
    E = i32x4.add(E, t); x = v128.xor(B, C); A = i32x4.add(t, i32x4.add(vS0(B), v128.xor(v128.and(x, y), C)));
  }
  v128.store(SV, i32x4.add(v128.load(SV, 0), A), 0);
  v128.store(SV, i32x4.add(v128.load(SV, 16), B), 16);
  v128.store(SV, i32x4.add(v128.load(SV, 32), C), 32);
  v128.store(SV, i32x4.add(v128.load(SV, 48), D), 48);
  v128.store(SV, i32x4.add(v128.load(SV, 64), E), 64);
  v128.store(SV, i32x4.add(v128.load(SV, 80), F), 80);
  v128.store(SV, i32x4.add(v128.load(SV, 96), G), 96);
  v128.store(SV, i32x4.add(v128.load(SV, 112), H), 112);
}

// Puts lane l of the state back to H(0) with a masked blend (whole-vector
// writes, so the next step's vector loads are store-forwarded).
@inline function laneReset(l: usize): void {
  const m = v128.load(LMASK + (l << 4));
  v128.store(SV, v128.bitselect(i32x4.splat(IV0), v128.load(SV, 0), m), 0);
  v128.store(SV, v128.bitselect(i32x4.splat(IV1), v128.load(SV, 16), m), 16);
  v128.store(SV, v128.bitselect(i32x4.splat(IV2), v128.load(SV, 32), m), 32);
  v128.store(SV, v128.bitselect(i32x4.splat(IV3), v128.load(SV, 48), m), 48);
  v128.store(SV, v128.bitselect(i32x4.splat(IV4), v128.load(SV, 64), m), 64);
  v128.store(SV, v128.bitselect(i32x4.splat(IV5), v128.load(SV, 80), m), 80);
  v128.store(SV, v128.bitselect(i32x4.splat(IV6), v128.load(SV, 96), m), 96);
  v128.store(SV, v128.bitselect(i32x4.splat(IV7), v128.load(SV, 112), m), 112);
}

function manyX4(jobs: usize, count: i32, out: usize): void {
  if (count <= 0) return;
  let next: i32 = 0;
  let active: i32 = 0;
  for (let l: usize = 0; l < 4; l++) {
    const rec = LREC + (l << 4);
    if (next < count) {
      laneStart(l, jobs, next++);
      laneReset(l);
      active++;
    } else {
      // Idle: any readable 64 bytes will do as the junk block.
      store<u32>(rec, K, 0);
      store<u32>(rec, 0, 4);
    }
  }

  while (active > 1) {
    stepX4(load<u32>(LREC, 0), load<u32>(LREC, 16), load<u32>(LREC, 32), load<u32>(LREC, 48));
    for (let l: usize = 0; l < 4; l++) {
      const rec = LREC + (l << 4);
      let left = load<u32>(rec, 4);
      if (!left) continue;
      left--;
      store<u32>(rec, left, 4);
      if (left) {
        // Next message block, or jump to the tail once only padded blocks remain.
        store<u32>(rec, left == load<u32>(rec, 8) ? <u32>(LTAIL + (l << 7)) : load<u32>(rec, 0) + 64, 0);
        continue;
      }
      laneDigest(SV + (l << 2), out + (<usize>load<i32>(rec, 12) << 5));
      if (next < count) {
        laneStart(l, jobs, next++);
        laneReset(l);
      } else {
        store<u32>(rec, K, 0);
        active--;
      }
    }
  }

  if (active == 1) {
    // One job left: 3 of 4 lanes would be wasted, so finish it with the
    // scalar code from wherever the lane is.
    for (let l: usize = 0; l < 4; l++) {
      const rec = LREC + (l << 4);
      const left = <usize>load<u32>(rec, 4);
      if (!left) continue;
      const sv = SV + (l << 2);
      for (let j: usize = 0; j < 8; j++) store<u32>(HS + (j << 2), load<u32>(sv + (j << 4)));
      const n = <usize>load<u32>(rec, 8);
      let p = <usize>load<u32>(rec, 0);
      if (left > n) {
        compress(HS, p, left - n);
        p = LTAIL + (l << 7);
      }
      compress(HS, p, left < n ? left : n);
      writeDigest(HS, out + (<usize>load<i32>(rec, 12) << 5));
      break;
    }
  }
}

@inline function laneDigest(sv: usize, out: usize): void {
  // Word j of this lane sits at sv + 16*j.
  store<u32>(out, bswap<u32>(load<u32>(sv, 0)), 0);
  store<u32>(out, bswap<u32>(load<u32>(sv, 16)), 4);
  store<u32>(out, bswap<u32>(load<u32>(sv, 32)), 8);
  store<u32>(out, bswap<u32>(load<u32>(sv, 48)), 12);
  store<u32>(out, bswap<u32>(load<u32>(sv, 64)), 16);
  store<u32>(out, bswap<u32>(load<u32>(sv, 80)), 20);
  store<u32>(out, bswap<u32>(load<u32>(sv, 96)), 24);
  store<u32>(out, bswap<u32>(load<u32>(sv, 112)), 28);
}

// ---------------------------------------------------------------------------
// pathChain
//
// Message i (i >= 1) is hex(p_{i-1}) ":" hex(m_i), 64 + 1 + 64 = 129 bytes,
// so always 3 blocks: [hex(p)] [":" hex(m)[0..63)] [hex(m)[63] 0x80 0... len].
// Block 3 holds one variable byte, the hex digit of m_i's low nibble, so its
// whole schedule (W0..W63) is one of 16 and is precomputed once.

// Two bytes -> four lowercase hex chars (little-endian u32, first char in the low byte).
@inline function hex2(b0: u32, b1: u32): u32 {
  // Nibbles in byte lanes: hi(b0), lo(b0), hi(b1), lo(b1).
  let x = (b0 >>> 4) | ((b0 & 15) << 8) | ((b1 >>> 4) << 16) | ((b1 & 15) << 24);
  // Lanes >= 10 get bit 4 set by +6; no lane carries out of its byte.
  const ge10 = ((x + 0x06060606) >>> 4) & 0x01010101;
  return x + 0x30303030 + ge10 * 0x27; // '0' + n, or 'a' + n - 10
}

// 32 bytes at src -> 64 hex chars at dst (dst may be unaligned).
@inline function hex32(dst: usize, src: usize): void {
  for (let i: usize = 0; i < 32; i += 2) {
    store<u32>(dst + (i << 1), hex2(load<u8>(src + i), load<u8>(src + i, 1)));
  }
}

function initPW3(): void {
  // Block 3 bytes: [hexchar, 0x80, 0 x 54 ... , BE64(129 * 8)]. Stored as
  // W[t] + K[t], the form the rounds consume.
  for (let v: u32 = 0; v < 16; v++) {
    const w = PW3 + (<usize>v << 8);
    memory.fill(w, 0, 256);
    const ch: u32 = v < 10 ? 0x30 + v : 0x61 + v - 10;
    store<u32>(w, (ch << 24) | 0x800000, 0);
    store<u32>(w, 129 * 8, 60);
    expand(w);
    for (let t: usize = 0; t < 256; t += 4) store<u32>(w + t, load<u32>(w + t) + load<u32>(K + t));
  }
  pw3Ready = true;
}

@inline function copy32(dst: usize, src: usize): void {
  store<u64>(dst, load<u64>(src, 0), 0);
  store<u64>(dst, load<u64>(src, 8), 8);
  store<u64>(dst, load<u64>(src, 16), 16);
  store<u64>(dst, load<u64>(src, 24), 24);
}

// out may equal msgDigests (each m_i is read before p_i is written) but must
// not otherwise overlap it.
export function pathChain(msgDigests: usize, count: i32, out: usize): void {
  if (count <= 0) return;
  if (!pw3Ready) initPW3();
  copy32(PPREV, msgDigests);
  copy32(out, PPREV);
  store<u8>(PM, 0x3a, 64); // ':'
  for (let i: i32 = 1; i < count; i++) {
    const m = msgDigests + (<usize>i << 5);
    hex32(PM, PPREV);
    hex32(PM + 65, m); // chars 0..63 at PM[65..129); char 63 only matters via PW3
    const last = load<u8>(m, 31) & 15;
    initState(HS);
    compress(HS, PM, 2);
    rounds(HS, PW3 + (<usize>last << 8), false);
    writeDigest(HS, PPREV);
    copy32(out + (<usize>i << 5), PPREV);
  }
}
