// The string scanners pass over backslash escapes a whole SIMD step at a time: the structural
// index's (assembly/tape.ts) and the canonical writer's (assembly/json.ts). Strings made of
// escapes (runs of backslashes of every length, escaped quotes, \u escapes and surrogate pairs),
// faults (invalid escapes, lone surrogates, control bytes, broken UTF-8) and plain and non-ASCII
// text, shifted to every offset of a 16- and 32-byte step, against oracles built from the pieces
// themselves and JSON.parse: where each string starts and ends, its flags and its hash in the
// index, whether the text is accepted, the canonical bytes of the reference canonicalizer, and
// the first fault's code and byte offset.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { backend, canonicalizeJSON, setBackend, TapedeckError } from '../src/index.ts';
import { refCanonical, rng } from './reference.ts';
import { indexRecords, type IndexExports as Indexing } from './wasm-index.ts';

interface IndexExports extends Indexing {
  canonical(n: number, ignoreCount: number, flags: number): number;
}

const CODES = ['', 'E_JSON', 'E_UTF8', 'E_LONE_SURROGATE'];

/**
 * The canonical writer of a wasm build called directly (the browser's SIMD build has no backend
 * in Node): its bytes, or its error's code and offset. `trusted`: the input is known to be
 * UTF-8 (a string's), as the loader says for strings.
 */
function direct(x: IndexExports, body: Uint8Array, trusted: boolean): string {
  const at = x.prepare(0, body.length, 0);
  new Uint8Array(x.memory.buffer).set(body, at);
  const status = x.canonical(body.length, 0, trusted ? 64 : 0);
  const r = new Uint32Array(x.memory.buffer, x.result(), 32);
  if (status !== 0) return `${CODES[status] ?? status}@${r[1]}`;
  return `ok ${Buffer.from(new Uint8Array(x.memory.buffer, r[3], r[4])).toString('hex')}`;
}

/** A piece of a string's text; `fault` is where the piece makes the text invalid, and how. */
interface Piece {
  bytes: number[];
  /** An escape RFC 8785 spells otherwise (`\/`, `\u`): the index's F_ODD_ESCAPE. */
  odd?: boolean;
  /** Invalid JSON (both readers): [code, offset in the piece]. */
  json?: [string, number];
  /** Invalid UTF-8 (the canonical writer only; the index leaves UTF-8 to it): offset in the piece. */
  utf8?: number;
}

const ascii = (s: string): number[] => [...Buffer.from(s, 'latin1')];
const text = (s: string): number[] => [...Buffer.from(s, 'utf8')];

const PIECES: Piece[] = [
  ...['a', 'xyz ', '0123456789', ':', '{', '}', ',', "'", '/', 'u'].map((s) => ({ bytes: ascii(s) })),
  ...['é', '€', '😀', 'дом'].map((s) => ({ bytes: text(s) })),
  // Escapes already canonical, and backslash runs of even length (escaped backslashes).
  ...['\\"', '\\n', '\\t', '\\b', '\\f', '\\r', '\\\\', '\\\\\\\\', '\\\\\\"', '\\\\\\\\\\\\'].map((s) => ({ bytes: ascii(s) })),
  { bytes: ascii('\\'.repeat(24)) },
  { bytes: ascii('\\'.repeat(35) + '"') }, // 17 escaped backslashes and a quote
  { bytes: ascii('\\/'), odd: true },
  ...['\\u00e9', '\\u005c', '\\u0022', '\\u0000', '\\u001F', '\\u0041', '\\ud83d\\ude00', '\\uDBFF\\uDFFF', '\\u2028'].map((s) => ({ bytes: ascii(s), odd: true })),
  // Faults.
  ...['\\x', '\\a', '\\U', "\\'", '\\0', '\\ ', '\\\u0001', '\\\u0000', '\\u12G4', '\\u12"'].map((s): Piece => ({ bytes: ascii(s), json: ['E_JSON', 0] })),
  { bytes: [0x5c, 0xc3, 0xa9], json: ['E_JSON', 0] },
  { bytes: ascii('\\ud83dx'), json: ['E_LONE_SURROGATE', 0] },
  { bytes: ascii('\\ude00'), json: ['E_LONE_SURROGATE', 0] },
  { bytes: ascii('\\ud83d\\u0041'), json: ['E_LONE_SURROGATE', 0] },
  { bytes: ascii('\\ud83d\\n'), json: ['E_LONE_SURROGATE', 0] },
  { bytes: ascii('\\ud83d\\ud83d'), json: ['E_LONE_SURROGATE', 0] },
  { bytes: ascii('\\ud83d\\u00zz'), json: ['E_JSON', 6] },
  ...[0x01, 0x0a, 0x09, 0x1f, 0x00].map((c): Piece => ({ bytes: [c], json: ['E_JSON', 0] })),
  { bytes: [0xff], utf8: 0 },
  { bytes: [0x80], utf8: 0 },
  { bytes: [0xc3, 0x28], utf8: 0 },
  { bytes: [0xe2, 0x82, 0x61], utf8: 0 },
  { bytes: [0xed, 0xa0, 0x80], utf8: 0 },
  { bytes: [0xf0, 0x9f, 0x98], utf8: 0 },
];
const GOOD = PIECES.filter((p) => p.json === undefined && p.utf8 === undefined);

/** The index's hash of raw bytes (assembly/tape.ts hashBytes), written again from its description. */
function hashBytes(b: Uint8Array): number {
  const M = 0xff51afd7ed558ccdn;
  const mask = (1n << 64n) - 1n;
  let h = 0x9e3779b97f4a7c15n ^ BigInt(b.length);
  for (let q = 0; q < b.length; q += 8) {
    // Eight bytes little-endian; past the end, zeros.
    let w = 0n;
    for (let i = Math.min(7, b.length - q - 1); i >= 0; i--) w = (w << 8n) | BigInt(b[q + i]!);
    h = ((h ^ w) * M) & mask;
    h ^= h >> 32n;
  }
  return Number(h & 0xffffffffn);
}

/** A string's hash in its record: of its bytes up to 64 of them, else 0. */
const hashOf = (s: Str): number => (s.bytes.length <= 64 ? hashBytes(Uint8Array.from(s.bytes)) : 0);

interface Str {
  bytes: number[];
  escaped: boolean;
  odd: boolean;
  /** The first fault: for the index (JSON only) and for the canonical writer (JSON or UTF-8), [code, offset]. */
  json?: [string, number];
  first?: [string, number];
}

/** A string's text: a plain prefix of `shift` bytes, then random pieces (faults when `faults`). */
function makeString(r: () => number, shift: number, faults: boolean): Str {
  const s: Str = { bytes: ascii('p'.repeat(shift)), escaped: false, odd: false };
  const n = Math.floor(r() * 24);
  for (let i = 0; i < n; i++) {
    const pool = faults && r() < 0.1 ? PIECES : GOOD;
    const p = pool[Math.floor(r() * pool.length)]!;
    const at = s.bytes.length;
    if (p.json && !s.json) s.json = [p.json[0], at + p.json[1]];
    const fault: [string, number] | undefined = p.json ? [p.json[0], at + p.json[1]] : p.utf8 !== undefined ? ['E_UTF8', at + p.utf8] : undefined;
    if (fault && !s.first) s.first = fault;
    if (p.bytes.includes(0x5c)) s.escaped = true;
    if (p.odd) s.odd = true;
    s.bytes.push(...p.bytes);
  }
  return s;
}

const initial = backend();
afterAll(() => setBackend(initial));

function outcome(input: Uint8Array | string): string {
  try {
    return `ok ${Buffer.from(canonicalizeJSON(input)).toString('hex')}`;
  } catch (e) {
    if (e instanceof TapedeckError) return `${e.code}@${e.offset}`;
    throw e;
  }
}

describe('string scanning over escapes, at every offset of a SIMD step', () => {
  const instance = (file: string): IndexExports => new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {}).exports as unknown as IndexExports;
  const builds = (['build/tapedeck.wasm', 'build/tapedeck-simd.wasm'] as const).map((file) => ({ file, x: instance(file) }));
  const browser = instance('build/tapedeck-simd-browser.wasm');

  /** The index's records of `body` by one build, or its failure code. */
  const records = indexRecords;

  it('index and canonical writer agree with the oracles on 12,000 generated documents', () => {
    const r = rng(20261128);
    const counts = { accepted: 0, json: 0, utf8: 0 };
    for (let run = 0; run < 12_000; run++) {
      const faults = run % 3 === 0;
      // {"<key>":["<a>","<b>"]}: a member name and two values, each shifted by 0-47 bytes.
      const strs = [0, 1, 2].map(() => makeString(r, Math.floor(r() * 48), faults));
      const parts: number[][] = [ascii('{"'), strs[0]!.bytes, ascii('":["'), strs[1]!.bytes, ascii('","'), strs[2]!.bytes, ascii('"]}')];
      const body = Uint8Array.from(parts.flat());
      const starts: number[] = [];
      for (let i = 0, at = 0; i < parts.length; at += parts[i]!.length, i++) if (i % 2 === 1) starts.push(at);
      const label = JSON.stringify(Buffer.from(body).toString('latin1'));

      // The index (no UTF-8 check: the canonical writer's).
      const jsonFault = strs.some((s) => s.json);
      if (!jsonFault) {
        // Whatever the pieces say, JSON.parse agrees (on the UTF-8 reading of valid bytes).
        if (!strs.some((s) => s.first)) expect(() => JSON.parse(Buffer.from(body).toString()), label).not.toThrow();
      }
      for (const { file, x } of builds) {
        const got = records(x, body);
        if (jsonFault) {
          expect(got, `${file} ${label}`).toBe(-1);
          continue;
        }
        const want = [
          7, 0, body.length, 4, 0xffffffff, 0, 0, 0,
          6 | (strs[0]!.escaped ? 0x200 : 0), starts[1]! - 2, body.length - 1, 4, starts[0]! - 1, starts[0]! + strs[0]!.bytes.length + 1, hashOf(strs[0]!), 0,
        ];
        for (const i of [1, 2]) {
          const s = strs[i]!;
          const flags = (s.escaped ? 0x100 : 0) | (s.odd ? 0x800 : 0);
          // No key (keyStart); keyEnd and keyHash are the member's, left as they were.
          want.push(5 | flags, starts[i]! - 1, starts[i]! + s.bytes.length + 1, i + 2, 0xffffffff, starts[0]! + strs[0]!.bytes.length + 1, hashOf(strs[0]!), hashOf(s));
        }
        expect(got, `${file} ${label}`).toEqual(want);
      }

      // The canonical writer, on every backend: the reference canonicalizer's bytes, or the
      // first fault's code at its offset.
      const first = strs.map((s, i) => (s.first ? ([s.first[0], starts[i]! + s.first[1]] as const) : undefined)).find(Boolean);
      let want: string;
      if (first) {
        want = `${first[0]}@${first[1]}`;
        if (first[0] === 'E_UTF8') counts.utf8++;
        else counts.json++;
      } else {
        want = `ok ${Buffer.from(refCanonical(JSON.parse(Buffer.from(body).toString()))).toString('hex')}`;
        counts.accepted++;
      }
      for (const name of ['wasm-simd', 'wasm', 'js'] as const) {
        setBackend(name);
        const got = outcome(body);
        if (got !== want) throw new Error(`${name} on ${label}: ${got}, expected ${want}`);
      }
      const got = direct(browser, body, false);
      if (got !== want) throw new Error(`browser build on ${label}: ${got}, expected ${want}`);
      // The same text as a string (UTF-8 known good: the writer's trusted path).
      if (first?.[0] !== 'E_UTF8' && !strs.some((s) => s.first?.[0] === 'E_UTF8')) {
        const str = Buffer.from(body).toString();
        for (const name of ['wasm-simd', 'wasm', 'js'] as const) {
          setBackend(name);
          const got = outcome(str);
          if (got !== want) throw new Error(`${name} on the string ${label}: ${got}, expected ${want}`);
        }
        const got = direct(browser, body, true);
        if (got !== want) throw new Error(`browser build, trusted, on ${label}: ${got}, expected ${want}`);
      }
    }
    // Every kind of outcome must be reached, or the test proves little.
    expect(counts.accepted).toBeGreaterThan(6000);
    expect(counts.json).toBeGreaterThan(1000);
    expect(counts.utf8).toBeGreaterThan(200);
  });

  it('a UTF-8 sequence cut short by ASCII, at every offset of a step: the error at its lead byte', () => {
    // The writer skips the UTF-8 check of an ASCII step after ASCII bytes: the bytes before a step
    // are what tells it a sequence they began is cut.
    const cuts = [[0xc3], [0xe2], [0xe2, 0x82], [0xf0], [0xf0, 0x9f], [0xf0, 0x9f, 0x98]];
    let n = 0;
    for (const cut of cuts) {
      for (let shift = 0; shift < 40; shift++) {
        for (const after of ['a'.repeat(40), '\\n' + 'a'.repeat(40), '"]']) {
          const body = Uint8Array.from([...ascii(`["${'p'.repeat(shift)}`), ...cut, ...ascii(after === '"]' ? after : `${after}"]`)]);
          const want = `E_UTF8@${2 + shift}`;
          for (const name of ['wasm-simd', 'wasm', 'js'] as const) {
            setBackend(name);
            expect(outcome(body), `${name} ${JSON.stringify(Buffer.from(body).toString('latin1'))}`).toBe(want);
          }
          expect(direct(browser, body, false)).toBe(want);
          n++;
        }
      }
    }
    expect(n).toBe(720);
  });
});

describe('member names in the index: duplicates fail, escaped names are left to the caller', () => {
  const builds = (['build/tapedeck.wasm', 'build/tapedeck-simd.wasm'] as const).map((file) => ({
    file,
    x: new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {}).exports as unknown as IndexExports,
  }));
  // Raw names (as written between the quotes): same lengths with different bytes, names past the
  // 64 bytes the index hashes (equal but for their last byte), and escaped ones.
  const NAMES = ['a', 'b', 'ab', 'ba', 'role', 'rolf', 'content', 'x'.repeat(70), `${'x'.repeat(69)}y`, 'k\\"', 'k\\n', '\\u0061'];

  it('agrees with a comparison of the raw names for objects of 1-40 members, nested', () => {
    const r = rng(20261129);
    const seen = { dup: 0, flagged: 0, plain: 0 };
    for (let run = 0; run < 4000; run++) {
      // Mostly objects of 1-3 members (a request's), sometimes up to 40 (past the 32 compared).
      const n = 1 + Math.floor(r() < 0.8 ? r() * 3 : r() * 40);
      const names = Array.from({ length: n }, () => NAMES[Math.floor(r() * NAMES.length)]!);
      const escaped = names.some((s) => s.includes('\\'));
      const dup = new Set(names).size < n;
      // The object as an array's second element, its members' values numbers and an object.
      const body = `[0,{${names.map((s, i) => `"${s}":${i % 3 === 2 ? '{"a":1}' : i}`).join(',')}}]`;
      // Escaped names, or more than 32 members: flagged for the caller (F_CHECK_KEYS), never failed here.
      const flagged = n >= 2 && (escaped || n > 32);
      for (const { file, x } of builds) {
        const got = indexRecords(x, new TextEncoder().encode(body));
        if (!flagged && dup) {
          expect(got, `${file} ${body}`).toBe(-1);
          continue;
        }
        expect(Array.isArray(got), `${file} ${body}`).toBe(true);
        const obj = (got as number[])[16]!;
        expect(obj & 0xff, body).toBe(7);
        expect(obj & 0x400, `${file} ${body}`).toBe(flagged ? 0x400 : 0);
      }
      if (flagged) seen.flagged++;
      else if (dup) seen.dup++;
      else seen.plain++;
    }
    for (const k of Object.keys(seen) as (keyof typeof seen)[]) expect(seen[k], k).toBeGreaterThan(150);
  });
});
