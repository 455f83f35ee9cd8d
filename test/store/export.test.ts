// Tape <-> JSON export/import (src/store/export.ts): round trips of every tagged type,
// determinism, byte-identical re-export, error paths and damaged tapes.
import { mkdtempSync, readFileSync, rmSync, truncateSync, statSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import type { ReplayRecord } from '../../src/store/replay-cache.ts';

const CREATED = '2026-01-01T00:00:00.000Z';
const SALT = '00112233445566778899aabbccddeeff';
const root = mkdtempSync(join(tmpdir(), 'tapedeck-export-'));
let n = 0;
const fresh = () => join(root, `t${n++}.tape`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function tapeWith(values: unknown[]): Promise<string> {
  const file = fresh();
  await createTape(file, { created: CREATED, tapedeckVersion: '0.0.0-test', salt: SALT });
  if (values.length > 0) await appendRecords(file, values);
  return file;
}

async function importError(json: string): Promise<TapedeckError> {
  try {
    await importTapeJSON(json, fresh());
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    return e as TapedeckError;
  }
  throw new Error('expected a TapedeckError');
}

const signature = { provider: 'openai', model: 'gpt-4o' } as unknown as ReplayRecord['signature'];

function replayRecord(i: number, value: unknown, request: unknown = { model: 'gpt-4o', messages: [{ role: 'user', content: `q${i}` }] }): ReplayRecord {
  return { v: 1, key: `k${i}`, signature, request, value, recordedAt: `2026-01-0${i + 1}T00:00:00.000Z` };
}

/** Every kind of typed value, nested. */
function richValue(): unknown {
  return {
    text: 'héllo 世界 🎉 \u0000 "quoted" \\ \n\t \u2028',
    numbers: [0, 1, -1, 1.5, 1e300, -2.5e-300, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity],
    nothing: null,
    flags: [true, false],
    undef: undefined,
    arrayWithUndefined: [1, undefined, 3],
    big: [0n, 123n, -5n, 2n ** 70n, -(2n ** 64n)],
    when: new Date('2026-03-04T05:06:07.089Z'),
    bytes: new Uint8Array([0, 1, 2, 253, 254, 255]),
    buffer: Buffer.from('binary \u00ff data', 'utf8'),
    emptyBytes: new Uint8Array(0),
    typed: {
      i8: new Int8Array([-128, 0, 127]),
      u8c: new Uint8ClampedArray([0, 255]),
      i16: new Int16Array([-32768, 1]),
      u16: new Uint16Array([65535]),
      i32: new Int32Array([-1, 2 ** 31 - 1]),
      u32: new Uint32Array([2 ** 32 - 1]),
      f32: new Float32Array([1.5, -0.25]),
      f64: new Float64Array([Math.PI, -Infinity]),
      bi64: new BigInt64Array([-(2n ** 63n), 7n]),
      bu64: new BigUint64Array([2n ** 64n - 1n]),
    },
    map: new Map<unknown, unknown>([
      ['z', 1],
      [2, 'two'],
      [{ obj: 'key' }, new Set([1n, 'a'])],
      ['a', new Map([['nested', new Date(0)]])],
    ]),
    set: new Set<unknown>(['b', 'a', 3, new Uint8Array([9])]),
    error: new Error('outer', { cause: new TypeError('inner') }),
    rangeError: new RangeError('out of range'),
    errorWithDataCause: new Error('with data', { cause: { code: 42, at: new Date(1) } }),
    regexp: /a+b?/gi,
    dollar: { $type: 'bytes', base64: 'AAAA', nested: { $type: 'object', value: {} } },
    dollarInArray: [{ $type: 1 }],
    'odd key "x"': 'v',
    '10': 'ten',
    '2': 'two',
    b: 'b',
    B: 'B',
    deep: { a: [{ b: [{ c: [new Map([[1, [new Set([undefined])]]])] }] }] },
  };
}

describe('export', () => {
  it('writes a pretty, sorted, tagged document', async () => {
    const file = await tapeWith([replayRecord(0, { answer: 'ok', usage: { b: 1, a: 2 } })]);
    const text = await exportTapeJSON(file);
    expect(text.endsWith('}\n')).toBe(true);
    const doc = JSON.parse(text) as { header: Record<string, unknown>; records: unknown[]; warnings: unknown[] };
    expect(doc.header).toEqual({ created: CREATED, formatVersion: 1, salt: SALT, tapedeckVersion: '0.0.0-test' });
    expect(doc.warnings).toEqual([]);
    expect(doc.records).toHaveLength(1);
    expect(text).toContain('\n  "header": {\n    "created": "2026-01-01T00:00:00.000Z",\n    "formatVersion": 1,');
    expect(text).toContain('"usage": {\n');
    expect(text.indexOf('"a": 2')).toBeLessThan(text.indexOf('"b": 1'));
    expect(Object.keys(doc)).toEqual(['header', 'records', 'warnings']);
  });

  it('tags every typed value as documented', async () => {
    const file = await tapeWith([
      {
        b: new Uint8Array([1, 2, 3]),
        buf: Buffer.from([4, 5]),
        f: new Float64Array([1]),
        d: new Date('2026-01-02T03:04:05.006Z'),
        m: new Map<unknown, unknown>([['k', 1], [2, 'v']]),
        s: new Set([1, 2]),
        n: 12345678901234567890n,
        e: new Error('boom', { cause: 'why' }),
        u: undefined,
        nums: [NaN, Infinity, -Infinity],
        esc: { $type: 'date', iso: 'x' },
        empty: {},
        emptyArr: [],
      },
    ]);
    const doc = JSON.parse(await exportTapeJSON(file)) as { records: [Record<string, unknown>] };
    const r = doc.records[0];
    expect(r.b).toEqual({ $type: 'bytes', base64: 'AQID' });
    expect(r.buf).toEqual({ $type: 'Buffer', base64: 'BAU=' });
    expect(r.f).toEqual({ $type: 'Float64Array', base64: Buffer.from(new Float64Array([1]).buffer).toString('base64') });
    expect(r.d).toEqual({ $type: 'date', iso: '2026-01-02T03:04:05.006Z' });
    expect(r.m).toEqual({ $type: 'map', entries: [['k', 1], [2, 'v']] });
    expect(r.s).toEqual({ $type: 'set', values: [1, 2] });
    expect(r.n).toEqual({ $type: 'bigint', value: '12345678901234567890' });
    expect(r.e).toEqual({ $type: 'error', name: 'Error', message: 'boom', cause: 'why' });
    expect(r.u).toEqual({ $type: 'undefined' });
    expect(r.nums).toEqual([
      { $type: 'number', value: 'NaN' },
      { $type: 'number', value: 'Infinity' },
      { $type: 'number', value: '-Infinity' },
    ]);
    expect(r.esc).toEqual({ $type: 'object', value: { $type: 'date', iso: 'x' } });
    expect(r.empty).toEqual({});
    expect(r.emptyArr).toEqual([]);
  });

  it('is deterministic: the same tape gives the same text, whatever the key order of the input objects', async () => {
    const a = await tapeWith([{ z: 1, a: { y: [1, { q: 1, p: 2 }], x: 2 }, '10': 0, '9': 0 }, replayRecord(1, 'v')]);
    const b = await tapeWith([{ '9': 0, a: { x: 2, y: [1, { p: 2, q: 1 }] }, '10': 0, z: 1 }, replayRecord(1, 'v')]);
    const ta = await exportTapeJSON(a);
    expect(await exportTapeJSON(a)).toBe(ta);
    expect(await exportTapeJSON(b)).toBe(ta);
    // UTF-16 code unit order, not JavaScript's integer-keys-first order.
    expect(ta.indexOf('"10"')).toBeLessThan(ta.indexOf('"9"'));
    expect(ta.indexOf('"9"')).toBeLessThan(ta.indexOf('"a"'));
  });

  it('exports the good records of a tape with a torn tail, plus a warning', async () => {
    const file = await tapeWith([replayRecord(0, 'first'), replayRecord(1, 'second'), replayRecord(2, 'third')]);
    const { records } = await readTape(file);
    const last = records[2];
    if (!last) throw new Error('expected 3 records');
    truncateSync(file, last.offset + last.length - 5);
    const doc = JSON.parse(await exportTapeJSON(file)) as { records: { value: string }[]; warnings: { code: string; offset: number; message: string }[] };
    expect(doc.records.map((r) => r.value)).toEqual(['first', 'second']);
    expect(doc.warnings).toHaveLength(1);
    expect(doc.warnings[0]).toMatchObject({ code: 'E_TAPE_TORN_TAIL', offset: last.offset });
    expect(doc.warnings[0]?.message).not.toContain(file);
  });
});

describe('recorded answer bytes', () => {
  const enc = (t: string) => new TextEncoder().encode(t);
  const compact = '{"id":"chatcmpl-1","choices":[{"message":{"role":"assistant","content":"Hi é"}}],"z":1,"a":2}';
  const indented = `${JSON.stringify({ id: 'msg_1', content: [{ type: 'text', text: 'Hi' }], zed: null, alpha: [1.5, -0, 1e21] }, null, 2)}\n`;
  const sse = 'data: {"a":1}\n\n: keep-alive\n\ndata: [DONE]\n\n';
  const respelled = '{"b":1.0,"a":2}'; // 1.0 does not come back from JSON.parse as "1.0"
  const intKeys = '{"b":1,"10":2}'; // JSON.parse puts "10" first
  const binary = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);

  it('shows JSON answers as JSON in their own key order, text as text, binary as base64', async () => {
    const file = await tapeWith([{ a: enc(compact), b: enc(indented), c: enc(sse), d: enc(respelled), e: enc(intKeys), f: binary }]);
    const text = await exportTapeJSON(file);
    const r = (JSON.parse(text) as { records: [Record<string, Record<string, unknown>>] }).records[0];
    expect(r.a).toEqual({ $type: 'bytes', json: JSON.parse(compact) });
    expect(Object.keys(r.a!.json as object)).toEqual(['id', 'choices', 'z', 'a']);
    expect(r.b).toEqual({ $type: 'bytes', json: JSON.parse(indented), indent: 2, newline: true });
    expect(r.c).toEqual({ $type: 'bytes', text: sse });
    expect(r.d).toEqual({ $type: 'bytes', text: respelled });
    expect(r.e).toEqual({ $type: 'bytes', text: intKeys });
    expect(r.f).toEqual({ $type: 'bytes', base64: Buffer.from(binary).toString('base64') });
    expect(text).not.toContain(Buffer.from(compact).toString('base64'));
  });

  it('import gives back the same bytes, and re-export the same text, for any bytes and any JSON text', async () => {
    const jsonText = fc.tuple(fc.jsonValue(), fc.constantFrom(0, 2, 4), fc.boolean()).map(([v, indent, nl]) => enc(JSON.stringify(v, null, indent) + (nl ? '\n' : '')));
    const anyBytes = fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.string({ unit: 'binary' }).map(enc), jsonText);
    await fc.assert(
      fc.asyncProperty(fc.array(anyBytes, { minLength: 1, maxLength: 4 }), async (chunks) => {
        const file = await tapeWith([{ body: chunks }]);
        const first = await exportTapeJSON(file);
        const out = fresh();
        await importTapeJSON(first, out);
        const back = (await readTape(out)).records[0]!.value as { body: Uint8Array[] };
        back.body.forEach((b, i) => expect(Buffer.from(b).equals(Buffer.from(chunks[i]!))).toBe(true));
        expect(await exportTapeJSON(out)).toBe(first);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a malformed bytes value, naming its path', async () => {
    const file = await tapeWith([{ a: enc(indented) }]);
    const doc = JSON.parse(await exportTapeJSON(file)) as { records: [{ a: Record<string, unknown> }] };
    doc.records[0].a.indent = 3;
    const e = await importTapeJSON(JSON.stringify(doc), fresh()).catch((x: unknown) => x as TapedeckError);
    expect((e as TapedeckError).code).toBe('E_TAPE_IMPORT');
    expect((e as TapedeckError).message).toContain('$.records[0].a.indent');
  });
});

describe('round trip', () => {
  it('export -> import -> export is byte-identical and the records deep-equal the originals', async () => {
    const values = [
      replayRecord(0, richValue()),
      replayRecord(1, { content: [{ type: 'image', data: new Uint8Array([137, 80, 78, 71]) }] }, { weird: { $type: 'x' } }),
      replayRecord(2, '日本語のテキスト ✓'),
      'not a replay record',
      [],
      {},
    ];
    const file = await tapeWith(values);
    const original = await readTape(file);
    const first = await exportTapeJSON(file);

    const out = fresh();
    expect(await importTapeJSON(first, out)).toEqual({ records: values.length, rekeyed: 0 });
    const imported = await readTape(out);
    expect(imported.warnings).toEqual([]);
    expect(imported.header).toEqual(original.header);
    expect(imported.records).toHaveLength(original.records.length);
    imported.records.forEach((r, i) => {
      expect(isDeepStrictEqual(r.value, original.records[i]?.value), `record ${i}`).toBe(true);
    });
    // (The tape bytes themselves may differ: export sorts object keys, so the imported objects
    // hold their keys in sorted order rather than the original insertion order.)

    const second = await exportTapeJSON(out);
    expect(second).toBe(first);
  });

  it('keeps the typed values themselves, not just their JSON shape', async () => {
    const file = await tapeWith([richValue()]);
    const out = fresh();
    await importTapeJSON(await exportTapeJSON(file), out);
    const [rec] = (await readTape(out)).records;
    const v = rec?.value as ReturnType<typeof richValue> & Record<string, any>;
    expect(v.bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(v.bytes)).toBe(false);
    expect(Buffer.isBuffer(v.buffer)).toBe(true);
    expect(v.typed.bu64).toBeInstanceOf(BigUint64Array);
    expect(v.map).toBeInstanceOf(Map);
    expect([...v.map.keys()]).toEqual(['z', 2, { obj: 'key' }, 'a']);
    expect(v.set).toBeInstanceOf(Set);
    expect(v.error).toBeInstanceOf(Error);
    expect(v.error.cause).toBeInstanceOf(TypeError);
    expect(v.rangeError).toBeInstanceOf(RangeError);
    expect(v.when).toEqual(new Date('2026-03-04T05:06:07.089Z'));
    expect(v.big).toEqual([0n, 123n, -5n, 2n ** 70n, -(2n ** 64n)]);
    expect(v.numbers.slice(7)).toEqual([NaN, Infinity, -Infinity]);
    expect(Object.hasOwn(v, 'undef') && v.undef === undefined).toBe(true);
    expect(v.dollar).toEqual({ $type: 'bytes', base64: 'AAAA', nested: { $type: 'object', value: {} } });
    expect(v.regexp).toEqual(/a+b?/gi);
  });

  it('an empty tape round-trips', async () => {
    const file = await tapeWith([]);
    const text = await exportTapeJSON(file);
    const out = fresh();
    expect(await importTapeJSON(text, out)).toEqual({ records: 0, rekeyed: 0 });
    expect(await exportTapeJSON(out)).toBe(text);
  });

  it('hand-written JSON may use any key order and spacing', async () => {
    const json = JSON.stringify({
      records: [{ b: { base64: 'AQI=', $type: 'bytes' }, a: [{ value: '-0', $type: 'number' }] }],
      header: { tapedeckVersion: '9.9.9', formatVersion: 1, created: CREATED },
    });
    const out = fresh();
    await importTapeJSON(json, out);
    const { header, records } = await readTape(out);
    expect(header).toMatchObject({ created: CREATED, tapedeckVersion: '9.9.9' });
    // msgpack stores -0 as 0 (documented in tape-file.ts).
    expect(records[0]?.value).toEqual({ b: new Uint8Array([1, 2]), a: [0] });
  });
});

describe('import safety and errors', () => {
  const good = (records: unknown[]) => JSON.stringify({ header: { created: CREATED, formatVersion: 1, tapedeckVersion: '1.0.0' }, records });

  it('refuses to overwrite unless forced, and leaves no temp files', async () => {
    const existing = await tapeWith(['old']);
    const before = readFileSync(existing);
    await expect(importTapeJSON(good(['new']), existing)).rejects.toMatchObject({ code: 'E_TAPE_EXISTS' });
    expect(readFileSync(existing).equals(before)).toBe(true);
    expect(await importTapeJSON(good(['new']), existing, { force: true })).toEqual({ records: 1, rekeyed: 0 });
    expect((await readTape(existing)).records.map((r) => r.value)).toEqual(['new']);
    expect(readdirSync(root).filter((f) => f.includes('.tmp') || f.endsWith('.lock'))).toEqual([]);
  });

  it('writes nothing when the input is malformed', async () => {
    const out = fresh();
    await expect(importTapeJSON(good([1, { $type: 'nope' }]), out)).rejects.toMatchObject({ code: 'E_TAPE_IMPORT' });
    expect(existsSync(out)).toBe(false);
  });

  it.each([
    ['not json', '{', '$'],
    ['not an object', '[]', '$'],
    ['unknown top-level key', JSON.stringify({ header: {}, records: [], extra: 1 }), '$.extra'],
    ['missing header', JSON.stringify({ records: [] }), '$.header'],
    ['wrong format version (none that was ever written)', JSON.stringify({ header: { created: CREATED, formatVersion: 0, tapedeckVersion: '1' }, records: [] }), '$.header.formatVersion'],
    ['created not a string', JSON.stringify({ header: { created: 1, formatVersion: 1, tapedeckVersion: '1' }, records: [] }), '$.header.created'],
    // A key tapedeck does not write is kept (docs/tape-format.md); its value is checked as any.
    ['extra header field with a bad value', JSON.stringify({ header: { created: CREATED, formatVersion: 1, tapedeckVersion: '1', x: { $type: 'wat' } }, records: [] }), '$.header.x.$type'],
    ['records not an array', JSON.stringify({ header: { created: CREATED, formatVersion: 1, tapedeckVersion: '1' }, records: {} }), '$.records'],
  ])('document shape: %s', async (_name, json, path) => {
    const e = await importError(json);
    expect(e.code).toBe('E_TAPE_IMPORT');
    expect(e.path).toBe(path);
    expect(e.message).toContain(path);
  });

  it.each([
    ['unknown $type', [{ a: [0, { $type: 'wat' }] }], '$.records[0].a[1].$type'],
    ['$type not a string', [{ $type: 5 }], '$.records[0].$type'],
    ['bad base64', [1, { x: { $type: 'bytes', base64: '!!' } }], '$.records[1].x.base64'],
    ['typed array of a partial element', [{ $type: 'Float64Array', base64: 'AAAA' }], '$.records[0].base64'],
    ['bigint not an integer', [{ n: { $type: 'bigint', value: '1.5' } }], '$.records[0].n.value'],
    ['bad number', [{ $type: 'number', value: 'toString' }], '$.records[0].value'],
    ['invalid date', [{ $type: 'date', iso: 'yesterday' }], '$.records[0].iso'],
    ['map entry not a pair', [{ $type: 'map', entries: [['k', 1], ['k']] }], '$.records[0].entries[1]'],
    ['nested error in a map value', [{ $type: 'map', entries: [['k', { $type: 'set', values: [{ $type: 'undefined', x: 1 }] }]] }], '$.records[0].entries[0][1].values[0].x'],
    ['error without message', [{ $type: 'error', name: 'Error' }], '$.records[0]'],
    ['escaped object not an object', [{ $type: 'object', value: [] }], '$.records[0].value'],
    ['odd keys are quoted', [{ 'a b': { $type: 'bigint', value: 'x' } }], '$.records[0]["a b"].value'],
    // An HTTP recording's status is what its replay answers with (a Response takes 200-599).
    ['an HTTP status that is no number', [{ kind: 'http', response: { status: 'abc' } }], '$.records[0].response.status'],
    ['an HTTP status out of range', [1, { kind: 'http', response: { status: 99 } }], '$.records[1].response.status'],
  ])('value: %s', async (_name, records, path) => {
    const e = await importError(good(records));
    expect(e.code).toBe('E_TAPE_IMPORT');
    expect(e.path).toBe(path);
    expect(e.message).toContain(path);
  });

  it.each([
    ['formatVersion', JSON.stringify({ header: {}, records: [] }), '$.header.formatVersion', 'expected format version 1, found nothing (the field is missing)'],
    ['created', JSON.stringify({ header: { formatVersion: 1, tapedeckVersion: '1' }, records: [] }), '$.header.created', 'expected a string, found nothing (the field is missing)'],
  ])('a missing header field (%s) is said to be missing, with the hint once', async (_name, json, path, says) => {
    const e = await importError(json);
    expect(e.code).toBe('E_TAPE_IMPORT');
    expect(e.path).toBe(path);
    expect(e.message).toBe(`Cannot import tape JSON: ${says} at ${path}. ${e.hint}`);
  });

  it('a newer format version is E_TAPE_VERSION, naming the tapedeck that wrote it, as for a binary tape', async () => {
    const e = await importError(JSON.stringify({ header: { formatVersion: 99, created: 'x', tapedeckVersion: '9.0.0' }, records: [] }));
    expect(e.code).toBe('E_TAPE_VERSION');
    expect(e.message).toContain('tape format version 99; this tapedeck reads up to 1');
    expect(e.hint).toContain('tapedeck 9.0.0; upgrade tapedeck');
  });

  it('a "__proto__" key stays a plain key', async () => {
    const out = fresh();
    await importTapeJSON('{"header":{"created":"x","formatVersion":1,"tapedeckVersion":"1"},"records":[{"__proto__":{"polluted":true}}]}', out);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(statSync(out).size).toBeGreaterThan(0);
  });

  it('export of a missing tape fails with the tape error', async () => {
    await expect(exportTapeJSON(join(root, 'missing.tape'))).rejects.toBeInstanceOf(TapedeckError);
  });
});

describe('export written as it is made', () => {
  it('hands the same text to write in pieces, record by record, with damage told where readTape tells it', async () => {
    const { appendFileSync } = await import('node:fs');
    const { recordBytes } = await import('../../src/store/tape-file.ts');
    const { writeTapeJSON } = await import('../../src/store/export.ts');
    const file = await tapeWith(Array.from({ length: 1500 }, (_, i) => replayRecord(i, { text: `answer ${i} `.repeat(8) })));
    // A frame whose checksum holds but whose payload is cut msgpack (a map promising two entries)...
    appendFileSync(file, recordBytes.frame(Uint8Array.of(0x82, 0xa1)));
    await appendRecords(file, [replayRecord(2000, 'after the bad frame')]);
    // ...and a damaged byte inside an earlier record.
    const bytes = readFileSync(file);
    const scan = await (await import('../../src/store/tape-file.ts')).scanTape(file);
    const hit = scan.frames[700]!.offset + 20;
    bytes[hit] = bytes[hit]! ^ 0xff;
    (await import('node:fs')).writeFileSync(file, bytes);

    const pieces: string[] = [];
    await writeTapeJSON(file, async (t) => {
      pieces.push(t);
      await new Promise((r) => setImmediate(r)); // a slow reader
    });
    expect(pieces.length).toBeGreaterThan(3);
    const text = pieces.join('');
    expect(text).toBe(await exportTapeJSON(file));
    // readTape (the whole-file reader) is the oracle for what is a record and what is damage.
    const whole = await readTape(file);
    const doc = JSON.parse(text) as { records: { value: unknown }[]; warnings: { code: string; offset: number; message: string }[] };
    expect(doc.records.length).toBe(whole.records.length);
    expect(doc.records.at(-1)!.value).toBe('after the bad frame');
    expect(doc.warnings.map((w) => [w.code, w.offset, w.message])).toEqual(whole.warnings.map((w) => [w.code, w.offset, w.message.replace(`${file}: `, '')]));
    expect(doc.warnings.map((w) => w.code)).toEqual(['E_TAPE_CORRUPT', 'E_TAPE_CORRUPT']);
  });

  it('writes an empty tape as an empty list', async () => {
    const { writeTapeJSON } = await import('../../src/store/export.ts');
    const file = await tapeWith([]);
    const pieces: string[] = [];
    await writeTapeJSON(file, (t) => void pieces.push(t));
    expect(JSON.parse(pieces.join(''))).toMatchObject({ records: [], warnings: [] });
    expect(pieces.join('')).toBe(await exportTapeJSON(file));
  });
});

describe('ArrayBuffer and DataView values', () => {
  it('export, import and re-export them, keeping their type and bytes', async () => {
    const backing = new Uint8Array([9, 8, 7, 6, 5, 4]).buffer;
    const value = { ab: new Uint8Array([0, 1, 255]).buffer, dv: new DataView(backing, 1, 3), empty: new ArrayBuffer(0) };
    const file = await tapeWith([value]);
    const text = await exportTapeJSON(file);
    expect(JSON.parse(text).records[0]).toEqual({
      ab: { $type: 'ArrayBuffer', base64: 'AAH/' },
      dv: { $type: 'DataView', base64: 'CAcG' },
      empty: { $type: 'ArrayBuffer', base64: '' },
    });
    const out = fresh();
    await importTapeJSON(text, out);
    const v = (await readTape(out)).records[0]?.value as Record<string, unknown>;
    expect(v.ab).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(v.ab as ArrayBuffer)]).toEqual([0, 1, 255]);
    expect(v.dv).toBeInstanceOf(DataView);
    const dv = v.dv as DataView;
    expect([...new Uint8Array(dv.buffer, dv.byteOffset, dv.byteLength)]).toEqual([8, 7, 6]);
    expect(await exportTapeJSON(out)).toBe(text);
  });
});

describe('a tape whose header is lost', () => {
  it('exports headerLost: true, and imports into a tape with a fresh header and every record', async () => {
    const file = await tapeWith([{ a: 1 }, { b: 2 }]);
    const bytes = readFileSync(file);
    bytes[0]! ^= 0xff; // the header's magic: its metadata is lost, the records are not
    writeFileSync(file, bytes);
    const text = await exportTapeJSON(file);
    expect(JSON.parse(text).header).toEqual({ created: '', formatVersion: 1, headerLost: true, tapedeckVersion: '' });
    const out = fresh();
    expect(await importTapeJSON(text, out)).toEqual({ records: 2, rekeyed: 0 });
    const back = await readTape(out);
    expect(back.warnings).toEqual([]);
    expect(back.header.headerLost).toBeUndefined();
    expect(Number.isNaN(Date.parse(back.header.created))).toBe(false);
    expect(back.records.map((r) => r.value)).toEqual([{ a: 1 }, { b: 2 }]);
  });
});
