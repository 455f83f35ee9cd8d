// Drives assembly/utf16.ts directly through both wasm builds and compares every result with
// Node's own UTF-8 encoder, or for text with a lone surrogate, the index of the first one. The
// SIMD build encodes 16 units per step, two blocks of 8, with surrogate pairs inside a block,
// across its two blocks and across steps; random text over every UTF-8 width and the width
// boundaries reaches each lane in each role.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loneSurrogateIndex } from '../src/core/value.ts';
import { rng } from './reference.ts';

interface Utf16Exports {
  memory: WebAssembly.Memory;
  prepare(ignLen: number, maxInput: number, stage: number): number;
  utf16ToUtf8(src: number, units: number, dst: number): number;
}

const builds = [
  ['scalar', 'build/tapedeck.wasm'],
  ['simd', 'build/tapedeck-simd.wasm'],
] as const;

// Units at the edges of each UTF-8 width, and surrogates: a pair, and each half alone.
const UNITS = ['a', '~', '\u007f', '\u0080', 'é', '\u07ff', '\u0800', '北', '\ud7ff', '\ue000', '\uffff', '😂', '\u{10000}', '\u{10ffff}'];
const LONE = ['\ud800', '\udbff', '\udc00', '\udfff'];

/** What the transcoder should return for s: its UTF-8 length, or -(i + 1) for a lone surrogate at i. */
function expected(s: string): { n: number; bytes?: Buffer } {
  const i = loneSurrogateIndex(s);
  if (i >= 0) return { n: -(i + 1) };
  const bytes = Buffer.from(s, 'utf8');
  return { n: bytes.length, bytes };
}

for (const [kind, file] of builds) {
  describe(`utf16ToUtf8 (${kind}: ${file})`, () => {
    const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {}).exports as unknown as Utf16Exports;

    /** Transcodes s the way src/core/wasm.ts does (staging area after the output and its pad). */
    function transcode(s: string): { n: number; bytes: Buffer } {
      const max = s.length * 3;
      const at = x.prepare(0, max, s.length * 2);
      const stage = (at + max + 64 + 7) & ~7;
      const buf = Buffer.from(x.memory.buffer);
      buf.write(s, stage, s.length * 2, 'utf16le');
      const n = x.utf16ToUtf8(stage, s.length, at);
      return { n, bytes: Buffer.from(x.memory.buffer).subarray(at, at + Math.max(n, 0)) };
    }

    function check(s: string): void {
      const want = expected(s);
      const got = transcode(s);
      expect(got.n, JSON.stringify(s)).toBe(want.n);
      if (want.bytes) expect(got.bytes.equals(want.bytes), JSON.stringify(s)).toBe(true);
    }

    it('random text of every width, with and without lone surrogates, at every length to 200 units', () => {
      const r = rng(16);
      for (let i = 0; i < 6000; i++) {
        const len = i % 200;
        const lone = i % 3 === 0;
        let s = '';
        while (s.length < len) {
          const pool = lone && r() < 0.02 ? LONE : UNITS;
          s += 'abc'.slice(0, Math.floor(r() * 4)) + pool[Math.floor(r() * pool.length)]!;
        }
        check(s);
      }
    });

    it('a surrogate pair at every position of a step, after ASCII and after wide text', () => {
      for (const lead of ['', 'é', '北']) {
        for (let k = 0; k < 40; k++) {
          check(lead + 'a'.repeat(k) + '😂' + 'b'.repeat(40));
          check(lead + '北'.repeat(k) + '😂' + 'é'.repeat(40));
          // A lone high surrogate at the same spots (followed by ASCII, by a high one, or the end).
          check(lead + 'a'.repeat(k) + '\ud83d' + 'b'.repeat(40));
          check(lead + '北'.repeat(k) + '\ud83d\ud83d\ude02' + 'é'.repeat(40));
          check(lead + '北'.repeat(k) + '\ud83d');
          // A lone low surrogate.
          check(lead + 'a'.repeat(k) + '\ude02' + 'b'.repeat(40));
        }
      }
    });

    it('long text: ASCII steps, wide steps and pairs mixed as in multilingual chats', () => {
      const r = rng(17);
      const words = ['the', 'data', 'déjà', 'Привет', '東京', '안녕하세요', '😀', '👍🏽', '👩‍💻', '🇫🇷', '€', '…', '𠜎'];
      const parts: string[] = [];
      for (let i = 0; i < 50_000; i++) parts.push(words[Math.floor(r() * words.length)]!);
      check(parts.join(' '));
    });
  });
}
