// The three backends must agree bit for bit, on good input and bad: the same canonical bytes, or
// the same error code at the same byte offset. Random mutations of valid JSON reach the corners
// of the reader (truncation, stray bytes, broken escapes and UTF-8) that hand-written cases miss.
import { afterAll, describe, expect, it } from 'vitest';
import { backend, canonicalizeJSON, pathHashes, setBackend, TapedeckError, type BackendName } from '../src/index.ts';
import { chainHashes } from '../src/core/index.ts';
import { refCanonical, refPathHashes, rng, utf8 } from './reference.ts';

const initial = backend();
afterAll(() => setBackend(initial));

type Outcome = string;
function outcome(name: BackendName, f: () => unknown): Outcome {
  setBackend(name);
  try {
    const r = f();
    return r instanceof Uint8Array ? `ok ${Buffer.from(r).toString('hex')}` : `ok ${JSON.stringify(r)}`;
  } catch (e) {
    if (e instanceof TapedeckError) return `${e.code}@${e.offset}`;
    throw e;
  }
}

const seeds = [
  '{"model":"gpt-4o","messages":[{"role":"user","content":"héllo \\"you\\" \\u00e9\\ud83d\\ude02"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\\"a\\":1}"}}]}],"temperature":0.7,"max_tokens":1E3}',
  '[1,-0.0,2.5e-3,1e21,123456789012345678901234567890,{"b":[true,false,null],"a":{}},"\\/\\b\\f\\n\\r\\t"]',
  '{"z":{"y":{"x":[[],[{}],"€😂דּ"]}},"\\u0000":"nul","A":1,"a":2}',
];

function mutate(src: Uint8Array, r: () => number): Uint8Array {
  const b = Array.from(src);
  const n = 1 + Math.floor(r() * 3);
  const pool = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x30, 0x2d, 0x65, 0x2e, 0x75, 0x20, 0x0a, 0x00, 0x80, 0xc3, 0xed, 0xf0, 0xff];
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (b.length + 1));
    const k = r();
    if (k < 0.3) b.splice(at, 1);
    else if (k < 0.6) b.splice(at, 0, pool[Math.floor(r() * pool.length)]!);
    else if (k < 0.8) b[at] = pool[Math.floor(r() * pool.length)]!;
    else b.length = Math.min(b.length, at); // truncate
  }
  return Uint8Array.from(b);
}

describe('backend parity', () => {
  it('valid seeds canonicalize identically', () => {
    for (const s of seeds) {
      const outs = (['wasm-simd', 'wasm', 'js'] as const).map((n) => outcome(n, () => canonicalizeJSON(s)));
      expect(outs[0]).toMatch(/^ok /);
      expect(outs[1]).toBe(outs[0]);
      expect(outs[2]).toBe(outs[0]);
    }
  });

  it('20,000 random mutations give the same result or the same error at the same offset', () => {
    const r = rng(424242);
    let errors = 0;
    for (let i = 0; i < 20_000; i++) {
      const input = mutate(utf8(seeds[i % seeds.length]!), r);
      const a = outcome('wasm-simd', () => canonicalizeJSON(input));
      const b = outcome('wasm', () => canonicalizeJSON(input));
      const c = outcome('js', () => canonicalizeJSON(input));
      if (a !== b || a !== c) {
        throw new Error(`mismatch on ${JSON.stringify(Buffer.from(input).toString('latin1'))}: simd=${a} wasm=${b} js=${c}`);
      }
      if (!a.startsWith('ok')) errors++;
    }
    // The mutations must actually reach the error paths, or this test proves little.
    expect(errors).toBeGreaterThan(10_000);
  });

  it('mutated message arrays give the same path hashes or errors', () => {
    const r = rng(7);
    const base = utf8(JSON.stringify([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b\n' }, [1, 2.5]]));
    for (let i = 0; i < 3000; i++) {
      const input = mutate(base, r);
      const a = outcome('wasm-simd', () => pathHashes(input));
      expect(outcome('wasm', () => pathHashes(input))).toBe(a);
      expect(outcome('js', () => pathHashes(input))).toBe(a);
    }
  });

  it('chainHashes gives pathHashes without the digest, on every backend, for lists of every size', () => {
    // The whole digest it leaves out is what decides the wasm/node:crypto split by size: lists
    // from a few bytes to past the 1 KiB threshold, against the reference's chain.
    const r = rng(11);
    for (let i = 0; i < 300; i++) {
      const n = 1 + Math.floor(r() * 6);
      const list = Array.from({ length: n }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: 'é✓ '.repeat(Math.floor(r() * 120)), n: k }));
      const ref = refPathHashes(list);
      for (const b of ['wasm-simd', 'wasm', 'js'] as const) {
        setBackend(b);
        expect(chainHashes(list)).toEqual({ messageHashes: ref.messageHashes, pathHashes: ref.pathHashes, digest: '' });
        expect(pathHashes(list)).toEqual(ref);
      }
    }
  });

  it('mutated request views give the same { member } hashes or errors', () => {
    const r = rng(8);
    const base = utf8(JSON.stringify({ tools: [], model: 'm', messages: [{ role: 'user', content: 'a' }, { content: 'b\n', role: 'assistant' }], options: { n: 1 } }));
    for (let i = 0; i < 3000; i++) {
      const input = mutate(base, r);
      const a = outcome('wasm-simd', () => pathHashes(input, { member: 'messages' }));
      expect(outcome('wasm', () => pathHashes(input, { member: 'messages' }))).toBe(a);
      expect(outcome('js', () => pathHashes(input, { member: 'messages' }))).toBe(a);
    }
  });

  it('runs of backslashes of every length at every position of a SIMD step, and what follows them', () => {
    // The SIMD step finds which bytes a run of backslashes escapes for all 16 at once: every
    // second backslash of the run, and the byte after a run of odd length, which may be the 17th
    // (the next step's first). Runs of 0-9 backslashes after 0-33 plain bytes, then an escape
    // letter, a \\u or \\/ escape, a plain or non-ASCII byte, a quote, or an invalid escape (a
    // letter JSON has none for, a control byte): canonical bytes against the reference
    // canonicalizer where the text is JSON, and the same error at the same offset on every
    // backend where it is not.
    const tails = ['', '"', 'n', 't', 'b', '/', 'u00e9', 'u005c', 'ud83d\\ude02', 'a', 'é', 'x', '\u0001'];
    let valid = 0;
    let invalid = 0;
    for (let k = 0; k <= 33; k++) {
      for (let run = 0; run <= 9; run++) {
        for (const tail of tails) {
          const json = `["${'a'.repeat(k)}${'\\'.repeat(run)}${tail}${'z'.repeat(20)}","${'b'.repeat(40)}"]`;
          let want: string;
          try {
            want = `ok ${Buffer.from(refCanonical(JSON.parse(json))).toString('hex')}`;
            valid++;
          } catch {
            want = outcome('js', () => canonicalizeJSON(json));
            expect(want).toMatch(/^E_/);
            invalid++;
          }
          for (const name of ['wasm-simd', 'wasm', 'js'] as const) {
            const got = outcome(name, () => canonicalizeJSON(json));
            if (got !== want) throw new Error(`${name} on ${JSON.stringify(json)}: ${got}, expected ${want}`);
          }
        }
      }
    }
    // Both kinds must be reached, or the test proves little.
    expect(valid).toBeGreaterThan(1000);
    expect(invalid).toBeGreaterThan(1000);
  });

  it('objects of 2-30 members in random order, some names repeated: same bytes, or the same duplicate at the same offset', () => {
    // Small objects are sorted without a first in-order pass in the builds for Node, larger ones
    // by heapsort (not stable); which duplicate they report (and where) must stay the one the js
    // backend reports: an adjacent repeat in input order first, else the smallest repeated name,
    // at its second occurrence.
    // Names around the one place UTF-8 and UTF-16 order differ (astral vs U+E000..U+FFFF),
    // spelled escaped or not.
    const r = rng(31);
    const names = ['a', 'b', 'ab', 'ba', 'role', 'content', 'é', '\u00e9', '\ue000', '\uffff', '😂', '\ud83d\ude02', 'z'];
    let dup = 0;
    let ok = 0;
    for (let i = 0; i < 4000; i++) {
      const n = 2 + Math.floor(r() * (i % 4 === 0 ? 29 : 6));
      const members: string[] = [];
      for (let k = 0; k < n; k++) {
        const name = r() < 0.5 ? names[Math.floor(r() * names.length)]! : `${names[Math.floor(r() * names.length)]}${k}`;
        members.push(`"${name}":${k}`);
      }
      const json = `[{${members.join(',')}},{"x":{${members.slice(1).join(',')}}}]`;
      const a = outcome('wasm-simd', () => canonicalizeJSON(json));
      const b = outcome('wasm', () => canonicalizeJSON(json));
      const c = outcome('js', () => canonicalizeJSON(json));
      if (a !== b || a !== c) throw new Error(`mismatch on ${json}: simd=${a} wasm=${b} js=${c}`);
      if (a.startsWith('E_DUPLICATE_KEY')) dup++;
      else if (a.startsWith('ok')) ok++;
    }
    // Both outcomes must be reached, or the test proves little.
    expect(dup).toBeGreaterThan(1000);
    expect(ok).toBeGreaterThan(1000);
  });

  it('memory growth mid-call: output longer than input, and a large input', () => {
    const expanding = `[${Array(200_000).fill('1e20').join(',')}]`; // each number grows 4 -> 21 bytes
    const big = JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ k: `v${i}`.repeat(50), n: i / 7 })));
    for (const input of [expanding, big]) {
      const outs = (['wasm-simd', 'wasm', 'js'] as const).map((n) => outcome(n, () => canonicalizeJSON(input)));
      expect(outs[0]!.startsWith('ok')).toBe(true);
      expect(outs[1]).toBe(outs[0]);
      expect(outs[2]).toBe(outs[0]);
    }
    setBackend('wasm-simd');
    expect(Buffer.from(canonicalizeJSON(expanding)).toString()).toBe(`[${Array(200_000).fill('100000000000000000000').join(',')}]`);
  });
});

describe('long JavaScript strings (UTF-16 copied into wasm and transcoded there)', () => {
  it('match the js backend byte for byte across ASCII, BMP and astral text', () => {
    const r = rng(11);
    const alphabet = ['a', 'Z', ' ', '\\n', 'é', 'ÿ', 'Ā', '€', '\u0800', '\uffff', '😂', '\u{10ffff}', '\\"', '\\\\'];
    for (const len of [2047, 2048, 2049, 5000, 100_000]) {
      const tokens: string[] = [];
      let size = 0;
      while (size < len) {
        const t = alphabet[Math.floor(r() * alphabet.length)]!;
        tokens.push(t);
        size += t.length;
      }
      const json = `["${tokens.join('')}", {"k": "${tokens.slice(0, 40).join('')}"}]`;
      const outs = (['wasm-simd', 'wasm', 'js'] as const).map((n) => outcome(n, () => canonicalizeJSON(json)));
      expect(outs[0]!.startsWith('ok')).toBe(true);
      expect(outs[1]).toBe(outs[0]);
      expect(outs[2]).toBe(outs[0]);
    }
  });

  it('keep the ASCII before a non-ASCII run at every position of a SIMD step, and the whole run', () => {
    // The SIMD step takes 16 units; a stop keeps the ASCII prefix and the scalar part takes the
    // run of wider units. Every prefix length 0..31, and runs of 1-3 units of each UTF-8 width
    // (2, 3 and 4 bytes, the last a surrogate pair), against Node's own UTF-8 encoder.
    for (const wide of ['é', 'Ж', '北', '😂', 'é北😂']) {
      for (let run = 1; run <= 3; run++) {
        const parts: string[] = [];
        for (let k = 0; k < 32; k++) parts.push('a'.repeat(k) + wide.repeat(run));
        const text = parts.join('') + 'z'.repeat(40);
        const json = JSON.stringify([text, text, text, text]);
        expect(json.length).toBeGreaterThanOrEqual(2048);
        // Already canonical (no escapes, no numbers), so the canonical bytes are its UTF-8.
        const want = `ok ${Buffer.from(json).toString('hex')}`;
        for (const name of ['wasm-simd', 'wasm', 'js'] as const) expect(outcome(name, () => canonicalizeJSON(json))).toBe(want);
      }
    }
  });
});
