// Drift of the other providers' answers: Gemini (plain and its SSE stream), Ollama (plain and its
// NDJSON stream) and Bedrock Converse (plain and its binary event stream), recorded through
// createFetch from an upstream that answers in each wire format, once as a base and once changed
// in one way. Each change must get its own class, not "structure" or "text" of the raw frames.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { driftReport } from '../../src/drift/report.ts';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';

type Variant = 'base' | 'noise' | 'text' | 'tool' | 'finish';
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-providers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const enc = new TextEncoder();
const json = (v: unknown) => new Response(JSON.stringify(v), { headers: { 'content-type': 'application/json' } });

function parts(v: Variant): { text: string; args: Record<string, unknown>; finish: 'stop' | 'length'; id: string } {
  return {
    text: v === 'text' ? 'Paris is the capital of France.' : 'The capital of France is Paris.',
    args: { city: v === 'tool' ? 'Lyon' : 'Paris' },
    finish: v === 'finish' ? 'length' : 'stop',
    id: v === 'noise' ? 'id-2' : 'id-1',
  };
}

function gemini(v: Variant): object {
  const p = parts(v);
  return {
    candidates: [{ content: { role: 'model', parts: [{ text: p.text }, { functionCall: { name: 'get_weather', args: p.args } }] }, finishReason: p.finish === 'length' ? 'MAX_TOKENS' : 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: v === 'noise' ? 9 : 8, totalTokenCount: 18 },
    modelVersion: 'gemini-2.5-flash',
    responseId: p.id,
  };
}

function ollama(v: Variant, streamed: boolean): Response {
  const p = parts(v);
  const created_at = v === 'noise' ? '2026-11-26T00:00:01Z' : '2026-11-26T00:00:00Z';
  const last = { model: 'llama3.2', created_at, message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: p.args } }] }, done: true, done_reason: p.finish, total_duration: v === 'noise' ? 999 : 123, eval_count: 8, prompt_eval_count: 10 };
  if (!streamed) return json({ ...last, message: { ...last.message, content: p.text } });
  const words = p.text.split(/(?<= )/);
  const lines = [...words.map((w) => ({ model: 'llama3.2', created_at, message: { role: 'assistant', content: w }, done: false })), last];
  return new Response(lines.map((l) => JSON.stringify(l) + '\n').join(''), { headers: { 'content-type': 'application/x-ndjson' } });
}

function converse(v: Variant): object {
  const p = parts(v);
  return {
    output: { message: { role: 'assistant', content: [{ text: p.text }, { toolUse: { toolUseId: p.id, name: 'get_weather', input: p.args } }] } },
    stopReason: p.finish === 'length' ? 'max_tokens' : 'tool_use',
    usage: { inputTokens: 10, outputTokens: 8, totalTokens: 18 },
    metrics: { latencyMs: v === 'noise' ? 400 : 300 },
  };
}

function frame(type: string, payload: object): Uint8Array {
  return encodeEventStreamMessage({
    headers: [
      { name: ':event-type', type: 'string', value: type },
      { name: ':content-type', type: 'string', value: 'application/json' },
      { name: ':message-type', type: 'string', value: 'event' },
    ],
    body: enc.encode(JSON.stringify(payload)),
  });
}

function converseStream(v: Variant): Response {
  const p = parts(v);
  const frames = [
    frame('messageStart', { role: 'assistant' }),
    ...p.text.split(/(?<= )/).map((w) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: w } })),
    frame('contentBlockStop', { contentBlockIndex: 0 }),
    frame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: p.id, name: 'get_weather' } } }),
    frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: JSON.stringify(p.args) } } }),
    frame('contentBlockStop', { contentBlockIndex: 1 }),
    frame('messageStop', { stopReason: p.finish === 'length' ? 'max_tokens' : 'tool_use' }),
    frame('metadata', { usage: { inputTokens: 10, outputTokens: 8, totalTokens: 18 }, metrics: { latencyMs: v === 'noise' ? 400 : 300 } }),
  ];
  return new Response(Buffer.concat(frames), { headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
}

function upstream(v: Variant): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const body = JSON.parse((await req.text()) || '{}') as { stream?: boolean };
    if (url.pathname.endsWith(':generateContent')) return json(gemini(v));
    if (url.pathname.endsWith(':streamGenerateContent')) {
      // Gemini's SSE stream: the text in pieces, the final chunk with the call and finishReason.
      const g = gemini(v) as { candidates: [{ content: { parts: object[] }; finishReason: string }] };
      const [text, call] = g.candidates[0].content.parts as [{ text: string }, object];
      const pieces = text.text.split(/(?<= )/).map((t) => ({ candidates: [{ content: { role: 'model', parts: [{ text: t }] }, index: 0 }] }));
      const last = { ...g, candidates: [{ ...g.candidates[0], content: { role: 'model', parts: [call] } }] };
      return new Response([...pieces, last].map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(''), { headers: { 'content-type': 'text/event-stream' } });
    }
    if (url.pathname === '/api/chat') return ollama(v, body.stream !== false);
    if (url.pathname.endsWith('/converse')) return json(converse(v));
    if (url.pathname.endsWith('/converse-stream')) return converseStream(v);
    return new Response('{}', { status: 404, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

const CALLS = [
  { name: 'gemini', shape: 'gemini', streamed: false, url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent', body: { contents: [{ role: 'user', parts: [{ text: 'Capital of France, and its weather?' }] }] } },
  { name: 'gemini streamed', shape: 'gemini', streamed: true, url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body: { contents: [{ role: 'user', parts: [{ text: 'Capital of France, and its weather?' }] }] } },
  { name: 'ollama', shape: 'ollama', streamed: false, url: 'http://127.0.0.1:11434/api/chat', body: { model: 'llama3.2', stream: false, messages: [{ role: 'user', content: 'Capital of France, and its weather?' }] } },
  { name: 'ollama streamed', shape: 'ollama', streamed: true, url: 'http://127.0.0.1:11434/api/chat', body: { model: 'llama3.2', messages: [{ role: 'user', content: 'Capital of France, and its weather?' }] } },
  { name: 'converse', shape: 'bedrock-converse', streamed: false, url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse', body: { messages: [{ role: 'user', content: [{ text: 'Capital of France, and its weather?' }] }] } },
  { name: 'converse streamed', shape: 'bedrock-converse', streamed: true, url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse-stream', body: { messages: [{ role: 'user', content: [{ text: 'Capital of France, and its weather?' }] }] } },
] as const;

async function recorded(v: Variant): Promise<unknown[]> {
  const tape = join(dir, `${v}.tape`);
  const f = createFetch({ tape, mode: 'record', fetch: upstream(v), onWarning: () => {} });
  try {
    for (const c of CALLS) {
      const r = await f(c.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.body) });
      expect(r.status, `${v} ${c.name}: ${r.status === 200 ? "" : await r.clone().text()}`).toBe(200);
      await r.arrayBuffer();
    }
  } finally {
    await f.close();
  }
  return (await readTape(tape)).records.map((x) => x.value);
}

const WANT: Record<Exclude<Variant, 'base'>, string[]> = { noise: ['benign'], text: ['text'], tool: ['tool-calls'], finish: ['finish'] };

describe('tapedeck diff of Gemini, Ollama and Bedrock answers, plain and streamed', () => {
  it('reads each answer in its own shape and gives each change its class', async () => {
    const base = await recorded('base');
    expect(base).toHaveLength(CALLS.length);
    const same = driftReport([{ name: 't', records: base }], [{ name: 't', records: base }], { old: 'a', new: 'b' });
    expect(same.entries.map((e) => e.classes)).toEqual(CALLS.map(() => ['identical']));
    for (const v of ['noise', 'text', 'tool', 'finish'] as const) {
      const r = driftReport([{ name: 't', records: base }], [{ name: 't', records: await recorded(v) }], { old: 'base', new: v });
      const got = r.entries.map((e, i) => ({ call: CALLS[i]!.name, shape: e.shape, streamed: e.new?.streamed, classes: e.classes }));
      expect(got, v).toEqual(CALLS.map((c) => ({ call: c.name, shape: c.shape, streamed: c.streamed, classes: WANT[v] })));
    }
  });
});
