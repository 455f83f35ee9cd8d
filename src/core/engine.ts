// The engine contract: everything the public API needs from a backend. The wasm engines and the
// pure-TypeScript engine implement it; the API layer never knows which one it is talking to.

import type { ArrayText } from './pieces.ts';
import type { ValueText } from './walk.ts';

/**
 * The hashing core's implementations: WebAssembly with SIMD (the default where it runs),
 * WebAssembly without, plain JavaScript.
 */
export type BackendName = 'wasm-simd' | 'wasm' | 'js';

/** Hex digests of a JSON array: one per element, the path chain, and the whole canonical text. */
export interface ElementHashes {
  messageHashes: string[];
  /** Empty when the chain was not asked for. */
  pathHashes: string[];
  /** Empty string when not asked for. */
  digest: string;
}

/**
 * A request view written by the core (see Engine.requestView). `head` and `tools` are views of
 * the engine's memory, valid until the next call into the engine: copy them first. `roots`,
 * `holes` and `starts` are the engine's own, valid until its next requestView().
 */
export interface CoreView {
  /** Provider number (1 openai-chat, 2 openai-responses, 4 anthropic, 5 generic, 6 bedrock-converse, 7 gemini). */
  readonly provider: number;
  readonly messageCount: number;
  /** `{"messages":[...]`: each hole is a 0x00 byte, in the order of `holes`. */
  readonly head: Uint8Array;
  /** `,"tools":[...]`, sorted. */
  readonly tools: Uint8Array;
  /** Byte ranges in the body of the parts left as holes: [start, end, start, end, ...]. */
  readonly holes: Uint32Array;
  /**
   * Each tool's name string in tool order: [start, end, hash, ...], its byte range (quotes
   * included; 0, 0 for none) and the index's hash of its bytes (assembly/tape.ts).
   */
  readonly toolNames: Uint32Array;
  /** The root object's members: [keyStart, keyEnd, keyHash, start, end, ...] (key with its quotes). */
  readonly roots: Uint32Array;
  /** A value inside a root member that the view holds already (Converse: toolConfig.tools): [start, end], or [0, 0]. */
  readonly cut: readonly [number, number];
  /** The root `tools` list was the skipped one (RequestViewSkip): `tools` and `toolNames` are empty. */
  readonly skipped: boolean;
  /** The provider detection's reading of the root `tools` list (assembly/view.ts toolsVerdict), to keep with it. */
  readonly toolsVerdict: number;
  /**
   * Where each message starts in `head` (offsets; each ends one byte before the next one's
   * start, the last one byte before the head's end), when the messages are RFC 8785 text as
   * the core wrote them (no canonicalizing pass needed); undefined otherwise.
   */
  readonly starts: Uint32Array | undefined;
  /**
   * With `starts`: each message that holds holes is RFC 8785 text but for them, so that it is
   * canonical once each hole is filled with its part's canonical text.
   */
  readonly holesCanonical: boolean;
}

/**
 * A root `tools` array the caller has seen indexed whole before, at [start, end) of the body
 * (compared byte for byte), and its detection verdict then: the index records it as one value
 * and the view leaves it for the caller to write.
 */
export interface RequestViewSkip {
  readonly start: number;
  readonly end: number;
  readonly verdict: number;
  /** The value is the `tools` member of the root's `toolConfig` (Bedrock Converse), not of the root. */
  readonly inToolConfig?: boolean;
}

/** Incremental SHA-256 state owned by an engine. */
export interface Sha256Stream {
  update(data: Uint8Array): void;
  digest(): Uint8Array;
}

/** Ignore keys in UTF-8, and whether they apply to the root object's members only. */
export interface IgnoreSpec {
  readonly keys: readonly Uint8Array[];
  readonly rootOnly: boolean;
}

/**
 * JSON text: UTF-8 bytes, a well-formed string, an array's JSON.stringify text in pieces, or a
 * JavaScript value whose text the engine writes itself (engines with `writesValues`).
 */
export type JsonText = Uint8Array | string | ArrayText | ValueText;

export interface Engine {
  readonly name: BackendName;
  /**
   * Canonical bytes of JSON text (strings must be well-formed UTF-16); a fresh copy. With
   * `trustedUtf8`, bytes the caller has checked are not validated as UTF-8 again. With `view`,
   * an engine may give a view of its own memory instead, valid until its next call.
   */
  canonical(json: JsonText, ignore: IgnoreSpec, trustedUtf8?: boolean, view?: boolean): Uint8Array;
  /** Hex SHA-256 of the canonical bytes of JSON text. */
  digestHex(json: JsonText, ignore: IgnoreSpec): string;
  /**
   * Element digests of a JSON array given as text, in one pass; with `member`, of the array
   * that is that member's value in a root object (the whole digest is still the root's). With
   * `tail`, the whole digest is of the canonical text without its last byte (a root object's
   * `}`) followed by `tail`: a last member whose canonical bytes the caller already has.
   */
  elementsHex(json: JsonText, ignore: IgnoreSpec, chain: boolean, whole: boolean, member?: Uint8Array, trustedUtf8?: boolean, tail?: Uint8Array): ElementHashes;
  sha256(data: Uint8Array): Uint8Array;
  sha256Stream(): Sha256Stream;
  /**
   * Trace token digest: the four fixed fields, then the ids (sorted here, by their UTF-8 bytes).
   * Given as well-formed strings, so an engine writes their UTF-8 where it hashes them (no
   * encoded copy per component).
   */
  traceToken(fields: readonly string[], ids: readonly string[]): Uint8Array;
  /**
   * The same digest as hex, where the engine has a faster way to it than traceToken() and hex()
   * (node:crypto for a token of at most one id); undefined where it has none. Optional.
   */
  traceTokenHex?(fields: readonly string[], ids: readonly string[]): string | undefined;
  /**
   * The structural index of JSON text (assembly/tape.ts: 8 x u32 per value), or undefined if
   * the text is not JSON; with `skip`, that root `tools` value as one record with no children
   * (as requestView() skips it). Optional: an engine without it makes callers take their
   * general path.
   */
  tape?(json: Uint8Array, skip?: RequestViewSkip): Uint32Array | undefined;
  /**
   * The normalized request view of a JSON request body, written by the core from its structural
   * index (assembly/view.ts); where the core leaves the body to the caller's own walk, that index
   * (as tape() gives it), or null if this build has no view writer; undefined if the body is not
   * JSON. Optional, as tape() is.
   */
  requestView?(json: Uint8Array, provider: number, skip?: RequestViewSkip): CoreView | Uint32Array | null | undefined;
  /**
   * Whether this engine takes a ValueText (writes a JavaScript value's JSON text itself, or
   * throws DECLINED from walk.ts for the caller to give it JSON.stringify's text instead).
   */
  readonly writesValues?: boolean;
  /** Number of `null` literals in the last JSON text this engine read (wasm engines only). */
  nulls?(): number;
}

const HEX_DIGITS = '0123456789abcdef';

/** Lowercase hex of bytes (native Buffer hex where available). */
export function hex(bytes: Uint8Array): string {
  if (typeof Buffer !== 'undefined') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
  let s = '';
  for (const b of bytes) s += HEX_DIGITS[b >> 4]! + HEX_DIGITS[b & 15]!;
  return s;
}

/** Splits the hex of count x 32 digest bytes into 64-character strings (slices are cheap). */
export function splitHex(all: string, count: number): string[] {
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = all.slice(i * 64, i * 64 + 64);
  return out;
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

/** Byte order of two byte strings (UTF-8 byte order is code point order). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The trace-token message: fields and byte-sorted ids joined by NUL (hash spec v1). */
export function traceMessage(fields: readonly Uint8Array[], ids: readonly Uint8Array[]): Uint8Array {
  const parts = [...fields, ...[...ids].sort(compareBytes)];
  if (ids.length === 0) parts.push(new Uint8Array(0));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0) + parts.length - 1);
  let at = 0;
  parts.forEach((p, i) => {
    if (i > 0) out[at++] = 0;
    out.set(p, at);
    at += p.length;
  });
  return out;
}
