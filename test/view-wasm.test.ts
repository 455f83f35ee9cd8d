// Drives assembly/view.ts directly through both wasm builds, each a fresh instance with the
// module's initial memory: the request view's output must grow memory by itself where it copies
// output again (a user turn split around its tool results repeats the turn's members once per
// run), past the room reserved for the body. The shared engines of the rest of the suite have
// grown their memory for earlier inputs, so there a missing growth went unnoticed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requestDigests, requestKeys } from '../src/index.ts';
import { converseBody, geminiBody, requestBodies } from '../bench/workloads.mjs';
import { indexRecords } from './wasm-index.ts';

interface ViewExports {
  memory: WebAssembly.Memory;
  prepare(ignLen: number, maxInput: number, stage: number): number;
  result(): number;
  index(at: number, n: number): number;
  view(at: number, n: number, count: number, provider: number): number;
}

const builds = [
  ['scalar', 'build/tapedeck.wasm'],
  ['simd', 'build/tapedeck-simd.wasm'],
] as const;

/** The core's view of a body in a fresh instance: status, and `{"messages":[...]` with the tools. */
function coreView(file: string, body: Uint8Array, provider = 0): { status: number; text: string } {
  const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {}).exports as unknown as ViewExports;
  const at = x.prepare(0, body.length, 0);
  new Uint8Array(x.memory.buffer).set(body, at);
  const count = x.index(at, body.length);
  expect(count).toBeGreaterThan(0);
  const status = x.view(at, body.length, count, provider);
  const r = new Uint32Array(x.memory.buffer, x.result(), 32);
  return { status, text: status === 0 ? new TextDecoder().decode(new Uint8Array(x.memory.buffer, r[15], r[17]! - r[15]!)) : '' };
}

for (const [kind, file] of builds) {
  describe(`request view in the core (${kind}: ${file})`, () => {
    it('a split user turn repeating a large member grows memory as it goes, and keys as the reference keys it', () => {
      const content: Record<string, unknown>[] = [];
      for (let i = 0; i < 30; i++) content.push({ type: 'tool_result', tool_use_id: `t${i}`, content: `r${i}` }, { type: 'text', text: `t${i}` });
      // The results' calls come first: a result whose call is not in the body (dangling) the core leaves to the reference.
      const calls = { role: 'assistant', content: Array.from({ length: 30 }, (_, i) => ({ type: 'tool_use', id: `t${i}`, name: 'f', input: {} })) };
      const body = { model: 'claude', max_tokens: 5, messages: [calls, { role: 'user', name: 'n'.repeat(300_000), content }] };
      const bytes = new TextEncoder().encode(JSON.stringify(body));
      const { status, text } = coreView(file, bytes);
      expect(status).toBe(0);
      // 30 runs of text parts, each with the 300 KB member, and 30 tool messages.
      expect(text.length).toBeGreaterThan(30 * 300_000);
      expect(text.split('"role":"tool"').length - 1).toBe(30);
      const { messages: _m, view: _v, ...want } = requestKeys(bytes);
      expect(requestDigests(bytes)).toEqual(want);
    });

    // The view's own objects (messages, parts, calls, results) are written in canonical member
    // order, so the canonical pass over the view leaves them in place; objects copied from the
    // body, and objects with members copied from it, keep the body's order and are not checked.
    it('writes the objects it names itself in canonical member order, for the benchmark bodies of every shape', () => {
      const own = new Set(['content', 'role', 'id', 'type', 'arguments', 'name', 'is_error', 'text', 'thinking', 'json', 'image', 'url', 'path']);
      const bodies: [string, Uint8Array, number][] = [
        ...Object.entries(requestBodies() as Record<string, { bytes: Uint8Array }>).filter(([shape]) => shape !== 'openai-embeddings').map(([shape, b]): [string, Uint8Array, number] => [shape, b.bytes, 0]),
        ['gemini', geminiBody().bytes, 7],
        ['bedrock-converse', converseBody().bytes, 6],
      ];
      for (const [shape, bytes, provider] of bodies) {
        const { status, text } = coreView(file, bytes, provider);
        expect(status, shape).toBe(0);
        // Holes (attachments the caller fills) are a 0x00 byte.
        const view = JSON.parse(`${text.replaceAll('\0', 'null')}}`) as { messages: unknown[] };
        let checked = 0;
        const out: string[] = [];
        const visit = (v: unknown): void => {
          if (Array.isArray(v)) v.forEach(visit);
          else if (v !== null && typeof v === 'object') {
            const names = Object.keys(v);
            if (names.every((n) => own.has(n))) {
              checked++;
              if (names.join() !== [...names].sort().join()) out.push(names.join());
            }
            // Into the members the view writes, not into arguments or JSON results (the body's).
            for (const [n, m] of Object.entries(v)) if (own.has(n) && n !== 'arguments' && n !== 'json') visit(m);
          }
        };
        visit(view.messages);
        expect(checked, shape).toBeGreaterThan(80);
        expect(out, shape).toEqual([]);
      }
    });
  });
}

describe('the structural index (assembly/tape.ts) in both builds', () => {
  /** The index's records of `text` in a fresh instance of `file`, or the failure code. */
  function records(file: string, text: string): number[] | number {
    const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {}).exports as unknown as ViewExports;
    return indexRecords(x, new TextEncoder().encode(text));
  }

  it('agree on strings of escapes at every offset of a 16-byte step, and flag the escapes RFC 8785 spells otherwise', () => {
    // Runs of short escapes (the SIMD scan passes over them inside a step), \u escapes and
    // surrogate pairs (its slow path), and faults: a bad escape, a control character.
    const pieces = ['a', 'bc', 'é', '😀', '\\"', '\\\\', '\\/', '\\n', '\\t', '\\b', '\\f', '\\r', '\\u00e9', '\\ud83d\\ude00', '\\x', '\u0001', '\\'];
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    let faults = 0;
    for (let run = 0; run < 3000; run++) {
      let s = '';
      let odd = false;
      const len = next(40);
      for (let i = 0; i < len; i++) {
        const piece = pieces[next(run % 10 === 0 ? pieces.length : pieces.length - 3)]!;
        if (piece === '\\/' || piece.startsWith('\\u')) odd = true;
        s += piece;
      }
      const text = `{"${'k'.repeat(next(32))}":["${s}","${'x'.repeat(next(20))}\\"${s}"]}`;
      const simd = records(builds[1][1], text);
      expect(simd, text).toEqual(records(builds[0][1], text));
      if (typeof simd === 'number') {
        faults++;
        continue;
      }
      // The two strings' records: F_ESCAPED (0x100) as the text has a backslash, F_ODD_ESCAPE
      // (0x800) as it has \/ or \u.
      if (run % 10 === 0) continue; // a lone backslash piece joins the next one: no flags to predict
      const [first, second] = [simd[16]!, simd[24]!];
      expect(first & 0x100, text).toBe(s.includes('\\') ? 0x100 : 0);
      expect(first & 0x800, text).toBe(odd ? 0x800 : 0);
      expect(second & 0x900, text).toBe(odd ? 0x900 : 0x100);
    }
    expect(faults).toBeGreaterThan(0);
    expect(faults).toBeLessThan(3000);
  });
});
