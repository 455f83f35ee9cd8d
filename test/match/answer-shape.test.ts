// answerShape's text against the canonical JSON of the same shape members (the reference
// canonicalizer), for one member of every plain kind (its own spelling) and for several.
import { describe, expect, it } from 'vitest';
import { canonicalize as canonicalBytes } from '../../src/core/index.ts';

const canonicalize = (v: unknown): string => Buffer.from(canonicalBytes(v)).toString('utf8');
import { answerShape } from '../../src/match/answer-shape.ts';

describe('answerShape', () => {
  it('spells a shape as its canonical JSON', () => {
    const values: unknown[] = [true, false, 0, -0, 1, 2.5, 1e21, 1e-7, -3, 'json', 'float', 'b\u00e9\u{1F600}"\\\n\u0001', ''];
    for (const name of ['stream', 'n', 'encoding_format', 'dimensions', 'format']) {
      for (const v of values) expect(answerShape({ [name]: v, temperature: 0.5 }), `${name} ${String(v)}`).toBe(canonicalize({ [name]: v }));
    }
    const several = { stream: true, n: 2, response_format: { type: 'json_object' }, max_tokens: 9 };
    expect(answerShape(several)).toBe(canonicalize({ n: 2, response_format: { type: 'json_object' }, stream: true }));
    expect(answerShape({ format: { type: 'object', properties: { a: { type: 'string' } } } })).toBe(canonicalize({ format: { type: 'object', properties: { a: { type: 'string' } } } }));
    expect(answerShape({ temperature: 0 })).toBe('');
  });
});
