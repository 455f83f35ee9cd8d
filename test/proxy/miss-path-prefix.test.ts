// A miss caused by a base URL with a path prefix (a gateway): the miss names the path the
// request was recorded at, also when the host differs too, instead of "no recording for" the
// prefixed path alone.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-miss-prefix-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello' }] };

async function missOf(tape: string, baseURL: string): Promise<string> {
  const f = createFetch({ tape, mode: 'replay', summary: false, onWarning: () => {} });
  try {
    const e = await new OpenAI({ apiKey: 'replay', baseURL, fetch: f, maxRetries: 0 }).chat.completions.create(ask).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(OpenAI.APIError);
    return (e as Error).message;
  } finally {
    await f.close();
  }
}

describe('a miss from a path prefix', () => {
  it('names the recorded path, on the same host and on another one', async () => {
    const tape = join(dir, 'retry.tape');
    await addRecordings({ tape }, [{ request: { url: 'https://api.openai.com/v1/chat/completions', body: ask }, response: { body: { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }] } } }]);
    const sameHost = await missOf(tape, 'https://api.openai.com/openai/v1');
    expect(sameHost).toContain('recorded at POST /v1/chat/completions');
    const otherHost = await missOf(tape, 'https://gateway.example.com/openai/v1');
    expect(otherHost).toContain('POST /v1/chat/completions');
    expect(otherHost).toContain('https://api.openai.com');
  });
});
