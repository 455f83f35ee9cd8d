// Trace tokens (hash spec v1): SHA-256 over documentId, documentVersion, model,
// systemPromptVersion and the selected ids sorted by bytes, all joined by NUL. Sorting and
// joining happen here so one call turns the components into the token.

import { sha256 } from "./sha256";

/**
 * Components arrive at `ptr` as `count` records {len u32, bytes, padded to 4}: the four fixed
 * fields first, then the ids. `scratch` must have room for count x 8 bytes of sort keys plus the
 * joined message. Writes the 32-byte digest at `out` and returns -1, or returns the index of the
 * first component that contains a NUL byte (the separator) without hashing.
 */
export function traceToken(ptr: usize, count: i32, scratch: usize, out: usize): i32 {
  // Collect (address, length) of every component, checking for NUL.
  const refs = scratch;
  let q = ptr;
  for (let i = 0; i < count; i++) {
    const len = load<u32>(q);
    const at = q + 4;
    for (let j: u32 = 0; j < len; j++) if (load<u8>(at + j) == 0) return i;
    store<u32>(refs + (<usize>i << 3), <u32>at);
    store<u32>(refs + (<usize>i << 3) + 4, len);
    q = at + ((<usize>len + 3) & ~(<usize>3));
  }
  // Insertion sort of the ids (entries 4..count) by unsigned bytes: id lists are short.
  for (let i = 5; i < count; i++) {
    let j = i;
    while (j > 4) {
      const a = refs + (<usize>(j - 1) << 3);
      const b = a + 8;
      if (compareBytes(load<u32>(a), load<u32>(a + 4), load<u32>(b), load<u32>(b + 4)) <= 0) break;
      const t = load<u64>(a);
      store<u64>(a, load<u64>(b));
      store<u64>(b, t);
      j--;
    }
  }
  // Join with NUL. With no ids the message still ends with the NUL after the fourth field.
  const msg = refs + (<usize>count << 3);
  let w = msg;
  for (let i = 0; i < count; i++) {
    if (i > 0) store<u8>(w++, 0);
    const r = refs + (<usize>i << 3);
    const len = <usize>load<u32>(r + 4);
    memory.copy(w, <usize>load<u32>(r), len);
    w += len;
  }
  if (count == 4) store<u8>(w++, 0);
  sha256(msg, w - msg, out);
  return -1;
}

function compareBytes(a: usize, aLen: u32, b: usize, bLen: u32): i32 {
  const n = aLen < bLen ? aLen : bLen;
  for (let i: u32 = 0; i < n; i++) {
    const x = <i32>load<u8>(a + i), y = <i32>load<u8>(b + i);
    if (x != y) return x - y;
  }
  return <i32>aLen - <i32>bLen;
}
