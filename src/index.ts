/**
 * tapedeck: deterministic record/replay for LLM API calls. This entry point exposes the core:
 * RFC 8785 canonical JSON and SHA-256 digests of requests, computed in WebAssembly.
 *
 * @example
 * import { hashJSON, pathHashes } from 'llm-tapedeck'
 * hashJSON('{"b":1,"a":2}') === hashJSON('{"a":2,"b":1}') // true
 */
export { canonicalize, canonicalizeJSON, hashJSON, hashMany, hashValue, pathHashes } from './core/checked.ts';
export {
  backend,
  setBackend,
  sha256,
  traceToken,
  type BackendName,
  type CanonicalOptions,
  type PathHashes,
  type PathHashOptions,
  type Sha256Hasher,
  type Sha256Input,
  type TraceTokenInput,
} from './core/index.ts';
export { MAX_DEPTH, MAX_INPUT_BYTES, TapedeckError, type TapedeckErrorCode, type TapedeckErrorDetails } from './errors.ts';
export * from './match/index.ts';
export { VERSION } from './version.ts';
// Conversation tree and byte-exact replay by trace token: pure parts, no file system.
export * from './tree/index.ts';
export * from './replay/index.ts';
