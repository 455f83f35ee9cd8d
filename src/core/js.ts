// The pure-TypeScript engine: the same results as the wasm engines, bit for bit, for runtimes
// without WebAssembly. Hashing is @noble/hashes (audited, constant-time-free pure JS).

import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { chainPaths, type ElementDigests, type Engine } from './engine.ts';
import { canonicalizeBytes } from './json-js.ts';
import { jsonError } from './status.ts';

const encoder = new TextEncoder();

function toBytes(json: Uint8Array | string): Uint8Array {
  return typeof json === 'string' ? encoder.encode(json) : json;
}

export class JsEngine implements Engine {
  readonly name = 'js' as const;

  private run(json: Uint8Array | string, ignore: readonly Uint8Array[], elements: boolean) {
    const bytes = toBytes(json);
    const r = canonicalizeBytes(bytes, ignore, elements);
    if ('status' in r) throw jsonError(r.status, r.offset, r.detail, bytes);
    return r;
  }

  canonical(json: Uint8Array | string, ignore: readonly Uint8Array[]): Uint8Array {
    const r = this.run(json, ignore, false);
    return r.out.slice(0, r.length);
  }

  digest(json: Uint8Array | string, ignore: readonly Uint8Array[]): Uint8Array {
    const r = this.run(json, ignore, false);
    return nobleSha256(r.out.subarray(0, r.length));
  }

  elements(json: Uint8Array | string, ignore: readonly Uint8Array[], chain: boolean, whole: boolean): ElementDigests {
    const r = this.run(json, ignore, true);
    const count = r.spans.length / 2;
    const messages = new Uint8Array(count * 32);
    for (let i = 0; i < count; i++) {
      const start = r.spans[2 * i]!;
      messages.set(nobleSha256(r.out.subarray(start, start + r.spans[2 * i + 1]!)), i * 32);
    }
    return {
      count,
      messages,
      paths: chain ? chainPaths(messages, count, nobleSha256) : new Uint8Array(0),
      whole: whole ? nobleSha256(r.out.subarray(0, r.length)) : new Uint8Array(0),
    };
  }

  sha256(data: Uint8Array): Uint8Array {
    return nobleSha256(data);
  }
}
