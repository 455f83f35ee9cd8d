// The JSON diff and the structured-output schema check the classifier relies on.
import { describe, expect, it } from 'vitest';
import { jsonDiff, leafName } from '../../src/drift/json-diff.ts';
import { requestedSchema, schemaProblems } from '../../src/drift/schema.ts';

describe('jsonDiff', () => {
  it('members added and removed, values and types changed, arrays by index', () => {
    expect(jsonDiff({ a: 1, b: [1, 2], c: 'x', 'odd key': true }, { a: 2, b: [1], c: 3, d: null, 'odd key': true })).toEqual([
      { path: 'a', kind: 'value', old: 1, new: 2 },
      { path: 'b[1]', kind: 'removed', old: 2 },
      { path: 'c', kind: 'type', old: 'x', new: 3 },
      { path: 'd', kind: 'added', new: null },
    ]);
    expect(jsonDiff({ x: { 'a b': 1 } }, { x: { 'a b': 2 } })).toEqual([{ path: 'x["a b"]', kind: 'value', old: 1, new: 2 }]);
    expect(jsonDiff([1, { k: 1 }], [1, { k: 1 }])).toEqual([]);
  });

  it('leafName reads the last member of a path', () => {
    expect(leafName('choices[0].message.content')).toBe('content');
    expect(leafName('x["a b"]')).toBe('a b');
    expect(leafName('a[3]')).toBe('');
    expect(leafName('')).toBe('');
  });
});

describe('schemaProblems', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, population: { type: 'integer' }, tags: { type: 'array', items: { $ref: '#/$defs/tag' } }, kind: { enum: ['capital', 'town'] } },
    required: ['city', 'population'],
    additionalProperties: false,
    $defs: { tag: { type: 'string' } },
  };
  it('finds each way a value breaks the schema, and none when it fits', () => {
    expect(schemaProblems(schema, { city: 'Paris', population: 2, tags: ['a'], kind: 'capital' })).toEqual([]);
    expect(schemaProblems(schema, { city: 'Paris', population: 2.5, tags: ['a', 1], kind: 'village', extra: 1 })).toEqual([
      'population: expected integer, found number',
      'tags[1]: expected string, found number',
      'kind: "village" is not one of the allowed values',
      'extra: not allowed by the schema',
    ]);
    expect(schemaProblems(schema, { city: 'Paris' })).toEqual(['population: required, missing']);
    expect(schemaProblems(schema, [])).toEqual(['(root): expected object, found array']);
    expect(schemaProblems({ anyOf: [{ type: 'string' }, { type: 'null' }] }, 3)).toEqual(['(root): matches none of the anyOf alternatives']);
  });

  it('reads the schema of each API the request may ask it in', () => {
    const s = { type: 'object' };
    expect(requestedSchema({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: s } } })).toEqual({ json: true, schema: s });
    expect(requestedSchema({ response_format: { type: 'json_object' } })).toEqual({ json: true });
    expect(requestedSchema({ text: { format: { type: 'json_schema', name: 'x', schema: s } } })).toEqual({ json: true, schema: s });
    expect(requestedSchema({ output_format: { type: 'json_schema', schema: s } })).toEqual({ json: true, schema: s });
    expect(requestedSchema({ messages: [] })).toBeUndefined();
  });
});
