// The walk that writes a JavaScript value's JSON text into the core's memory (src/core/walk.ts)
// and the core's reader of its string frames (writeFramed in assembly/json.ts), driven through
// both wasm builds directly, with no JSON.stringify path to fall back on: every value the walk
// takes must come out as the reference canonicalizer writes it, and every value it must leave to
// JSON.stringify must be declined, not written wrong. Strings are built around the SIMD build's
// 16-unit steps: escapes and surrogate pairs at each position of a step and across two.
import { describe, expect, it } from 'vitest';
import { DECLINED, ValueText } from '../src/core/walk.ts';
import { WasmEngine } from '../src/core/wasm.ts';
import { refCanonical, rng, text } from './reference.ts';
import { valueGen } from './values.ts';

const NO_IGNORE = { keys: [], rootOnly: false };

/** Strings whose special units sit at every position of a 16-unit step, and across steps. */
function aligned(): string[] {
  const out: string[] = [];
  for (const special of ['"', '\\', '\n', '\x01', '\x1f', 'é', '北', '😀']) {
    for (let at = 0; at < 40; at++) {
      for (const filler of ['x', 'é']) out.push(filler.repeat(at) + special + filler.repeat(40 - at));
    }
  }
  for (let n = 0; n <= 70; n++) out.push('a'.repeat(n), '"'.repeat(n), '😀'.repeat(n), [...'ab😀'.repeat(n)].slice(0, n).join(''));
  return out;
}

const gen = (seed: number) => valueGen(seed, false);

/** JSON.stringify's view of a value with the members it drops dropped (what the reference takes). */
const viewOf = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

for (const name of ['wasm-simd', 'wasm'] as const) {
  describe(`values written by the walk (${name})`, () => {
    const e = new WasmEngine(name);
    const canonical = (v: unknown): string => text(e.canonical(new ValueText(v), NO_IGNORE));

    it('agrees with the reference on 3,000 generated values, none declined', () => {
      for (let seed = 1; seed <= 3000; seed++) {
        const v = gen(seed).value(0);
        if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
        expect(canonical(v), `seed ${seed}`).toBe(refCanonical(viewOf(v)));
      }
    });

    it('strings with escapes, every UTF-8 width and surrogate pairs at every position of a step', () => {
      for (const s of aligned()) {
        expect(canonical(s)).toBe(refCanonical(s));
        expect(canonical({ [s]: [s], k: s })).toBe(refCanonical({ [s]: [s], k: s }));
      }
    });

    it('steps mixing non-ASCII units with units to escape, several to a step, at every offset', () => {
      // A step of 16 units holding both is encoded whole when every unit to escape has a
      // two-character escape and none is a surrogate; else it is cut at its first unit to
      // escape. Random strings dense in both, each also shifted by 0-15 units.
      const r = rng(41);
      const alphabet = ['a', 'Z', 'é', '\u07ff', '\u0800', '北', '\uffff', '😀', '"', '\\', '\n', '\t', '\b', '\f', '\r', '\x01', '\x1f', '\x7f'];
      for (let i = 0; i < 600; i++) {
        const n = 8 + Math.floor(r() * 40);
        let s = '';
        for (let k = 0; k < n; k++) s += alphabet[Math.floor(r() * alphabet.length)];
        for (let shift = 0; shift < 16; shift++) {
          const v = ['x'.repeat(shift) + s, { [s]: 'é'.repeat(shift) + s }];
          expect(canonical(v), JSON.stringify(v)).toBe(refCanonical(v));
        }
      }
    });

    it("a string's last 1-15 units: every length, a special unit at every position, the last included", () => {
      const specials = ['"', '\\', '\n', '\x1f', '\x7f', 'é', '北', '\uffff', '😀'];
      for (let n = 1; n <= 48; n++) {
        for (const filler of ['x', 'é', '北']) {
          for (const special of specials) {
            for (let at = 0; at < n; at++) {
              const s = filler.repeat(at) + special + filler.repeat(n - 1 - at);
              // After it in memory: another frame, the end of the input, a member's name.
              const v = [s, { [s]: s, z: [s] }, s];
              expect(canonical(v), JSON.stringify(s)).toBe(refCanonical(v));
            }
          }
          for (const lone of ['\ud83d', '\ude00']) {
            const s = filler.repeat(n - 1) + lone;
            expect(() => canonical([s, 'é'])).toThrow(expect.objectContaining({ code: 'E_LONE_SURROGATE' }));
            expect(() => canonical(s)).toThrow(expect.objectContaining({ code: 'E_LONE_SURROGATE' }));
          }
        }
      }
    });

    it('every code unit below 0x80, alone, in runs, in long strings', () => {
      for (let c = 0; c < 0x80; c++) {
        const ch = String.fromCharCode(c);
        for (const s of [ch, ch.repeat(40), `${'x'.repeat(30)}${ch}`, `${ch}é${ch}😀${'y'.repeat(33)}`]) {
          expect(canonical([s, { [s]: s }])).toBe(refCanonical([s, { [s]: s }]));
        }
      }
    });

    it('a long list grows memory as it is written, strings long and short', () => {
      const g = gen(99);
      const list = Array.from({ length: 20_000 }, (_, i) => ({ role: i % 2 ? 'user' : 'assistant', content: g.str(i % 100 === 0 ? 3000 : 40), n: i }));
      expect(canonical(list)).toBe(refCanonical(list));
      const big = 'é"'.repeat(600_000);
      expect(canonical({ big })).toBe(refCanonical({ big }));
    });

    it('a lone surrogate in a framed string is rejected by the core, wherever it is', () => {
      for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff']) {
        for (let at = 0; at < 40; at += 3) {
          const s = 'x'.repeat(at) + lone + 'é'.repeat(40 - at);
          expect(() => canonical({ k: s })).toThrow(expect.objectContaining({ code: 'E_LONE_SURROGATE' }));
          expect(() => canonical({ [s]: 1 })).toThrow(expect.objectContaining({ code: 'E_LONE_SURROGATE' }));
        }
      }
    });

    it('declines what JSON.stringify treats specially, rather than writing it', () => {
      class Message {
        role = 'user';
      }
      const deep: unknown[] = [];
      let at = deep;
      for (let i = 0; i < 600; i++) at.push((at = []));
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      const declined = [
        { d: new Date(0) },
        { toJSON: () => 1 },
        [new Message()],
        { m: new Map([[1, 2]]) },
        { s: new Set([1]) },
        { t: new Uint8Array(2) },
        { n: new Number(1) },
        { s: new String('x') },
        { b: new Boolean(false) },
        { big: 1n },
        { nan: NaN },
        [Infinity],
        [-Infinity],
        deep,
        cyclic,
        undefined,
        () => 1,
        Symbol('x'),
      ];
      for (const v of declined) {
        let thrown: unknown;
        try {
          e.canonical(new ValueText(v), NO_IGNORE);
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBe(DECLINED);
      }
    });

    it('getters are read as JSON.stringify reads them; nesting at the limit is written', () => {
      const withGetter = Object.defineProperty({ a: 1 }, 'g', { get: () => 'got', enumerable: true });
      Object.defineProperty(withGetter, 'hidden', { value: 2, enumerable: false });
      expect(canonical(withGetter)).toBe('{"a":1,"g":"got"}');
      let v: unknown = 1;
      for (let i = 0; i < 512; i++) v = [v];
      expect(canonical(v)).toBe(refCanonical(v));
    });
  });
}
