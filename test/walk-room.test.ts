// The walk's room checks (src/core/walk.ts): it checks for room once per member or array item,
// for the pieces written after the check, rather than before each byte it writes. Here the room is
// exactly as large as the walk asks, at every starting size, and grows by exactly what it asks: a
// byte written past a check's room is lost (a typed array ignores it) and the text comes out
// wrong. The text is read back, frames decoded, and compared with JSON.stringify's.
import { describe, expect, it } from 'vitest';
import { writeValueText, type Room } from '../src/core/walk.ts';
import { valueGen } from './values.ts';

/** A room of exactly `end` bytes whose grow() gives exactly what is asked. */
function tightRoom(end: number): Room {
  const make = (n: number, from?: Uint8Array) => {
    const u8 = new Uint8Array(n);
    if (from) u8.set(from.subarray(0, Math.min(n, from.length)));
    return { buf: Buffer.from(u8.buffer), u8 };
  };
  const room: Room = {
    ...make(end),
    end,
    grow(e) {
      Object.assign(room, make(e, room.u8));
      return (room.end = e);
    },
  };
  return room;
}

/** The walk's text (UTF-8) with its frames of UTF-16 units read back as JSON strings. */
function readBack(u8: Uint8Array, n: number): string {
  const b = Buffer.from(u8.buffer, u8.byteOffset, n);
  let out = '';
  let from = 0;
  for (let i = 0; i < n; i++) {
    if (b[i] !== 0x01) continue;
    const units = b.readUInt32LE(i + 1);
    // The space before a frame aligns its units.
    out += b.toString('utf8', from, b[i - 1] === 0x20 ? i - 1 : i) + JSON.stringify(b.toString('utf16le', i + 5, i + 5 + 2 * units));
    from = i = i + 5 + 2 * units;
    i--;
  }
  return out + b.toString('utf8', from, n);
}

function written(v: unknown, room: Room): string {
  const n = writeValueText(v, room, 0);
  return readBack(room.u8, n); // the memory as it is after the walk's last grow()
}

const values: unknown[] = [
  { role: 'assistant', content: 'x'.repeat(150), name: 'agent_lJLJ' },
  { a: -1.2345678901234567e-300, bb: 0.000001234567890123, ccc: false, d: true, e: null, f: undefined, g: 'x'.repeat(24) },
  [false, -1.7976931348623157e308, 'y'.repeat(24), null, undefined, () => 1, [[[]]], {}, { 'é k': 'é', 'q"': '\\' }],
  // Names JSON.stringify spells: long ones of three-byte units fill the room asked for them but
  // four bytes, with the colon and the value still to come.
  { ['北'.repeat(30)]: -1.7976931348623157e308, 北: false, ['é'.repeat(40)]: false, 'a\n': 'é', '\u0001': [1.5e-7] },
  { ['n'.repeat(40)]: { ['m'.repeat(23)]: [1, 'z'.repeat(24)] }, 'a\n': -0.0000012345678901234567 },
];
for (let seed = 1; seed <= 60; seed++) values.push(valueGen(seed, false).value(0));

describe("the walk's room checks", () => {
  it('write JSON.stringify\'s text in a room as tight as the walk asks, from every starting size', () => {
    for (const v of values) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      const want = JSON.stringify(v);
      const full = written(v, tightRoom(1 << 20));
      expect(full).toBe(want);
      for (let end = 0; end <= full.length + 8; end++) expect(written(v, tightRoom(end)), `room ${end}`).toBe(want);
    }
  });
});
