// The wasm export surface every build has (the builds for Node add the structural index and the
// request-view writer: node.ts). The scalar and SIMD builds export exactly the same names; the TypeScript loader
// (src/core/wasm.ts) is the only caller.
import { run, RESULT, ensureMemory, F_ELEMENTS, F_MEMBER, F_ROOT_IGNORE, F_TRUSTED_UTF8, F_STRINGIFIED } from "./json";
import { sha256, sha256Many, pathChain } from "./sha256";
import { hexEncode } from "./hex";
import { POW5_128 } from "./generated/number-tables";

export { prepare, MAX_DEPTH } from "./json";
export { parseNumber, formatNumber, writeCanonicalNumber } from "./number";
export { sha256, sha256Init, sha256Update, sha256Final, sha256Many, pathChain } from "./sha256";

// Flags for canonical(): which digests to compute after canonicalization.
const H_MESSAGES: i32 = 2; // digest of each top-level array element
const H_CHAIN: i32 = 4; // path hashes over the element digests
const H_WHOLE: i32 = 8; // digest of the whole canonical text
const H_MEMBER: i32 = 16; // elements are those of a root member's array (see F_MEMBER), not the root
const H_ROOT_IGNORE: i32 = 32; // ignore keys apply to the root object's members only
const H_TRUSTED_UTF8: i32 = 64; // the input is valid UTF-8 (written from a well-formed string)
const H_SPANS: i32 = 128; // find the elements (as H_MESSAGES does) but leave hashing to digests() or the caller
const H_STRINGIFIED: i32 = 256; // the input is JSON.stringify's output: canonical strings and numbers (see F_STRINGIFIED)
const ERR_MEMORY: i32 = 8;

/** Address of the result block (see assembly/json.ts for its layout). */
export function result(): usize {
  return RESULT;
}

/**
 * Canonicalizes the n input bytes written at prepare()'s address, then computes the requested
 * digests, all in one call. Returns 0 or an error code. RESULT + 28/32/36 hold the addresses of
 * the element digests, path hashes and whole digest; RESULT + 44 the address of their lowercase
 * hex, in the same order (element, path, whole), 64 characters per digest.
 *
 * With H_SPANS the elements are found (RESULT + 20/24: count and {ptr, len} spans of their
 * canonical bytes) but nothing is hashed: the caller either hashes them itself (on Node,
 * node:crypto's SHA-NI beats these lanes on large elements) or asks digests() for them.
 */
export function canonical(n: u32, ignoreCount: i32, flags: i32): i32 {
  const elements = (flags & (H_MESSAGES | H_CHAIN | H_SPANS)) != 0;
  const mode = elements ? ((flags & H_MEMBER) != 0 ? F_MEMBER : F_ELEMENTS) : 0;
  const status = run(n, ignoreCount, mode | ((flags & H_ROOT_IGNORE) != 0 ? F_ROOT_IGNORE : 0) | ((flags & H_TRUSTED_UTF8) != 0 ? F_TRUSTED_UTF8 : 0) | ((flags & H_STRINGIFIED) != 0 ? F_STRINGIFIED : 0));
  if (status != 0 || (flags & H_SPANS) != 0) return status;
  return digests(flags);
}

/**
 * The digests of the last successful canonical() call (H_MESSAGES, H_CHAIN, H_WHOLE as there;
 * element digests need that call to have found the elements). Returns 0 or ERR_MEMORY.
 */
export function digests(flags: i32): i32 {
  const elements = (flags & (H_MESSAGES | H_CHAIN)) != 0;
  if ((flags & (H_MESSAGES | H_CHAIN | H_WHOLE)) == 0) return 0;
  const outPtr = <usize>load<u32>(RESULT + 12);
  const outLen = <usize>load<u32>(RESULT + 16);
  const count = <usize>load<u32>(RESULT + 20);
  const spans = <usize>load<u32>(RESULT + 24);
  const msgOut = (outPtr + outLen + 64 + 31) & ~(<usize>31);
  const pathOut = msgOut + count * 32;
  const wholeOut = pathOut + count * 32;
  const hexOut = wholeOut + 32;
  if (!ensureMemory(hexOut + (count * 64 + 32) * 2)) {
    store<u32>(RESULT, ERR_MEMORY);
    return ERR_MEMORY;
  }
  if (elements) {
    sha256Many(spans, <i32>count, msgOut);
    if ((flags & H_CHAIN) != 0) pathChain(msgOut, <i32>count, pathOut);
  }
  if ((flags & H_WHOLE) != 0) sha256(outPtr, outLen, wholeOut);
  // Digests are contiguous (messages, paths, whole), so one pass encodes whichever were made.
  hexEncode(msgOut, count * 64 + 32, hexOut);
  store<u32>(RESULT + 44, <u32>hexOut);
  store<u32>(RESULT + 28, <u32>msgOut);
  store<u32>(RESULT + 32, <u32>pathOut);
  store<u32>(RESULT + 36, <u32>wholeOut);
  return 0;
}

export { traceToken } from "./trace";
export { utf16ToUtf8 } from "./utf16";

/**
 * Where the loader must write the 128-bit powers of five (src/core/pow5.ts) before any call, or
 * 0 when this build embeds them (the builds for Node; the browser's leaves 10 KB of data out).
 */
export function pow5Table(): usize {
  return isDefined(POW5_EMBEDDED) ? 0 : POW5_128;
}
