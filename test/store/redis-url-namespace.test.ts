// An invalid `?namespace=` (`my%20app`, empty) passed createFetch and failed every call with a
// 500 (retried by SDKs); `?nmespace=` and `?ttl=abc` are E_ARG where the fetch is made. Now so is
// a namespace a Redis store cannot take.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { checkStore } from '../../src/store/backends/open.ts';

function refused(make: () => unknown): TapedeckError {
  try {
    make();
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    return e as TapedeckError;
  }
  throw new Error('expected E_ARG');
}

describe('a Redis URL whose ?namespace= is not a namespace', () => {
  for (const ns of ['my%20app', '', 'a*b']) {
    it(`is E_ARG where createFetch is made (?namespace=${ns})`, () => {
      const url = `redis://:secret@127.0.0.1:6379/0?namespace=${ns}`;
      const e = refused(() => createFetch({ store: url, mode: 'replay' }));
      expect(e.code).toBe('E_ARG');
      expect(e.message).toContain('?namespace=');
      expect(e.message).not.toContain('secret');
      expect(e.hint).toMatch(/letters, digits/);
      expect(refused(() => checkStore(url)).code).toBe('E_ARG');
    });
  }

  it('a good one passes', () => {
    expect(() => checkStore('redis://127.0.0.1:6379/0?namespace=my-app/ci_1.x')).not.toThrow();
  });
});
