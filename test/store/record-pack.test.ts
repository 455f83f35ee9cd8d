// FrameBuffer (frames of plain records written straight into one buffer) against the general
// tape writer, the oracle: recordFrame of inRecordOrder(sortedKeys(record)), packed by msgpackr.
// For random records of plain data (names that sort differently by UTF-16 units, array-index
// names, __proto__; strings around every header size, non-ASCII and lone surrogates on both
// sides of msgpackr's 64-unit switch; numbers at every integer boundary; Buffers and
// Uint8Arrays around every length boundary) both must write the same frame bytes; for values
// that are not plain data FrameBuffer must write nothing and say so.
import { describe, expect, it } from 'vitest';
import { inRecordOrder, sortedKeys } from '../../src/store/record-order.ts';
import { FrameBuffer } from '../../src/store/record-pack.ts';
import { recordFrame } from '../../src/store/tape-file.ts';
import { rng } from '../reference.ts';

const NAMES = ['b', 'a', 'B', 'aa', '10', '9', '0', '01', '4294967295', '4294967294', 'é', '\u{1F600}', '\uFFFD', '__proto__', 'z', 'content', 'role', 'toJSON'];
const PIECES = ['a', 'é', '✓', '\u{1F600}', '\uD800', '\uDC00', ' ', '"', '\u0000'];
const LENGTHS = [0, 1, 10, 11, 31, 32, 63, 64, 85, 86, 100, 255, 256, 300];
const LONG = [21845, 21846, 65535, 65536, 70000];
const NUMBERS = [0, -0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, 1.5, -1.5, 1e300, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity, 1767225600000];

function str(r: () => number): string {
  const n = (r() < 0.03 ? LONG[Math.floor(r() * LONG.length)]! : LENGTHS[Math.floor(r() * LENGTHS.length)]!) + Math.floor(r() * 3);
  const ascii = r() < 0.5;
  let s = '';
  while (s.length < n) s += ascii ? String.fromCharCode(32 + Math.floor(r() * 95)) : PIECES[Math.floor(r() * PIECES.length)]!;
  return s.slice(0, n);
}

function bytes(r: () => number): Uint8Array {
  const n = r() < 0.05 ? [65534, 65535, 65536][Math.floor(r() * 3)]! : [0, 1, 254, 255, 256][Math.floor(r() * 5)]!;
  const b = r() < 0.5 ? Buffer.alloc(n, 7) : new Uint8Array(n).fill(9);
  return b;
}

function value(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth > 3 || pick < 0.55) {
    const leaf = r();
    if (leaf < 0.35) return str(r);
    if (leaf < 0.65) return NUMBERS[Math.floor(r() * NUMBERS.length)];
    if (leaf < 0.75) return bytes(r);
    return [null, true, false, undefined][Math.floor(r() * 4)];
  }
  if (pick < 0.6) return Array.from({ length: [0, 3, 15, 16][Math.floor(r() * 4)]! >> (depth > 1 ? 2 : 0) }, () => value(r, depth + 1));
  const o: Record<string, unknown> = JSON.parse('{}');
  const n = depth > 1 ? [0, 2, 3][Math.floor(r() * 3)]! : [0, 2, 5, 15, 16, 17, 40][Math.floor(r() * 7)]!;
  for (let i = 0; i < n; i++) {
    const k = r() < 0.7 ? NAMES[Math.floor(r() * NAMES.length)]! : `k${Math.floor(r() * 40)}`;
    // As JSON.parse makes it: __proto__ an own member, not the prototype.
    Object.defineProperty(o, k, { value: value(r, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

/** A record as the writers make them: `v` and the tape's own fields in any order, plus others. */
function record(r: () => number): Record<string, unknown> {
  const fields = ['response', 'request', 'key', 'v', 'kind', 'route', 'match', 'trace', 'repeat', 'recordedAt', 'durationMs', 'signature', 'zeta', 'alpha'];
  const rec: Record<string, unknown> = {};
  for (const f of [...fields].sort(() => r() - 0.5)) if (f === 'v' || r() < 0.8) rec[f] = f === 'v' ? 1 : value(r, 1);
  return rec;
}

const oracle = (rec: Record<string, unknown>): Buffer => recordFrame(inRecordOrder(sortedKeys(rec)), 0, 'test.tape', { plain: true });

describe('FrameBuffer', () => {
  it('writes the frames the general tape writer writes, for 1500 random plain records', () => {
    const r = rng(20260101);
    const frames = new FrameBuffer(64);
    const want: Buffer[] = [];
    for (let i = 0; i < 1500; i++) {
      const rec = record(r);
      const before = frames.size;
      expect(frames.addPlain(rec)).toBe(true);
      const w = oracle(rec);
      const got = frames.take().subarray(before);
      if (!got.equals(w)) expect.fail(`record ${i} differs: ${got.toString('hex').slice(0, 200)} vs ${w.toString('hex').slice(0, 200)}`);
      want.push(w);
    }
    // Back to back in one buffer, as a batch.
    const all = new FrameBuffer(16);
    const r2 = rng(20260101);
    for (let i = 0; i < 1500; i++) all.addPlain(record(r2));
    expect(all.take().equals(Buffer.concat(want))).toBe(true);
  });

  it('writes what the general writer writes for objects of many names (sorted another way), index names among them', () => {
    for (const n of [33, 50, 200]) {
      const o: Record<string, unknown> = {};
      for (let i = n; i > 0; i--) o[i % 7 === 0 ? String(i) : `name${(i * 7919) % 1000}`] = i;
      const frames = new FrameBuffer();
      expect(frames.addPlain({ v: 1, request: { body: o } })).toBe(true);
      expect(frames.take().equals(oracle({ v: 1, request: { body: o } }))).toBe(true);
    }
  });

  it('writes a repeated object as the general writer does: its kept bytes only while it cannot change', () => {
    // Header maps given as `repeated`, in runs: frozen ones (strings, frozen arrays) whose
    // bytes may be kept, and ones that change between records (not frozen; frozen around an
    // array that is not), changed in place each time, whose kept bytes would be stale.
    const r = rng(20260202);
    const frozen = Object.freeze({ accept: 'application/json', authorization: '[REDACTED]', 'x-many': Object.freeze(['a', 'b']) });
    const open: Record<string, unknown> = { accept: 'application/json', authorization: '[REDACTED]' };
    const list = ['a'];
    const frozenAroundOpen = Object.freeze({ accept: 'text/plain', 'x-list': list });
    const maps: Record<string, unknown>[] = [frozen, open, frozenAroundOpen, Object.freeze({})];
    const frames = new FrameBuffer(64);
    let map = maps[0]!;
    for (let i = 0; i < 400; i++) {
      if (r() < 0.2) map = maps[Math.floor(r() * maps.length)]!;
      open[`x-${Math.floor(r() * 5)}`] = `sk-secret-${i}`;
      list.push(`v${i}`);
      const rec = { v: 1, key: `k${i}`, request: { method: 'POST', headers: map }, response: { status: 200, headers: r() < 0.3 ? map : {} } };
      const before = frames.size;
      expect(frames.addPlain(rec, r() < 0.9 ? map : undefined)).toBe(true);
      const got = frames.take().subarray(before);
      const want = oracle(rec);
      if (!got.equals(want)) expect.fail(`record ${i} differs: ${got.toString('hex').slice(0, 200)} vs ${want.toString('hex').slice(0, 200)}`);
    }
  });

  it('writes objects whose names change between records as the general writer does (names sorted and encoded once per list of names)', () => {
    // Lists of names that a writer keeping shapes could take for one another: one name
    // replaced, dropped or added, the same names listed in another order, a list that is
    // another's start, index names, and more lists with one first name than are kept (twelve,
    // in turns, so kept ones are dropped and made again).
    const base = ['content', 'role', 'name', 'tool_call_id', 'z'];
    const lists: string[][] = [
      base,
      ['content', 'role', 'name', 'tool_call_id', 'y'],
      ['content', 'role', 'name', 'tool_call_id'],
      ['content', 'role', 'name', 'tool_call_id', 'z', 'a'],
      ['content', 'name', 'role', 'tool_call_id', 'z'],
      ['content', 'role'],
      ['content'],
      ['1', '0', 'content', 'role'],
      ['0', 'content', 'role'],
      ...Array.from({ length: 12 }, (_, i) => ['content', `m${i}`, ...(i % 2 ? ['role'] : [])]),
    ];
    const r = rng(20260303);
    const frames = new FrameBuffer(64);
    for (let i = 0; i < 600; i++) {
      const names = i < 2 * lists.length ? lists[i % lists.length]! : lists[Math.floor(r() * lists.length)]!;
      const made = () => {
        const o: Record<string, unknown> = {};
        for (const k of names) o[k] = r() < 0.5 ? `${k}-${i}` : { [names[Math.floor(r() * names.length)]!]: i };
        return o;
      };
      const rec = { v: 1, key: `k${i}`, request: { body: { messages: [made(), made()] } }, response: made() };
      const before = frames.size;
      expect(frames.addPlain(rec)).toBe(true);
      const got = frames.take().subarray(before);
      const want = oracle(rec);
      if (!got.equals(want)) expect.fail(`record ${i} (${names.join(',')}) differs: ${got.toString('hex').slice(0, 200)} vs ${want.toString('hex').slice(0, 200)}`);
    }
  });

  it('writes nothing while Object.prototype lends an enumerable member (an object lists it in for-in, not in Object.keys)', () => {
    const frames = new FrameBuffer();
    const rec = { v: 1, key: 'k', request: { body: { model: 'm' } } };
    expect(frames.addPlain(rec)).toBe(true);
    const size = frames.size;
    (Object.prototype as Record<string, unknown>).lent = 'x';
    try {
      expect(frames.addPlain(rec)).toBe(false);
      expect(frames.size).toBe(size);
    } finally {
      delete (Object.prototype as Record<string, unknown>).lent;
    }
    expect(frames.addPlain(rec)).toBe(true);
    expect(frames.take().subarray(size).equals(oracle(rec))).toBe(true);
  });

  it('writes nothing and says so for values that are not plain data', () => {
    class Money {
      cents = 1;
    }
    const nonPlain: unknown[] = [new Map([[1, 2]]), new Set([1]), new Date(0), new Money(), 1n, Symbol('s'), () => 1, new Uint16Array(2), Object.create(null), JSON.parse('{"constructor":1}')];
    let deep: unknown = 'leaf';
    for (let i = 0; i < 600; i++) deep = [deep];
    nonPlain.push(deep);
    const frames = new FrameBuffer();
    frames.addPlain({ v: 1, key: 'k' });
    const size = frames.size;
    for (const x of nonPlain) {
      expect(frames.addPlain({ v: 1, request: { body: { a: [x] } } })).toBe(false);
      expect(frames.size).toBe(size);
    }
    expect(frames.addPlain(JSON.parse('{"0":1,"v":1}'))).toBe(false);
    expect(frames.take().equals(oracle({ v: 1, key: 'k' }))).toBe(true);
  });
});
