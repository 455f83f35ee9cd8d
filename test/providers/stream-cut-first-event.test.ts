// An event stream that ends before its first complete event (an empty 200 stream, a body cut
// inside the first event, a gzip body cut in half) is no whole answer: the route says which end
// it was due (chat completions `[DONE]` or a finish reason, the Responses API's
// `response.completed`, Anthropic's `message_stop`). Recorded, it replayed as a silent empty
// answer on every run; now it is not recorded (a warning, and a miss in replay), through
// createFetch and the proxy, for the OpenAI and Anthropic SDKs. Every other module's verdict is
// held to the same here (Gemini, Ollama, Bedrock).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerVerdict } from '../../src/providers/answer-verdict.ts';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFake, type FakeServer } from '../proxy/loopback.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-first-event-'));
const SSE = 'text/event-stream; charset=utf-8';
const bytes = (s: string) => new TextEncoder().encode(s);
const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const named = (v: { type: string }) => `event: ${v.type}\n${data(v)}`;

const chunk = (delta: unknown, finish: string | null = null) => data({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] });
const CHAT_STREAM = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hello there' }) + chunk({}, 'stop') + 'data: [DONE]\n\n';

const response = (status: string, text: string) => ({
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  status,
  model: 'gpt-4o-mini',
  output: text === '' ? [] : [{ id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
  usage: status === 'completed' ? { input_tokens: 3, output_tokens: 2, total_tokens: 5 } : null,
});
const RESPONSES_STREAM =
  named({ type: 'response.created', sequence_number: 0, response: response('in_progress', '') } as { type: string }) +
  named({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello there' } as { type: string }) +
  named({ type: 'response.completed', sequence_number: 2, response: response('completed', 'Hello there') } as { type: string });

const ANTHROPIC_STREAM = [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello there' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
  { type: 'message_stop' },
]
  .map(named)
  .join('');

const CHAT = { method: 'POST', url: '/v1/chat/completions' };
const RESPONSES = { method: 'POST', url: '/v1/responses' };
const MESSAGES = { method: 'POST', url: '/v1/messages' };

describe('the verdict on a stream with no complete event', () => {
  const heads = (whole: string) => [0, 30, 100].map((n) => whole.slice(0, n));

  it('is cut on the routes that say an end is due: chat completions, legacy completions, Responses, Messages (Azure alike)', () => {
    for (const [req, whole] of [
      [CHAT, CHAT_STREAM],
      [{ method: 'POST', url: '/v1/completions' }, CHAT_STREAM],
      [RESPONSES, RESPONSES_STREAM],
      [MESSAGES, ANTHROPIC_STREAM],
      [{ method: 'POST', url: '/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21' }, CHAT_STREAM],
      [{ method: 'POST', url: '/openai/v1/responses' }, RESPONSES_STREAM],
    ] as const) {
      for (const head of heads(whole)) expect(answerVerdict(req, undefined, SSE, bytes(head)), `${req.url} ${JSON.stringify(head)}`).toEqual({ whole: false, cut: true });
      expect(answerVerdict(req, undefined, SSE, bytes(whole)), req.url).toEqual({ whole: true });
    }
    // Anthropic's keep-alive alone is no event of the answer either.
    expect(answerVerdict(MESSAGES, undefined, SSE, bytes('event: ping\ndata: {"type": "ping"}\n\n'))).toEqual({ whole: false, cut: true });
  });

  it('Gemini, Ollama and Bedrock streams with no complete event are cut too', () => {
    const GEMINI = { method: 'POST', url: '/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse' };
    const gemini = `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there' }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'gemini-2.0-flash' })}\r\n\r\n`;
    const OLLAMA = { method: 'POST', url: '/api/chat' };
    const ollama = `${JSON.stringify({ model: 'l', message: { role: 'assistant', content: 'Hello there' }, done: false })}\n${JSON.stringify({ model: 'l', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop' })}\n`;
    for (const head of heads(gemini)) expect(answerVerdict(GEMINI, undefined, SSE, bytes(head)).whole, JSON.stringify(head)).toBe(false);
    expect(answerVerdict(GEMINI, undefined, SSE, bytes(gemini)).whole).toBe(true);
    for (const head of heads(ollama)) expect(answerVerdict(OLLAMA, undefined, 'application/x-ndjson', bytes(head)).whole, JSON.stringify(head)).toBe(false);
    expect(answerVerdict(OLLAMA, undefined, 'application/x-ndjson', bytes(ollama)).whole).toBe(true);
    const CONVERSE = { method: 'POST', url: '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream' };
    const frame = (type: string, body: unknown) =>
      encodeEventStreamMessage({
        headers: [
          { name: ':event-type', type: 'string', value: type },
          { name: ':content-type', type: 'string', value: 'application/json' },
          { name: ':message-type', type: 'string', value: 'event' },
        ],
        body: bytes(JSON.stringify(body)),
      });
    const first = frame('messageStart', { role: 'assistant' });
    for (const head of [new Uint8Array(0), first.subarray(0, 30)]) expect(answerVerdict(CONVERSE, undefined, 'application/vnd.amazon.eventstream', head).whole).toBe(false);
    const INVOKE = { method: 'POST', url: '/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke-with-response-stream' };
    const chunk = frame('chunk', { bytes: Buffer.from(JSON.stringify({ type: 'message_start', message: { role: 'assistant' } })).toString('base64') });
    for (const head of [new Uint8Array(0), chunk.subarray(0, 30)]) expect(answerVerdict(INVOKE, undefined, 'application/vnd.amazon.eventstream', head).whole).toBe(false);
  });

  it('without a route (a path no module knows), a stream of no known shape is still taken as it ended', () => {
    expect(answerVerdict({ method: 'POST', url: '/v1/threads/runs' }, undefined, SSE, bytes('event: thread.run.created\ndata: {"id":"run_1"}\n\n'))).toEqual({ whole: true });
  });
});

/** The stream the fake sends: whole, or its first `n` bytes, or gzip cut in half, by the prompt's tag. */
function answer(whole: string, prompt: string): { body: Buffer; gzip: boolean } {
  const head = /\[head:(\d+)\]/.exec(prompt);
  if (head) return { body: Buffer.from(whole.slice(0, Number(head[1]))), gzip: false };
  if (prompt.includes('[gzip-half]')) {
    const all = gzipSync(Buffer.from(whole));
    return { body: all.subarray(0, Math.floor(all.length / 2)), gzip: true };
  }
  return { body: Buffer.from(whole), gzip: false };
}

let fake: FakeServer;
beforeAll(async () => {
  fake = await startFake((req, res, body) => {
    const path = req.url ?? '';
    const whole = path.endsWith('/v1/messages') ? ANTHROPIC_STREAM : path.endsWith('/responses') ? RESPONSES_STREAM : CHAT_STREAM;
    const a = answer(whole, body);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', ...(a.gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(a.body);
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const CUTS = ['[head:0]', '[head:30]', '[head:100]', '[gzip-half]'];

/** What each SDK's stream gave for each prompt: its text, or the error it raised. */
async function calls(openai: OpenAI, anthropic: Anthropic): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const run = async (name: string, f: () => Promise<string>) => {
    out[name] = await f().catch((e: unknown) => `ERR ${(e as Error).message}`);
  };
  for (const tag of ['[whole]', ...CUTS]) {
    await run(`chat ${tag}`, async () => {
      let text = '';
      for await (const c of await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: `Hi ${tag}` }] })) text += c.choices[0]?.delta?.content ?? '';
      return text;
    });
    await run(`responses ${tag}`, async () => {
      let text = '';
      for await (const e of await openai.responses.create({ model: 'gpt-4o-mini', stream: true, input: `Hi ${tag}` })) if (e.type === 'response.output_text.delta') text += e.delta;
      return text;
    });
    await run(`messages ${tag}`, async () => {
      let text = '';
      for await (const e of await anthropic.messages.create({ model: 'claude-x', max_tokens: 16, stream: true, messages: [{ role: 'user', content: `Hi ${tag}` }] })) {
        if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
      }
      return text;
    });
  }
  return out;
}

async function recordedPrompts(tape: string): Promise<string[]> {
  const out: string[] = [];
  for (const r of (await readTape(tape)).records) {
    if (!isHttpRecord(r.value)) continue;
    const tag = /\[[a-z0-9:-]+\]/.exec(JSON.stringify(r.value.request.body))?.[0];
    out.push(`${r.value.route} ${tag}`);
  }
  return out.sort();
}

const WHOLE_ONLY = ['POST /v1/chat/completions [whole]', 'POST /v1/messages [whole]', 'POST /v1/responses [whole]'];

function expectReplay(got: Record<string, string>) {
  for (const api of ['chat', 'responses', 'messages']) {
    expect(got[`${api} [whole]`], api).toBe('Hello there');
    for (const tag of CUTS) expect(got[`${api} ${tag}`], `${api} ${tag}`).toMatch(/^ERR .*tapedeck miss/);
  }
}

describe('a stream that ends before its first complete event, recorded', () => {
  it('createFetch records only the whole answers, says so for the cut ones, and replays the cut ones as misses', async () => {
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const rec = createFetch({ tape, mode: 'record', summary: false, onWarning: (m) => warnings.push(String(m)) });
    try {
      const got = await calls(new OpenAI({ apiKey: 'sk-test', baseURL: `${fake.url}/v1`, fetch: rec, maxRetries: 0 }), new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, fetch: rec, maxRetries: 0 }));
      expect(got['chat [whole]']).toBe('Hello there');
    } finally {
      await rec.close();
    }
    expect(await recordedPrompts(tape)).toEqual(WHOLE_ONLY);
    for (const route of ['POST /v1/chat/completions', 'POST /v1/responses', 'POST /v1/messages']) {
      expect(warnings.join('\n'), route).toContain(`${route}: the upstream's event stream ended before the answer was complete; not recorded`);
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expectReplay(await calls(new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch: play, maxRetries: 0 }), new Anthropic({ apiKey: 'sk-ant-test', baseURL: 'http://127.0.0.1:9', fetch: play, maxRetries: 0 })));
    } finally {
      await play.close();
    }
  });

  it('the proxy records only the whole answers and replays the cut ones as misses', async () => {
    const tape = join(dir, 'proxy.tape');
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      await calls(new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 }), new Anthropic({ apiKey: 'sk-ant-test', baseURL: proxy.url, maxRetries: 0 }));
    } finally {
      await proxy.close();
    }
    expect(await recordedPrompts(tape)).toEqual(WHOLE_ONLY);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expectReplay(await calls(new OpenAI({ apiKey: 'sk-test', baseURL: `${play.url}/v1`, maxRetries: 0 }), new Anthropic({ apiKey: 'sk-ant-test', baseURL: play.url, maxRetries: 0 })));
    } finally {
      await play.close();
    }
  });
});
