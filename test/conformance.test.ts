// RFC 8785 test data (see test/vectors/rfc8785/SOURCE.md): byte-exact output on every backend,
// from raw bytes, from a JS string, and from the parsed JavaScript value.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalize, canonicalizeJSON, hashJSON, hashValue } from '../src/index.ts';
import { refSha256Hex } from './reference.ts';

const dir = join(import.meta.dirname, 'vectors/rfc8785');
const names = readdirSync(join(dir, 'input')).filter((n) => n.endsWith('.json'));

describe('RFC 8785 conformance vectors', () => {
  it('has the published vectors', () => {
    expect(names.sort()).toEqual(['arrays.json', 'french.json', 'structures.json', 'unicode.json', 'values.json', 'weird.json']);
  });
  for (const name of names) {
    const input = readFileSync(join(dir, 'input', name));
    const expected = readFileSync(join(dir, 'output', name));
    it(`${name}: raw bytes`, () => {
      expect(Buffer.from(canonicalizeJSON(input)).equals(expected)).toBe(true);
    });
    it(`${name}: string`, () => {
      expect(Buffer.from(canonicalizeJSON(input.toString('utf8'))).equals(expected)).toBe(true);
    });
    it(`${name}: JavaScript value`, () => {
      expect(Buffer.from(canonicalize(JSON.parse(input.toString('utf8')))).equals(expected)).toBe(true);
    });
    it(`${name}: digests`, () => {
      const want = refSha256Hex(expected);
      expect(hashJSON(input)).toBe(want);
      expect(hashValue(JSON.parse(input.toString('utf8')))).toBe(want);
    });
  }
});
