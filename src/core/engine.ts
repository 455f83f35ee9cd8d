// The engine contract: everything the public API needs from a backend. The wasm engines and the
// pure-TypeScript engine implement it; the API layer never knows which one it is talking to.

export type BackendName = 'wasm-simd' | 'wasm' | 'js';

/** Digests of a JSON array: one per element, the path chain, and the whole canonical text. */
export interface ElementDigests {
  count: number;
  /** count x 32 bytes. */
  messages: Uint8Array;
  /** count x 32 bytes, or empty when the chain was not asked for. */
  paths: Uint8Array;
  /** 32 bytes, or empty when not asked for. */
  whole: Uint8Array;
}

export interface Engine {
  readonly name: BackendName;
  /** Canonical bytes of JSON text (a string must be well-formed UTF-16) (a fresh copy the caller owns). */
  canonical(json: Uint8Array | string, ignore: readonly Uint8Array[]): Uint8Array;
  /** SHA-256 of the canonical bytes of UTF-8 JSON text. */
  digest(json: Uint8Array | string, ignore: readonly Uint8Array[]): Uint8Array;
  /** Element digests of a JSON array given as UTF-8 text, in one pass. */
  elements(json: Uint8Array | string, ignore: readonly Uint8Array[], chain: boolean, whole: boolean): ElementDigests;
  sha256(data: Uint8Array): Uint8Array;
}

/**
 * The chaining rule of the hash spec: p_0 = m_0, p_i = SHA-256(hex(p_{i-1}) ":" hex(m_i)).
 * Shared by the TypeScript engine; the wasm engines do the same in assembly/sha256.ts.
 */
export function chainPaths(messages: Uint8Array, count: number, hash: (b: Uint8Array) => Uint8Array): Uint8Array {
  const out = new Uint8Array(count * 32);
  if (count === 0) return out;
  out.set(messages.subarray(0, 32), 0);
  const buf = new Uint8Array(129);
  buf[64] = 0x3a;
  for (let i = 1; i < count; i++) {
    writeHex(out, (i - 1) * 32, buf, 0);
    writeHex(messages, i * 32, buf, 65);
    out.set(hash(buf), i * 32);
  }
  return out;
}

const HEX = new TextEncoder().encode('0123456789abcdef');

function writeHex(src: Uint8Array, from: number, dst: Uint8Array, at: number): void {
  for (let j = 0; j < 32; j++) {
    const b = src[from + j]!;
    dst[at + 2 * j] = HEX[b >> 4]!;
    dst[at + 2 * j + 1] = HEX[b & 15]!;
  }
}
