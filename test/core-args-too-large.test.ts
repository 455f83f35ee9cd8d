// MAX_INPUT_BYTES holds for JavaScript values on every backend: the wasm engines refused a
// value whose JSON text is over 64 MiB with E_TOO_LARGE, while the TypeScript engine hashed it.
import { describe, expect, it } from 'vitest';
import { backend, canonicalize, hashMany, hashValue, MAX_INPUT_BYTES, pathHashes, requestKeys } from '../src/index.ts';
import { errorOf } from './helpers.ts';

describe(`MAX_INPUT_BYTES for values (${backend()})`, () => {
  it('a value whose text is 8 bytes over the limit is E_TOO_LARGE from every value entry', () => {
    const s = 'a'.repeat(MAX_INPUT_BYTES);
    const v = { s };
    expect(errorOf(() => hashValue(v)).code).toBe('E_TOO_LARGE');
    expect(errorOf(() => canonicalize(v)).code).toBe('E_TOO_LARGE');
    expect(errorOf(() => hashMany([v])).code).toBe('E_TOO_LARGE');
    expect(errorOf(() => pathHashes([v])).code).toBe('E_TOO_LARGE');
    expect(errorOf(() => requestKeys({ model: 'm', messages: [{ role: 'user', content: s }] })).code).toBe('E_TOO_LARGE');
  });

  it('a value whose text is exactly the limit is hashed', () => {
    const v = { s: 'a'.repeat(MAX_INPUT_BYTES - 8) }; // {"s":"…"} is 8 bytes around it
    expect(hashValue(v)).toMatch(/^[0-9a-f]{64}$/);
  });
});
