// The pure-TypeScript engine: the same results as the wasm engines, bit for bit, for runtimes
// without WebAssembly. Hashing is @noble/hashes.

import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { chainPaths, hex, splitHex, traceMessage, type ElementHashes, type Engine, type IgnoreSpec, type JsonText, type Sha256Stream } from './engine.ts';
import { canonicalizeBytes } from './json-js.ts';
import { jsonError } from './status.ts';
import { isBytes } from '../bytes.ts';

const encoder = new TextEncoder();

function toBytes(json: JsonText): Uint8Array {
  if (isBytes(json)) return json;
  return encoder.encode(typeof json === 'string' ? json : json.text());
}

export class JsEngine implements Engine {
  readonly name = 'js' as const;

  private run(json: JsonText, ignore: IgnoreSpec, elements: boolean, member?: Uint8Array) {
    const bytes = toBytes(json);
    const r = canonicalizeBytes(bytes, ignore.keys, elements, member, ignore.rootOnly);
    if ('status' in r) throw jsonError(r.status, r.offset, r.detail, bytes);
    return r;
  }

  canonical(json: JsonText, ignore: IgnoreSpec): Uint8Array {
    const r = this.run(json, ignore, false);
    return r.out.slice(0, r.length);
  }

  digestHex(json: JsonText, ignore: IgnoreSpec): string {
    const r = this.run(json, ignore, false);
    return hex(nobleSha256(r.out.subarray(0, r.length)));
  }

  elementsHex(json: JsonText, ignore: IgnoreSpec, chain: boolean, whole: boolean, member?: Uint8Array, _trusted = false, tail?: Uint8Array): ElementHashes {
    const r = this.run(json, ignore, true, member);
    const count = r.spans.length / 2;
    const messages = new Uint8Array(count * 32);
    for (let i = 0; i < count; i++) {
      const start = r.spans[2 * i]!;
      messages.set(nobleSha256(r.out.subarray(start, start + r.spans[2 * i + 1]!)), i * 32);
    }
    return {
      messageHashes: splitHex(hex(messages), count),
      pathHashes: chain ? splitHex(hex(chainPaths(messages, count, nobleSha256)), count) : [],
      digest: !whole ? '' : tail === undefined ? hex(nobleSha256(r.out.subarray(0, r.length))) : hex(nobleSha256.create().update(r.out.subarray(0, r.length - 1)).update(tail).digest()),
    };
  }

  sha256(data: Uint8Array): Uint8Array {
    return nobleSha256(data);
  }

  traceToken(fields: readonly string[], ids: readonly string[]): Uint8Array {
    return nobleSha256(traceMessage(fields.map((f) => encoder.encode(f)), ids.map((id) => encoder.encode(id))));
  }

  sha256Stream(): Sha256Stream {
    const h = nobleSha256.create();
    return { update: (d) => void h.update(d), digest: () => h.digest() };
  }
}
