// A local stand-in for an Ollama server on 127.0.0.1 and a free port, speaking its wire format:
// /api/chat and /api/generate stream NDJSON unless the body says `stream: false` (a body without
// `stream` is streamed, as Ollama does), the last object carrying `done: true`, `done_reason` and
// the eval counts; /api/embed (and the legacy /api/embeddings) answer JSON; errors are `{ error }`
// with Ollama's statuses. The OpenAI-compatible endpoints under /v1 answer chat completions (SSE
// when streamed, ending in `data: [DONE]`) and embeddings, with DeepSeek-style
// `reasoning_content` for a model whose name says `reasoner`. Answers are derived from the
// request and a per-server call counter, so a replayed recording is told apart from a live call.
import type { ServerResponse } from 'node:http';
import { startFake, type FakeServer } from './loopback.ts';

export type FakeOllama = FakeServer;

export interface FakeOllamaOptions {
  /** Gap between streamed lines (default 2 ms). */
  gapMs?: number;
  /** End streams inside their final object: never a whole answer. */
  cutStreams?: boolean;
}

type Obj = Record<string, unknown>;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CREATED = '2026-01-01T00:00:00.000000Z';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof (p as Obj).text === 'string' ? (p as Obj).text : '')).join('');
  return '';
}

function lastUser(messages: unknown): Obj | undefined {
  return Array.isArray(messages) ? [...messages].reverse().find((m) => m && typeof m === 'object' && (m as Obj).role === 'user') : undefined;
}

const KNOWN_MODELS = /^(llama3\.2|qwen3|nomic-embed-text|deepseek-reasoner|mistral-small|gpt-4o)/;

async function lines(res: ServerResponse, objects: Obj[], gap: number, cut: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', date: 'Thu, 01 Jan 2026 00:00:00 GMT' });
  const sent = cut ? objects.slice(0, -1) : objects;
  for (const o of sent) {
    if (res.destroyed) return;
    res.write(`${JSON.stringify(o)}\n`);
    await wait(gap);
  }
  if (cut) {
    // Half of the final object, then the answer ends (a cleanly closed connection): only the
    // missing `done: true` line tells that it is not whole.
    res.end(JSON.stringify(objects[objects.length - 1]).slice(0, 20));
    return;
  }
  res.end();
}

async function sse(res: ServerResponse, events: Obj[], gap: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) {
    res.write(`data: ${JSON.stringify(e)}\n\n`);
    await wait(gap);
  }
  res.write('data: [DONE]\n\n');
  res.end();
}

const stats = (n: number) => ({ total_duration: 1000000 + n, load_duration: 1000, prompt_eval_count: 12, prompt_eval_duration: 2000, eval_count: 7, eval_duration: 3000 });

/** Starts the fake Ollama on 127.0.0.1, port 0. */
export async function startFakeOllama(opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const gap = opts.gapMs ?? 2;
  return startFake(async (req, res, raw, count) => {
    const path = (req.url ?? '').split('?')[0]!;
    const json = (status: number, v: unknown) => {
      const s = JSON.stringify(v);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(s) });
      res.end(s);
    };
    if (req.method === 'GET' && path === '/api/version') return json(200, { version: '0.12.0' });
    let body: Obj;
    try {
      body = JSON.parse(raw) as Obj;
    } catch {
      // Ollama's own words for a body it cannot read.
      return json(400, { error: 'invalid character looking for beginning of value' });
    }
    const model = String(body.model ?? '');
    const openaiPath = path.startsWith('/v1/');
    if (!KNOWN_MODELS.test(model)) {
      const message = `model "${model}" not found, try pulling it first`;
      return openaiPath ? json(404, { error: { message, type: 'api_error', param: null, code: null } }) : json(404, { error: message });
    }
    const tools = Array.isArray(body.tools) && body.tools.length > 0;
    const streamed = openaiPath ? body.stream === true : body.stream !== false;

    if (path === '/api/chat') {
      const user = lastUser(body.messages);
      const lastMsg = Array.isArray(body.messages) ? (body.messages[body.messages.length - 1] as Obj | undefined) : undefined;
      // After a tool result: an answer that uses it. With tools: a call. Otherwise an echo.
      const answeringTool = lastMsg?.role === 'tool';
      const images = Array.isArray(user?.images) ? user!.images.length : 0;
      const text = answeringTool ? `Tool said ${textOf(lastMsg!.content)} (${count})` : `Echo ${count}: ${textOf(user?.content)}${images ? ` +${images} image` : ''}`;
      const call = !answeringTool && tools ? [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] : undefined;
      const think = body.think === true ? `Thinking about ${textOf(user?.content)}` : undefined;
      const final: Obj = { model, created_at: CREATED, message: { role: 'assistant', content: '' }, done_reason: 'stop', done: true, ...stats(count) };
      if (!streamed) {
        const message: Obj = { role: 'assistant', content: call ? '' : text };
        if (think) message.thinking = think;
        if (call) message.tool_calls = call;
        return json(200, { ...final, message });
      }
      const objects: Obj[] = [];
      if (think) objects.push({ model, created_at: CREATED, message: { role: 'assistant', content: '', thinking: think }, done: false });
      if (call) objects.push({ model, created_at: CREATED, message: { role: 'assistant', content: '', tool_calls: call }, done: false });
      else for (const w of text.split(' ')) objects.push({ model, created_at: CREATED, message: { role: 'assistant', content: `${w} ` }, done: false });
      objects.push(final);
      return lines(res, objects, gap, opts.cutStreams === true);
    }
    if (path === '/api/generate') {
      const text = `Generated ${count}: ${String(body.prompt ?? '')}`;
      const final: Obj = { model, created_at: CREATED, response: '', done: true, done_reason: 'stop', context: [1, 2, 3, count], ...stats(count) };
      if (!streamed) return json(200, { ...final, response: text });
      const objects: Obj[] = text.split(' ').map((w) => ({ model, created_at: CREATED, response: `${w} `, done: false }));
      objects.push(final);
      return lines(res, objects, gap, opts.cutStreams === true);
    }
    if (path === '/api/embed') {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      return json(200, { model, embeddings: inputs.map((s, i) => [0.25, String(s).length / 100, i, count]), total_duration: 1000, load_duration: 100, prompt_eval_count: inputs.length });
    }
    if (path === '/api/embeddings') return json(200, { embedding: [0.5, String(body.prompt ?? '').length / 100, count] });

    if (path === '/v1/chat/completions') {
      const user = lastUser(body.messages);
      const text = `Echo ${count}: ${textOf(user?.content)}`;
      const reasoning = /reasoner/.test(model) ? `Reasoning ${count}` : undefined;
      const base = { id: `chatcmpl-${count}`, created: 1767225600, model, system_fingerprint: 'fp_ollama' };
      const call = tools ? [{ id: `call_${count}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] : undefined;
      if (!streamed) {
        const message: Obj = { role: 'assistant', content: call ? '' : text };
        if (reasoning) message.reasoning_content = reasoning;
        if (call) message.tool_calls = call;
        return json(200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
      }
      const chunk = (delta: Obj, finish: string | null = null) => ({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
      const events: Obj[] = [chunk({ role: 'assistant', content: '' })];
      if (reasoning) for (const w of reasoning.split(' ')) events.push(chunk({ reasoning_content: `${w} ` }));
      if (call) events.push(chunk({ tool_calls: [{ index: 0, ...call[0] }] }));
      else for (const w of text.split(' ')) events.push(chunk({ content: `${w} ` }));
      events.push(chunk({}, call ? 'tool_calls' : 'stop'));
      return sse(res, events, gap);
    }
    if (path === '/v1/embeddings') {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      return json(200, { object: 'list', data: inputs.map((s, i) => ({ object: 'embedding', index: i, embedding: [0.25, String(s).length / 100, count] })), model, usage: { prompt_tokens: 3, total_tokens: 3 } });
    }
    return json(404, { error: '404 page not found' });
  });
}
