// The tape format's test vectors (test/vectors/tapes, written by scripts/gen-tape-vectors.mjs):
// each tape must decode to its JSON with the package, and with an independent reader written
// here from docs/tape-format.md alone (its own CRC-32, frame walk, resynchronization and msgpack
// decoder: no msgpackr, no package code). The writer must still write the same bytes, and the
// docs' record tables must list the fields the writers write, in the order they write them.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { scanTape } from '../../src/store/tape-file.ts';

const VECTORS = join(import.meta.dirname, '../vectors/tapes');
const DOC = readFileSync(join(import.meta.dirname, '../../docs/tape-format.md'), 'utf8');
const names = readdirSync(VECTORS)
  .filter((f) => f.endsWith('.tape'))
  .map((f) => f.slice(0, -5))
  .sort();
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-vectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Vector {
  header: Record<string, unknown>;
  records: unknown[];
  warnings: { code: string; offset: number; message: string }[];
  frames: { offset: number; length: number; payload: string }[];
}
const vector = (name: string) => JSON.parse(readFileSync(join(VECTORS, `${name}.json`), 'utf8')) as Vector;
const bytesOf = (name: string) => readFileSync(join(VECTORS, `${name}.tape`));
const intact = (name: string) => vector(name).warnings.length === 0;

// ---------------------------------------------------------------------------------------------
// An independent reader, from docs/tape-format.md only
// ---------------------------------------------------------------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const TYPED = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'];
const tag = (type: string, fields: Record<string, unknown>) => ({ $type: type, ...fields });
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/** The JSON form of bytes (docs/tape-format.md, "JSON form"). */
function bytesForm(b: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b);
  } catch {
    return tag('bytes', { base64: b64(b) });
  }
  const newline = text.endsWith('\n');
  const body = newline ? text.slice(0, -1) : text;
  if (body[0] === '{' || body[0] === '[') {
    try {
      const v: unknown = JSON.parse(body);
      for (const indent of [0, 2]) {
        if (JSON.stringify(v, null, indent) === body) return tag('bytes', { json: v, ...(indent ? { indent } : {}), ...(newline ? { newline: true } : {}) });
      }
    } catch {
      // not JSON
    }
  }
  return /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text) ? tag('bytes', { base64: b64(b) }) : tag('bytes', { text });
}

function numberForm(n: number): unknown {
  if (Number.isNaN(n)) return tag('number', { value: 'NaN' });
  if (n === Infinity || n === -Infinity) return tag('number', { value: n > 0 ? 'Infinity' : '-Infinity' });
  if (Object.is(n, -0)) return tag('number', { value: '-0' });
  return n;
}

/** Decodes one msgpack value at `p`, straight into the JSON form; returns it and where it ends. */
function decode(b: Uint8Array, p: number): [unknown, number] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const t = b[p]!;
  const str = (at: number, n: number): [unknown, number] => [new TextDecoder().decode(b.subarray(at, at + n)), at + n];
  const arr = (at: number, n: number): [unknown[], number] => {
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) {
      const [x, e] = decode(b, at);
      out.push(x);
      at = e;
    }
    return [out, at];
  };
  const map = (at: number, n: number): [unknown, number] => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) {
      const [k, e1] = decode(b, at);
      const [x, e2] = decode(b, e1);
      if (typeof k !== 'string') throw new Error(`a map key that is not a string at ${at}`);
      out[k] = x;
      at = e2;
    }
    return [Object.hasOwn(out, '$type') ? tag('object', { value: out }) : out, at];
  };
  if (t <= 0x7f) return [t, p + 1];
  if (t >= 0xe0) return [t - 0x100, p + 1];
  if (t >= 0x80 && t <= 0x8f) return map(p + 1, t & 0x0f);
  if (t >= 0x90 && t <= 0x9f) return arr(p + 1, t & 0x0f);
  if (t >= 0xa0 && t <= 0xbf) return str(p + 1, t & 0x1f);
  switch (t) {
    case 0xc0:
      return [null, p + 1];
    case 0xc2:
      return [false, p + 1];
    case 0xc3:
      return [true, p + 1];
    case 0xc4:
      return [tag('Buffer', { base64: b64(b.subarray(p + 2, p + 2 + b[p + 1]!)) }), p + 2 + b[p + 1]!];
    case 0xc5:
      return [tag('Buffer', { base64: b64(b.subarray(p + 3, p + 3 + v.getUint16(p + 1))) }), p + 3 + v.getUint16(p + 1)];
    case 0xc6:
      return [tag('Buffer', { base64: b64(b.subarray(p + 5, p + 5 + v.getUint32(p + 1))) }), p + 5 + v.getUint32(p + 1)];
    case 0xc7:
      return ext(b, v.getInt8(p + 2), p + 3, b[p + 1]!);
    case 0xc8:
      return ext(b, v.getInt8(p + 3), p + 4, v.getUint16(p + 1));
    case 0xc9:
      return ext(b, v.getInt8(p + 5), p + 6, v.getUint32(p + 1));
    case 0xca:
      return [numberForm(v.getFloat32(p + 1)), p + 5];
    case 0xcb:
      return [numberForm(v.getFloat64(p + 1)), p + 9];
    case 0xcc:
      return [b[p + 1], p + 2];
    case 0xcd:
      return [v.getUint16(p + 1), p + 3];
    case 0xce:
      return [v.getUint32(p + 1), p + 5];
    case 0xcf: // int64 and uint64 are bigints
      return [tag('bigint', { value: v.getBigUint64(p + 1).toString() }), p + 9];
    case 0xd0:
      return [v.getInt8(p + 1), p + 2];
    case 0xd1:
      return [v.getInt16(p + 1), p + 3];
    case 0xd2:
      return [v.getInt32(p + 1), p + 5];
    case 0xd3:
      return [tag('bigint', { value: v.getBigInt64(p + 1).toString() }), p + 9];
    case 0xd4:
      return fixext1(b, v.getInt8(p + 1), b[p + 2]!, p + 3);
    case 0xd5:
      return ext(b, v.getInt8(p + 1), p + 2, 2);
    case 0xd6:
      return ext(b, v.getInt8(p + 1), p + 2, 4);
    case 0xd7:
      return ext(b, v.getInt8(p + 1), p + 2, 8);
    case 0xd8:
      return ext(b, v.getInt8(p + 1), p + 2, 16);
    case 0xd9:
      return str(p + 2, b[p + 1]!);
    case 0xda:
      return str(p + 3, v.getUint16(p + 1));
    case 0xdb:
      return str(p + 5, v.getUint32(p + 1));
    case 0xdc:
      return arr(p + 3, v.getUint16(p + 1));
    case 0xdd:
      return arr(p + 5, v.getUint32(p + 1));
    case 0xde:
      return map(p + 3, v.getUint16(p + 1));
    case 0xdf:
      return map(p + 5, v.getUint32(p + 1));
  }
  throw new Error(`byte ${t.toString(16)} at ${p} is no msgpack type`);
}

/** A fixext 1: `undefined`, an invalid Date, or a tag followed by one value. */
function fixext1(b: Uint8Array, type: number, data: number, end: number): [unknown, number] {
  if (type === 0 && data === 0) return [tag('undefined', {}), end];
  if (type === -1) return [tag('date', { iso: null }), end];
  const [x, after] = decode(b, end);
  const items = x as unknown[];
  switch (type) {
    case 0x73:
      return [tag('set', { values: items }), after];
    case 0x65:
      return [tag('error', { name: items[0], message: items[1], ...(items.length > 2 ? { cause: items[2] } : {}) }), after];
    case 0x78:
      return [tag('regexp', { source: items[0], flags: items[1] }), after];
    case 0x4d:
      return [tag('map', { entries: items }), after];
  }
  throw new Error(`unknown tag ${type}`);
}

/** A sized extension: timestamp, bigint 0x42, typed array 0x74. */
function ext(b: Uint8Array, type: number, at: number, n: number): [unknown, number] {
  const data = b.subarray(at, at + n);
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const end = at + n;
  if (type === -1) {
    let ms: number;
    if (n === 4) ms = v.getUint32(0) * 1000;
    else if (n === 8) ms = (v.getUint32(4) + (v.getUint32(0) & 3) * 2 ** 32) * 1000 + Math.floor((v.getUint32(0) >>> 2) / 1e6);
    else ms = Number(v.getBigInt64(4)) * 1000 + Math.floor(v.getUint32(0) / 1e6);
    return [tag('date', { iso: new Date(ms).toISOString() }), end];
  }
  if (type === 0x42) {
    let x = BigInt(data[0]! >= 0x80 ? data[0]! - 0x100 : data[0]!);
    for (let i = 1; i < n; i++) x = (x << 8n) | BigInt(data[i]!);
    return [tag('bigint', { value: x.toString() }), end];
  }
  if (type === 0x74) {
    const name = TYPED[data[0]!]!;
    const raw = data.subarray(1);
    return [name === 'Uint8Array' ? bytesForm(raw) : tag(name, { base64: b64(raw) }), end];
  }
  throw new Error(`unknown extension ${type}`);
}

const MAGIC = [0x89, 0x54, 0x41, 0x50, 0x45, 0x0d, 0x0a, 0x1a];
const FRAME = [0xc1, 0x54, 0x44, 0x52];

/** The frame length at pos when it is valid (magic, length, fits, CRC), else undefined. */
function validFrame(b: Uint8Array, pos: number): number | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (pos + 12 > b.length || FRAME.some((m, i) => b[pos + i] !== m)) return undefined;
  const len = v.getUint32(pos + 4);
  if (len > 256 * 1024 * 1024 || pos + 12 + len > b.length) return undefined;
  return crc(b.subarray(pos + 12, pos + 12 + len)) === v.getUint32(pos + 8) ? 12 + len : undefined;
}

/** Reads a whole tape as docs/tape-format.md says: header, records, warnings (code and offset). */
function independentRead(b: Uint8Array): { header: Record<string, unknown>; records: unknown[]; warnings: { code: string; offset: number }[]; frames: { offset: number; length: number }[] } {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const warnings: { code: string; offset: number }[] = [];
  let header: Record<string, unknown> = { created: '', formatVersion: 1, headerLost: true, tapedeckVersion: '' };
  let pos = 0;
  const fail = (offset: number) => {
    warnings.push({ code: 'E_TAPE_HEADER', offset });
    pos = -1;
  };
  if (b.length < 18) fail(0);
  else if (MAGIC.some((m, i) => b[i] !== m)) fail(MAGIC.findIndex((m, i) => b[i] !== m));
  else if (v.getUint16(8) === 0) fail(8);
  else if (v.getUint32(10) > 1024 * 1024 || 18 + v.getUint32(10) > b.length) fail(10);
  else if (crc(b.subarray(18, 18 + v.getUint32(10))) !== v.getUint32(14)) fail(14);
  else {
    const [meta, end] = decode(b, 18);
    const m = meta as Record<string, unknown>;
    if (end !== 18 + v.getUint32(10) || typeof m.created !== 'string' || typeof m.tapedeckVersion !== 'string') fail(18);
    else {
      header = { ...m, formatVersion: v.getUint16(8) };
      pos = end;
    }
  }
  if (pos < 0) {
    // Records are read from the first valid frame.
    pos = b.length;
    for (let p = 0; p < b.length; p++) {
      if (validFrame(b, p) !== undefined) {
        pos = p;
        break;
      }
    }
  }
  const records: unknown[] = [];
  const frames: { offset: number; length: number }[] = [];
  while (pos < b.length) {
    const len = validFrame(b, pos);
    if (len !== undefined) {
      const [x, end] = decode(b, pos + 12);
      if (end !== pos + len) warnings.push({ code: 'E_TAPE_CORRUPT', offset: pos });
      else {
        records.push(x);
        frames.push({ offset: pos, length: len });
      }
      pos += len;
      continue;
    }
    let next = -1;
    for (let p = pos + 1; p < b.length; p++) {
      if (validFrame(b, p) !== undefined) {
        next = p;
        break;
      }
    }
    if (next >= 0) {
      warnings.push({ code: 'E_TAPE_CORRUPT', offset: pos });
      pos = next;
      continue;
    }
    const rest = b.length - pos;
    const magicPrefix = FRAME.slice(0, Math.min(rest, 4)).every((m, i) => b[pos + i] === m);
    const torn = magicPrefix && (rest < 12 || pos + 12 + v.getUint32(pos + 4) > b.length);
    warnings.push({ code: torn ? 'E_TAPE_TORN_TAIL' : 'E_TAPE_CORRUPT', offset: pos });
    break;
  }
  return { header, records, warnings, frames };
}

// ---------------------------------------------------------------------------------------------

describe('tape format test vectors', () => {
  it('there are vectors for every documented case', () => {
    expect(names).toEqual(['encodings', 'example', 'flipped', 'no-salt', 'records', 'short-header', 'torn-tail', 'version-0']);
  });

  for (const name of names) {
    it(`${name}: the package decodes it to its JSON`, async () => {
      const want = vector(name);
      const file = join(VECTORS, `${name}.tape`);
      const got = JSON.parse(await exportTapeJSON(file)) as Vector;
      expect(got.header).toEqual(want.header);
      expect(got.records).toEqual(want.records);
      expect(got.warnings.map(({ code, offset }) => ({ code, offset }))).toEqual(want.warnings.map(({ code, offset }) => ({ code, offset })));
      const scan = await scanTape(file);
      expect(scan.frames.map((f) => ({ offset: f.offset, length: f.length, payload: scan.bytes.subarray(f.offset + 12, f.offset + f.length).toString('hex') }))).toEqual(want.frames);
    });

    it(`${name}: an independent reader written from the docs agrees`, () => {
      const want = vector(name);
      const got = independentRead(bytesOf(name));
      expect(got.header).toEqual(want.header);
      expect(got.records).toEqual(want.records);
      expect(got.warnings).toEqual(want.warnings.map(({ code, offset }) => ({ code, offset })));
      expect(got.frames).toEqual(want.frames.map(({ offset, length }) => ({ offset, length })));
    });
  }

  for (const name of names.filter(intact)) {
    it(`${name}: importing its JSON writes the same bytes`, async () => {
      const { header, records } = vector(name);
      const out = join(dir, `${name}.tape`);
      // The vectors' keys are made up (the format is under test, not the keying): kept.
      await importTapeJSON(JSON.stringify({ header, records }), out, { keepKeys: true });
      expect(readFileSync(out).equals(bytesOf(name))).toBe(true);
    });
  }

  it('the example in the docs is the example vector, byte for byte', () => {
    const dump = /### Example[\s\S]*?```\n([\s\S]*?)```/.exec(DOC)![1]!;
    const hex = dump
      .split('\n')
      .filter((l) => /^[0-9a-f]{8}:/.test(l))
      .map((l) => l.slice(10, 49).replace(/\s+/g, ''))
      .join('');
    expect(hex).toBe(bytesOf('example').toString('hex'));
  });
});

/** The field names of the table under a docs heading, in table order. */
function docFields(heading: string): string[] {
  const at = DOC.indexOf(`### ${heading}`);
  expect(at, heading).toBeGreaterThan(0);
  const section = DOC.slice(at, DOC.indexOf('\n#', at + 4));
  return [...section.matchAll(/^\| `([A-Za-z]+)` /gm)].map((m) => m[1]!);
}

/** The top-level field names of a payload, in the order they are written (independent decoder). */
const writtenFields = (payload: Uint8Array): string[] => Object.keys(decode(payload, 0)[0] as object);

describe('the record tables of docs/tape-format.md are what the writers write', () => {
  it('ReplayCache records: every field listed, in the written order (keyVersion included)', async () => {
    const tape = join(dir, 'cache.tape');
    // Opened for a test, as the test helpers open it: its records name the test.
    const cache = await ReplayCache.open(tape, { mode: 'record', test: 'test/a.test.ts > a' });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { text: 'a' }, { durationMs: 5, ignoredArgs: ['seed'], raw: { body: '{"a":1}', contentType: 'application/json' }, meta: { test: 't' } });
    await cache.close();
    const scan = await scanTape(tape);
    const f = scan.frames[0]!;
    const written = writtenFields(scan.bytes.subarray(f.offset + 12, f.offset + f.length));
    const documented = docFields('ReplayCache records');
    expect(written).toEqual(documented.filter((x) => written.includes(x)));
    expect(written.filter((x) => !documented.includes(x))).toEqual([]);
    expect(written).toContain('keyVersion');
    expect(written).toContain('test');
  });

  it('HTTP exchange records: every field listed, in the written order', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tape = join(dir, 'http.tape');
    try {
      const f = createFetch({ tape, mode: 'record', test: 'test/a.test.ts > a' });
      await (await f(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) })).text();
      await f.close();
    } finally {
      server.close();
    }
    const scan = await scanTape(tape);
    const fr = scan.frames[0]!;
    const written = writtenFields(scan.bytes.subarray(fr.offset + 12, fr.offset + fr.length));
    const documented = docFields('HTTP exchange records');
    expect(written).toEqual(documented.filter((x) => written.includes(x)));
    expect(written.filter((x) => !documented.includes(x))).toEqual([]);
    expect(written).toContain('test');
  });

  it('the error table gives version 0 as E_TAPE_HEADER, which the reader reports', () => {
    const row = (code: string) => DOC.split('\n').find((l) => l.startsWith(`| \`${code}\``)) ?? '';
    expect(row('E_TAPE_VERSION')).not.toMatch(/version 0/);
    expect(row('E_TAPE_HEADER')).toMatch(/version 0/);
    expect(vector('version-0').warnings[0]!.code).toBe('E_TAPE_HEADER');
  });
});
