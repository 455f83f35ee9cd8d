// A call to a closed tapedeck fetch is answered once and for all: a 400 with E_PROXY_CLOSED that
// no client retries (a 503 was retried: the OpenAI SDK twice, LangChain six times over 77 s),
// saying what to do where it was made (a test's fetch: the call came after its test ended).
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch, createFetchFor } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-closed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function counting(f: typeof fetch): { fetch: typeof fetch; calls: () => number } {
  let n = 0;
  return { fetch: ((input: string | URL | Request, init?: RequestInit) => (n++, f(input, init))) as typeof fetch, calls: () => n };
}

const ask = (f: typeof fetch) =>
  new OpenAI({ baseURL: 'http://api.test/v1', apiKey: 'sk-unused', fetch: f, maxRetries: 2 }).chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] })
    .catch((e: unknown) => e) as Promise<Error & { status: number; headers: Headers }>;

describe('a call to a closed tapedeck fetch', () => {
  it('is a final 400 E_PROXY_CLOSED: the SDK raises it at once, without retries', async () => {
    const f = createFetch({ tape: join(dir, 'closed.tape'), mode: 'replay', summary: false });
    await f.close();
    const c = counting(f);
    const err = await ask(c.fetch);
    expect(c.calls()).toBe(1);
    expect(err.status).toBe(400);
    expect(err.headers.get('x-tapedeck-error')).toBe('E_PROXY_CLOSED');
    expect(err.headers.get('x-should-retry')).toBe('false');
    expect(err.message).toContain('This tapedeck fetch was closed');
  });

  it("in a test, says the call came after its test ended and to await it", async () => {
    const f = createFetchFor({ tape: join(dir, 'test.tape'), mode: 'replay', summary: false }, { kind: 'test', recordCommand: 'TAPEDECK_MODE=update npx vitest run a.test.ts' });
    await f.close();
    const err = await ask(f);
    expect(err.status).toBe(400);
    expect(err.message).toContain('This request came after its test ended');
    expect(err.message).toContain('Await every call in the test that makes it.');
    expect(err.message).not.toContain('createFetch');
  });
});

describe('createFetch without its options', () => {
  it('is E_ARG saying what it takes, not a TypeError', () => {
    for (const bad of [undefined, null, 'tapes/chat.tape']) {
      expect(() => createFetch(bad as never)).toThrow(expect.objectContaining({ code: 'E_ARG', message: expect.stringContaining('createFetch takes an options object') }));
    }
  });
});
