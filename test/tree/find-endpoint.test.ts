// tree.findOrCreate(body) on tapes of APIs whose endpoint decides how a body is keyed: Gemini and
// Bedrock name the model in the URL, Ollama's route names the shape (its body alone reads as an
// OpenAI chat). The body exactly as the SDK sent it, looked up without its endpoint, cannot be
// keyed as recorded: the miss says so and names the recorded endpoint that hits, and the lookup
// with `normalize.endpoint` (docs/tree.md) hits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { loadTree } from '../../src/tree/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-endpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const json = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

const upstream = (async (input: RequestInfo | URL) => {
  const p = new URL(String(input)).pathname;
  if (p.endsWith(':generateContent')) return json({ candidates: [{ content: { role: 'model', parts: [{ text: 'Gemini says hi' }] }, finishReason: 'STOP', index: 0 }] });
  if (p.endsWith('/converse')) return json({ output: { message: { role: 'assistant', content: [{ text: 'Bedrock says hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 3, totalTokens: 6 } });
  if (p === '/api/chat') return json({ model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content: 'Ollama says hi' }, done: true, done_reason: 'stop' });
  if (p === '/v1/chat/completions') return json({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'OpenAI says hi' }, finish_reason: 'stop' }] });
  return new Response('not found', { status: 404 });
}) as typeof fetch;

const cases = [
  {
    name: 'Bedrock Converse',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0/converse',
    body: { system: [{ text: 'terse' }], messages: [{ role: 'user', content: [{ text: 'Converse ü' }] }], inferenceConfig: { maxTokens: 50, temperature: 0 } },
    answer: 'Bedrock says hi',
  },
  {
    name: 'Gemini generateContent',
    url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    body: { contents: [{ parts: [{ text: 'Hello Gemini é' }], role: 'user' }], systemInstruction: { parts: [{ text: 'Be brief' }], role: 'user' }, generationConfig: { temperature: 0 } },
    answer: 'Gemini says hi',
  },
  {
    name: 'Ollama /api/chat',
    url: 'http://127.0.0.1:11434/api/chat',
    body: { model: 'llama3.2', messages: [{ role: 'user', content: 'hi ollama ü' }], options: { temperature: 0, num_thread: 4 }, stream: false },
    answer: 'Ollama says hi',
  },
];

async function record(tape: string, calls: { url: string; body: unknown }[]): Promise<void> {
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
  try {
    for (const { url, body } of calls) {
      const r = await f(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      expect(r.status, url).toBe(200);
      await r.text();
    }
  } finally {
    await f.close();
  }
}

describe('findOrCreate(body) on endpoint-keyed recordings', () => {
  for (const c of cases) {
    it(`${c.name}: the body alone misses and names the recorded endpoint; with normalize.endpoint it hits`, async () => {
      const tape = join(dir, `${c.name.replace(/\W+/g, '-')}.tape`);
      await record(tape, [c]);
      const path = new URL(c.url).pathname;
      {
        const { tree } = await loadTree(tape);
        expect(tree.warnings).toEqual([]);
        const miss = tree.findOrCreate(c.body);
        expect(miss.hit).toBe(false);
        expect(miss.endpoint).toEqual({ method: 'POST', url: path });
        expect(miss.note).toContain(`POST ${path}`);
        expect(miss.note).toContain('normalize: { endpoint');
        const again = tree.findOrCreate(c.body, { normalize: { endpoint: miss.endpoint } });
        expect(again.hit).toBe(true);
        expect(JSON.stringify(again.alternative!.value)).toContain(c.answer);
        expect(again.note).toBeUndefined();
      }
      // The documented call, on a fresh tree.
      const { tree } = await loadTree(tape);
      const hit = tree.findOrCreate(c.body, { normalize: { endpoint: { method: 'POST', url: path } } });
      expect(hit.hit).toBe(true);
    });
  }

  it('a body that no recorded endpoint would key differently misses without a note; a tape of OpenAI calls alone adds none', async () => {
    const tape = join(dir, 'openai.tape');
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    await record(tape, [{ url: 'https://api.openai.com/v1/chat/completions', body: chat }]);
    const { tree } = await loadTree(tape);
    expect(tree.findOrCreate(chat).hit).toBe(true);
    const miss = tree.findOrCreate({ ...chat, messages: [{ role: 'user', content: 'something else' }] });
    expect(miss.hit).toBe(false);
    expect(miss.note).toBeUndefined();
    expect(miss.endpoint).toBeUndefined();
  });

  it('in a tree of Gemini recordings, a Gemini body never recorded misses with a note that the endpoint decides the key, and no endpoint', async () => {
    const tape = join(dir, 'gemini-other.tape');
    await record(tape, [cases[1]!]);
    const { tree } = await loadTree(tape);
    const miss = tree.findOrCreate({ contents: [{ parts: [{ text: 'never asked' }], role: 'user' }] });
    expect(miss.hit).toBe(false);
    expect(miss.endpoint).toBeUndefined();
    expect(miss.note).toMatch(/keyed by the endpoint they were sent to \(e\.g\. POST \/v1beta\/models\/gemini-2\.5-flash:generateContent\)/);
  });
});
