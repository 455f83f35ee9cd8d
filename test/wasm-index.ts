// The structural index of a wasm build called directly (assembly/tape.ts): the exports the
// tests drive it through, and its records of a body. Shared by the suites that hold the index
// of each build to an oracle.

/** The index's exports of a wasm build. */
export interface IndexExports {
  memory: WebAssembly.Memory;
  prepare(ignLen: number, maxInput: number, stage: number): number;
  result(): number;
  index(at: number, n: number): number;
}

/**
 * The index's records of `body` (8 u32 each) by the instance `x`, or its failure code.
 *
 * @example
 * indexRecords(instance.exports as unknown as IndexExports, new TextEncoder().encode('{"a":1}'))
 */
export function indexRecords(x: IndexExports, body: Uint8Array): number[] | number {
  const at = x.prepare(0, body.length, 0);
  new Uint8Array(x.memory.buffer).set(body, at);
  const count = x.index(at, body.length);
  if (count < 0) return count;
  const base = new Uint32Array(x.memory.buffer, x.result(), 32)[12]!;
  return [...new Uint32Array(x.memory.buffer, base, count * 8)];
}
