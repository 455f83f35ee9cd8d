// `tapedeck stats` over Groq's streamed calls: Groq reports a stream's usage in the last chunk's
// `x_groq.usage` (at the top level only with stream_options.include_usage), and its path
// `/openai/v1/chat/completions` is Azure OpenAI's v1 path too, so a stream whose chunks carry no
// mark of Groq's is told by its host.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPrices } from '../../src/drift/prices.ts';
import { callStats } from '../../src/drift/stats.ts';
import { compatibleApiAt } from '../../src/providers/openai-compatible.ts';
import { assembleStream } from '../../src/providers/sse-assemble.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-groq-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const model = 'llama-3.3-70b-versatile';
const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model, system_fingerprint: 'fp_x' };
const groqUsage = { queue_time: 0.01, prompt_tokens: 5, prompt_time: 0.001, completion_tokens: 7, completion_time: 0.02, total_tokens: 12, total_time: 0.021 };

/** A Groq stream: `x_groq` with the usage on the finishing chunk; `marked`: also its id on the first; `includeUsage`: the top-level usage chunk after. */
function stream({ marked = true, includeUsage = false } = {}): string {
  const events: object[] = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], ...(marked ? { x_groq: { id: 'req_1' } } : {}) },
    { ...base, choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], x_groq: { id: 'req_1', usage: groqUsage } },
    ...(includeUsage ? [{ ...base, choices: [], usage: { prompt_tokens: 50, completion_tokens: 70, total_tokens: 120 } }] : []),
  ];
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
}

async function statsOf(url: string, body: string) {
  const tape = join(dir, `${Math.random().toString(36).slice(2)}.tape`);
  await addRecordings({ tape }, [{ request: { url, body: { model, stream: true, messages: [{ role: 'user', content: 'count tokens' }] } }, response: { headers: { 'content-type': 'text/event-stream' }, body } }]);
  const { records } = await readTape(tape);
  return callStats(records[0]!.value, loadPrices(undefined));
}

describe('Groq streams in tapedeck stats', () => {
  it("counts the tokens of the last chunk's x_groq.usage", async () => {
    expect(await statsOf('https://api.groq.com/openai/v1/chat/completions', stream())).toMatchObject({ provider: 'Groq', model, usage: { input: 5, output: 7 } });
    expect(assembleStream('text/event-stream', stream())?.usage).toEqual(groqUsage);
  });

  it('the top-level usage chunk (include_usage) wins over x_groq.usage', () => {
    expect(assembleStream('text/event-stream', stream({ includeUsage: true }))?.usage).toEqual({ prompt_tokens: 50, completion_tokens: 70, total_tokens: 120 });
  });

  it('a stream with no mark of Groq in its first chunk is counted by its host or path, not as Azure', async () => {
    expect((await statsOf('https://api.groq.com/openai/v1/chat/completions', stream({ marked: false })))?.provider).toBe('Groq');
    expect((await statsOf('http://127.0.0.1:7420/openai/v1/chat/completions', stream({ marked: false })))?.provider).toBe('Groq');
    expect((await statsOf('https://my-res.openai.azure.com/openai/v1/chat/completions', stream({ marked: false })))?.provider).toBe('azure');
  });

  it('compatibleApiAt: by host, then by a distinctive base path; never for Azure hosts', () => {
    expect(compatibleApiAt('https://api.groq.com', '/openai/v1/chat/completions')?.name).toBe('Groq');
    expect(compatibleApiAt('https://api.deepseek.com', '/chat/completions')?.name).toBe('DeepSeek');
    expect(compatibleApiAt('http://localhost:8080', '/api/v1/chat/completions')?.name).toBe('OpenRouter');
    expect(compatibleApiAt('https://x.cognitiveservices.azure.com', '/openai/v1/chat/completions')).toBeUndefined();
    expect(compatibleApiAt('http://localhost:8080', '/v1/chat/completions')).toBeUndefined();
    expect(compatibleApiAt('not a url', '/openai/v1/chat/completions')).toBeUndefined();
  });
});
