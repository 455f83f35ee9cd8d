// The AI SDK's default OpenAI provider (the Responses API) sends an earlier answer back as
// `{ type: 'item_reference', id }` when the API stored it (store defaults to true): the
// follow-up names the recorded output items instead of repeating them. The tree must read such a
// follow-up as walking through the recorded answer, not as a branch beside it, while the request
// key stays the one of the request as sent (docs/hash-spec.md keys the reference as given).
// Recorded through createFetch by the real `ai` + `@ai-sdk/openai` (and the real openai SDK)
// against fake Responses servers speaking the wire format.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import OpenAI from 'openai';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationTree, formatTree } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { listenLoopback, startUpstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-itemref-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Input = { type?: string; id?: string }[];

/** The LLM records of a tape, in tape order, with the bodies the SDK sent. */
async function llmRecords(tape: string) {
  const recs = (await readTape(tape)).records.map((r) => r.value as HttpRecord).filter((r) => r.match === 'llm');
  // An LLM call's request body is stored as its (redacted) JSON.
  return recs.map((r) => ({ record: r, body: r.request.body as { input: Input } }));
}

/**
 * A reasoning model's Responses API: every answer is a reasoning item and then a function call
 * (when tools are given and no tool result came yet) or a message. Ids are the API's own style.
 */
async function startReasoningApi() {
  let n = 0;
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw) as { model: string; input: Input; tools?: unknown[] };
    n++;
    const answered = body.input.some((i) => i.type === 'function_call_output');
    const reasoning = { type: 'reasoning', id: `rs_${n}`, summary: [{ type: 'summary_text', text: `thought ${n}` }] };
    const output = body.tools?.length && !answered
      ? [reasoning, { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' }]
      : [reasoning, { type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `Echo ${n}`, annotations: [] }] }];
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 15 };
    const s = JSON.stringify({ id: `resp_${n}`, object: 'response', created_at: 1767225600, status: 'completed', model: body.model, output, usage, incomplete_details: null, error: null });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
    res.end(s);
  });
  return listenLoopback(server);
}

const weather = tool({
  description: 'Weather for a city',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async () => '18C and sunny',
});

describe('a follow-up that sends the answer back by item_reference walks through it', () => {
  for (const stream of [false, true]) {
    it(`the AI SDK's default OpenAI provider, ${stream ? 'streamed' : 'JSON'}: one path, the follow-up a hit at full depth`, async () => {
      const tape = join(dir, `aisdk-${stream}.tape`);
      const upstream = await startUpstream({ gapMs: 0 });
      const fetch = createFetch({ tape, mode: 'record' });
      try {
        const openai = createOpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-unused', fetch });
        const messages: ModelMessage[] = [{ role: 'user', content: 'Hi there' }];
        let first;
        if (stream) {
          const s = streamText({ model: openai('gpt-4o'), messages });
          await s.consumeStream();
          first = { response: await s.response };
        } else first = await generateText({ model: openai('gpt-4o'), messages });
        messages.push(...first.response.messages, { role: 'user', content: 'And then?' });
        await generateText({ model: openai('gpt-4o'), messages });
      } finally {
        await fetch.close();
        await upstream.close();
      }
      const [one, two] = await llmRecords(tape);
      // The SDK did send the reference (else this test would test nothing).
      expect(two!.body.input[1]).toEqual({ type: 'item_reference', id: 'msg_1' });

      const { tree } = await loadTree(tape);
      expect(tree.warnings).toEqual([]);
      expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 0, exchanges: 2, nodes: 4, maxLength: 4 });
      expect([...tree.nodes()].map((n) => [n.role, n.origin])).toEqual([['user', 'request'], ['assistant', 'response'], ['user', 'request'], ['assistant', 'response']]);
      const text = formatTree(tree);
      expect(text).not.toMatch(/item_reference|#2 \?/);
      expect(text).toMatch(/#2 assistant Echo 1: Hi there/);

      // The follow-up as sent is a hit at full depth, under the key the recording has: the
      // key is the hash spec's, of the request with its reference.
      const r = tree.findOrCreate(two!.body);
      expect(r).toMatchObject({ hit: true, matched: 3, divergence: null, created: 0 });
      expect(r.key).toBe(two!.record.key);
      expect(r.key).toBe(requestKeys(two!.body).key);
      expect(r.alternative!.key).toBe(two!.record.key);
      expect(tree.findOrCreate(one!.body).alternative!.key).toBe(one!.record.key);
    });
  }

  it('a reasoning model with a tool call: reasoning items referenced, the call sent inline, every turn walked through', async () => {
    const tape = join(dir, 'reasoning.tape');
    const api = await startReasoningApi();
    const fetch = createFetch({ tape, mode: 'record' });
    try {
      const openai = createOpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test-unused', fetch });
      const messages: ModelMessage[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const r = await generateText({ model: openai('o4-mini'), messages, tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
      messages.push(...r.response.messages, { role: 'user', content: 'Thanks!' });
      await generateText({ model: openai('o4-mini'), messages, tools: { get_weather: weather } });
    } finally {
      await fetch.close();
      await api.close();
    }
    const recs = await llmRecords(tape);
    expect(recs.length).toBe(3);
    const last = recs[2]!.body;
    expect(last.input.filter((i) => i.type === 'item_reference').map((i) => i.id)).toEqual(['rs_1', 'rs_2', 'msg_2']);

    const { tree } = await loadTree(tape);
    expect(tree.warnings).toEqual([]);
    // user, reasoning, tool call, tool result, reasoning, text, user: 7 request messages, and the
    // last answer's reasoning and text.
    expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 0, exchanges: 3, nodes: 9, maxLength: 9 });
    expect(formatTree(tree)).not.toMatch(/item_reference/);
    const hit = tree.findOrCreate(last);
    expect(hit).toMatchObject({ hit: true, matched: 7, divergence: null });
    expect(hit.alternative!.key).toBe(recs[2]!.record.key);
    expect(hit.key).toBe(requestKeys(last).key);

    // Ids no recorded answer gave stay as they are: without the first record, rs_1 is unknown
    // (its reference is a node of its own, as before), while rs_2 and msg_2 still resolve.
    const partial = ConversationTree.fromRecords(recs.slice(1).map((r) => r.record));
    expect(partial.warnings).toEqual([]);
    const messages = [...partial.nodes()].map((n) => n.message as { type?: string; id?: string });
    expect(messages.filter((m) => m.type === 'item_reference')).toEqual([{ type: 'item_reference', id: 'rs_1' }]);
    expect(partial.stats()).toMatchObject({ roots: 1, branchPoints: 0, exchanges: 2 });
    expect(partial.findOrCreate(last)).toMatchObject({ hit: true, matched: 7 });
  });

  it('an answer recorded live with addResponse(result, …) is walked through by a follow-up that references it (openai SDK)', async () => {
    const upstream = await startUpstream({ gapMs: 0 });
    try {
      const client = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-unused', maxRetries: 0 });
      const tree = new ConversationTree();
      const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Hi there' }];
      const body = { model: 'gpt-4o', input };
      const r = tree.findOrCreate(body);
      expect(r.hit).toBe(false);
      const answer = await client.responses.create(body);
      tree.addResponse(r, { messages: answer.output, value: answer });
      const follow = { model: 'gpt-4o', input: [...input, { type: 'item_reference' as const, id: answer.output[0]!.id! }, { role: 'user' as const, content: 'And then?' }] };
      const next = tree.findOrCreate(follow);
      expect(next.matched).toBe(2);
      expect(next.divergence!.parent!.origin).toBe('response');
      expect(next.key).toBe(requestKeys(follow).key);
      expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 0 });
    } finally {
      await upstream.close();
    }
  });
});
