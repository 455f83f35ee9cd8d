// TapedeckErrorCode's doc comment is what an editor shows on hover for `e.code`: every code of
// the union must be described there. Seventeen codes the library throws (E_TAPE_TYPE, E_MODE,
// E_STORE_UNAVAILABLE, ...) were in the union with no word on what they mean.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const source = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'errors.ts'), 'utf8');
const at = source.indexOf('export type TapedeckErrorCode');
const doc = source.slice(source.lastIndexOf('/**', at), at);
const union = source.slice(at, source.indexOf(';', at));
const codes = [...union.matchAll(/'(E_[A-Z0-9_]+)'/g)].map((m) => m[1]!);

describe('TapedeckErrorCode hover doc', () => {
  it('reads the union (the test reads the source it checks)', () => {
    expect(codes.length).toBeGreaterThan(60);
    expect(codes).toContain('E_MISS');
  });

  it('describes every code of the union', () => {
    expect(codes.filter((c) => !new RegExp('`' + c + '`').test(doc))).toEqual([]);
  });
});
