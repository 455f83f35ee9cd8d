// The miss report of an embeddings call whose closest recording was read as another shape. A
// body `{ model: 'e', input: 'x' }` has no embeddings evidence (docs/hash-spec.md, "Detection"),
// so it is keyed as a Responses call; the same call with `encoding_format` is an embeddings one.
// The keys stay as they are (changing detection would re-key existing recordings); the report
// compares the two as embeddings and names what really differs.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/index.ts';
import { createMatcher, requestKeys } from '../../src/match/index.ts';
import { differencesOf } from '../../src/match/diagnose.ts';

type Obj = Record<string, unknown>;

function missOf(recorded: Obj, sent: Obj): TapedeckError {
  const m = createMatcher({ mode: 'exact', recordings: [{ request: recorded, response: { data: [] } }] });
  try {
    m.match(new TextEncoder().encode(JSON.stringify(sent)));
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_MISS');
    return e as TapedeckError;
  }
  throw new Error('expected a miss');
}

const texts = (recorded: Obj, sent: Obj) => differencesOf(requestKeys(sent), requestKeys(recorded)).map((d) => d.text);

describe('miss report: embeddings against a recording read as Responses', () => {
  it('only encoding_format differs: the report says that, and no tool or role difference', () => {
    const e = missOf({ model: 'e', input: 'x' }, { model: 'e', input: 'x', encoding_format: 'base64' });
    expect(e.details.difference).toBe('argument encoding_format differs: base64 vs (absent) in the closest recording');
    const report = String(e.details.report);
    expect(report).not.toMatch(/tool definition|role differs/);
    expect(report).toContain('differing request arguments: [encoding_format]');
    expect(e.details.kind).toBe('arguments');
  });

  it('the same with the model name that says embeddings (both read as embeddings) reads the same', () => {
    const e = missOf({ model: 'text-embedding-3-small', input: 'x' }, { model: 'text-embedding-3-small', input: 'x', encoding_format: 'base64' });
    expect(e.details.difference).toBe('argument encoding_format differs: base64 vs (absent) in the closest recording');
  });

  it('the other way round (recorded with encoding_format, sent without) names encoding_format too', () => {
    expect(texts({ model: 'e', input: 'x', encoding_format: 'base64' }, { model: 'e', input: 'x' })).toEqual([
      'argument encoding_format differs: (absent) vs base64 in the closest recording',
    ]);
  });

  it('input "ab" against ["ab"]: the shape each was read as, not a tool definition', () => {
    const e = missOf({ model: 'e', input: 'ab' }, { model: 'e', input: ['ab'] });
    expect(e.details.difference).toBe('request read as embeddings, the closest recording as Responses');
    expect(e.message).toContain('a model name with "embed"');
    expect(String(e.details.report)).not.toMatch(/tool definition|role differs/);
  });

  it('a different input and another argument are both named, as inputs', () => {
    expect(texts({ model: 'e', input: 'ab' }, { model: 'e', input: ['cd'], dimensions: 8 })).toEqual([
      'input 0 content differs from the closest recording',
      'argument dimensions differs: 8 vs (absent) in the closest recording',
    ]);
  });

  it('a Responses conversation against an embeddings call: the shape and the model, nothing member by member', () => {
    const conversation = { model: 'gpt-4o', input: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }], tools: [{ type: 'web_search' }] };
    expect(texts(conversation, { model: 'e', input: ['hi'] })).toEqual([
      'request read as embeddings, the closest recording as Responses',
      'model differs: e vs gpt-4o in the closest recording',
    ]);
  });
});
