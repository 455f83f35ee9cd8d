// NDJSON framing: the values of a stream, its unterminated tail, and whether it is a whole answer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ndjsonComplete, parseNdjson, splitNdjson } from '../../src/providers/wire/ndjson.ts';

const done = (v: unknown) => v !== null && typeof v === 'object' && (v as { done?: unknown }).done === true;

const stream = [
  { model: 'llama3.2', message: { role: 'assistant', content: 'Hel' }, done: false },
  { model: 'llama3.2', message: { role: 'assistant', content: 'lo ✓' }, done: false },
  { model: 'llama3.2', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', eval_count: 7 },
];
const text = stream.map((o) => `${JSON.stringify(o)}\n`).join('');

describe('NDJSON', () => {
  it('splits complete lines from the unterminated rest (LF and CRLF, blank lines skipped)', () => {
    expect(splitNdjson('{"a":1}\r\n\n{"b":2}\n{"c"')).toEqual({ lines: ['{"a":1}', '{"b":2}'], rest: '{"c"' });
    expect(splitNdjson('')).toEqual({ lines: [], rest: '' });
    expect(splitNdjson('{"a":1}')).toEqual({ lines: [], rest: '{"a":1}' });
  });

  it('parses what JSON.parse of each line gives, from bytes or text', () => {
    const bytes = new TextEncoder().encode(text);
    expect(parseNdjson(bytes).values).toEqual(stream);
    expect(parseNdjson(text)).toEqual({ values: stream, bad: 0, partial: '' });
  });

  it('a whole stream is complete at every byte split only once its final object is in', () => {
    const bytes = new TextEncoder().encode(text);
    const finalEnd = bytes.length - 1; // the final object's closing brace, before its newline
    for (let cut = 0; cut <= bytes.length; cut++) {
      const prefix = bytes.subarray(0, cut);
      // A cut inside a multi-byte character decodes to U+FFFD: never a whole object either.
      expect(ndjsonComplete(prefix, done), `cut at ${cut}`).toBe(cut >= finalEnd);
    }
  });

  it('an error line, a line that is not JSON or no final object is never complete', () => {
    expect(ndjsonComplete(`${JSON.stringify(stream[0])}\n{"error":"runner crashed"}\n`, done)).toBe(false);
    expect(ndjsonComplete(`${text}{"error":"late"}\n`, done)).toBe(false);
    expect(ndjsonComplete(`not json\n${text}`, done)).toBe(false);
    expect(ndjsonComplete(`${JSON.stringify(stream[0])}\n`, done)).toBe(false);
    expect(ndjsonComplete('', done)).toBe(false);
    expect(ndjsonComplete(text, done)).toBe(true);
  });

  it('agrees with a line-by-line JSON.parse reference on random streams', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 8 }), fc.boolean(), (values, trailing) => {
        const t = values.map((v) => JSON.stringify(v)).join('\n') + (trailing && values.length > 0 ? '\n' : '');
        const expected = values.map((v) => JSON.parse(JSON.stringify(v)) as unknown);
        expect(parseNdjson(t).values).toEqual(expected);
      }),
    );
  });
});
