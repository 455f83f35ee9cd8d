#!/usr/bin/env node
// Writes test/vectors/tapes/: small tapes and, for each, NAME.json with what it decodes to (the
// `tapedeck export` form of its header, records and warnings) plus every frame's offset and
// payload bytes in hex, for implementations of docs/tape-format.md to check themselves against.
// Written with the built package (run `node scripts/build.mjs` first); every tape has a fixed
// `created` and salt, so running this again gives the same bytes.
// test/store/tape-vectors.test.ts reads them back with the package and with an independent
// decoder.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportTapeJSON } from '../dist/store/export.js';
import { appendRecords, createTape, scanTape } from '../dist/store/tape-file.js';
import { inRecordOrder, sortedKeys } from '../dist/store/record-order.js';

const OUT = join(import.meta.dirname, '../test/vectors/tapes');
const CREATED = '2026-01-01T00:00:00.000Z';
const SALT = '00112233445566778899aabbccddeeff';
const hex = (h) => Buffer.from(h.replace(/\s+/g, ''), 'hex');

/** Values that exercise every encoding rule of docs/tape-format.md, one record each. */
function encodings() {
  const ints = [0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1];
  const floats = [1.5, -0.25, 0.1, 1e300, Number.NaN, Infinity, -Infinity, -0];
  const strings = ['', 'a', 'x'.repeat(31), 'x'.repeat(32), 'y'.repeat(255), 'y'.repeat(256), 'héllo wörld 你好 🎉'];
  const containers = [
    [],
    Array.from({ length: 15 }, (_, i) => i),
    Array.from({ length: 16 }, (_, i) => i),
    {},
    Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i])),
    Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i])),
    { z: null, a: true, m: false, nested: { b: [1, 'two', { c: 3 }], a: 0 } },
    [1, , 3], // a hole: undefined
  ];
  const bytes = [
    Buffer.from([1, 2, 3]),
    Buffer.alloc(300, 7),
    new Uint8Array(0),
    new Uint8Array([1, 2, 3]),
    new Uint8Array(300).fill(9),
    new Int8Array([-1, 1]),
    new Uint8ClampedArray([0, 255]),
    new Int16Array([1, -1]),
    new Uint16Array([1, 65535]),
    new Int32Array([1, -1]),
    new Uint32Array([1, 2 ** 32 - 1]),
    new Float32Array([1.5]),
    new Float64Array([0.1]),
    new BigInt64Array([1n, -1n]),
    new BigUint64Array([2n ** 64n - 1n]),
  ];
  const dates = [new Date(0), new Date(1767225600000), new Date(5), new Date(1767225600123), new Date(-1), new Date(2 ** 32 * 1000 + 5), new Date(Number.NaN)];
  const bigints = [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, -(2n ** 64n), -(2n ** 63n) - 1n, 2n ** 200n + 12345n];
  const tagged = [undefined, new Set([1, 'a']), new Error('boom'), /ab+c/gi, new Map([[1, 'a'], ['k', { v: [1] }]]), new Map()];
  return [...ints, ...floats, ...strings, ...containers, ...bytes, ...dates, ...bigints, ...tagged];
}

/** A ReplayCache record as ReplayCache.put writes it (fixed time). */
function replayCacheRecord() {
  return inRecordOrder(
    sortedKeys({
      v: 1,
      key: 'a3c5f1d2e4b6a8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8e0f2a4b6c8',
      keyVersion: 2,
      recordedAt: CREATED,
      durationMs: 812.5,
      signature: { toolNames: [], messageCount: 1, contextKeys: [] },
      hashes: { messages: hex('11'.repeat(32)), paths: hex('11'.repeat(32)) },
      request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi, my key is [REDACTED:3f9a0c1b2d4e5f60]' }] },
      value: { text: 'Hello!' },
      raw: { body: Buffer.from('{"text":"Hello!"}'), contentType: 'application/json' },
    }),
  );
}

/** An HTTP exchange record as the proxy writes it (fixed time). */
function httpRecord() {
  return inRecordOrder(
    sortedKeys({
      v: 1,
      kind: 'http',
      match: 'llm',
      route: 'POST /v1/chat/completions',
      key: 'b4d6f8a0c2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8e0f2a4b6c8d0e2f4a6',
      keyVersion: 2,
      signature: { toolNames: [], messageCount: 1, contextKeys: [] },
      trace: 'c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7',
      request: { method: 'POST', url: '/v1/chat/completions?token=%5BREDACTED%3A0a1b2c3d4e5f6071%5D', headers: { authorization: '[REDACTED]', 'content-type': 'application/json' }, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } },
      response: { status: 200, statusText: 'OK', headers: { 'content-type': 'text/event-stream' }, body: Buffer.from('data: {"x":1}\n\ndata: [DONE]\n\n'), chunks: [[0.5, 15], [1.25, 29]] },
      recordedAt: CREATED,
      durationMs: 3.25,
    }),
  );
}

async function tape(name, records, header = { created: CREATED, tapedeckVersion: '0.1.0', salt: SALT }) {
  const file = join(OUT, `${name}.tape`);
  rmSync(file, { force: true });
  await createTape(file, header);
  if (records.length > 0) await appendRecords(file, records);
  return file;
}

/** NAME.json for a tape as it now is: its export plus its frames. */
async function describe(name, note) {
  const file = join(OUT, `${name}.tape`);
  const doc = JSON.parse(await exportTapeJSON(file));
  // Messages name the file: keep them the same wherever the vectors are made.
  for (const w of doc.warnings ?? []) w.message = w.message.replaceAll(file, `${name}.tape`);
  const scan = await scanTape(file);
  const frames = scan.frames.map((f) => ({ offset: f.offset, length: f.length, payload: scan.bytes.subarray(f.offset + 12, f.offset + f.length).toString('hex') }));
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify({ note, ...doc, frames }, null, 2)}\n`);
}

mkdirSync(OUT, { recursive: true });
await tape('example', [{ id: 1 }, new Map([[1, 'a']])]);
await describe('example', 'The example of docs/tape-format.md ("Example").');
// Keys sorted, as tapedeck's writers store them (so export -> import gives the same bytes).
await tape('encodings', encodings().map((v) => sortedKeys(v)));
await describe('encodings', 'One record per encoding rule of docs/tape-format.md ("Payload encoding").');
await tape('records', [replayCacheRecord(), httpRecord()]);
await describe('records', 'A ReplayCache record and an HTTP exchange record, fields in the documented order.');
await tape('no-salt', [{ id: 1 }], { created: CREATED, tapedeckVersion: '0.1.0', salt: null });
await describe('no-salt', 'A tape made before redaction salts existed: its header has no salt.');

// Damage: each from a copy of a sound tape.
const sound = readFileSync(await tape('torn-tail', [{ id: 1 }, { id: 2 }, { id: 3 }]));
writeFileSync(join(OUT, 'torn-tail.tape'), sound.subarray(0, sound.length - 5));
await describe('torn-tail', 'The last frame cut 5 bytes short (a crash mid-append): E_TAPE_TORN_TAIL, two records.');
{
  const scan = await scanTape(await tape('flipped', [{ id: 1 }, { id: 2 }, { id: 3 }]));
  const at = scan.frames[1].offset + 12;
  const bytes = Buffer.from(scan.bytes);
  bytes[at] ^= 0x01;
  writeFileSync(join(OUT, 'flipped.tape'), bytes);
}
await describe('flipped', 'One payload byte of the second frame flipped: E_TAPE_CORRUPT at that frame, the first and third records read.');
{
  const file = await tape('short-header', []);
  writeFileSync(file, readFileSync(file).subarray(0, 12));
}
await describe('short-header', 'A tape magic and a header cut short after 12 bytes, nothing else: E_TAPE_HEADER at byte 0, no records.');
{
  const file = await tape('version-0', [{ id: 1 }]);
  const bytes = readFileSync(file);
  bytes.writeUInt16BE(0, 8);
  writeFileSync(file, bytes);
}
await describe('version-0', 'Format version 0 (damage, not a version): E_TAPE_HEADER at byte 8, the header lost, the record read.');
console.log(`wrote ${OUT}`);
