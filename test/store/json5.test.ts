// The JSON5 reader the talkback import uses, against the reference implementation (the `json5`
// package talkback itself writes and reads its tapes with): whatever JSON5.stringify writes
// reads back as JSON5.parse reads it, hand-edited JSON5 (comments, hex, continuations) too, and
// text that is no JSON5 is refused where the reference refuses it, with its line and column.
import fc from 'fast-check';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Json5SyntaxError, parseJson5 } from '../../src/store/import/json5.ts';

/** The json5 package as talkback loads it (a dependency of talkback's, not of tapedeck's). */
const JSON5 = createRequire(createRequire(import.meta.url).resolve('talkback'))('json5') as { parse(t: string): unknown; stringify(v: unknown, r?: null, space?: number): string };

/** Strings with what JSON5.stringify escapes: quotes of both kinds, control characters, NUL before a digit, separators. */
const tricky = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom("'", '"', '\\', '\0', '1', '\b', '\f', '\n', '\r', '\t', '\v', '\u2028', '\u2029', '\u001f', 'é', '😀', 'a', ' ') }),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.double(), fc.integer(), tricky, fc.array(tie('v')), fc.dictionary(tricky, tie('v'))),
})).v;

describe('parseJson5', () => {
  it('reads whatever JSON5.stringify writes (talkback writes with an indent of 4) as JSON5.parse does', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(undefined, 4, 2), (v, space) => {
        const text = JSON5.stringify(v, null, space);
        expect(parseJson5(text)).toEqual(JSON5.parse(text));
      }),
      { numRuns: 400 },
    );
  });

  it('reads what a talkback tape is made of: unquoted names, single quotes, trailing commas, \\x escapes', () => {
    const text = "{\n    meta: {\n        createdAt: '2026-12-02T16:00:00.000Z',\n        resHumanReadable: true,\n    },\n    req: {\n        url: '/v1/chat/completions',\n        headers: {\n            'content-type': 'application/json',\n        },\n        body: 'it\\'s \\x1b[0m\\v',\n    },\n}";
    expect(parseJson5(text)).toEqual({ meta: { createdAt: '2026-12-02T16:00:00.000Z', resHumanReadable: true }, req: { url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: "it's \u001b[0m\v" } });
    expect(parseJson5(text)).toEqual(JSON5.parse(text));
  });

  it('reads hand-edited JSON5 (comments, hex, signs, leading and trailing points, continued strings, escaped names) as JSON5.parse does', () => {
    const texts = [
      '// a comment\n{ /* block */ a: 0x1F, b: +.5, c: 5., d: -Infinity, e: [1,2,], f: \'line \\\n continued\', \\u0061b: 1, $_x: "\\u00e9", }',
      "{ 'quoted key': null, \"dq\": 'mixed \"quotes\"', nested: { deep: [ { x: 1e3, }, ], }, }",
      '[NaN, -0, 1E-2, 0, "\\/", "\\q", "\\0"]',
      '\uFEFF { a: 1 } \u2028',
      '{ __proto__: { polluted: true }, ok: 1 }',
      '"\u2028 raw separators \u2029 are allowed"',
      '{ a: 1, a: 2 }',
    ];
    for (const text of texts) {
      const mine = parseJson5(text);
      const theirs = JSON5.parse(text);
      expect(mine, text).toEqual(theirs);
      expect(JSON.stringify(mine), text).toBe(JSON.stringify(theirs));
    }
    const proto = parseJson5('{ __proto__: { polluted: true } }') as Record<string, unknown>;
    expect(Object.hasOwn(proto, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.is(parseJson5('-0'), -0)).toBe(true);
  });

  it('refuses what JSON5.parse refuses, naming the line and column', () => {
    const bad: [string, number, number][] = [
      ["{\n    req: {\n        url: '/v1/chat\n    },\n}", 3, 23],
      ['{ a: 1 b: 2 }', 1, 8],
      ['{ a: 01 }', 1, 6],
      ['[1, 2', 1, 6],
      ['{ a: "x" } extra', 1, 12],
      ['{ 1a: 2 }', 1, 3],
      ['"\\1"', 1, 3],
      ['/* open', 1, 1],
      ['{ a: 0x }', 1, 8],
      ['{ a: 12abc }', 1, 8],
      ['', 1, 1],
    ];
    for (const [text, line, column] of bad) {
      expect(() => JSON5.parse(text), text).toThrow();
      let e: unknown;
      try {
        parseJson5(text);
      } catch (x) {
        e = x;
      }
      expect(e, text).toBeInstanceOf(Json5SyntaxError);
      expect(e, text).toMatchObject({ line, column });
      expect((e as Error).message, text).toContain(`line ${line}, column ${column}`);
    }
  });

  it('refuses nesting too deep to read with a syntax error, not a crash', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(() => parseJson5(deep)).toThrow(Json5SyntaxError);
  });
});
