// A Redis URL pasted with a leading space or tab (YAML, .env, a CI secret) was taken for a tape
// path: recordings went to a local file under a folder named " redis:", nothing reached Redis,
// and nothing said so. Now it is E_ARG where the fetch, cache or proxy is made, naming the fix.
import { existsSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { checkStore } from '../../src/store/backends/open.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

describe('a store URL with leading whitespace', () => {
  for (const lead of [' ', '\t', '  \n']) {
    it(`is refused with E_ARG (${JSON.stringify(lead)})`, () => {
      let err: unknown;
      try {
        checkStore(`${lead}redis://:pw@127.0.0.1:6379/0?namespace=ci`);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TapedeckError);
      const e = err as TapedeckError;
      expect(e.code).toBe('E_ARG');
      expect(e.message).toContain('whitespace');
      expect(e.message).not.toContain(':pw@');
      expect(e.hint).toContain('redis://***@127.0.0.1:6379/0?namespace=ci');
    });
  }

  it('ReplayCache.open and createFetch refuse it, and no local file is made', async () => {
    const url = ` redis://127.0.0.1:6379/0?namespace=ci`;
    let err: unknown;
    try {
      const c = await ReplayCache.open(url, { mode: 'update' });
      // Before: opened as a tape under " redis:" in the current directory; removed again here.
      await c.close();
      rmSync(' redis:', { recursive: true, force: true });
    } catch (e) {
      err = e;
    }
    expect((err as TapedeckError).code).toBe('E_ARG');
    expect(existsSync(' redis:')).toBe(false);
    expect(() => createFetch({ store: `\tredis://127.0.0.1:6379/0?namespace=ci`, mode: 'replay' })).toThrow(/whitespace/);
  });

  it('a tape path that merely contains spaces is still a tape path', () => {
    expect(() => checkStore('my tapes/ chat.tape')).not.toThrow();
  });
});
