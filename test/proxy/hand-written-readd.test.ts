// Adding hand-written recordings again: the same recordings already on the tape are not added
// twice (addRecordings in a test runs on every test run), a changed answer for a request the
// tape holds is said to be served after the old ones, and `replace` puts it in their place.
// Replayed through the real OpenAI SDK.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-readd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });
const answer = (content: string, q = 'What is the policy?'): WrittenRecording => ({
  request: { url: URL_, body: ask(q) },
  response: { body: { id: 'chatcmpl-hand', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }] } },
});
const rateLimited = (q: string): WrittenRecording => ({
  request: { url: URL_, body: ask(q) },
  response: { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } },
});

const count = async (tape: string) => (await readTape(tape)).records.length;

async function served(tape: string, q: string, calls: number): Promise<(string | number)[]> {
  const f = createFetch({ tape, mode: 'replay', summary: false, onWarning: () => {} });
  const client = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 });
  const out: (string | number)[] = [];
  try {
    for (let i = 0; i < calls; i++) {
      const r = await client.chat.completions.create(ask(q)).then(
        (c) => c.choices[0]!.message.content ?? '',
        (e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? -1) : -1),
      );
      out.push(r);
    }
  } finally {
    await f.close();
  }
  return out;
}

describe('adding hand-written recordings again', () => {
  it('the same recordings already on the tape are not added again: the tape stays as it is, calls get what they got', async () => {
    const tape = join(dir, 'in-test.tape');
    const list = [rateLimited('retry me'), answer('after the retry', 'retry me')];
    const warnings: string[] = [];
    expect(await addRecordings({ tape, onWarning: (m) => warnings.push(m) }, list)).toBe(2);
    for (let run = 0; run < 3; run++) expect(await addRecordings({ tape, onWarning: (m) => warnings.push(m) }, list)).toBe(0);
    expect(await count(tape)).toBe(2);
    expect(warnings).toEqual([]);
    // The third call gets the last answer again, not a 429 of a second copy.
    expect(await served(tape, 'retry me', 3)).toEqual([429, 'after the retry', 'after the retry']);
  });

  it('a changed answer for a request the tape holds: said, with the way to replace; with replace it is the one served', async () => {
    const tape = join(dir, 'fixed.tape');
    await addRecordings({ tape }, [answer('OLD: wrong policy text'), answer('another question kept', 'Other?')]);
    const warnings: string[] = [];
    expect(await addRecordings({ tape, onWarning: (m) => warnings.push(m) }, [answer('NEW: right policy text')])).toBe(1);
    expect(warnings.join('\n')).toMatch(/already holds 1 recording of POST \/v1\/chat\/completions/);
    expect(warnings.join('\n')).toContain('replace');
    expect(await served(tape, 'What is the policy?', 1)).toEqual(['OLD: wrong policy text']);

    expect(await addRecordings({ tape, replace: true }, [answer('NEW: right policy text')])).toBe(1);
    expect(await served(tape, 'What is the policy?', 2)).toEqual(['NEW: right policy text', 'NEW: right policy text']);
    // The other request's recording is kept.
    expect(await served(tape, 'Other?', 1)).toEqual(['another question kept']);
    const texts = (await readTape(tape)).records.map((r) => new TextDecoder().decode((r.value as HttpRecord).response.body));
    expect(texts.filter((t) => t.includes('policy text'))).toHaveLength(1);
    expect(texts).toHaveLength(2);
  });
});
