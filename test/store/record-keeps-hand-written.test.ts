// A record run replaces the recordings of the requests it re-records, but not the hand-written
// ones (an error or a cut stream the API cannot be asked to give again): those stay, and the
// new recordings come after them.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-keeps-written-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello' }] };
const completion = (text: string) => ({
  id: `chatcmpl-${text}`,
  object: 'chat.completion',
  created: 1767225600,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
});
/** The provider: answers every chat completion with `text`. */
const provider = (text: string) => (async () => new Response(JSON.stringify(completion(text)), { headers: { 'content-type': 'application/json' } })) as typeof fetch;

async function recordRun(tape: string, text: string): Promise<void> {
  const f = createFetch({ tape, mode: 'record', fetch: provider(text), summary: false });
  const r = await new OpenAI({ apiKey: 'sk-test', fetch: f, maxRetries: 0 }).chat.completions.create(ask);
  expect(r.choices[0]!.message.content).toBe(text);
  await f.close();
}

async function statuses(tape: string): Promise<number[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord).map((r) => r.response.status);
}

describe('a record run and hand-written recordings', () => {
  it('keeps the hand-written 429 of a request it re-records, replaces the recorded answer', async () => {
    const tape = join(dir, 'chat.tape');
    await recordRun(tape, 'first');
    await addRecordings({ tape }, [
      { request: { url: URL_, body: ask }, response: { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } } },
    ]);
    expect(await statuses(tape)).toEqual([200, 429]);
    await recordRun(tape, 'second');
    // The recorded 200 was replaced; the hand-written 429 stayed, the new answer after it.
    expect(await statuses(tape)).toEqual([429, 200]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const seen: number[] = [];
    const counted = (async (input: string | URL | Request, init?: RequestInit) => {
      const r = await f(input, init);
      seen.push(r.status);
      return r;
    }) as typeof fetch;
    const r = await new OpenAI({ apiKey: 'replay', fetch: counted, maxRetries: 1 }).chat.completions.create(ask);
    expect(r.choices[0]!.message.content).toBe('second');
    expect(seen).toEqual([429, 200]);
    await f.close();
  });
});
