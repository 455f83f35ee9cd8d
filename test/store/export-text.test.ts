// The export's one-pass record writer (recordText in src/store/export.ts) against the general
// way it replaced, which stays the path for rare values: the JSON tree (toJson) then its text
// (stringify). Same text for any value, same error (code, path) where a value cannot be exported.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { recordText, recordTextReference } from '../../src/store/export.ts';
import { registerTapeType } from '../../src/store/tape-file.ts';

const enc = new TextEncoder();

/** Both writers' outcome: the text, or the error's code and message. */
function outcome(write: typeof recordText, value: unknown, indent = '    '): string {
  try {
    return `text:${write(value, '$.records[7]', indent)}`;
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    return `error:${e.code}:${e.message}`;
  }
}

function same(value: unknown, indent?: string): void {
  expect(outcome(recordText, value, indent)).toBe(outcome(recordTextReference, value, indent));
}

// Names that sort, quote or behave unlike plain words.
const oddName = fc.constantFrom('$type', '__proto__', 'constructor', '10', '2', '0', 'a b', 'é', 'Z', 'a"q', '', 'toString', '\u2028');
const name = fc.oneof(fc.string({ maxLength: 6 }), oddName);

// Bytes of every form the export knows: compact and indented JSON (with and without a final
// newline, and JSON that does not come back the same), text, control characters, invalid UTF-8.
const bytes = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => enc.encode(JSON.stringify(v))),
  fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.boolean()).map(([v, nl]) => enc.encode(JSON.stringify(v, null, 2) + (nl ? '\n' : ''))),
  fc.constantFrom('{"a": 1}', '{"b":1,"a":2}', '{"1":1,"0":2}', '[1.0]', '{"é":"\\u00e9"}', 'data: {"x":1}\n\n', 'a\u0001b', '\n', '').map((t) => enc.encode(t)),
  fc.uint8Array({ maxLength: 24 }),
);

const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e21, 5e-324, true, false, null, undefined),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.constant('\ud800'),
);

const exotic = fc.oneof(
  bytes.map((b) => Buffer.from(b)),
  fc.date({ noInvalidDate: false }),
  fc.constantFrom(/a+b/gi, new Error('boom'), new Int16Array([1, -2]), new Float64Array([0.5]), new ArrayBuffer(3), new DataView(new ArrayBuffer(2))),
);

const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    bytes,
    exotic,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(name, tie('v'), { maxKeys: 5 }),
    fc.dictionary(name, tie('v'), { maxKeys: 3 }).map((o) => Object.assign(Object.create(null) as object, o)),
    fc.array(fc.tuple(tie('v'), tie('v')), { maxLength: 2 }).map((e) => new Map(e)),
    fc.array(tie('v'), { maxLength: 2 }).map((e) => new Set(e)),
  ),
})).v;

describe('the one-pass export writer', () => {
  it('writes what toJson then stringify write, for any value, at any indent', () => {
    fc.assert(
      fc.property(value, fc.constantFrom('', '  ', '    '), (v, indent) => same(v, indent)),
      { numRuns: 3000 },
    );
  });

  it('a record of the shape the proxy writes, bytes and all', () => {
    const record = {
      v: 1,
      kind: 'http',
      key: 'a'.repeat(64),
      request: { method: 'POST', url: '/v1/chat/completions', headers: { authorization: '[REDACTED]' }, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Ünïcödé ✓ "q"' }], temperature: 0 } },
      response: { status: 200, headers: { 'content-type': 'application/json' }, body: enc.encode('{"id":"x","choices":[{"message":{"role":"assistant","content":"hi"}}]}') },
    };
    same(record);
    const text = recordText(record, '$.records[0]', '    ');
    expect(text).toContain('"body": {\n          "$type": "bytes",\n          "json": {\n            "id": "x",');
    expect(text).toContain('"content": "Ünïcödé ✓ \\"q\\""');
  });

  it('member lists met before are written in sorted order whatever order the object has', () => {
    // The writer keeps each object shape's sorted names; a later object with the same first name
    // and other names (or the same names in another order) must not take a kept list.
    const shapes = [{ b: 1, a: 2 }, { b: 1, a: 2, c: 3 }, { b: 1, c: 3 }, { b: 1, a: 2 }, { a: 2, b: 1 }];
    for (const o of shapes) same(o);
    expect(recordText({ b: 1, c: 3 }, '$', '')).toBe('{\n  "b": 1,\n  "c": 3\n}');
  });

  it('says where a value has no export form, as before', () => {
    const bad = { request: { body: { messages: [{ content: [1, () => 0] }] } } };
    same(bad);
    expect(outcome(recordText, bad)).toContain('$.records[7].request.body.messages[0].content[1]');
    const sym = { 'odd key': [Symbol('s')] };
    same(sym);
    expect(outcome(recordText, sym)).toContain('$.records[7]["odd key"][0]');
  });

  it('nesting past the limit is the same E_DEPTH at the same path', () => {
    let deep: unknown = 'end';
    for (let i = 0; i < 2100; i++) deep = i % 2 ? [deep] : { k: deep };
    same(deep);
    expect(outcome(recordText, deep)).toMatch(/^error:E_DEPTH:/);
  });

  it('a registered type is written as its tagged form, as toJson writes it', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    registerTapeType({ type: 41, name: 'ExportTextPoint', Class: Point, write: (p) => [p.x, p.y], read: (d) => new Point(...(d as [number, number])) });
    same({ at: new Point(1, 2), list: [new Point(3, -0)] });
    expect(recordText({ at: new Point(1, 2) }, '$', '')).toContain('"$type": "ext"');
  });
});
