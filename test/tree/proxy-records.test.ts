// Tapes recorded through createFetch (and the proxy) read as conversation trees: multi-turn
// OpenAI and Anthropic conversations with tool calls, recorded as JSON and as streams through the
// official SDKs against the fake provider, then loaded with loadTree. The follow-up requests the
// SDKs sent must walk through the recorded answers (one unbranched path, a hit at full depth),
// and the streamed tape must give the same tree as the JSON one. Then assembleStream on its own:
// the fake provider's streams against its non-streaming answers and against the SDKs' own stream
// accumulators, and hand-made stream shapes. Last, `node dist/cli.js tree` on a proxy tape.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationTree, httpRecordExchange, type TreeNode } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { assembleStream, parseSse } from '../../src/providers/sse-assemble.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-proxy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const root = join(import.meta.dirname, '../..');

const openaiTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const anthropicTool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

type OpenAIMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * Three turns: a tool call, the tool's result answered in text, a thank-you. Each request sends
 * the previous answers back the way an application does: the message the SDK returned.
 * Returns the last request, for the hit check.
 */
async function openaiConversation(client: OpenAI, stream: boolean) {
  const ask = async (body: { messages: OpenAIMessage[]; tools?: (typeof openaiTool)[] }) => {
    const req = { model: 'gpt-4o-mini', temperature: 0, ...body };
    const c = stream ? await client.chat.completions.stream(req).finalChatCompletion() : await client.chat.completions.create(req);
    return c.choices[0]!.message;
  };
  const messages: OpenAIMessage[] = [
    { role: 'system', content: 'You are a weather bot.' },
    { role: 'user', content: 'Weather in Paris?' },
  ];
  const first = await ask({ messages: [...messages], tools: [openaiTool] });
  expect(first.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
  messages.push(first as OpenAIMessage, { role: 'tool', tool_call_id: first.tool_calls![0]!.id, content: '18C and sunny' });
  const second = await ask({ messages: [...messages] });
  messages.push(second as OpenAIMessage, { role: 'user', content: 'Thanks!' });
  const third = await ask({ messages: [...messages] });
  expect(third.content?.trim()).toBe('Echo 3: Thanks!');
  // A streamed call is keyed apart from a plain one: the follow-up streams too.
  return { model: 'gpt-4o-mini', temperature: 0, ...(stream ? { stream: true } : {}), messages: [...messages] };
}

async function anthropicConversation(client: Anthropic, stream: boolean) {
  const ask = async (body: { messages: Anthropic.MessageParam[]; tools?: (typeof anthropicTool)[] }) => {
    const req = { model: 'claude-sonnet-4-5', max_tokens: 100, system: 'You are a weather bot.', ...body };
    return stream ? await client.messages.stream(req).finalMessage() : await client.messages.create(req);
  };
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await ask({ messages: [...messages], tools: [anthropicTool] });
  expect(first.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
  const toolUse = first.content[0] as Anthropic.ToolUseBlock;
  messages.push(
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18C and sunny' }, { type: 'text', text: 'And tomorrow?' }] },
  );
  const second = await ask({ messages: [...messages] });
  messages.push({ role: 'assistant', content: second.content }, { role: 'user', content: 'Thanks!' });
  const third = await ask({ messages: [...messages] });
  expect((third.content[0] as Anthropic.TextBlock).text.trim()).toBe('Echo 3: Thanks!');
  return { model: 'claude-sonnet-4-5', max_tokens: 100, system: 'You are a weather bot.', ...(stream ? { stream: true } : {}), messages: [...messages] };
}

const OPENAI_KEY = 'sk-proj-' + 'Tr3eTe5tKeyAb3dEf6hIj9kLm2nOp5qRs8tUv1wX';
const ANTHROPIC_KEY = 'sk-ant-api03-' + 'Tr3eTe5tKeyZy9xWv8uTs7rQp6oNm5lKj4iHg3fE';

/** Records one provider's conversation, plus calls that are not conversations, on a fresh tape. */
async function recordTape(name: string, provider: 'openai' | 'anthropic', stream: boolean) {
  const tape = join(dir, `${name}.tape`);
  const upstream = await startUpstream({ gapMs: 0 });
  // recordErrors: the 500 below goes on the tape too, for the tree to skip.
  const rec = createFetch({ tape, mode: 'record', recordErrors: true });
  try {
    let last;
    if (provider === 'openai') {
      last = await openaiConversation(new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: OPENAI_KEY, maxRetries: 0, fetch: rec }), stream);
    } else {
      last = await anthropicConversation(new Anthropic({ baseURL: upstream.url, apiKey: ANTHROPIC_KEY, maxRetries: 0, fetch: rec }), stream);
    }
    // Not conversations: an error answer to an LLM body (match llm, status 500), another JSON
    // body (match json), a GET (match http). The tree skips them without a warning.
    // (Bodies are read: createFetch writes a record once its body has been consumed.)
    const status = async (r: Promise<Response>) => {
      const res = await r;
      await res.arrayBuffer();
      return res.status;
    };
    const llmBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fail please' }] });
    expect(await status(rec(`${upstream.url}/v1/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: llmBody }))).toBe(500);
    expect(await status(rec(`${upstream.url}/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"anything":[1,2]}' }))).toBe(200);
    expect(await status(rec(`${upstream.url}/v1/models`))).toBe(200);
    return { tape, last };
  } finally {
    await rec.close();
    await upstream.close();
  }
}

/** The tree's shape: per node, depth, role, how it got there, children and answers. */
function shape(tree: ConversationTree) {
  return [...tree.nodes()].map((n) => ({ depth: n.depth, role: n.role, origin: n.origin, children: n.children.length, answers: n.alternatives.length, kind: kindOf(n) }));
}

/** What a message is, ignoring the streamed text's trailing space: text, or tool calls / results. */
function kindOf(n: TreeNode): string {
  const text = JSON.stringify(n.message);
  const tools = [...text.matchAll(/"name":"(\w+)"/g)].map((m) => m[1]).join(',');
  return `${tools}|${/tool_result|"tool"/.test(text) ? 'result' : ''}`;
}

function checkConversation(tree: ConversationTree, turns: number, requestMessages: number, last: Record<string, unknown>) {
  expect(tree.warnings).toEqual([]);
  const s = tree.stats();
  // One conversation, never branching: every follow-up walked through the recorded answer.
  expect(s.roots).toBe(1);
  expect(s.branchPoints).toBe(0);
  expect(s.exchanges).toBe(turns);
  expect(s.maxLength).toBe(requestMessages + 1);
  expect(s.nodes).toBe(requestMessages + 1);
  // The last request, looked up as the SDK sent it: the whole conversation is known and the
  // recorded answer is served.
  const r = tree.findOrCreate(last);
  expect(r.hit).toBe(true);
  expect(r.matched).toBe(requestMessages);
  expect(r.divergence).toBeNull();
  expect(r.created).toBe(0);
  // And a follow-up after that answer walks through it too.
  const lastAnswer = r.alternative!.node;
  expect(lastAnswer.depth).toBe(requestMessages);
  expect(lastAnswer.origin).toBe('response');
  return r;
}

describe('loadTree on createFetch tapes', () => {
  const trees: Record<string, ConversationTree> = {};

  for (const stream of [false, true]) {
    const form = stream ? 'streamed' : 'JSON';
    it(`OpenAI chat with a tool call, ${form}: one conversation, the last request a hit at full depth`, async () => {
      const { tape, last } = await recordTape(`openai-${form}`, 'openai', stream);
      const { tree, records, tapeWarnings } = await loadTree(tape);
      expect(tapeWarnings).toEqual([]);
      expect(records).toBe(6);
      // system, user, assistant tool call, tool result, assistant text, user: 6 request messages.
      const r = checkConversation(tree, 3, 6, last);
      expect(r.alternative!.model).toBe('gpt-4o-mini');
      const roles = [...tree.nodes()].map((n) => n.role);
      expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
      // The streamed answer is served as recorded (the assembled body), JSON-shaped.
      expect((r.alternative!.value as { choices: { message: { content: string } }[] }).choices[0]!.message.content.trim()).toBe('Echo 3: Thanks!');
      trees[`openai-${form}`] = tree;
    });

    it(`Anthropic Messages with a tool call, ${form}: one conversation, the last request a hit at full depth`, async () => {
      const { tape, last } = await recordTape(`anthropic-${form}`, 'anthropic', stream);
      const { tree } = await loadTree(tape);
      // system, user, assistant tool_use, user tool_result + text, assistant text, user: the
      // tool result is its own `tool` message, as in OpenAI chat, so 7 request messages.
      const r = checkConversation(tree, 3, 7, last);
      expect(r.alternative!.model).toBe('claude-sonnet-4-5');
      expect([...tree.nodes()].map((n) => n.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user', 'assistant', 'user', 'assistant']);
      expect((r.alternative!.value as { content: { text: string }[] }).content[0]!.text.trim()).toBe('Echo 3: Thanks!');
      trees[`anthropic-${form}`] = tree;
    });
  }

  it('the streamed tape gives the same tree as the JSON tape', () => {
    for (const p of ['openai', 'anthropic']) {
      const json = trees[`${p}-JSON`];
      const streamed = trees[`${p}-streamed`];
      expect(json && streamed, `${p} trees recorded`).toBeTruthy();
      expect(shape(streamed!)).toEqual(shape(json!));
      // Tool calls and their arguments hash alike: the first three messages are the same nodes.
      const path = (t: ConversationTree) => [...t.nodes()].slice(0, 4).map((n) => n.pathHash);
      expect(path(streamed!)).toEqual(path(json!));
    }
    expect(shape(trees['openai-JSON']!).map((n) => n.kind)).toEqual(['|', '|', 'get_weather|', '|result', '|', '|', '|']);
  });

  it('a tape recorded through the proxy reads the same as one recorded through createFetch', async () => {
    const tape = join(dir, 'via-proxy.tape');
    const upstream = await startUpstream({ gapMs: 0 });
    const proxy = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
    let last;
    try {
      last = await openaiConversation(new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: OPENAI_KEY, maxRetries: 0 }), true);
    } finally {
      await proxy.close();
      await upstream.close();
    }
    const { tree } = await loadTree(tape);
    checkConversation(tree, 3, 6, last);
    expect(shape(tree)).toEqual(shape(trees['openai-streamed']!));
    expect([...tree.nodes()].map((n) => n.pathHash)).toEqual([...trees['openai-streamed']!.nodes()].map((n) => n.pathHash));
  });
});

// ---------------------------------------------------------------------------------------------

function httpRecord(over: { match?: HttpRecord['match']; status?: number; contentType?: string; body: string; request?: unknown }): HttpRecord {
  return {
    v: 1,
    kind: 'http',
    match: over.match ?? 'llm',
    route: 'POST /v1/chat/completions',
    key: 'a'.repeat(64),
    trace: 't',
    request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: over.request ?? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } },
    response: { status: over.status ?? 200, headers: over.contentType === undefined ? {} : { 'content-type': over.contentType }, body: new TextEncoder().encode(over.body) },
    recordedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
  };
}

describe('fromRecords with proxy records', () => {
  const ok = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hello' } }] });

  it('skips error answers and non-llm records silently; reads JSON with or without a content type', () => {
    const tree = ConversationTree.fromRecords([
      httpRecord({ status: 500, contentType: 'application/json', body: '{"error":{"message":"x"}}' }),
      httpRecord({ status: 429, contentType: 'application/json', body: '{}' }),
      httpRecord({ match: 'json', contentType: 'application/json', body: ok }),
      httpRecord({ match: 'http', contentType: 'application/json', body: ok }),
      httpRecord({ contentType: 'application/json; charset=utf-8', body: ok }),
      httpRecord({ body: ok }),
    ]);
    expect(tree.warnings).toEqual([]);
    expect(tree.stats().exchanges).toBe(1);
    expect(tree.roots[0]!.alternatives[0]!.recordings).toBe(2);
    expect(tree.roots[0]!.alternatives[0]!.key).toBe('a'.repeat(64));
    expect(tree.roots[0]!.alternatives[0]!.meta).toEqual({ record: 4 });
  });

  it('lists 2xx answers it cannot read as warnings, with their index and offset', () => {
    const tree = ConversationTree.fromRecords([
      { offset: 16, value: httpRecord({ contentType: 'text/plain', body: 'not json' }) },
      { offset: 99, value: httpRecord({ contentType: 'text/event-stream', body: 'data: {"hello":1}\n\n' }) },
    ]);
    expect(tree.warnings.map((w) => [w.index, w.offset, w.code])).toEqual([
      [0, 16, 'E_TREE'],
      [1, 99, 'E_TREE'],
    ]);
    expect(tree.size).toBe(0);
  });

  it('httpRecordExchange gives the request body and the assembled answer', () => {
    const x = httpRecordExchange(httpRecord({ contentType: 'text/event-stream', body: 'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"he"}}]}\n\ndata: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"llo"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' }));
    expect(x).toEqual({
      request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      value: { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hello', refusal: null }, finish_reason: 'stop', logprobs: null }] },
      key: 'a'.repeat(64),
      recordedAt: '2026-01-01T00:00:00.000Z',
      endpoint: { method: 'POST', url: '/v1/chat/completions' },
    });
    expect(httpRecordExchange(httpRecord({ status: 404, body: ok }))).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------

/** One call straight to a fresh fake provider (so the call counter, and with it the ids, agree). */
async function call(path: string, body: Record<string, unknown>): Promise<{ contentType: string; bytes: Uint8Array }> {
  const upstream = await startUpstream({ gapMs: 0 });
  try {
    const res = await fetch(`${upstream.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { contentType: res.headers.get('content-type') ?? '', bytes: new Uint8Array(await res.arrayBuffer()) };
  } finally {
    await upstream.close();
  }
}

/**
 * What a stream and the JSON answer legitimately differ in: token counts (the fake counts
 * differently) and the space after each streamed word.
 */
function comparable(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (k, x) => (k === 'usage' ? undefined : typeof x === 'string' ? x.trimEnd() : x)));
}

/** An SDK client whose fetch answers every request with these bytes. */
function canned(bytes: Uint8Array, contentType: string): typeof fetch {
  return (async () => new Response(bytes.slice(), { status: 200, headers: { 'content-type': contentType } })) as typeof fetch;
}

describe('assembleStream against the fake provider (differential)', () => {
  for (const tools of [false, true]) {
    const what = tools ? 'a tool call' : 'text';

    it(`OpenAI chat completions, ${what}: the JSON answer, and what the OpenAI SDK accumulates`, async () => {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }], ...(tools ? { tools: [openaiTool] } : {}) };
      const json = await call('/v1/chat/completions', body);
      const sse = await call('/v1/chat/completions', { ...body, stream: true });
      expect(sse.contentType).toMatch(/^text\/event-stream/);
      const assembled = assembleStream(sse.contentType, sse.bytes);
      expect(comparable(assembled)).toEqual(comparable(JSON.parse(new TextDecoder().decode(json.bytes))));
      // The SDK's own accumulator over the same bytes agrees exactly (text spaces included).
      const sdk = await new OpenAI({ apiKey: 'x', baseURL: 'http://sdk.invalid/v1', fetch: canned(sse.bytes, sse.contentType) }).chat.completions.stream(body as never).finalChatCompletion();
      const m = sdk.choices[0]!.message;
      expect((assembled as { choices: { message: unknown }[] }).choices[0]!.message).toEqual({ role: m.role, content: m.content, refusal: m.refusal, ...(m.tool_calls ? { tool_calls: m.tool_calls.map(({ id, type, function: f }: never) => ({ id, type, function: { name: (f as { name: string }).name, arguments: (f as { arguments: string }).arguments } })) } : {}) });
      expect((assembled as { id: string }).id).toBe(sdk.id);
    });

    it(`Anthropic Messages, ${what}: the JSON answer, and what the Anthropic SDK accumulates`, async () => {
      const body = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], ...(tools ? { tools: [anthropicTool] } : {}) };
      const json = await call('/v1/messages', body);
      const sse = await call('/v1/messages', { ...body, stream: true });
      const assembled = assembleStream(sse.contentType, sse.bytes);
      expect(comparable(assembled)).toEqual(comparable(JSON.parse(new TextDecoder().decode(json.bytes))));
      const sdk = await new Anthropic({ apiKey: 'x', baseURL: 'http://sdk.invalid', fetch: canned(sse.bytes, sse.contentType) }).messages.stream(body as never).finalMessage();
      const { parsed_output: _sdkOnly, ...final } = JSON.parse(JSON.stringify(sdk)) as Record<string, unknown>;
      expect(assembled).toEqual(final);
    });
  }
});

describe('assembleStream on other shapes', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
  const chunk = (choices: unknown[], extra: object = {}) => data({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices, ...extra });

  it('is undefined for other content types, unknown shapes, error events and empty streams', () => {
    expect(assembleStream('application/json', enc('{"choices":[]}'))).toBeUndefined();
    expect(assembleStream(undefined, enc(chunk([{ index: 0, delta: { content: 'x' } }])))).toBeUndefined();
    expect(assembleStream('text/event-stream', enc(data({ candidates: [{ content: { parts: [{ text: 'gemini' }] } }] })))).toBeUndefined();
    expect(assembleStream('text/event-stream', enc(''))).toBeUndefined();
    expect(assembleStream('text/event-stream', enc('data: [DONE]\n\n'))).toBeUndefined();
    expect(assembleStream('text/event-stream', enc(`${chunk([{ index: 0, delta: { content: 'x' } }])}${data({ error: { message: 'overloaded' } })}`))).toBeUndefined();
    expect(assembleStream('text/event-stream', enc(`event: message_start\n${data({ type: 'message_start', message: { role: 'assistant', content: [] } })}event: error\n${data({ type: 'error', error: { type: 'overloaded_error' } })}`))).toBeUndefined();
    // An Anthropic stream cut before message_stop is not a whole answer.
    expect(assembleStream('text/event-stream', enc(data({ type: 'message_start', message: { role: 'assistant', content: [] } })))).toBeUndefined();
  });

  it('OpenAI: several choices, parallel tool calls interleaved by index, a usage chunk, CRLF and split data lines', () => {
    const events = [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' } }, { index: 1, delta: { role: 'assistant', content: 'B' } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{"y"' } }] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } }] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }, { index: 1, function: { arguments: ':2}' } }] } }]),
      chunk([{ index: 1, delta: { content: 'ye' }, finish_reason: 'stop' }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
      chunk([], { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
      'data: [DONE]\n\n',
    ];
    // The same events with CRLF line ends and the JSON split over two data lines.
    const crlf = events.map((e) => e.replace('"choices"', '\n"choices"').replace(/\n(?=")/, '\ndata: ').replace(/\n/g, '\r\n')).join('');
    for (const text of [events.join(''), crlf]) {
      expect(assembleStream(['text/event-stream; charset=utf-8'], enc(text))).toEqual({
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: [
                { id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
                { id: 'call_b', type: 'function', function: { name: 'b', arguments: '{"y":2}' } },
              ],
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
          { index: 1, message: { role: 'assistant', content: 'Bye', refusal: null }, finish_reason: 'stop', logprobs: null },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      });
    }
    expect(parseSse('data: a\r\ndata: b\r\n\r\n: comment\n\nevent: x\ndata\n\n')).toEqual([
      { event: 'message', data: 'a\nb' },
      { event: 'x', data: '' },
    ]);
  });

  it('OpenAI Responses: the response of response.completed', () => {
    const response = { id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-4.1', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] }] };
    const text = [
      `event: response.created\n${data({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', output: [] } })}`,
      `event: response.output_text.delta\n${data({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi there' })}`,
      `event: response.completed\n${data({ type: 'response.completed', sequence_number: 2, response })}`,
    ].join('');
    const body = assembleStream('text/event-stream', enc(text));
    expect(body).toEqual(response);
    // And the tree reads it as the Responses conversation it is.
    const tree = ConversationTree.fromRecords([httpRecord({ contentType: 'text/event-stream', body: text, request: { model: 'gpt-4.1', input: 'Hello' } })]);
    expect(tree.warnings).toEqual([]);
    expect([...tree.nodes()].map((n) => n.role)).toEqual(['user', 'assistant']);
    expect(assembleStream('text/event-stream', enc(text.replace(/response\.completed/g, 'response.failed')))).toBeUndefined();
  });

  it('Anthropic: thinking with its signature, text, and a tool call with empty input', () => {
    const ev = (type: string, v: object) => `event: ${type}\n${data({ type, ...v })}`;
    const text = [
      ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Checking.' } }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} } }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }),
      ev('message_stop', {}),
    ].join('');
    expect(assembleStream('text/event-stream', text)).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 20 },
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('tapedeck tree on a createFetch tape', () => {
  const cli = join(root, 'dist/cli.js');

  it('prints the conversation (node dist/cli.js, after npm run build)', async () => {
    expect(existsSync(cli), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
    const { tape } = await recordTape('cli', 'anthropic', true);
    const r = spawnSync(process.execPath, [cli, 'tree', tape], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(tape);
    expect(lines[1]).toMatch(/^1 conversation root · 8 messages · 3 recorded answers/);
    const body = lines.slice(2).join('\n');
    for (const x of ['system', 'You are a weather bot.', 'Weather in Paris?', 'get_weather({"city":"Paris"})', 'Echo 2: And tomorrow?', 'Thanks!', 'Echo 3: Thanks!', 'claude-sonnet-4-5']) {
      expect(body).toContain(x);
    }
    const json = spawnSync(process.execPath, [cli, 'tree', tape, '--json'], { encoding: 'utf8' });
    expect(json.status).toBe(0);
    const exchanges = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { depth: number; model: string });
    expect(exchanges.map((x) => x.depth)).toEqual([1, 4, 6]); // the tool result is its own message
  });
});
