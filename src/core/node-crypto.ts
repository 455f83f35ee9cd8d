// node:crypto's hashes where the runtime has it (Node; not browsers), looked up once for the
// core's engine, the raw request path and the matcher: a digest of a few hundred bytes in one
// native call, with SHA-NI where the CPU has it.

export type NodeHash = {
  (algorithm: string, data: Uint8Array | string, encoding: 'hex'): string;
  (algorithm: string, data: Uint8Array | string, encoding: 'buffer'): Uint8Array;
};
/** An incremental digest: pieces hashed without joining them. */
export interface NodeHasher {
  update(data: Uint8Array): NodeHasher;
  digest(encoding: 'hex'): string;
}
export type NodeCreateHash = (algorithm: string) => NodeHasher;

const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
  | { hash?: NodeHash; createHash?: NodeCreateHash }
  | undefined;
/** node:crypto's one-shot hash(), or undefined outside Node. */
export const nodeHash: NodeHash | undefined = typeof nodeCrypto?.hash === 'function' ? nodeCrypto.hash : undefined;
/** node:crypto's createHash(), or undefined outside Node. */
export const nodeCreateHash: NodeCreateHash | undefined = typeof nodeCrypto?.createHash === 'function' ? nodeCrypto.createHash : undefined;
