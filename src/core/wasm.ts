// Owns a WebAssembly instance of the core: synchronous instantiation from the embedded bytes,
// typed-array views re-made whenever memory grows, and the one-call-per-request protocol of
// assembly/index.ts (layout -> write input -> canonical -> read RESULT).

import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { hex, splitHex, type BackendName, type CoreView, type ElementHashes, type Engine, type IgnoreSpec, type JsonText, type RequestViewSkip, type Sha256Stream } from './engine.ts';
import type { ArrayText } from './pieces.ts';
import { DECLINED, ValueText, writeValueText, type Room } from './walk.ts';
import { nodeCreateHash, nodeHash } from './node-crypto.ts';
import { writePow5Table } from './pow5.ts';
import { jsonError, tooLarge } from './status.ts';
import { SCALAR_SHA256, SIMD_BASE64, SIMD_HEX, SIMD_SHA256 } from './wasm.generated.ts';
// Empty in browser bundles (see wasm-scalar.browser.ts): there the scalar build is loaded on demand.
import { SCALAR_BASE64 } from './wasm-scalar.generated.ts';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { isBytes } from '../bytes.ts';

interface CoreExports {
  memory: WebAssembly.Memory;
  prepare(ignLen: number, maxInput: number, stage: number): number;
  /** Absent from the browser's build: a page has no Buffer to copy UTF-16 into memory with. */
  utf16ToUtf8?(src: number, units: number, dst: number): number;
  canonical(n: number, ignoreCount: number, flags: number): number;
  digests(flags: number): number;
  result(): number;
  sha256(ptr: number, len: number, out: number): void;
  sha256Init(state: number): void;
  sha256Update(state: number, ptr: number, len: number): void;
  sha256Final(state: number, out: number): void;
  traceToken(ptr: number, count: number, scratch: number, out: number): number;
  /** Where the loader writes the powers of five (src/core/pow5.ts), or 0 when the build embeds them. */
  pow5Table(): number;
  /** This and view() are absent from the browser's SIMD build (see scripts/build.mjs). */
  index?(at: number, n: number): number;
  view?(at: number, n: number, count: number, provider: number): number;
  /** Present in builds that read string frames (the builds for Node, see walk.ts). */
  valueFrames?(): number;
}

const H_MESSAGES = 2;
const H_CHAIN = 4;
const H_WHOLE = 8;
const H_MEMBER = 16;
const H_ROOT_IGNORE = 32;
const H_TRUSTED_UTF8 = 64;
const H_SPANS = 128;
const H_STRINGIFIED = 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function decodeBase64(b64: string): Uint8Array {
  if (typeof Buffer !== 'undefined') return Buffer.from(b64, 'base64');
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Lowercase hex to bytes (the browser's embedded build, see scripts/build.mjs). */
function decodeHex(text: string): Uint8Array {
  const out = new Uint8Array(text.length >>> 1);
  // '0'-'9' are 0x30-0x39 and 'a'-'f' 0x61-0x66: the low nibble, plus 9 for letters.
  const nibble = (c: number) => (c & 0xf) + (c >> 6) * 9;
  for (let i = 0; i < out.length; i++) out[i] = (nibble(text.charCodeAt(2 * i)) << 4) | nibble(text.charCodeAt(2 * i + 1));
  return out;
}

/** Builds handed in at run time (provideWasmBuild), for bundles that do not embed one. */
const provided = new Map<'wasm' | 'wasm-simd', Uint8Array>();

/** Bytes of the module for a backend: handed in, else embedded. */
export function wasmBytes(name: 'wasm' | 'wasm-simd'): Uint8Array {
  const given = provided.get(name);
  if (given) return given;
  if (name === 'wasm-simd' && SIMD_HEX !== '') return decodeHex(SIMD_HEX);
  const b64 = name === 'wasm-simd' ? SIMD_BASE64 : SCALAR_BASE64;
  if (b64 === '') {
    throw new TapedeckError('E_BACKEND', `The ${name} build is not embedded in this bundle (browser bundles embed only the SIMD build).`, {
      hint: "Load it first: await loadWasmBuild('wasm', url-of-dist/wasm/tapedeck.wasm) from llm-tapedeck/browser, or use the wasm-simd or js backend.",
    });
  }
  return decodeBase64(b64);
}

/**
 * Hands in the bytes of a build this bundle does not embed. They must be exactly the build this
 * version was made with (its SHA-256 is embedded, so a module from another version is refused
 * rather than trusted to give the same digests).
 */
export function provideWasmBuild(name: 'wasm' | 'wasm-simd', bytes: Uint8Array): void {
  const want = name === 'wasm-simd' ? SIMD_SHA256 : SCALAR_SHA256;
  const got = hex(nobleSha256(bytes));
  if (got !== want) {
    // The file to serve, by name: dist/wasm/ holds a SIMD build for Node and one for pages (the
    // browser bundle embeds the SIMD build as hex), and the wrong one of the two was the likely mistake.
    const file = name === 'wasm' ? 'tapedeck.wasm' : SIMD_HEX !== '' ? 'tapedeck-simd-browser.wasm' : 'tapedeck-simd.wasm';
    throw new TapedeckError('E_BACKEND', `These ${bytes.length} bytes are not the ${name} build of this version (SHA-256 ${got}, expected ${want}).`, {
      hint: `Serve dist/wasm/${file} from the same llm-tapedeck version as the bundle${file.includes('browser') ? ' (tapedeck-simd.wasm is the build for Node)' : ''}.`,
    });
  }
  provided.set(name, new Uint8Array(bytes));
}

let simdOk: boolean | undefined;
/** Whether this engine can run the SIMD build (validated against the real module bytes). */
export function simdSupported(): boolean {
  if (simdOk === undefined) {
    try {
      simdOk = typeof WebAssembly === 'object' && WebAssembly.validate(wasmBytes('wasm-simd'));
    } catch {
      simdOk = false;
    }
  }
  return simdOk === true;
}

// On Node, node:crypto hashes one large buffer with SHA-NI several times faster than wasm can
// (see DESIGN.md: ~1.4 GB/s, but a fixed cost per call). So a single digest of a large canonical
// text goes there, read straight out of wasm memory; so do element digests, unless the elements
// are tiny, and path chains (NODE_ELEMENT_AVG below). NODE_HASH_MIN decides where a list's
// elements stop being hashed in wasm in one call with everything else, and where sha256()'s raw
// bytes (a Buffer made per call on node:crypto) go there.
const NODE_HASH_MIN = 1024;
// A whole-text digest as hex goes to node:crypto from this many bytes of input: one hash() call
// (~0.5 us) against ~0.2-0.3 us a 64-byte block in wasm. Measured on the machine of the 1 KiB
// threshold it replaces (CPU time, node:crypto / wasm, the SIMD build): 1.07x at 65 bytes,
// 0.92-0.95x at 129, 0.82x at 257, 0.57-0.64x at 513, 0.47x at 1,001 (hashValue and hashJSON of
// one message); a 342-921-byte list's pathHashes with its whole digest there: 0.77-0.93x.
const NODE_HEX_MIN = 128;
// Element digests too, once elements are not tiny: four SIMD lanes of wasm SHA-256 against one
// node:crypto hash() call each (~0.3 us of call cost, then SHA-NI). Measured on this machine
// (CPU time, digests as hex strings, the ~200-byte elements of SMALL10K): 0.40 us per element on
// node:crypto, 0.45 in the lanes; equal at ~160-byte elements, the lanes ahead below (0.24
// against 0.33 us at 120 bytes). A path chain goes to node:crypto whatever the elements' size:
// its links are strictly sequential (three compressions each, no lanes to share), ~0.39 us a
// link there against ~0.48 us in wasm, so elements with a chain always go there (on inputs of
// NODE_HASH_MIN bytes or more). Running each link's rounds between the lanes' rounds in wasm
// gained only ~12% of the lanes and chain together, still behind node:crypto.
const NODE_ELEMENT_AVG = 192;

// Strings shorter than this are encoded by Node directly: below it the extra wasm call costs
// more than the transcoding saves.
const UTF16_MIN = 2048;
const INPUT_PAD = 64; // assembly/json.ts

// The most a walked value's text may take (walk.ts). JSON.stringify's text of the value, which
// MAX_INPUT_BYTES limits, is at most 3 times as long in UTF-8 (a unit takes 2 bytes in a frame,
// 6 escaped as \u0001), so text within this is within the limit; a value whose text is longer
// goes through JSON.stringify, which measures it exactly and reports E_TOO_LARGE past the limit.
const MAX_VALUE_TEXT = Math.floor(MAX_INPUT_BYTES / 3);

/** An empty array the CoreView shares where it has no tools or holes (nothing can be written into it). */
const NO_UINT32 = new Uint32Array(0);

const STATE_BYTES = 128; // assembly/sha256.ts streaming state
const STREAM_CHUNK = 1 << 20; // bounds the memory a streaming update() needs

export class WasmEngine implements Engine {
  readonly name: BackendName;
  private readonly x: CoreExports;
  private buffer: ArrayBuffer | undefined;
  private u8!: Uint8Array;
  private u32!: Uint32Array;
  // A Buffer view of the same memory: its utf8 write and hex read are the fastest native paths.
  private buf: Buffer | undefined;
  private readonly r: number;
  private tapeBuf = new Uint32Array(1024);
  // The CoreView's root members and message starts, in buffers kept for them (valid until the
  // next requestView()): a typed array of their size made per request has a backing store of
  // its own (over V8's 64 bytes on the heap), which showed as allocation and collection.
  private rootsBuf = new Uint32Array(128);
  private holesBuf = new Uint32Array(64);
  private startsBuf = new Uint32Array(256);
  /** Whether this engine writes JavaScript values' text itself (ValueText): where Buffer is and the build reads frames. */
  readonly writesValues: boolean;
  /**
   * Strings of this many UTF-16 units or more are transcoded in wasm (UTF16_MIN); never by the
   * browser's build, which has no transcoder (a page with a Buffer polyfill still gets here).
   */
  private readonly wideMin: number;

  constructor(name: 'wasm' | 'wasm-simd') {
    this.name = name;
    try {
      const module = new WebAssembly.Module(wasmBytes(name));
      this.x = new WebAssembly.Instance(module, {}).exports as unknown as CoreExports;
    } catch (e) {
      if (e instanceof TapedeckError) throw e;
      throw new TapedeckError('E_BACKEND', `The ${name} backend cannot start here: ${(e as Error).message}.`, {
        hint: "Use TAPEDECK_BACKEND=js (or setBackend('js')), or a runtime with WebAssembly" + (name === 'wasm-simd' ? ' SIMD.' : '.'),
      });
    }
    const pow5 = this.x.pow5Table();
    if (pow5 !== 0) writePow5Table(this.x.memory.buffer, pow5);
    this.r = this.x.result() >>> 2;
    this.refresh();
    this.writesValues = this.buf !== undefined && this.x.valueFrames !== undefined;
    this.wideMin = this.x.utf16ToUtf8 ? UTF16_MIN : Infinity;
  }

  /**
   * Views are detached when memory grows; re-make them only then. A grown memory detaches the
   * buffer the views share, which leaves them empty: that is checked first, without asking the
   * memory for its buffer (a native getter, ~30 ns, paid two or three times a call).
   */
  private refresh(): void {
    if (this.u8 !== undefined && this.u8.byteLength !== 0) return;
    const b = this.x.memory.buffer;
    if (b !== this.buffer) {
      this.buffer = b;
      this.u8 = new Uint8Array(b);
      this.u32 = new Uint32Array(b);
      this.buf = typeof Buffer !== 'undefined' ? Buffer.from(b) : undefined;
    }
  }

  /** Makes room for `max` input bytes after the ignore list; returns the input address. */
  private prepare(ignore: readonly Uint8Array[], max: number, stage = 0): number {
    this.prepared++;
    let ignLen = 0;
    for (const k of ignore) ignLen += (4 + k.length + 7) & ~7;
    const at = this.x.prepare(ignLen, max, stage);
    this.refresh();
    if (at === 0) {
      throw new TapedeckError('E_MEMORY', `WebAssembly memory could not grow to ${max} bytes.`, {
        hint: 'Split the input or raise the process memory limit.',
      });
    }
    let q = at;
    for (const k of ignore) {
      this.u32[q >>> 2] = k.length;
      this.u8.set(k, q + 4);
      q += (4 + k.length + 7) & ~7;
    }
    return (at + ignLen + 7) & ~7;
  }

  /** Writes the input; returns its length in bytes. */
  private load(json: JsonText, ignore: readonly Uint8Array[]): number {
    if (json instanceof ValueText) return this.loadValue(json.value, ignore);
    if (isBytes(json)) {
      const at = this.prepare(ignore, json.length);
      this.u8.set(json, at);
      return json.length;
    }
    // A list made piece by piece is written as it is made; text given whole as one string.
    if (typeof json !== 'string' && !json.exact && this.buf) return this.loadPieces(json, ignore, this.buf);
    const units = typeof json === 'string' ? json.length : json.units;
    // A UTF-16 unit is at most 3 UTF-8 bytes, so reserve that and let the encoder report the
    // real length: no separate measuring pass over the string.
    const max = units * 3;
    if (!this.buf || units < this.wideMin) {
      const text = typeof json === 'string' ? json : json.text();
      const at = this.prepare(ignore, max);
      if (this.buf) return this.buf.write(text, at, max, 'utf8');
      return encoder.encodeInto(text, this.u8.subarray(at, at + max)).written;
    }
    // Long strings: copy the UTF-16 units as they are (a memcpy for V8's two-byte strings) and
    // transcode in wasm, which is several times faster than Node's UTF-8 encoder on non-ASCII
    // text. Strings reaching here are well-formed (checked by the API layer), so the
    // transcoder's lone-surrogate result is only a guard.
    const at = this.prepare(ignore, max, units * 2);
    const stage = (at + max + INPUT_PAD + 7) & ~7;
    this.buf.write(typeof json === 'string' ? json : json.text(), stage, units * 2, 'utf16le');
    return this.transcode(stage, units, at);
  }

  /** Where loadValue() wrote its input, and the ignore list written before it. */
  private valueAt = 0;
  private valueIgnore: readonly Uint8Array[] = [];
  /**
   * prepare() calls so far, and their count when loadValue() last made room: any other call
   * while a value is walked (a getter of the value calling into this engine) wrote its own
   * input where the value's is being written.
   */
  private prepared = 0;
  private valueMark = 0;
  private walking = false;
  /** The memory loadValue() writes into (see walk.ts), made once. */
  private readonly room: Room = {
    buf: undefined as unknown as Buffer,
    u8: new Uint8Array(0),
    end: 0,
    grow: (end) => {
      const n = end - this.valueAt;
      if (n > MAX_VALUE_TEXT || this.prepared !== this.valueMark) return -1;
      // Twice what is needed, so that a long value does not grow memory once per string.
      this.prepare(this.valueIgnore, Math.min(2 * n, MAX_VALUE_TEXT));
      this.valueMark = this.prepared;
      return this.fillRoom();
    },
  };

  /** Points the room at the current memory; returns how far the input may reach in it. */
  private fillRoom(): number {
    const room = this.room;
    room.buf = this.buf!;
    room.u8 = this.u8;
    return (room.end = Math.min(this.u8.length - INPUT_PAD - 8, this.valueAt + MAX_VALUE_TEXT));
  }

  /**
   * Writes a JavaScript value's JSON text by walking it (walk.ts), in memory as it is, however
   * much there is, grown as needed. Returns its length in bytes; throws DECLINED for a value the
   * walk leaves to JSON.stringify.
   */
  private loadValue(value: unknown, ignore: readonly Uint8Array[]): number {
    // A value's getter hashing something meanwhile gets JSON.stringify's way (below), and the
    // value whose input that call overwrote is then declined too.
    if (!this.writesValues || this.walking) throw DECLINED;
    this.valueIgnore = ignore;
    const at = (this.valueAt = this.prepare(ignore, 0));
    this.fillRoom();
    this.valueMark = this.prepared;
    this.walking = true;
    let n: number;
    try {
      n = writeValueText(value, this.room, at);
    } catch (err) {
      throw this.prepared !== this.valueMark ? DECLINED : err;
    } finally {
      this.walking = false;
    }
    if (this.prepared !== this.valueMark) throw DECLINED;
    return n;
  }

  /** utf16ToUtf8 in wasm; returns the bytes written. */
  private transcode(stage: number, units: number, at: number): number {
    const n = this.x.utf16ToUtf8!(stage, units, at);
    if (n < 0) {
      throw new TapedeckError('E_LONE_SURROGATE', `JSON text has a lone UTF-16 surrogate at string index ${-n - 1}.`, {
        hint: 'Use s.toWellFormed() or fix the source.',
      });
    }
    return n;
  }

  /**
   * Writes JSON.stringify's text piece by piece as each is made (see pieces.ts), growing the
   * input as it goes: no piece outlives its turn and the whole text is never one string.
   * Returns the input's length in bytes.
   */
  private loadPieces(text: ArrayText, ignore: readonly Uint8Array[], buf: Buffer): number {
    let n = 0;
    let mark = this.prepared;
    text.each((piece, i) => {
      // A getter that JSON.stringify called for this piece hashed something, writing its input
      // over this one: the caller (onValue) falls back to the TypeScript serializer's text.
      if (this.prepared !== mark) throw new Error('the value was hashed into while it was written');
      const units = piece.length;
      const max = n + units * 3;
      const wide = units >= this.wideMin;
      const at = this.prepare(ignore, max, wide ? units * 2 : 0);
      mark = this.prepared;
      if (this.buf !== buf) buf = this.buf!;
      // After the first, each piece goes over the previous piece's "]", and its "[" becomes ",".
      const o = i === 0 ? at : at + n - 1;
      let w: number;
      if (wide) {
        const stage = (at + max + INPUT_PAD + 7) & ~7;
        buf.write(piece, stage, units * 2, 'utf16le');
        w = this.transcode(stage, units, o);
      } else {
        w = buf.write(piece, o, units * 3, 'utf8');
      }
      if (i > 0) buf[o] = 0x2c;
      n = o - at + w;
      if (n > MAX_INPUT_BYTES) throw tooLarge(n);
    });
    return n;
  }

  /** `null` literals in the last input (see RESULT in assembly/json.ts). */
  nulls(): number {
    return this.u32[this.r + 10]!;
  }

  /**
   * One core call. `member` rides after the ignore keys in the same list (the module finds it
   * at position ignore.length).
   */
  private call(json: JsonText, ignore: IgnoreSpec, flags: number, member?: Uint8Array, trustedUtf8 = false): void {
    this.run(json, this.input(json, ignore, member), ignore, flags, member, trustedUtf8);
  }

  /** Writes the input of a call; returns its length in bytes. */
  private input(json: JsonText, ignore: IgnoreSpec, member?: Uint8Array): number {
    return this.load(json, member ? [...ignore.keys, member] : ignore.keys);
  }

  /** The core call on the n bytes input() wrote. */
  private run(json: JsonText, n: number, ignore: IgnoreSpec, flags: number, member?: Uint8Array, trustedUtf8 = false): void {
    // Text from a string is valid UTF-8 by construction: strings reaching an engine are
    // well-formed (checked by the API layer, or JSON.stringify output, which escapes lone
    // surrogates), and both encoders write only valid UTF-8. JSON.stringify's own text (an
    // ArrayText) also has canonical strings and numbers already (see F_STRINGIFIED), as has the
    // text of a walked value (ValueText), whose other strings are in frames of UTF-16 units.
    const trusted = isBytes(json) ? (trustedUtf8 ? H_TRUSTED_UTF8 : 0) : typeof json === 'string' ? H_TRUSTED_UTF8 : H_TRUSTED_UTF8 | H_STRINGIFIED;
    const status = this.x.canonical(n, ignore.keys.length, flags | trusted | (member ? H_MEMBER : 0) | (ignore.rootOnly ? H_ROOT_IGNORE : 0));
    this.refresh();
    if (status !== 0) {
      const bytes =
        isBytes(json) ? json : json instanceof ValueText ? this.u8.slice(this.valueAt, this.valueAt + n) : encoder.encode(typeof json === 'string' ? json : json.text());
      throw jsonError(status, this.u32[this.r + 1]!, this.u32[this.r + 2]!, bytes);
    }
  }

  /** `chars` hex characters written by the module at `at` (RESULT + 44 and onwards). */
  private hexText(at: number, chars: number): string {
    if (this.buf) return this.buf.toString('latin1', at, at + chars);
    return decoder.decode(this.u8.subarray(at, at + chars));
  }

  canonical(json: JsonText, ignore: IgnoreSpec, trustedUtf8 = false, view = false): Uint8Array {
    this.call(json, ignore, 0, undefined, trustedUtf8);
    const ptr = this.u32[this.r + 3]!;
    return view ? new Uint8Array(this.buffer!, ptr, this.u32[this.r + 4]!) : this.u8.slice(ptr, ptr + this.u32[this.r + 4]!);
  }

  /** Hex digest of the canonical text just produced, by node:crypto when that is faster. */
  private wholeHex(hashedInWasm: boolean): string {
    if (hashedInWasm) return this.hexText(this.u32[this.r + 11]! + this.u32[this.r + 5]! * 128, 64);
    // A view made by the constructor, as in nodeElements(): cheaper than subarray().
    return nodeHash!('sha256', new Uint8Array(this.buffer!, this.u32[this.r + 3]!, this.u32[this.r + 4]!), 'hex');
  }

  /** Whether the whole-text digest (as hex) should be computed in wasm for an input of n bytes. */
  private static wasmWhole(n: number): boolean {
    // Canonical text is never much longer than the input, so the input size decides.
    return nodeHash === undefined || n < NODE_HEX_MIN;
  }

  digestHex(json: JsonText, ignore: IgnoreSpec): string {
    const n = this.input(json, ignore);
    const inWasm = WasmEngine.wasmWhole(sizeOf(json, n));
    this.run(json, n, ignore, inWasm ? H_WHOLE : 0);
    return this.wholeHex(inWasm);
  }

  elementsHex(json: JsonText, ignore: IgnoreSpec, chain: boolean, whole: boolean, member?: Uint8Array, trustedUtf8 = false, tail?: Uint8Array): ElementHashes {
    if (tail !== undefined) return this.elementsWithTail(json, ignore, chain, whole, member, trustedUtf8, tail);
    const n = this.input(json, ignore, member);
    const size = sizeOf(json, n);
    const inWasm = WasmEngine.wasmWhole(size);
    const flags = H_MESSAGES | (chain ? H_CHAIN : 0) | (whole && inWasm ? H_WHOLE : 0);
    if (nodeHash === undefined || size < NODE_HASH_MIN) {
      this.run(json, n, ignore, flags, member, trustedUtf8);
    } else {
      // Elements found first; who hashes them is decided by their size.
      this.run(json, n, ignore, H_SPANS, member, trustedUtf8);
      const count = this.u32[this.r + 5]!;
      if (count > 0 && (chain || this.u32[this.r + 4]! >= count * NODE_ELEMENT_AVG)) return this.nodeElements(count, chain, whole);
      const status = this.x.digests(flags);
      this.refresh();
      if (status !== 0) throw jsonError(status, 0, 0, new Uint8Array(0));
    }
    const count = this.u32[this.r + 5]!;
    // Message and path digests are adjacent in memory: one string covers both.
    const all = this.hexText(this.u32[this.r + 11]!, count * (chain ? 128 : 64));
    const messageHashes = splitHex(all, count);
    const pathHashes = chain ? splitHex(all.slice(count * 64), count) : [];
    return { messageHashes, pathHashes, digest: whole ? this.wholeHex(inWasm) : '' };
  }

  /** elementsHex() whose whole digest ends in `tail` instead of the canonical text's last byte. */
  private elementsWithTail(json: JsonText, ignore: IgnoreSpec, chain: boolean, whole: boolean, member: Uint8Array | undefined, trustedUtf8: boolean, tail: Uint8Array): ElementHashes {
    const e = this.elementsHex(json, ignore, chain, false, member, trustedUtf8);
    if (!whole) return e;
    // The canonical text is still in wasm memory: the element digests hash spans of it in place.
    const ptr = this.u32[this.r + 3]!;
    const head = this.u8.subarray(ptr, ptr + this.u32[this.r + 4]! - 1);
    if (nodeCreateHash !== undefined) return { ...e, digest: nodeCreateHash('sha256').update(head).update(tail).digest('hex') };
    const joined = new Uint8Array(head.length + tail.length);
    joined.set(head);
    joined.set(tail, head.length);
    return { ...e, digest: hex(this.sha256(joined)) };
  }

  /** Element digests (and chain, and whole digest) of the last canonical text by node:crypto. */
  private nodeElements(count: number, chain: boolean, whole: boolean): ElementHashes {
    const h = nodeHash!;
    const spans = this.u32[this.r + 6]! >>> 2;
    const messageHashes = new Array<string>(count);
    const pathHashes = chain ? new Array<string>(count) : [];
    let prev = '';
    // A view made by the constructor: subarray() costs ~30 ns more an element (SMALL10K's 10,000
    // digests: 3.92 -> 3.64 ms, where the same digests of arrays made beforehand take 3.70).
    const mem = this.buffer!;
    for (let i = 0; i < count; i++) {
      const m = h('sha256', new Uint8Array(mem, this.u32[spans + 2 * i]!, this.u32[spans + 2 * i + 1]!), 'hex');
      messageHashes[i] = m;
      if (chain) pathHashes[i] = prev = i === 0 ? m : h('sha256', `${prev}:${m}`, 'hex');
    }
    return { messageHashes, pathHashes, digest: whole ? this.wholeHex(false) : '' };
  }

  tape(json: Uint8Array, skip?: RequestViewSkip): Uint32Array | undefined {
    if (this.x.index === undefined) return undefined;
    const count = this.indexInput(json, skip);
    return count < 0 ? undefined : this.copyTape(count);
  }

  /** Where indexInput() wrote its input. */
  private indexedAt = 0;

  /** Writes json and indexes it (assembly/tape.ts), skipping `skip`; returns the record count, or -1. */
  private indexInput(json: Uint8Array, skip?: RequestViewSkip): number {
    const at = this.prepare([], json.length);
    this.u8.set(json, at);
    // RESULT + 100/104/108/116 (assembly/json.ts): read once by the index and the view.
    if (skip !== undefined && skip.end <= json.length) {
      this.u32[this.r + 25] = skip.start;
      this.u32[this.r + 26] = skip.end;
      this.u32[this.r + 27] = skip.verdict;
      this.u32[this.r + 29] = skip.inToolConfig === true ? 1 : 0;
    }
    this.indexedAt = at;
    const count = this.x.index!(at, json.length);
    this.refresh();
    return count;
  }

  /** The `count` records of the last index, copied out (the next call reuses the memory). */
  private copyTape(count: number): Uint32Array {
    const from = this.u32[this.r + 12]! >>> 2;
    // Into one buffer kept for the purpose.
    if (this.tapeBuf.length < count * 8) this.tapeBuf = new Uint32Array(Math.max(count * 8, this.tapeBuf.length * 2));
    this.tapeBuf.set(this.u32.subarray(from, from + count * 8));
    const tape = this.tapeBuf.subarray(0, count * 8);
    // A buffer grown for a very large body is the caller's (until its next call), not kept here.
    if (this.tapeBuf.length > 1 << 20) this.tapeBuf = new Uint32Array(1024);
    return tape;
  }

  /** A copy of `from` in the buffer kept under `name` (grown as needed), valid until the next requestView(). */
  private kept(name: 'holesBuf' | 'startsBuf', from: Uint32Array): Uint32Array {
    if (this[name].length < from.length) this[name] = new Uint32Array(from.length * 2);
    const to = this[name].subarray(0, from.length);
    to.set(from);
    return to;
  }

  requestView(json: Uint8Array, provider: number, skip?: RequestViewSkip): CoreView | Uint32Array | null | undefined {
    if (this.x.view === undefined) return null;
    const count = this.indexInput(json, skip);
    if (count < 0) return undefined;
    const status = this.x.view(this.indexedAt, json.length, count, provider);
    this.refresh();
    const skipped = this.u32[this.r + 28]! !== 0;
    // Declined: the index the view was written from, for the caller's own walk (not made again);
    // an index with a skipped list is no index of the body: made again, whole.
    if (status !== 0) return skipped ? this.requestView(json, provider) : this.copyTape(count);
    const u32 = this.u32;
    const r = this.r;
    const out = u32[r + 15]!;
    const messagesEnd = u32[r + 16]!;
    const holeCount = u32[r + 18]!;
    const holesAt = u32[r + 19]! >>> 2;
    const toolCount = u32[r + 20]!;
    const chunksAt = u32[r + 21]! >>> 2;
    const recs = u32[r + 12]! >>> 2;
    // No tools (most requests): one empty array for all, not one made per request.
    const toolNames = toolCount === 0 ? NO_UINT32 : new Uint32Array(toolCount * 3);
    for (let k = 0; k < toolCount; k++) {
      const name = u32[chunksAt + k * 3 + 2]!;
      if (name === 0xffffffff) continue;
      toolNames[k * 3] = u32[recs + name * 8 + 1]!;
      toolNames[k * 3 + 1] = u32[recs + name * 8 + 2]!;
      toolNames[k * 3 + 2] = u32[recs + name * 8 + 7]!;
    }
    // The root object's members: records 1.. chained by their next record.
    const stop = u32[recs + 3]!;
    let members = 0;
    for (let c = 1; c < stop; c = u32[recs + c * 8 + 3]!) members++;
    if (this.rootsBuf.length < members * 5) this.rootsBuf = new Uint32Array(members * 10);
    const roots = this.rootsBuf.subarray(0, members * 5);
    for (let c = 1, k = 0; c < stop; c = u32[recs + c * 8 + 3]!, k += 5) {
      const q = recs + c * 8;
      roots[k] = u32[q + 4]!;
      roots[k + 1] = u32[q + 5]!;
      roots[k + 2] = u32[q + 6]!;
      roots[k + 3] = u32[q + 1]!;
      roots[k + 4] = u32[q + 2]!;
    }
    let starts: Uint32Array | undefined;
    const canonical = u32[r + 30]!;
    if (canonical !== 0) {
      const at = u32[r + 31]! >>> 2;
      starts = this.kept('startsBuf', u32.subarray(at, at + u32[r + 14]!));
    }
    return {
      provider: u32[r + 13]!,
      messageCount: u32[r + 14]!,
      head: this.u8.subarray(out, messagesEnd),
      tools: this.u8.subarray(messagesEnd, u32[r + 17]!),
      holes: holeCount === 0 ? NO_UINT32 : this.kept('holesBuf', u32.subarray(holesAt, holesAt + holeCount * 2)),
      toolNames,
      roots,
      cut: [u32[r + 22]!, u32[r + 23]!],
      skipped,
      toolsVerdict: u32[r + 24]!,
      starts,
      holesCanonical: (canonical & 2) !== 0,
    };
  }

  sha256(data: Uint8Array): Uint8Array {
    if (nodeHash !== undefined && data.length >= NODE_HASH_MIN) {
      return nodeHash('sha256', data, 'buffer');
    }
    const at = this.prepare([], data.length + 32);
    this.u8.set(data, at);
    const out = at + data.length;
    this.x.sha256(at, data.length, out);
    return this.u8.slice(out, out + 32);
  }

  traceTokenHex(fields: readonly string[], ids: readonly string[]): string | undefined {
    // At most one id (a recording's token: its request key) needs no sorting, and the message is
    // the components joined by NUL, a trailing NUL when there is no id (engine.ts traceMessage):
    // node:crypto hashes that text to hex in one native call, ~3x faster than writing the
    // components into memory for the core (recording and import take a token per record).
    if (nodeHash === undefined || ids.length > 1 || fields.length !== 4) return undefined;
    return nodeHash('sha256', `${fields[0]}\0${fields[1]}\0${fields[2]}\0${fields[3]}\0${ids.length === 0 ? '' : ids[0]}`, 'hex');
  }

  traceToken(fields: readonly string[], ids: readonly string[]): Uint8Array {
    const parts = ids.length === 0 ? fields : [...fields, ...ids];
    // Each component is written as UTF-8 straight into memory, at most 3 bytes per UTF-16 unit
    // reserved (an encoded copy per component cost more than the hash: recording and import
    // take a token per record).
    let records = 0;
    let joined = 1;
    for (const p of parts) {
      records += 4 + ((p.length * 3 + 3) & ~3);
      joined += p.length * 3 + 1;
    }
    const scratchSize = (parts.length * 8 + joined + 7) & ~7;
    const at = this.prepare([], records + scratchSize + 32);
    let q = at;
    for (const p of parts) {
      const n = this.buf ? this.buf.write(p, q + 4, p.length * 3, 'utf8') : encoder.encodeInto(p, this.u8.subarray(q + 4, q + 4 + p.length * 3)).written;
      this.u32[q >>> 2] = n;
      q += 4 + ((n + 3) & ~3);
    }
    const scratch = (q + 7) & ~7;
    const out = scratch + scratchSize;
    const bad = this.x.traceToken(at, parts.length, scratch, out);
    if (bad >= 0) throw new TapedeckError('E_ARG', `traceToken: component ${bad} contains a NUL byte.`, { hint: 'Remove NUL from identifiers.' });
    return this.u8.slice(out, out + 32);
  }

  sha256Stream(): Sha256Stream {
    // The state lives in JavaScript between calls (other calls reuse wasm memory) and visits
    // wasm for each update, so memory stays bounded by STREAM_CHUNK however much is hashed.
    const state = new Uint8Array(STATE_BYTES);
    let at = this.prepare([], STATE_BYTES);
    this.x.sha256Init(at);
    state.set(this.u8.subarray(at, at + STATE_BYTES));
    return {
      update: (data) => {
        for (let off = 0; off < data.length; off += STREAM_CHUNK) {
          const part = data.subarray(off, off + STREAM_CHUNK);
          at = this.prepare([], STATE_BYTES + part.length);
          this.u8.set(state, at);
          this.u8.set(part, at + STATE_BYTES);
          this.x.sha256Update(at, at + STATE_BYTES, part.length);
          state.set(this.u8.subarray(at, at + STATE_BYTES));
        }
      },
      digest: () => {
        at = this.prepare([], STATE_BYTES + 32);
        this.u8.set(state, at);
        this.x.sha256Final(at, at + STATE_BYTES);
        return this.u8.slice(at + STATE_BYTES, at + STATE_BYTES + 32);
      },
    };
  }
}

/**
 * Length of JSON text in its own units (bytes or UTF-16 units), which is what sizes decide on; a
 * walked value's is the n bytes written for it (its frames hold two bytes per unit).
 */
function sizeOf(json: JsonText, n: number): number {
  if (json instanceof ValueText) return n;
  return typeof json === 'string' || isBytes(json) ? json.length : json.units;
}

/** UTF-8 length of a well-formed string without encoding it. */
export function byteLength(s: string): number {
  if (typeof Buffer !== 'undefined') return Buffer.byteLength(s, 'utf8');
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c >= 0x800 ? (c >= 0xd800 && c <= 0xdbff ? (i++, 2) : 2) : 1;
  }
  return n;
}
