// sha256() takes a string or bytes, with the same digest on every backend, and refuses anything
// else with E_ARG: the wasm engines once read an ArrayBuffer or a number as no bytes, a plain
// array as bytes and a Uint16Array as its low bytes, where the TypeScript engine threw a bare
// TypeError. A string with a lone surrogate is E_LONE_SURROGATE, as everywhere else (it was
// hashed as U+FFFD, the digest of another string), and a surrogate pair split across update()
// calls hashes as the whole string does.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backend, sha256, TapedeckError } from '../src/index.ts';
import { errorOf } from './helpers.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const ref = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

describe(`sha256 arguments (${backend()})`, () => {
  it('bytes in any BufferSource form: their bytes, as crypto.subtle.digest reads them', () => {
    const hello = new TextEncoder().encode('hello');
    expect(hex(sha256(hello.buffer))).toBe(ref('hello'));
    const u16 = new Uint16Array([0x6968]);
    expect(hex(sha256(u16))).toBe(ref(new Uint8Array(u16.buffer)));
    expect(hex(sha256(u16))).not.toBe(ref('h'));
    // A view of part of a larger buffer: only its own bytes.
    const big = new TextEncoder().encode('xxhelloyy');
    expect(hex(sha256(new DataView(big.buffer, 2, 5)))).toBe(ref('hello'));
    expect(hex(sha256(Buffer.from('hello')))).toBe(ref('hello'));
    expect(hex(sha256.create().update(hello.buffer).update(new DataView(big.buffer, 0, 2)).digest())).toBe(ref('helloxx'));
  });

  it('anything else is E_ARG naming what was given, never a wrong digest or a TypeError', () => {
    for (const [v, what] of [
      [5, 'a number (5)'],
      [[104, 105], 'an array'],
      [null, 'null'],
      [undefined, 'undefined'],
      [{ length: 2 }, 'an object'],
      [new Map(), 'a Map'],
      [5n, 'a bigint (5n)'],
    ] as const) {
      const e = errorOf(() => sha256(v as never));
      expect(e.code, String(what)).toBe('E_ARG');
      expect(e.message).toContain(`got ${what}`);
      expect(e.hint).toContain('new Uint8Array');
      expect(errorOf(() => sha256.create().update(v as never)).code).toBe('E_ARG');
    }
  });

  it('a lone surrogate is E_LONE_SURROGATE, not the digest of U+FFFD', () => {
    for (const s of ['\uD800', 'a\uDC00', 'x\uD83D']) {
      const e = errorOf(() => sha256(s));
      expect(e).toBeInstanceOf(TapedeckError);
      expect(e.code).toBe('E_LONE_SURROGATE');
    }
    expect(errorOf(() => sha256.create().update('a\uDE02b')).code).toBe('E_LONE_SURROGATE');
    expect(hex(sha256('\uFFFD'))).toBe(ref('\uFFFD'));
  });

  it('a surrogate pair split across update() calls hashes as the whole string', () => {
    expect(hex(sha256.create().update('\uD83D').update('\uDE02').digest())).toBe(ref('😂'));
    expect(hex(sha256.create().update('a\uD83D').update('').update('\uDE02b').digest())).toBe(ref('a😂b'));
    expect(hex(sha256('😂'))).toBe(ref('😂'));
    // Its low half must come next: digest() first, or bytes next, is a lone surrogate.
    const h = sha256.create().update('a\uD83D');
    expect(errorOf(() => h.digest()).code).toBe('E_LONE_SURROGATE');
    expect(errorOf(() => h.update(new Uint8Array([1]))).code).toBe('E_LONE_SURROGATE');
    expect(errorOf(() => h.update('b')).code).toBe('E_LONE_SURROGATE');
    // The refused pieces changed nothing: the low half still completes the pair.
    expect(hex(h.update('\uDE02').digest())).toBe(ref('a😂'));
  });
});
