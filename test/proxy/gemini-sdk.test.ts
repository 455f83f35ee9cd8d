// End to end with Google's clients from npm (@google/genai, the AI SDK's @ai-sdk/google,
// LangChain's @langchain/google-genai) against a loopback fake of the Gemini API: record through
// the proxy and through createFetch, stop the fake, replay, and get the same answers (streams,
// tool round trips, token counts, embeddings); a changed prompt is a miss each SDK raises as its
// own error carrying tapedeck's diagnosis; a reordered body still hits; the key never reaches
// the tape.
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { ApiError, GoogleGenAI, type Content } from '@google/genai';
import { ChatGoogleGenerativeAI, GoogleGenerativeAIEmbeddings } from '@langchain/google-genai';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { embedMany, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashValue } from '../../src/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startGemini, type FakeGemini } from './fake-gemini.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-gemini-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'AIza' + 'SyD3mo-Ab3dEf6hIj9kLm2nOp5qRs8tUv1'; // Google's key format: AIza + 35 characters
const MODEL = 'gemini-2.5-flash';
const weather = { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

async function genaiScript(ai: GoogleGenAI) {
  const plain = await ai.models.generateContent({ model: MODEL, contents: 'Hello Gemini', config: { temperature: 0 } });
  let streamed = '';
  for await (const c of await ai.models.generateContentStream({ model: MODEL, contents: 'Stream a story' })) streamed += c.text ?? '';
  const tools = [{ functionDeclarations: [{ name: weather.name, description: weather.description, parametersJsonSchema: weather.parameters }] }];
  const ask: Content = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
  const first = await ai.models.generateContent({ model: MODEL, contents: [ask], config: { tools } });
  const call = first.functionCalls![0]!;
  const second = await ai.models.generateContent({
    model: MODEL,
    contents: [ask, first.candidates![0]!.content!, { role: 'user', parts: [{ functionResponse: { name: call.name, response: { output: '21C' } } }] }],
    config: { tools },
  });
  const tokens = await ai.models.countTokens({ model: MODEL, contents: 'Count these words' });
  const emb = await ai.models.embedContent({ model: 'text-embedding-004', contents: ['hello', 'world'] });
  return { plain: plain.text, streamed, call: { name: call.name, args: call.args }, answer: second.text, tokens: tokens.totalTokens, vectors: emb.embeddings?.map((e) => e.values) };
}

async function aiSdkScript(baseURL: string, fetchImpl?: typeof fetch) {
  const google = createGoogleGenerativeAI({ baseURL, apiKey: KEY, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  const plain = await generateText({ model: google(MODEL), prompt: 'Hello from the AI SDK', temperature: 0, maxRetries: 0 });
  const s = streamText({ model: google(MODEL), prompt: 'Stream for the AI SDK', maxRetries: 0 });
  let streamed = '';
  for await (const t of s.textStream) streamed += t;
  const withTool = await generateText({
    model: google(MODEL),
    prompt: 'Weather in Paris, AI SDK?',
    maxRetries: 0,
    tools: { get_weather: tool({ description: weather.description, inputSchema: jsonSchema<{ city: string }>(weather.parameters), execute: async ({ city }) => `21C in ${city}` }) },
    stopWhen: stepCountIs(2),
  });
  const emb = await embedMany({ model: google.embeddingModel('text-embedding-004'), values: ['hello', 'world'], maxRetries: 0 });
  return { plain: plain.text, streamed, calls: withTool.steps[0]!.toolCalls.map((c) => [c.toolName, c.input]), answer: withTool.text, vectors: emb.embeddings };
}

async function langchainScript(baseUrl: string) {
  const chat = new ChatGoogleGenerativeAI({ model: MODEL, apiKey: KEY, baseUrl, maxRetries: 0, temperature: 0 });
  const plain = await chat.invoke('Hello from LangChain');
  let streamed = '';
  for await (const c of await chat.stream('Stream for LangChain')) streamed += typeof c.content === 'string' ? c.content : '';
  const withTools = chat.bindTools([{ type: 'function', function: weather }]);
  const ask = new HumanMessage('Weather in Paris, LangChain?');
  const first = await withTools.invoke([ask]);
  const call = first.tool_calls![0]!;
  const second = await withTools.invoke([ask, new AIMessage({ content: '', tool_calls: [call] }), new ToolMessage({ content: '21C', tool_call_id: call.id ?? 'x', name: call.name })]);
  const emb = await new GoogleGenerativeAIEmbeddings({ model: 'text-embedding-004', apiKey: KEY, baseUrl, maxRetries: 0 }).embedDocuments(['hello', 'world']);
  return { plain: plain.content, streamed, call: [call.name, call.args], answer: second.content, vectors: emb };
}

function assertNoSecrets(tape: string) {
  const bytes = readFileSync(tape);
  for (const secret of [KEY, KEY.slice(4)]) expect(bytes.indexOf(Buffer.from(secret)), `${secret} found in ${tape}`).toBe(-1);
}

const genai = (baseUrl: string, fetchImpl?: typeof fetch) => new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl, ...(fetchImpl ? { fetch: fetchImpl } : {}) } });

describe('Gemini clients through the proxy', () => {
  let upstream: FakeGemini;
  const tape = join(dir, 'proxy.tape');
  let recorded: { genai: Awaited<ReturnType<typeof genaiScript>>; aiSdk: Awaited<ReturnType<typeof aiSdkScript>>; langchain: Awaited<ReturnType<typeof langchainScript>> };

  beforeAll(async () => {
    upstream = await startGemini({ apiKey: KEY });
    const proxy = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
    try {
      recorded = { genai: await genaiScript(genai(proxy.url)), aiSdk: await aiSdkScript(`${proxy.url}/v1beta`), langchain: await langchainScript(proxy.url) };
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it('recorded live answers: plain, streamed, tool round trips, token counts, embeddings', () => {
    expect(recorded.genai.plain).toBe(`Echo 1 from ${MODEL}: Hello Gemini`);
    expect(recorded.genai.streamed).toBe(`Echo 2 from ${MODEL}: Stream a story`);
    expect(recorded.genai.call).toEqual({ name: 'get_weather', args: { city: 'Paris' } });
    expect(recorded.genai.answer).toBe('Reply 4: get_weather said {"output":"21C"}');
    expect(recorded.genai.vectors).toEqual([
      [5, 6, 0.25, -0.5],
      [5, 6, 0.25, -0.5],
    ]);
    expect(recorded.aiSdk.streamed).toMatch(/^Echo \d+ from gemini-2\.5-flash: Stream for the AI SDK$/);
    expect(recorded.aiSdk.calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(recorded.aiSdk.answer).toMatch(/^Reply \d+: get_weather said /);
    expect(recorded.langchain.streamed).toMatch(/Stream for LangChain$/);
    expect(recorded.langchain.call).toEqual(['get_weather', { city: 'Paris' }]);
    expect(recorded.langchain.vectors).toHaveLength(2);
    // The key went upstream (header or query), so the fake answered at all.
    expect(upstream.calls.every((c) => c.headers['x-goog-api-key'] === KEY || c.url.includes(`key=${KEY}`))).toBe(true);
  });

  it('replays the same answers with the upstream gone', async () => {
    for (const timing of ['none', 'recorded'] as const) {
      const proxy = await startProxy({ tape, mode: 'replay', port: 0, timing });
      try {
        expect(await genaiScript(genai(proxy.url))).toEqual(recorded.genai);
        expect(await aiSdkScript(`${proxy.url}/v1beta`)).toEqual(recorded.aiSdk);
        expect(await langchainScript(proxy.url)).toEqual(recorded.langchain);
        expect(proxy.handler.stats().misses).toBe(0);
      } finally {
        await proxy.close();
      }
    }
  });

  it('never writes the API key to the tape', () => assertNoSecrets(tape));

  it('a reordered, respaced body still hits', async () => {
    const sent = upstream.calls.find((c) => c.url.endsWith(':generateContent') && c.body.includes('Hello Gemini'))!;
    const reorder = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(reorder) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)])) : v;
    const body = JSON.stringify(reorder(JSON.parse(sent.body)), null, 3);
    expect(body).not.toBe(sent.body);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const r = await fetch(`${proxy.url}${sent.url}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY }, body });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-tapedeck-match')).toBe('exact');
      expect((await r.json()).candidates[0].content.parts[0].text).toBe(recorded.genai.plain);
    } finally {
      await proxy.close();
    }
  });

  it("a changed prompt is a miss each SDK raises as its own error, with tapedeck's diagnosis", async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    const diagnosis = 'tapedeck miss: message 0 (user) text differs from the closest recording';
    try {
      const e1 = await genai(proxy.url)
        .models.generateContent({ model: MODEL, contents: 'Hello Gemini!', config: { temperature: 0 } })
        .catch((e: unknown) => e);
      expect(e1).toBeInstanceOf(ApiError);
      const body = JSON.parse((e1 as ApiError).message) as { error: { code: number; message: string; status: string } };
      expect((e1 as ApiError).status).toBe(body.error.code);
      expect(body.error.status).toBe(body.error.code === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT');
      expect(body.error.message).toContain(diagnosis);

      const google = createGoogleGenerativeAI({ baseURL: `${proxy.url}/v1beta`, apiKey: KEY });
      const e2 = await generateText({ model: google(MODEL), prompt: 'Hello from the AI SDK!', temperature: 0, maxRetries: 0 }).catch((e: unknown) => e);
      expect((e2 as Error).name).toBe('AI_APICallError');
      expect((e2 as Error).message).toContain(diagnosis);

      const e3 = await new ChatGoogleGenerativeAI({ model: MODEL, apiKey: KEY, baseUrl: proxy.url, maxRetries: 0, temperature: 0 }).invoke('Hello from LangChain!').catch((e: unknown) => e);
      expect((e3 as Error).message).toContain('[GoogleGenerativeAI Error]');
      expect((e3 as Error).message).toContain(diagnosis);
    } finally {
      await proxy.close();
    }
  });
});

describe('Gemini misses and older tapes', () => {
  it('a model the URL names that was not recorded, where another was, says the model differs', async () => {
    const tape = join(dir, 'models.tape');
    const upstream = await startGemini({ apiKey: KEY });
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await genai(upstream.url, rec).models.generateContent({ model: MODEL, contents: 'Which model?' });
    } finally {
      await rec.close();
      await upstream.close();
    }
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const e = await genai(upstream.url, play)
        .models.generateContent({ model: 'gemini-2.0-flash', contents: 'Which model?' })
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect(JSON.parse((e as ApiError).message).error.message).toMatch(/^tapedeck miss: model differs: gemini-2\.0-flash vs gemini-2\.5-flash in the recordings/);
    } finally {
      await play.close();
    }
  });

  it('a Gemini call recorded before tapedeck knew the shape (keyed as plain JSON) still replays', async () => {
    const tape = join(dir, 'older.tape');
    const upstream = await startGemini({ apiKey: KEY });
    const rec = createFetch({ tape, mode: 'record' });
    let first: string | undefined;
    try {
      first = (await genai(upstream.url, rec).models.generateContent({ model: MODEL, contents: 'Recorded long ago' })).text;
    } finally {
      await rec.close();
      await upstream.close();
    }
    // The record as an older tapedeck wrote it: match 'json', keyed by the digest of the body.
    const older = join(dir, 'older-json.tape');
    await createTape(older);
    const records = (await readTape(tape)).records.map((r) => r.value as { match: string; key: string; request: { body: unknown } });
    expect(records.map((r) => r.match)).toEqual(['llm']);
    await appendRecords(older, records.map((r) => ({ ...r, match: 'json', key: hashValue(r.request.body) })));
    const play = createFetch({ tape: older, mode: 'replay' });
    try {
      expect((await genai(upstream.url, play).models.generateContent({ model: MODEL, contents: 'Recorded long ago' })).text).toBe(first);
      const miss = await genai(upstream.url, play)
        .models.generateContent({ model: MODEL, contents: 'Recorded long ago?' })
        .catch((x: unknown) => x);
      expect(miss).toBeInstanceOf(ApiError);
    } finally {
      await play.close();
    }
  });
});

describe('Gemini clients through createFetch', () => {
  it('record and replay @google/genai (httpOptions.fetch) and the AI SDK (fetch) with the provider gone', async () => {
    const tape = join(dir, 'fetch.tape');
    const upstream = await startGemini({ apiKey: KEY });
    const rec = createFetch({ tape, mode: 'record' });
    let recorded;
    try {
      recorded = { g: await genaiScript(genai(upstream.url, rec)), a: await aiSdkScript(`${upstream.url}/v1beta`, rec) };
    } finally {
      await rec.close();
      await upstream.close();
    }
    expect(recorded.g.plain).toBe(`Echo 1 from ${MODEL}: Hello Gemini`);
    assertNoSecrets(tape);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await genaiScript(genai(upstream.url, play))).toEqual(recorded.g);
      expect(await aiSdkScript(`${upstream.url}/v1beta`, play)).toEqual(recorded.a);
      expect((await play.stats()).misses).toBe(0);
      const miss = await genai(upstream.url, play)
        .models.generateContent({ model: MODEL, contents: 'never recorded' })
        .catch((e: unknown) => e);
      expect(miss).toBeInstanceOf(ApiError);
      expect((miss as ApiError).message).toContain('tapedeck miss: ');
    } finally {
      await play.close();
    }
  });
});

describe('Gemini streams on the wire', () => {
  // The key in the query this time (`?key=`, as curl examples send it).
  const post = (base: string, path: string, text: string) =>
    fetch(`${base}/v1beta/models/${MODEL}:${path}${path.includes('?') ? '&' : '?'}key=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text }] }] }),
    });

  it('replays SSE and JSON-array streams byte for byte; a stream cut before its finishReason is not recorded', async () => {
    const tape = join(dir, 'streams.tape');
    const upstream = await startGemini({ apiKey: KEY });
    const proxy = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
    let sse: string;
    let array: string;
    try {
      sse = await (await post(proxy.url, 'streamGenerateContent?alt=sse', 'Stream as events')).text();
      array = await (await post(proxy.url, 'streamGenerateContent', 'Stream as an array')).text();
      // The fake stops these before the chunk with the finishReason.
      const cutSse = await post(proxy.url, 'streamGenerateContent?alt=sse', 'please cut');
      expect(await cutSse.text()).toContain('data: ');
      const cutArray = await post(proxy.url, 'streamGenerateContent', 'please cut');
      // Passed on as it came (a stream); whether it was recorded is in the trailer, and the
      // replay below shows it was not.
      expect((await cutArray.text()).startsWith('[')).toBe(true);
    } finally {
      await proxy.close();
      await upstream.close();
    }
    expect(sse).toMatch(/^data: \{.*\}\r\n\r\n/);
    expect(sse).toContain('"finishReason":"STOP"');
    expect(JSON.parse(array)).toHaveLength(8); // one chunk per word
    assertNoSecrets(tape);
    const play = await startProxy({ tape, mode: 'replay', port: 0, timing: 'recorded' });
    try {
      expect(await (await post(play.url, 'streamGenerateContent?alt=sse', 'Stream as events')).text()).toBe(sse);
      expect(await (await post(play.url, 'streamGenerateContent', 'Stream as an array')).text()).toBe(array);
      for (const path of ['streamGenerateContent?alt=sse', 'streamGenerateContent']) {
        const r = await post(play.url, path, 'please cut');
        expect(r.headers.get('x-tapedeck-match'), path).toBe('miss');
        expect((await r.json()).error.message).toMatch(/^tapedeck miss: /);
      }
      expect(play.handler.stats().recordings).toBe(2);
    } finally {
      await play.close();
    }
  });
});
