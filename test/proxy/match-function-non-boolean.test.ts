// A custom match function must return true or false. One that returns something else (a string
// "yes", a number, nothing) is an E_HOOK naming what it returned. Failed before: any value but
// `true` was taken as "no", and the miss said the function "accepted none" of the recordings,
// which sent the user to debug their comparison rather than its return value.
import OpenAI from 'openai';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('match-return');
const client = (fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: 'sk-test', baseURL: `${suite.upstream.url}/v1`, fetch, maxRetries: 0 });
const say = (c: OpenAI, text: string) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

describe('a match function that returns a non-boolean', () => {
  it.each([
    ['a string', 'yes', '"yes"'],
    ['a number', 1, '1'],
    ['nothing', undefined, 'undefined'],
  ])('%s: an error naming the value returned', async (_what, value, shown) => {
    const tape = join(suite.dir, `m-${String(value)}.tape`);
    const rec = createFetch({ tape, mode: 'record' });
    await say(client(rec), 'hello');
    await rec.close();
    const replay = createFetch({ tape, mode: 'replay', match: (() => value) as unknown as () => boolean });
    try {
      const e = (await say(client(replay), 'hello').catch((x: unknown) => x)) as Error;
      expect(e).toBeInstanceOf(Error);
      expect(e.message).toContain(`The match hook returned ${shown} for POST /v1/chat/completions, which is not a boolean`);
      expect(e.message).not.toContain('accepted none');
    } finally {
      await replay.close();
    }
  });
});
