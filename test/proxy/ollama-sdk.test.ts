// Ollama end to end with the real clients: the `ollama` package, the AI SDK's Ollama provider
// (ollama-ai-provider-v2, native /api/chat) and its OpenAI-compatible provider (Ollama's /v1).
// Record through the proxy and through createFetch against a fake Ollama, stop it, replay: the
// same answers, the same NDJSON bytes; a changed prompt is a miss the client raises in its own
// error shape with tapedeck's diagnosis; a reordered body or another keep_alive still hits.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany, generateText, jsonSchema, streamText, tool } from 'ai';
import { Ollama, type Message, type Tool } from 'ollama';
import { createOllama } from 'ollama-ai-provider-v2';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestKeys } from '../../src/match/matcher.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeOllama, type FakeOllama } from './fake-ollama.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ollama-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OLLAMA_KEY = 'sk-ollama-' + 'Qw3eRt5yUi7oPa9sDf1gHj3kLz5xCv7bNm9q';
// A 1x1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const weather: Tool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** Every call a run makes, so recording and replay run the same script. */
async function ollamaScript(client: Ollama, keepAlive = '5m') {
  const chat = await client.chat({ model: 'llama3.2', keep_alive: keepAlive, options: { temperature: 0, seed: 42, num_ctx: 4096, num_thread: 8 }, messages: [{ role: 'user', content: 'Hello there' }] });
  let streamed = '';
  let final: unknown;
  for await (const part of await client.chat({ model: 'llama3.2', stream: true, messages: [{ role: 'user', content: 'Stream me a story', images: [PNG] }] })) {
    streamed += part.message.content;
    if (part.done) final = { done_reason: part.done_reason, eval_count: part.eval_count };
  }
  const ask: Message[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const call = await client.chat({ model: 'llama3.2', messages: ask, tools: [weather] });
  const answer = await client.chat({ model: 'llama3.2', tools: [weather], messages: [...ask, call.message, { role: 'tool', content: '18C and sunny', tool_name: 'get_weather' }] });
  const embed = await client.embed({ model: 'nomic-embed-text', input: ['first text', 'second'], keep_alive: keepAlive });
  let generated = '';
  for await (const part of await client.generate({ model: 'qwen3', system: 'Be brief.', prompt: 'Why is the sky blue?', stream: true })) generated += part.response;
  return { chat: chat.message.content, streamed, final, toolCalls: call.message.tool_calls, answer: answer.message.content, embeddings: embed.embeddings, generated };
}

/** A streamed chat sent without `stream` (Ollama streams by default), read as raw bytes. */
async function rawStream(base: string, f: typeof fetch, body: string) {
  const res = await f(`${base}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, type: res.headers.get('content-type'), match: res.headers.get('x-tapedeck-match'), text: await res.text() };
}
const RAW_BODY = '{"model":"llama3.2","messages":[{"role":"user","content":"Raw bytes please"}],"keep_alive":-1}';
const RAW_REORDERED = '{"keep_alive":"10m","messages":[{"content":"Raw bytes please","role":"user"}],"model":"llama3.2","stream":true}';

/** The AI SDK with the Ollama provider (native /api/chat) and the OpenAI-compatible one (/v1). */
async function aiSdkScript(base: string, f?: typeof fetch) {
  const native = createOllama({ baseURL: `${base}/api`, ...(f ? { fetch: f } : {}) });
  const compat = createOpenAICompatible({ name: 'ollama', baseURL: `${base}/v1`, apiKey: OLLAMA_KEY, ...(f ? { fetch: f } : {}) });
  const a = await generateText({ model: native('llama3.2'), prompt: 'Native hello', temperature: 0 });
  const s = streamText({ model: native('llama3.2'), prompt: 'Native stream' });
  let native_streamed = '';
  for await (const t of s.textStream) native_streamed += t;
  const c = await generateText({ model: compat('llama3.2'), prompt: 'Compat hello' });
  const cs = streamText({ model: compat('deepseek-reasoner'), prompt: 'Compat stream' });
  let compat_streamed = '';
  for await (const t of cs.textStream) compat_streamed += t;
  const reasoning = await cs.reasoningText;
  const t = await generateText({
    model: compat('llama3.2'),
    prompt: 'Weather in Paris?',
    tools: { get_weather: tool({ description: 'Weather for a city', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }) }) },
  });
  const e = await embedMany({ model: compat.textEmbeddingModel('nomic-embed-text'), values: ['one', 'two'] });
  return { native: a.text, native_streamed, compat: c.text, compat_streamed, reasoning, toolCalls: t.toolCalls.map((x) => ({ name: x.toolName, input: x.input })), embeddings: e.embeddings };
}

function ollama(host: string, f?: typeof fetch) {
  return new Ollama({ host, headers: { authorization: `Bearer ${OLLAMA_KEY}` }, ...(f ? { fetch: f } : {}) });
}

function assertNoSecrets(tape: string) {
  const bytes = readFileSync(tape);
  for (const secret of [OLLAMA_KEY, OLLAMA_KEY.slice(10)]) expect(bytes.indexOf(Buffer.from(secret)), `${secret} in ${tape}`).toBe(-1);
}

async function caught<T>(p: Promise<T>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

describe('ollama through the proxy', () => {
  let fake: FakeOllama;
  const tape = join(dir, 'proxy.tape');
  let recorded: { script: Awaited<ReturnType<typeof ollamaScript>>; raw: Awaited<ReturnType<typeof rawStream>>; ai: Awaited<ReturnType<typeof aiSdkScript>> };

  beforeAll(async () => {
    fake = await startFakeOllama();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      recorded = { script: await ollamaScript(ollama(proxy.url)), raw: await rawStream(proxy.url, fetch, RAW_BODY), ai: await aiSdkScript(proxy.url) };
    } finally {
      await proxy.close();
      await fake.close();
    }
  });

  it('recorded live answers: streamed by default, tool call round trip, embeddings, AI SDK providers', () => {
    const s = recorded.script;
    expect(s.chat).toBe('Echo 1: Hello there');
    expect(s.streamed).toBe('Echo 2: Stream me a story +1 image ');
    expect(s.final).toEqual({ done_reason: 'stop', eval_count: 7 });
    expect(s.toolCalls).toEqual([{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }]);
    expect(s.answer).toBe('Tool said 18C and sunny (4)');
    expect(s.embeddings).toHaveLength(2);
    expect(s.generated).toMatch(/^Generated 6: Why is the sky blue\? $/);
    expect(recorded.raw.type).toBe('application/x-ndjson');
    expect(recorded.raw.match).toMatch(/^record/);
    expect(recorded.raw.text.trim().split('\n').length).toBeGreaterThan(2);
    expect(recorded.ai.compat_streamed).toMatch(/^Echo \d+: Compat stream $/);
    expect(recorded.ai.reasoning).toMatch(/^Reasoning \d+ $/);
    expect(recorded.ai.toolCalls).toEqual([{ name: 'get_weather', input: { city: 'Paris' } }]);
    // What the clients sent: `stream: false` from the ollama package, none in the raw call.
    const first = JSON.parse(fake.calls[0]!.body) as Record<string, unknown>;
    expect(first.stream).toBe(false);
  });

  it('replays the same answers with Ollama gone, NDJSON streams byte for byte', async () => {
    for (const timing of ['none', 'recorded'] as const) {
      const proxy = await startProxy({ tape, mode: 'replay', port: 0, timing });
      try {
        // Another keep_alive and runner thread count: not in the key.
        expect(await ollamaScript(ollama(proxy.url), '30m')).toEqual(recorded.script);
        const raw = await rawStream(proxy.url, fetch, RAW_BODY);
        expect(raw.text).toBe(recorded.raw.text);
        expect(raw.type).toBe('application/x-ndjson');
        expect(raw.match).toBe('exact');
        // Members reordered, another keep_alive, `stream: true` spelled out: the same request.
        expect((await rawStream(proxy.url, fetch, RAW_REORDERED)).text).toBe(recorded.raw.text);
        expect(await aiSdkScript(proxy.url)).toEqual(recorded.ai);
        expect(proxy.handler.stats().misses).toBe(0);
      } finally {
        await proxy.close();
      }
    }
  });

  it('never writes the bearer key to the tape', () => assertNoSecrets(tape));

  it('a changed prompt is a miss the ollama client raises as its ResponseError, with the diagnosis', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const err = await caught(ollama(proxy.url).chat({ model: 'llama3.2', keep_alive: '5m', options: { temperature: 0, seed: 42, num_ctx: 4096 }, messages: [{ role: 'user', content: 'Hello there!' }] }));
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).name).toBe('ResponseError');
      expect((err as { status_code: number }).status_code).toBeGreaterThanOrEqual(400);
      expect((err as Error).message).toMatch(/^tapedeck miss: message 0 \(user\) text differs from the closest recording; re-record: /);
      // A deciding option changed: still a miss, which the diagnosis names.
      const seed = await caught(ollama(proxy.url).chat({ model: 'llama3.2', options: { temperature: 0, seed: 7, num_ctx: 4096 }, messages: [{ role: 'user', content: 'Hello there' }] }));
      expect((seed as Error).message).toMatch(/^tapedeck miss: .*seed/);
      // A streamed call of a prompt only recorded plain is a miss raised by the iterator's request.
      const streamed = await caught(ollama(proxy.url).chat({ model: 'llama3.2', stream: true, options: { temperature: 0, seed: 42, num_ctx: 4096 }, messages: [{ role: 'user', content: 'Hello there' }] }));
      expect((streamed as Error).name).toBe('ResponseError');
      // Failed before: the diagnosis showed the recording's `stream: false` as (absent).
      expect((streamed as Error).message).toMatch(/^tapedeck miss: argument stream differs: true vs false in the closest recording/);
      // The AI SDK's providers raise their API call errors with the diagnosis.
      const native = createOllama({ baseURL: `${proxy.url}/api` });
      const compat = createOpenAICompatible({ name: 'ollama', baseURL: `${proxy.url}/v1`, apiKey: OLLAMA_KEY });
      const diagnosis = /tapedeck miss: message 0 \(user\) text differs/;
      const c = (await caught(generateText({ model: compat('llama3.2'), prompt: 'Changed hello', maxRetries: 0 }))) as { name: string; message: string };
      expect(c.name).toBe('AI_APICallError');
      expect(c.message).toMatch(diagnosis);
      // ollama-ai-provider-v2 reads errors in OpenAI's shape, not Ollama's `{ error: string }`
      // (a real Ollama's errors too): its message is the status text, the diagnosis is in the body.
      const n = (await caught(generateText({ model: native('llama3.2'), prompt: 'Changed hello', temperature: 0, maxRetries: 0 }))) as { name: string; statusCode: number; responseBody: string };
      expect(n.name).toBe('AI_APICallError');
      expect(n.statusCode).toBeGreaterThanOrEqual(400);
      expect((JSON.parse(n.responseBody) as { error: string }).error).toMatch(diagnosis);
    } finally {
      await proxy.close();
    }
  });
});

describe("a request sent as Ollama's documentation sends it: curl -d, labelled a form", () => {
  // curl -d labels its body application/x-www-form-urlencoded; Ollama reads it as JSON anyway.
  const CURL_BODY = '{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"why is the sky blue?"}]}';
  const curl = (base: string, path = '/api/chat', body = CURL_BODY) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });

  it('is keyed as the JSON it is: recorded with curl, it replays to the ollama client, and the other way round', async () => {
    const fake = await startFakeOllama();
    const tape = join(dir, 'curl.tape');
    let live: string;
    let liveClient: string;
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      live = await (await curl(proxy.url)).text();
      liveClient = (await ollama(proxy.url).chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'and why is it red at dusk?' }] })).message.content;
    } finally {
      await proxy.close();
      await fake.close();
    }
    // Forwarded as the JSON Ollama reads it as.
    expect(fake.calls[0]!.headers['content-type']).toBe('application/json');
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const c = await ollama(play.url).chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'why is the sky blue?' }] });
      expect(c.message.content).toBe((JSON.parse(live) as { message: { content: string } }).message.content);
      const back = await curl(play.url, '/api/chat', '{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"and why is it red at dusk?"}]}');
      expect(back.headers.get('x-tapedeck-match')).not.toBe('miss');
      expect((JSON.parse(await back.text()) as { message: { content: string } }).message.content).toBe(liveClient);
      // A changed prompt sent so is a miss that names the message, as the client's would be.
      const changed = await curl(play.url, '/api/chat', CURL_BODY.replace('blue', 'green'));
      expect(changed.status).toBeGreaterThanOrEqual(400);
      expect(await changed.text()).toMatch(/message 0 \(user\) text differs/);
    } finally {
      await play.close();
    }
  });
});

describe('ollama through createFetch', () => {
  it('records and replays with Ollama gone', async () => {
    const tape = join(dir, 'fetch.tape');
    const fake = await startFakeOllama();
    const rec = createFetch({ tape, mode: 'record' });
    let recorded;
    try {
      recorded = { s: await ollamaScript(ollama(fake.url, rec)), raw: await rawStream(fake.url, rec, RAW_BODY), ai: await aiSdkScript(fake.url, rec) };
    } finally {
      await rec.close();
      await fake.close();
    }
    assertNoSecrets(tape);
    const play = createFetch({ tape, mode: 'replay', timing: 'recorded' });
    try {
      expect(await ollamaScript(ollama(fake.url, play), '1h')).toEqual(recorded.s);
      expect((await rawStream(fake.url, play, RAW_REORDERED)).text).toBe(recorded.raw.text);
      expect(await aiSdkScript(fake.url, play)).toEqual(recorded.ai);
      const err = await caught(ollama(fake.url, play).embed({ model: 'nomic-embed-text', input: ['first text', 'changed'] }));
      expect((err as Error).name).toBe('ResponseError');
      expect((err as Error).message).toMatch(/^tapedeck miss: /);
    } finally {
      await play.close();
    }
  });

  it('a stream cut before its `done: true` line is never recorded', async () => {
    const tape = join(dir, 'cut.tape');
    const fake = await startFakeOllama({ cutStreams: true });
    const warnings: string[] = [];
    const rec = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m) });
    try {
      // The client sees the cut (an error, or a body without the final line).
      await caught(rawStream(fake.url, rec, RAW_BODY));
    } finally {
      await rec.close();
      await fake.close();
    }
    expect(warnings.join('\n')).toMatch(/ended before the answer was complete; not recorded/);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const res = await rawStream(fake.url, play, RAW_BODY);
      expect(res.match).toBe('miss');
    } finally {
      await play.close();
    }
  });
});

describe('Ollama tapes written before the Ollama shapes', () => {
  it('still replay: a chat keyed then by the chat family (the generic shape) is found by its stored request', async () => {
    const tape = join(dir, 'generic.tape');
    const fake = await startFakeOllama();
    const rec = createFetch({ tape, mode: 'record' });
    const ask = (f: typeof fetch) => ollama(fake.url, f).chat({ model: 'llama3.2', keep_alive: '5m', options: { seed: 1, num_thread: 4 }, messages: [{ role: 'user', content: 'Recorded long ago' }] });
    let first: string | undefined;
    try {
      first = (await ask(rec)).message.content;
    } finally {
      await rec.close();
      await fake.close();
    }
    // The record as an older tapedeck wrote it: the key the body alone gave (generic, with options).
    const older = join(dir, 'generic-older.tape');
    await createTape(older);
    const records = (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
    const oldKey = (body: unknown) => requestKeys(body).key;
    expect(requestKeys(records[0]!.request.body).provider).toBe('generic');
    expect(oldKey(records[0]!.request.body)).not.toBe(records[0]!.key);
    await appendRecords(older, records.map((r) => ({ ...r, key: oldKey(r.request.body) })));
    const play = createFetch({ tape: older, mode: 'replay' });
    try {
      expect((await ask(play)).message.content).toBe(first);
    } finally {
      await play.close();
    }
  });
});
