// What popular clients hand to a cache, keyed by ReplayCache without adapters, with the real
// packages: the Vercel AI SDK's language-model call options inside a `wrapLanguageModel`
// middleware (around the real OpenAI provider talking to a local fake provider), and LangChain
// message instances from @langchain/core. Record once, replay with the provider gone, and a
// changed prompt is a miss, not the old answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { ReplayCache } from '../../src/store/index.ts';
import { requestKeys } from '../../src/index.ts';
import { TapedeckError } from '../../src/errors.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tapedeck-clients-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The cache middleware a user writes: the call options are the request, the result the value. */
function cached(cache: ReplayCache): LanguageModelMiddleware {
  return {
    specificationVersion: 'v3',
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const request = { model: model.modelId, ...params };
      const hit = await cache.get(request);
      if (hit !== undefined) return hit as Awaited<ReturnType<typeof doGenerate>>;
      const result = await doGenerate();
      await cache.put(request, result);
      return result;
    },
  } as LanguageModelMiddleware;
}

describe('Vercel AI SDK call options in a wrapLanguageModel middleware', () => {
  let upstream: Upstream | undefined;
  afterEach(async () => {
    await upstream?.close().catch(() => {});
    upstream = undefined;
  });

  it('record once, replay the same text with the provider stopped, and miss on a changed prompt', async () => {
    upstream = await startUpstream();
    const tape = join(dir, 'ai-sdk.tape');
    const provider = createOpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
    const ask = async (cache: ReplayCache, prompt: string) =>
      (await generateText({ model: wrapLanguageModel({ model: provider.chat('gpt-4o-mini'), middleware: cached(cache) }), system: 'Answer in one word.', prompt, temperature: 0 })).text;

    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const first = await ask(rec, 'Capital of France?');
    const second = await ask(rec, 'Capital of Italy?');
    await rec.close();
    expect(upstream.calls).toHaveLength(2);
    expect(first).not.toBe(second);
    await upstream.close();
    upstream = undefined;

    const replay = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      // Asked in the other order: found by key, not by position.
      expect(await ask(replay, 'Capital of Italy?')).toBe(second);
      expect(await ask(replay, 'Capital of France?')).toBe(first);
      const miss = await ask(replay, 'Capital of Germany?').catch((e: unknown) => e);
      expect(miss).toBeInstanceOf(TapedeckError);
      expect((miss as TapedeckError).code).toBe('E_MISS');
    } finally {
      await replay.close();
    }
  });

  it('the call options key like the chat request the provider sends for them', async () => {
    upstream = await startUpstream();
    const provider = createOpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
    let options: Record<string, unknown> | undefined;
    const spy: LanguageModelMiddleware = {
      specificationVersion: 'v3',
      wrapGenerate: async ({ doGenerate, params, model }) => {
        options = { model: model.modelId, ...params };
        return doGenerate();
      },
    } as LanguageModelMiddleware;
    await generateText({ model: wrapLanguageModel({ model: provider.chat('gpt-4o-mini'), middleware: spy }), system: 'Answer in one word.', prompt: 'Capital of Spain?', temperature: 0 });
    const wire = JSON.parse(upstream.calls[0]!.body) as Record<string, unknown>;
    expect(options).toBeDefined();
    expect(requestKeys(options).key).toBe(requestKeys(wire).key);
    // And a different prompt is a different key on both sides.
    expect(requestKeys({ ...options, prompt: [{ role: 'user', content: [{ type: 'text', text: 'Capital of Peru?' }] }] }).key).not.toBe(requestKeys(wire).key);
  });
});

describe('LangChain messages from @langchain/core', () => {
  const lc = () => [
    new SystemMessage('You are terse.'),
    new HumanMessage('Weather in Paris?'),
    new AIMessage({ content: '', tool_calls: [{ id: 'call_lc_1', name: 'weather', args: { city: 'Paris' }, type: 'tool_call' }] }),
    new ToolMessage({ content: '21C', tool_call_id: 'call_lc_1' }),
  ];
  const openai = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_abc', content: '21C' },
    ],
  };

  it('instances and their JSON serialization key like the OpenAI messages they stand for', () => {
    const want = requestKeys(openai);
    expect(requestKeys({ model: 'gpt-4o-mini', messages: lc() }).key).toBe(want.key);
    expect(requestKeys({ model: 'gpt-4o-mini', messages: lc() }).pathHashes).toEqual(want.pathHashes);
    // LangChain's own serialization ({ lc: 1, type: 'constructor', id, kwargs }), as stored by its caches.
    const serialized = JSON.parse(JSON.stringify(lc())) as unknown[];
    expect((serialized[1] as { lc?: number }).lc).toBe(1);
    expect(requestKeys({ model: 'gpt-4o-mini', messages: serialized }).key).toBe(want.key);
    // A changed tool result changes the key.
    const changed = lc();
    changed[3] = new ToolMessage({ content: '25C', tool_call_id: 'call_lc_1' });
    expect(requestKeys({ model: 'gpt-4o-mini', messages: changed }).key).not.toBe(want.key);
  });

  it('ReplayCache stores under LangChain messages and finds the answer again from fresh instances', async () => {
    const tape = join(dir, 'langchain.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    await rec.put({ model: 'gpt-4o-mini', messages: lc() }, { content: 'Sunny, 21C.' });
    await rec.close();
    // From fresh instances, and (in another run) from the wire form of the same conversation.
    for (const request of [{ model: 'gpt-4o-mini', messages: lc() }, openai]) {
      const replay = await ReplayCache.open(tape, { mode: 'replay' });
      try {
        expect(await replay.get(request)).toEqual({ content: 'Sunny, 21C.' });
        const other = [...lc().slice(0, 1), new HumanMessage('Weather in Rome?')];
        await expect(replay.get({ model: 'gpt-4o-mini', messages: other })).rejects.toMatchObject({ code: 'E_MISS' });
      } finally {
        await replay.close();
      }
    }
  });
});
