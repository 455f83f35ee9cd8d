// Owns a WebAssembly instance of the core: synchronous instantiation from the embedded bytes,
// typed-array views re-made whenever memory grows, and the one-call-per-request protocol of
// assembly/index.ts (layout -> write input -> canonical -> read RESULT).

import { TapedeckError } from '../errors.ts';
import type { BackendName, ElementDigests, Engine } from './engine.ts';
import { jsonError } from './status.ts';
import { SCALAR_BASE64, SIMD_BASE64 } from './wasm.generated.ts';

interface CoreExports {
  memory: WebAssembly.Memory;
  layout(ignLen: number, n: number): number;
  canonical(n: number, ignoreCount: number, flags: number): number;
  result(): number;
  sha256(ptr: number, len: number, out: number): void;
}

const H_MESSAGES = 2;
const H_CHAIN = 4;
const H_WHOLE = 8;

const encoder = new TextEncoder();

function decodeBase64(b64: string): Uint8Array {
  if (typeof Buffer !== 'undefined') return Buffer.from(b64, 'base64');
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Bytes of the embedded module for a backend. */
export function wasmBytes(name: 'wasm' | 'wasm-simd'): Uint8Array {
  return decodeBase64(name === 'wasm-simd' ? SIMD_BASE64 : SCALAR_BASE64);
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

export class WasmEngine implements Engine {
  readonly name: BackendName;
  private readonly x: CoreExports;
  private buffer: ArrayBuffer | undefined;
  private u8!: Uint8Array;
  private u32!: Uint32Array;
  private readonly resultAddr: number;

  constructor(name: 'wasm' | 'wasm-simd') {
    this.name = name;
    try {
      const module = new WebAssembly.Module(wasmBytes(name));
      this.x = new WebAssembly.Instance(module, {}).exports as unknown as CoreExports;
    } catch (e) {
      throw new TapedeckError('E_BACKEND', `The ${name} backend cannot start here: ${(e as Error).message}.`, {
        hint: "Use TAPEDECK_BACKEND=js (or setBackend('js')), or a runtime with WebAssembly" + (name === 'wasm-simd' ? ' SIMD.' : '.'),
      });
    }
    this.resultAddr = this.x.result();
    this.refresh();
  }

  /** Views are detached when memory grows; re-make them only then. */
  private refresh(): void {
    const b = this.x.memory.buffer;
    if (b !== this.buffer) {
      this.buffer = b;
      this.u8 = new Uint8Array(b);
      this.u32 = new Uint32Array(b);
    }
  }

  /** Writes the ignore list and the input; returns the input length in bytes. */
  private load(json: Uint8Array | string, ignore: readonly Uint8Array[]): number {
    let ignLen = 0;
    for (const k of ignore) ignLen += (4 + k.length + 7) & ~7;
    const n = typeof json === 'string' ? byteLength(json) : json.length;
    const at = this.x.layout(ignLen, n);
    this.refresh();
    if (at === 0) throw jsonError(8, 0, 0, new Uint8Array(0));
    let q = at;
    for (const k of ignore) {
      this.u32[q >>> 2] = k.length;
      this.u8.set(k, q + 4);
      q += (4 + k.length + 7) & ~7;
    }
    const inputAt = (at + ignLen + 7) & ~7;
    if (typeof json === 'string') encoder.encodeInto(json, this.u8.subarray(inputAt, inputAt + n));
    else this.u8.set(json, inputAt);
    return n;
  }

  private call(json: Uint8Array | string, ignore: readonly Uint8Array[], flags: number): void {
    const n = this.load(json, ignore);
    const status = this.x.canonical(n, ignore.length, flags);
    this.refresh();
    if (status !== 0) {
      const r = this.resultAddr >>> 2;
      const bytes = typeof json === 'string' ? encoder.encode(json) : json;
      throw jsonError(status, this.u32[r + 1]!, this.u32[r + 2]!, bytes);
    }
  }

  canonical(json: Uint8Array | string, ignore: readonly Uint8Array[]): Uint8Array {
    this.call(json, ignore, 0);
    const r = this.resultAddr >>> 2;
    const ptr = this.u32[r + 3]!;
    return this.u8.slice(ptr, ptr + this.u32[r + 4]!);
  }

  digest(json: Uint8Array | string, ignore: readonly Uint8Array[]): Uint8Array {
    this.call(json, ignore, H_WHOLE);
    const at = this.u32[(this.resultAddr >>> 2) + 9]!;
    return this.u8.slice(at, at + 32);
  }

  elements(json: Uint8Array | string, ignore: readonly Uint8Array[], chain: boolean, whole: boolean): ElementDigests {
    this.call(json, ignore, H_MESSAGES | (chain ? H_CHAIN : 0) | (whole ? H_WHOLE : 0));
    const r = this.resultAddr >>> 2;
    const count = this.u32[r + 5]!;
    const msg = this.u32[r + 7]!;
    const path = this.u32[r + 8]!;
    const wh = this.u32[r + 9]!;
    return {
      count,
      messages: this.u8.slice(msg, msg + count * 32),
      paths: chain ? this.u8.slice(path, path + count * 32) : new Uint8Array(0),
      whole: whole ? this.u8.slice(wh, wh + 32) : new Uint8Array(0),
    };
  }

  sha256(data: Uint8Array): Uint8Array {
    // layout() reserves room for the input after the heap base; reuse it as a plain buffer.
    const at = this.x.layout(0, data.length + 32);
    this.refresh();
    const inputAt = (at + 7) & ~7;
    this.u8.set(data, inputAt);
    const out = inputAt + data.length;
    this.x.sha256(inputAt, data.length, out);
    return this.u8.slice(out, out + 32);
  }
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
