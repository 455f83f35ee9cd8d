// Calls of Gemini, Anthropic and Ollama recorded through createFetch, as `tapedeck tree` and
// loadTree read them: an Ollama /api/generate answer (plain and NDJSON-streamed) is shown with
// its text, and the keyed calls that have no conversation answer (Gemini embedContent,
// batchEmbedContents and countTokens, Anthropic count_tokens, Ollama embed with a string input)
// are left out and counted, not reported as records the tree could not place (exit 1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { treeCommand } from '../../src/tree/cli.ts';
import { formatTree } from '../../src/tree/format.ts';
import { loadTree } from '../../src/tree/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-calls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const json = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json; charset=utf-8' } });

/** A loopback-free upstream answering each route as the provider does. */
const upstream = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(String(input));
  const body = JSON.parse((await new Response(init?.body ?? '{}').text()) || '{}') as Record<string, unknown>;
  const p = url.pathname;
  if (p === '/api/generate') {
    const done = { model: body.model, created_at: '2026-01-01T00:00:00Z', done: true, done_reason: 'stop', context: [1, 2, 3], total_duration: 5, prompt_eval_count: 3, eval_count: 2 };
    if (body.stream === false) return json({ ...done, response: `gen: ${String(body.prompt)}` });
    const lines = [{ model: body.model, created_at: '2026-01-01T00:00:00Z', response: 'gen ', done: false }, { model: body.model, created_at: '2026-01-01T00:00:00Z', response: `streamed: ${String(body.prompt)}`, done: false }, { ...done, response: '' }];
    return new Response(lines.map((l) => `${JSON.stringify(l)}\n`).join(''), { headers: { 'content-type': 'application/x-ndjson' } });
  }
  if (p === '/api/embed') return json({ model: body.model, embeddings: [[0.1, 0.2]], total_duration: 1, load_duration: 1, prompt_eval_count: 1 });
  if (p.endsWith(':generateContent')) return json({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello back' }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'gemini-2.5-flash' });
  if (p.endsWith(':embedContent')) return json({ embedding: { values: [0.1, 0.2] } });
  if (p.endsWith(':batchEmbedContents')) return json({ embeddings: [{ values: [0.1] }, { values: [0.2] }] });
  if (p.endsWith(':countTokens')) return json({ totalTokens: 3 });
  if (p === '/v1/messages/count_tokens') return json({ input_tokens: 7 });
  if (p.endsWith('/embeddings')) return json({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'text-embedding-3-small' });
  return new Response('not found', { status: 404 });
}) as typeof fetch;

async function record(tape: string, calls: [string, unknown][]): Promise<void> {
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
  try {
    for (const [url, body] of calls) {
      const r = await f(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      expect(r.status, url).toBe(200);
      await r.text();
    }
  } finally {
    await f.close();
  }
}

/** `tapedeck tree <tape>` in process: exit code, stdout and stderr. */
async function treeCli(tape: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    err += String(s);
    return true;
  });
  try {
    const code = await treeCommand([tape], async (text) => {
      out += text;
    });
    return { code, out, err };
  } finally {
    spy.mockRestore();
  }
}

const OLLAMA = 'http://127.0.0.1:11434';
const GEMINI = 'https://generativelanguage.googleapis.com/v1beta/models';

describe('Ollama /api/generate answers in the tree', () => {
  it('plain and NDJSON-streamed answers are shown with their text; tapedeck tree exits 0', async () => {
    const tape = join(dir, 'ollama-generate.tape');
    await record(tape, [
      [`${OLLAMA}/api/generate`, { model: 'llama3.2', prompt: 'plain gen', stream: false }],
      [`${OLLAMA}/api/generate`, { model: 'llama3.2', prompt: 'stream gen' }],
    ]);
    const { tree } = await loadTree(tape);
    expect(tree.warnings).toEqual([]);
    expect(tree.stats().exchanges).toBe(2);
    const text = formatTree(tree);
    expect(text).toContain('gen: plain gen');
    expect(text).toContain('gen streamed: stream gen');
    expect(text).not.toContain('(no recorded answer)');
    const r = await treeCli(tape);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('gen: plain gen');
  });
});

describe('calls with no conversation answer', () => {
  it('Gemini embeddings and token counts, Anthropic token counts, Ollama embed with a string input, Azure deployment embeddings: counted as not shown, exit 0', async () => {
    const tape = join(dir, 'not-conversations.tape');
    await record(tape, [
      [`${GEMINI}/gemini-2.5-flash:generateContent`, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
      [`${GEMINI}/text-embedding-004:embedContent`, { content: { parts: [{ text: 'embed me' }] } }],
      [`${GEMINI}/text-embedding-004:batchEmbedContents`, { requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] } }, { model: 'models/text-embedding-004', content: { parts: [{ text: 'b' }] } }] }],
      [`${GEMINI}/gemini-2.5-flash:countTokens`, { contents: [{ role: 'user', parts: [{ text: 'count me' }] }] }],
      ['https://api.anthropic.com/v1/messages/count_tokens', { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'count' }] }],
      [`${OLLAMA}/api/embed`, { model: 'all-minilm', input: 'x' }],
      ['https://res.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-10-21', { input: 'azure' }],
    ]);
    const { tree } = await loadTree(tape);
    expect(tree.warnings).toEqual([]);
    expect(tree.skipped.map((w) => [w.index, w.message])).toEqual([
      [1, 'an embeddings call, not a conversation'],
      [2, 'an embeddings call, not a conversation'],
      [3, 'a token count, not a conversation'],
      [4, 'a token count, not a conversation'],
      [5, 'an embeddings call, not a conversation'],
      [6, 'an embeddings call, not a conversation'],
    ]);
    expect(tree.stats().exchanges).toBe(1);
    const r = await treeCli(tape);
    expect(r.err).toBe('4 records not shown: embeddings calls, not conversations (records 1, 2, 5, 6)\n2 records not shown: token counts, not conversations (records 3, 4)\n');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Hello back');
  });
});
