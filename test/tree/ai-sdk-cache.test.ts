// A tape written by the Vercel AI SDK cache of docs/api.md (a ReplayCache inside a real
// `wrapLanguageModel` middleware: the call options are the request, the doGenerate() result the
// value) read as a conversation tree. The answers must be assistant turns with their own text and
// tool calls, hashed as the AI SDK sends them back in the next call's `prompt`, so the follow-up
// walks through them: one unbranched path. Then values the tree does not read: listed in its
// warnings (and `tapedeck tree` exits 1), never printed as an answer.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel, type LanguageModelMiddleware, type ModelMessage } from 'ai';
import { ReplayCache, replayCacheMiddleware } from '../../src/store/index.ts';
import { ConversationTree, formatTree, type TreeNode } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';
import { refDigest } from '../reference.ts';
import { listenLoopback, startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-ai-sdk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = join(import.meta.dirname, '../../dist/cli.js');

/** The cache middleware of docs/api.md, as a user writes it. */
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

/** The messages from the root to a node, as `role text` lines the way formatTree excerpts them. */
function path(node: TreeNode): TreeNode[] {
  const out: TreeNode[] = [];
  for (let n: TreeNode | null = node; n; n = n.parent) out.push(n);
  return out.reverse();
}

/** Every line of the printed tree after the summary, without the recording times. */
function lines(tree: ConversationTree, width = 72): string[] {
  return formatTree(tree, { width })
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((l) => l.replace(/ · \d{4}-\d\d-\d\dT[\d:.]+Z/, '').replace(/\s+/g, ' ').trim());
}

let upstream: Upstream | undefined;
afterEach(async () => {
  await upstream?.close().catch(() => {});
  upstream = undefined;
});

describe('an AI SDK cache tape (wrapLanguageModel + ReplayCache) as a conversation tree', () => {
  it('two turns: user → assistant → user → assistant, the follow-up walking through the first answer', async () => {
    upstream = await startUpstream();
    const tape = join(dir, 'two-turns.tape');
    const provider = createOpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    const model = wrapLanguageModel({ model: provider.chat('gpt-4o-mini'), middleware: cached(cache) });
    const messages: ModelMessage[] = [{ role: 'user', content: 'What is the capital of France?' }];
    const first = await generateText({ model, messages });
    messages.push(...first.response.messages, { role: 'user', content: 'And of Spain?' });
    const second = await generateText({ model, messages });
    await cache.close();
    expect(first.text).toBe('Echo 1: What is the capital of France?');
    expect(second.text).toBe('Echo 2: And of Spain?');

    const { tree, records } = await loadTree(tape);
    expect(records).toBe(2);
    expect(tree.warnings).toEqual([]);
    expect(lines(tree)).toEqual([
      '#1 user What is the capital of France?',
      '#2 assistant Echo 1: What is the capital of France? ← answer · gpt-4o-mini',
      '#3 user And of Spain?',
      '#4 assistant Echo 2: And of Spain? ← answer · gpt-4o-mini',
    ]);
    // One path: the second exchange hangs below the first answer, not beside the question.
    expect(tree.stats()).toMatchObject({ roots: 1, nodes: 4, exchanges: 2, branchPoints: 0, maxLength: 4 });
    const [a, b] = [...tree.exchanges()];
    expect(a!.responseHash).not.toBe(a!.promptHash);
    // The answer is hashed as the AI SDK sends it back: the assistant message of the next prompt.
    expect(a!.responseHash).toBe(refDigest({ role: 'assistant', content: [{ type: 'text', text: 'Echo 1: What is the capital of France?' }] }));
    expect(b!.alternative.prompt.parent).toBe(a!.alternative.node);
    expect(path(b!.alternative.node).map((n) => n.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // The call options the follow-up sent (captured from the tape's own request) walk to the end.
    const follow = { model: 'gpt-4o-mini', prompt: [
      { role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Echo 1: What is the capital of France?' }] },
      { role: 'user', content: [{ type: 'text', text: 'And of Spain?' }] },
    ] };
    expect(tree.find(follow).matched).toBe(3);
    // A conversation that repeats the question instead of the answer leaves the recorded path.
    const repeated = { ...follow, prompt: [follow.prompt[0], follow.prompt[0], follow.prompt[2]] };
    expect(tree.find(repeated).matched).toBe(1);

    // The same through the command line, exit 0 with nothing on stderr.
    expect(existsSync(cli), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
    const r = spawnSync(process.execPath, [cli, 'tree', tape], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/#2 assistant Echo 1: What is the capital of France\?  ← answer/);
    expect(r.stdout).toMatch(/#4 assistant Echo 2: And of Spain\?  ← answer/);
    const json = spawnSync(process.execPath, [cli, 'tree', '--json', tape], { encoding: 'utf8' });
    const rows = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { promptHash: string; responseHash: string; responsePathHash: string; parentHash: string | null });
    expect(rows.every((x) => x.responseHash !== x.promptHash)).toBe(true);
    expect(rows[1]!.parentHash).toBe(rows[0]!.responsePathHash);
  });

  // replayCacheMiddleware stores a streamed call as its parts ({ stream: [...] }): the tree read
  // none of it (a warning, no answer), and a conversation streamed then continued branched.
  it('streamed turns stored by replayCacheMiddleware: the answer their parts make, one path', async () => {
    upstream = await startUpstream();
    const tape = join(dir, 'streamed.tape');
    const provider = createOpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    const model = wrapLanguageModel({ model: provider.chat('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });
    const messages: ModelMessage[] = [{ role: 'user', content: 'What is the capital of France?' }];
    const first = streamText({ model, messages });
    const firstText = await first.text;
    messages.push(...(await first.response).messages, { role: 'user', content: 'And of Spain?' });
    const second = await generateText({ model, messages });
    await cache.close();
    expect(firstText).toMatch(/^Echo \d+: What is the capital of France\? ?$/);

    const { tree } = await loadTree(tape);
    expect(tree.warnings).toEqual([]);
    expect(lines(tree)).toEqual([
      '#1 user What is the capital of France?',
      `#2 assistant ${firstText.trim()} ← answer · gpt-4o-mini`,
      '#3 user And of Spain?',
      `#4 assistant ${second.text} ← answer · gpt-4o-mini`,
    ]);
    expect(tree.stats()).toMatchObject({ roots: 1, exchanges: 2, branchPoints: 0, maxLength: 4 });
  });

  it("a tool loop: the tool call (input parsed, ids renumbered) and the tool's result, then the text, one path", async () => {
    // A chat model that calls get_weather when the last message is the user's, and answers in
    // text once the tool's result is in.
    let n = 0;
    const server = createServer(async (req, res) => {
      let raw = '';
      for await (const c of req) raw += c;
      const body = JSON.parse(raw) as { messages: { role: string; content: unknown }[] };
      const last = body.messages.at(-1)!;
      n++;
      const message = last.role === 'tool'
        ? { role: 'assistant', content: `It is ${String(last.content)} in Paris.` }
        : { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message, finish_reason: last.role === 'tool' ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    });
    const fake = await listenLoopback(server);
    try {
      const tape = join(dir, 'tools.tape');
      const provider = createOpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
      const cache = await ReplayCache.open(tape, { mode: 'record' });
      const weather = tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => (city === 'Paris' ? '21C' : '?') });
      const r = await generateText({ model: wrapLanguageModel({ model: provider.chat('gpt-4o-mini'), middleware: cached(cache) }), system: 'You are a weather bot.', prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
      await cache.close();
      expect(r.text).toBe('It is 21C in Paris.');
      expect(n).toBe(2);

      const { tree } = await loadTree(tape);
      expect(tree.warnings).toEqual([]);
      expect(lines(tree)).toEqual([
        '#1 system You are a weather bot.',
        '#2 user Weather in Paris?',
        '#3 assistant get_weather({"city":"Paris"}) ← answer · gpt-4o-mini',
        '#4 tool → 21C',
        '#5 assistant It is 21C in Paris. ← answer · gpt-4o-mini',
      ]);
      expect(tree.stats()).toMatchObject({ roots: 1, nodes: 5, exchanges: 2, branchPoints: 0 });
      const [a, b] = [...tree.exchanges()];
      expect(b!.alternative.prompt.parent).toBe(a!.alternative.node);
    } finally {
      await fake.close();
    }
  });

  it('text parts with provider metadata (the Responses model): sent back as providerOptions, walked through', async () => {
    upstream = await startUpstream();
    const tape = join(dir, 'responses.tape');
    const provider = createOpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-not-a-real-key' });
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    const model = wrapLanguageModel({ model: provider.responses('gpt-4o-mini'), middleware: cached(cache) });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Hello?' }];
    const first = await generateText({ model, messages });
    messages.push(...first.response.messages, { role: 'user', content: 'Again?' });
    await generateText({ model, messages });
    await cache.close();
    const { tree } = await loadTree(tape);
    expect(tree.warnings).toEqual([]);
    expect(lines(tree)).toEqual([
      '#1 user Hello?',
      '#2 assistant Echo 1: Hello? ← answer · gpt-4o-mini',
      '#3 user Again?',
      '#4 assistant Echo 2: Again? ← answer · gpt-4o-mini',
    ]);
    expect(tree.stats()).toMatchObject({ roots: 1, nodes: 4, branchPoints: 0 });
  });
});

describe('doGenerate() results without the AI SDK, and values the tree does not read', () => {
  const ask = (text: string) => ({ model: 'gpt-4o-mini', prompt: [{ role: 'user', content: [{ type: 'text', text }] }] });

  it('the tester\'s repro: the answer is the assistant\'s "Paris.", not a copy of the question', () => {
    const tree = ConversationTree.fromRecords([
      { request: ask('What is the capital of France?'), value: { content: [{ type: 'text', text: 'Paris.' }], finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 2 }, warnings: [] } },
    ]);
    expect(lines(tree)).toEqual(['#1 user What is the capital of France?', '#2 assistant Paris. ← answer · gpt-4o-mini']);
    const follow = { model: 'gpt-4o-mini', prompt: [...ask('What is the capital of France?').prompt, { role: 'assistant', content: [{ type: 'text', text: 'Paris.' }] }, ...ask('And of Spain?').prompt] };
    expect(tree.find(follow).matched).toBe(2);
  });

  it('reasoning, files, provider-run tool results; sources left out as the AI SDK leaves them out', () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const value = {
      content: [
        { type: 'reasoning', text: 'The user wants a capital.' },
        { type: 'text', text: 'Paris.' },
        { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
        { type: 'file', mediaType: 'image/png', data: new Uint8Array(png) },
        { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{"q":"capital"}', providerExecuted: true },
        { type: 'tool-result', toolCallId: 'ws_1', toolName: 'web_search', result: { hits: 1 } },
      ],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
    };
    const tree = ConversationTree.fromRecords([{ request: ask('Capital?'), value }]);
    expect(tree.warnings).toEqual([]);
    expect(lines(tree, 200)[1]).toMatch(/^#2 assistant \[reasoning\] Paris\. \[file sha256:[0-9a-f]{12} image\/png\] web_search\(\{"q":"capital"\}\) → \{"hits":1\} ← answer/);
    // The follow-up carries the file as base64 and the tool call's input parsed, as the AI SDK sends them.
    const back = { role: 'assistant', content: [
      { type: 'reasoning', text: 'The user wants a capital.' },
      { type: 'text', text: 'Paris.' },
      { type: 'file', data: png.toString('base64'), mediaType: 'image/png' },
      { type: 'tool-call', toolCallId: 'ws_7', toolName: 'web_search', input: { q: 'capital' }, providerExecuted: true },
      { type: 'tool-result', toolCallId: 'ws_7', toolName: 'web_search', output: { type: 'json', value: { hits: 1 } } },
    ] };
    expect(tree.find({ ...ask('Capital?'), prompt: [...ask('Capital?').prompt, back] }).matched).toBe(2);
  });

  it('values of no shape it reads are listed in tree.warnings and tapedeck tree exits 1, not shown as answers', async () => {
    const values: unknown[] = [
      { content: [{ type: 'hologram', bytes: 3 }], finishReason: 'stop', usage: {} },
      { text: 'Paris', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } },
      { answer: 42 },
      { content: 42 },
      { content: [{ no: 'type' }] },
      { tool_calls: 'x' },
      42,
      ['Paris'],
      new Date(0),
      new Map([['a', 1]]),
    ];
    const tree = ConversationTree.fromRecords(values.map((value, i) => ({ request: ask(`q${i}`), value })));
    expect(tree.warnings.map((w) => [w.index, w.code])).toEqual(values.map((_, i) => [i, 'E_TREE']));
    expect(tree.warnings[0]!.message).toMatch(/AI SDK doGenerate\(\) result with a part of type "hologram"/);
    expect(tree.warnings[8]!.message).toMatch(/\(a Date\)/);
    expect(tree.stats().exchanges).toBe(0);
    // A string is the answer's text and a message object is itself, as before.
    const ok = ConversationTree.fromRecords([{ request: ask('a'), value: 'A.' }, { request: ask('b'), value: { role: 'assistant', content: 'B.' } }]);
    expect(ok.warnings).toEqual([]);
    expect(lines(ok)).toEqual(['├─ #1 user a', '│ #2 assistant A. ← answer · gpt-4o-mini', '└─ #1 user b', '#2 assistant B. ← answer · gpt-4o-mini']);

    const tape = join(dir, 'odd.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    await cache.put(ask('Capital?'), { answer: 'Paris' });
    await cache.put(ask('Weather?'), 'Sunny.');
    await cache.close();
    expect(existsSync(cli), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
    const r = spawnSync(process.execPath, [cli, 'tree', tape], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^record \d+ at byte \d+ not placed: E_TREE: The recorded value \(an object with "answer"\) is not an answer the tree reads/);
    expect(r.stdout).not.toContain('Capital?');
    expect(r.stdout).toContain('#2 assistant Sunny.');
  });
});
