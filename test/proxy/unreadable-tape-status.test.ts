// A tape that cannot be read (not a tape, a directory) answered every call with a 500, which the
// AI SDK retries: generateText failed after 3 attempts and 6 s with a RetryError. Such a tape is
// a 400, raised at once with its message, as a miss is.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-unreadable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a tape that cannot be read', () => {
  it.each([
    ['a JSON file', () => {
      const f = join(dir, 'package.json');
      writeFileSync(f, '{"name":"app"}');
      return f;
    }, /is JSON text, not a tape/],
    ['a directory', () => dir, /is a directory/],
  ])('%s: a 400 the AI SDK raises once, with the message', async (_name, tapeOf, said) => {
    const tape = createFetch({ tape: tapeOf(), mode: 'replay' });
    let calls = 0;
    const counted = ((input: RequestInfo | URL, init?: RequestInit) => {
      calls++;
      return tape(input, init);
    }) as typeof fetch;
    try {
      const model = createOpenAI({ apiKey: 'sk-test-not-real', fetch: counted }).chat('gpt-4o-mini');
      const e = await generateText({ model, prompt: 'Hi' }).then(
        () => undefined,
        (x: unknown) => x as Error & { statusCode?: number },
      );
      expect(e?.message).toMatch(said);
      expect(e?.statusCode).toBe(400);
      expect(calls).toBe(1);
    } finally {
      await tape.close().catch(() => {});
    }
  });
});

// A key option of the wrong type (a string for a list) was caught only at the first request, as
// a 500 naming normalizeRequest: it is E_ARG when the fetch or proxy is made.
describe('key options of the wrong type', () => {
  it.each([
    ['ignoreArgs', { ignoreArgs: 'max_tokens' }],
    ['volatileKeys', { volatileKeys: [1] }],
  ])('%s: E_ARG when createFetch is made', (name, bad) => {
    let e: unknown;
    try {
      createFetch({ tape: join(dir, 'k.tape'), mode: 'replay', ...(bad as object) });
    } catch (x) {
      e = x;
    }
    expect((e as { code?: string })?.code).toBe('E_ARG');
    expect((e as Error).message).toContain(`${name} must be an array of strings`);
  });
});
