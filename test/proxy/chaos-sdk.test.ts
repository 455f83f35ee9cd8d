// Faults on demand against recorded tapes, with the real SDKs on loopback: record once against
// the loopback fakes, then replay through a proxy (or createFetch) with chaos configured. Each
// SDK must take an injected fault for its provider's own (retry it, or raise its own error
// class), a cut stream must make its stream iteration throw, and the tape must stay byte for
// byte as it was.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ConverseCommand, ConverseStreamCommand, BedrockRuntimeClient, ThrottlingException } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ApiError, GoogleGenAI } from '@google/genai';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, streamText } from 'ai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import type { ChaosOptions } from '../../src/chaos/options.ts';
import { startUpstream } from './fake-upstream.ts';
import { startGemini } from './fake-gemini.ts';
import { startBedrock } from '../providers/fake-bedrock.ts';
import { CREDENTIALS, MODEL as BEDROCK_MODEL } from '../providers/bedrock-clients.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-chaos-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chatTape = join(dir, 'chat.tape');
const geminiTape = join(dir, 'gemini.tape');
const bedrockTape = join(dir, 'bedrock.tape');
const GEMINI_KEY = 'AIza' + 'SyD3mo-Ab3dEf6hIj9kLm2nOp5qRs8tUv1';
const GEMINI = 'gemini-2.5-flash';

const chat = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
const chatStream = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] });
const message = (c: Anthropic) => c.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hello Claude' }] });
const messageStream = (c: Anthropic) => c.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Stream a haiku' }] });
const converse = new ConverseCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }] });
const converseStream = new ConverseStreamCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'stream bedrock' }] }] });
const aiModel = (base: string, f?: typeof fetch) => createOpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', ...(f ? { fetch: f } : {}) })('gpt-4o-mini');

const openai = (base: string, o: { maxRetries?: number; timeout?: number; fetch?: typeof fetch } = {}) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', maxRetries: o.maxRetries ?? 2, ...(o.timeout ? { timeout: o.timeout } : {}), ...(o.fetch ? { fetch: o.fetch } : {}) });
const anthropic = (base: string, o: { maxRetries?: number; timeout?: number } = {}) => new Anthropic({ baseURL: base, apiKey: 'sk-ant-test', maxRetries: o.maxRetries ?? 2, ...(o.timeout ? { timeout: o.timeout } : {}) });
const genai = (base: string) => new GoogleGenAI({ apiKey: GEMINI_KEY, httpOptions: { baseUrl: base } });
// HTTP/1.1 and up to 3 attempts: the AWS SDK's own retry of a throttled call.
const bedrock = (base: string, maxAttempts = 3) => new BedrockRuntimeClient({ region: 'us-east-1', endpoint: base, credentials: CREDENTIALS, maxAttempts, requestHandler: new NodeHttpHandler() });

const recorded: Record<string, unknown> = {};
let tapeBytes: Record<string, Buffer> = {};

beforeAll(async () => {
  const up = await startUpstream();
  const rec = await startProxy({ upstream: up.url, tape: chatTape, mode: 'record', port: 0 });
  recorded.chat = (await chat(openai(rec.url))).choices[0]!.message.content;
  let s = '';
  for await (const c of await chatStream(openai(rec.url))) s += c.choices[0]?.delta.content ?? '';
  recorded.chatStream = s;
  recorded.message = (await message(anthropic(rec.url))).content;
  recorded.messageStream = (await messageStream(anthropic(rec.url)).finalMessage()).content;
  recorded.ai = (await generateText({ model: aiModel(rec.url), prompt: 'Hello AI SDK', maxRetries: 0 })).text;
  const st = streamText({ model: aiModel(rec.url), prompt: 'Stream AI SDK', maxRetries: 0 });
  recorded.aiStream = await st.text;
  await rec.close();
  await up.close();

  const gem = await startGemini({ apiKey: GEMINI_KEY });
  const grec = await startProxy({ upstream: gem.url, tape: geminiTape, mode: 'record', port: 0 });
  recorded.gemini = (await genai(grec.url).models.generateContent({ model: GEMINI, contents: 'Hello Gemini' })).text;
  let gs = '';
  for await (const c of await genai(grec.url).models.generateContentStream({ model: GEMINI, contents: 'Stream a story' })) gs += c.text ?? '';
  recorded.geminiStream = gs;
  await grec.close();
  await gem.close();

  const bed = await startBedrock({ gapMs: 2 });
  const brec = await startProxy({ upstream: bed.url, tape: bedrockTape, mode: 'record', port: 0 });
  const b = bedrock(brec.url, 1);
  recorded.converse = (await b.send(converse)).output;
  const evs: unknown[] = [];
  for await (const e of (await b.send(converseStream)).stream!) evs.push(e);
  recorded.converseStream = evs;
  b.destroy();
  await brec.close();
  await bed.close();
  tapeBytes = { chatTape: readFileSync(chatTape), geminiTape: readFileSync(geminiTape), bedrockTape: readFileSync(bedrockTape) };
}, 60_000);

// Nothing any test below did changed a byte of any tape.
afterAll(() => {
  expect(readFileSync(chatTape).equals(tapeBytes.chatTape!)).toBe(true);
  expect(readFileSync(geminiTape).equals(tapeBytes.geminiTape!)).toBe(true);
  expect(readFileSync(bedrockTape).equals(tapeBytes.bedrockTape!)).toBe(true);
});

async function withProxy<T>(tape: string, chaos: ChaosOptions, run: (p: ProxyServer) => Promise<T>): Promise<T> {
  const warnings: string[] = [];
  const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { seed: 1, ...chaos }, onWarning: (w) => warnings.push(w) });
  const before = readFileSync(tape);
  try {
    return await run(p);
  } finally {
    await p.close();
    expect(readFileSync(tape).equals(before), 'the tape changed').toBe(true);
  }
}

async function drainOpenAI(s: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<string> {
  let out = '';
  for await (const c of s) out += c.choices[0]?.delta.content ?? '';
  return out;
}

describe('retries get the recorded answer (attempts: 1)', () => {
  it('openai: a 429 with retry-after is retried after the wait it asks for', async () => {
    await withProxy(chatTape, { faults: { 429: 1 }, attempts: 1, retryAfterMs: 1000 }, async (p) => {
      const t0 = performance.now();
      const { data, response } = await chat(openai(p.url)).withResponse();
      expect(data.choices[0]!.message.content).toBe(recorded.chat);
      expect(response.headers.get('x-tapedeck-match')).toBe('exact');
      // The SDK waited the retry-after (1 s), not its own backoff (at most 0.5 s at the first retry).
      expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
      expect(p.handler.stats().faults).toEqual({ 429: 1 });
      expect(p.handler.stats().hits).toBe(1);
    });
  });

  it('anthropic: a 529 overloaded_error is retried', async () => {
    await withProxy(chatTape, { faults: { 529: 1 }, attempts: 1, retryAfterMs: 10 }, async (p) => {
      const msg = await message(anthropic(p.url));
      expect(msg.content).toEqual(recorded.message);
      expect(p.handler.stats().faults).toEqual({ 529: 1 });
    });
  });

  it('anthropic: the 529 is its OverloadedError-shaped APIError when retries are off', async () => {
    await withProxy(chatTape, { faults: { 529: 1 }, retryAfterMs: 10 }, async (p) => {
      const e = await message(anthropic(p.url, { maxRetries: 0 })).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(Anthropic.APIError);
      expect((e as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
      expect((e as { error?: { error?: { type?: string } } }).error?.error?.type).toBe('overloaded_error');
      // The test's own failure output says the seed and that the answer was injected.
      expect((e as Error).message).toContain('with seed 1 (');
      expect((e as Error).message).toContain('chaos.seed 1 or --chaos-seed 1 injects the same faults again');
      expect((e as InstanceType<typeof Anthropic.APIError>).requestID).toBe('tapedeck-chaos-529-seed-1');
    });
  });

  it('openai: the error a test fails with names the seed and an injected request id', async () => {
    await withProxy(chatTape, { faults: { 429: 1 }, retryAfterMs: 10, seed: 42 }, async (p) => {
      const e = await chat(openai(p.url, { maxRetries: 0 })).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.RateLimitError);
      expect((e as Error).message).toMatch(/^429 tapedeck chaos: injected 429 rate limit with seed 42 \(/);
      expect((e as InstanceType<typeof OpenAI.APIError>).requestID).toBe('tapedeck-chaos-429-seed-42');
      // Failed before: "the retry gets the recording", though without attempts every retry is
      // drawn anew (and may be faulted too).
      expect((e as Error).message).toContain('each retry is drawn anew, so it may be faulted too; set chaos attempts (--chaos-attempts N)');
    });
    await withProxy(chatTape, { faults: { 429: 1 }, retryAfterMs: 10, seed: 42, attempts: 2 }, async (p) => {
      const e = await chat(openai(p.url, { maxRetries: 0 })).catch((x: unknown) => x);
      expect((e as Error).message).toContain('the retry after 2 faulted attempts gets the recording');
    });
    await withProxy(chatTape, { faults: { 429: 0 }, retryAfterMs: 10, seed: 42 }, async (p) => {
      const forcing = new OpenAI({ baseURL: `${p.url}/v1`, apiKey: 'sk-test', maxRetries: 0, defaultHeaders: { 'x-tapedeck-chaos': '429' } });
      const e = await chat(forcing).catch((x: unknown) => x);
      expect((e as Error).message).toContain('every request sending x-tapedeck-chaos: 429 gets this fault');
    });
  });

  it('AWS SDK: a ThrottlingException is retried by the SDK and then answered from the tape', async () => {
    await withProxy(bedrockTape, { faults: { 429: 1 }, attempts: 2, retryAfterMs: 10 }, async (p) => {
      const b = bedrock(p.url, 3);
      const out = await b.send(converse);
      expect(out.output).toEqual(recorded.converse);
      expect(out.$metadata.attempts).toBe(3);
      b.destroy();
      // One attempt only: the SDK raises its own modeled exception class.
      const once = bedrock(p.url, 1);
      const e = await once.send(new ConverseCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }] }), { requestTimeout: 5000 } as never).catch((x: unknown) => x);
      once.destroy();
      // The second call of the key: its own first attempt fails again.
      expect(e).toBeInstanceOf(ThrottlingException);
      expect((e as ThrottlingException).message).toMatch(/tapedeck chaos: injected 429 rate limit with seed 1 /);
      expect((e as ThrottlingException).$metadata.requestId).toBe('tapedeck-chaos-429-seed-1');
    });
  });
});

describe('the AWS SDK over HTTP/2, as shipped', () => {
  it('a throttled call is retried and answered; a cut ConverseStream throws', async () => {
    await withProxy(bedrockTape, { faults: { 429: 1 }, attempts: 1, retryAfterMs: 10 }, async (p) => {
      const b = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: p.url, credentials: CREDENTIALS, maxAttempts: 2 });
      expect((await b.send(converse)).output).toEqual(recorded.converse);
      b.destroy();
    });
    await withProxy(bedrockTape, { faults: { cut: 1 } }, async (p) => {
      const b = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: p.url, credentials: CREDENTIALS, maxAttempts: 1 });
      const out = await b.send(converseStream);
      await expect(
        (async () => {
          for await (const e of out.stream!) void e;
        })(),
      ).rejects.toThrow();
      b.destroy();
    });
  });
});

describe('a 503 is the SDK’s own error', () => {
  it('@google/genai raises ApiError 503 UNAVAILABLE', async () => {
    await withProxy(geminiTape, { faults: { 503: 1 } }, async (p) => {
      const e = await genai(p.url).models.generateContent({ model: GEMINI, contents: 'Hello Gemini' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).status).toBe(503);
      expect((e as ApiError).message).toMatch(/UNAVAILABLE/);
    });
  });

  it('the AI SDK raises APICallError 503, retryable', async () => {
    await withProxy(chatTape, { faults: { 503: 1 } }, async (p) => {
      const e = await generateText({ model: aiModel(p.url), prompt: 'Hello AI SDK', maxRetries: 0 }).catch((x: unknown) => x);
      expect(APICallError.isInstance(e)).toBe(true);
      expect((e as APICallError).statusCode).toBe(503);
      expect((e as APICallError).isRetryable).toBe(true);
    });
  });

  it('the AI SDK retries it and gets the recording (attempts: 1)', async () => {
    await withProxy(chatTape, { faults: { 503: 1 }, attempts: 1, retryAfterMs: 10 }, async (p) => {
      const r = await generateText({ model: aiModel(p.url), prompt: 'Hello AI SDK', maxRetries: 1 });
      expect(r.text).toBe(recorded.ai);
    });
  });
});

describe('a cut stream makes each SDK’s stream iteration throw', () => {
  it('openai', async () => {
    await withProxy(chatTape, { faults: { cut: 1 } }, async (p) => {
      const s = await chatStream(openai(p.url, { maxRetries: 0 }));
      await expect(drainOpenAI(s)).rejects.toThrow();
      expect(p.handler.stats().faults).toEqual({ cut: 1 });
    });
  });

  it('openai: the retry of a cut call gets the same (whole) recording', async () => {
    await withProxy(chatTape, { faults: { cut: 1 }, attempts: 1 }, async (p) => {
      const c = openai(p.url, { maxRetries: 0 });
      await expect(drainOpenAI(await chatStream(c))).rejects.toThrow();
      expect(await drainOpenAI(await chatStream(c))).toBe(recorded.chatStream);
    });
  });

  it('anthropic', async () => {
    await withProxy(chatTape, { faults: { cut: 1 } }, async (p) => {
      await expect(messageStream(anthropic(p.url, { maxRetries: 0 })).finalMessage()).rejects.toThrow();
    });
  });

  it('AWS SDK (ConverseStream, event-stream frames)', async () => {
    await withProxy(bedrockTape, { faults: { cut: 1 } }, async (p) => {
      const b = bedrock(p.url, 1);
      const out = await b.send(converseStream);
      const got: unknown[] = [];
      await expect(
        (async () => {
          for await (const e of out.stream!) got.push(e);
        })(),
      ).rejects.toThrow();
      expect(got.length).toBeLessThanOrEqual(2);
      b.destroy();
    });
  });

  it('@google/genai', async () => {
    await withProxy(geminiTape, { faults: { cut: 1 } }, async (p) => {
      await expect(
        (async () => {
          for await (const _c of await genai(p.url).models.generateContentStream({ model: GEMINI, contents: 'Stream a story' })) void _c;
        })(),
      ).rejects.toThrow();
    });
  });

  it('the AI SDK', async () => {
    await withProxy(chatTape, { faults: { cut: 1 } }, async (p) => {
      const st = streamText({ model: aiModel(p.url), prompt: 'Stream AI SDK', maxRetries: 0, onError: () => {} });
      const e = await (async () => {
        for await (const part of st.fullStream) void part;
      })().catch((x: unknown) => x);
      // The AI SDK's own error, with the dropped connection as its cause.
      expect(APICallError.isInstance(e)).toBe(true);
      expect(String((e as APICallError).cause)).toMatch(/terminated/);
    });
  });

  it('malformed: one broken event makes the openai stream throw a JSON error', async () => {
    await withProxy(chatTape, { faults: { malformed: 1 } }, async (p) => {
      await expect(drainOpenAI(await chatStream(openai(p.url, { maxRetries: 0 })))).rejects.toThrow(/JSON|Unexpected|Unterminated/);
    });
  });
});

describe('timeout and reset', () => {
  it('timeout: the headers never come and the SDK’s own timeout fires', async () => {
    await withProxy(chatTape, { faults: { timeout: 1 } }, async (p) => {
      const e = await chat(openai(p.url, { maxRetries: 0, timeout: 300 })).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      const a = await message(anthropic(p.url, { maxRetries: 0, timeout: 300 })).catch((x: unknown) => x);
      expect(a).toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
    });
  });

  it('reset: the SDK sees a connection error, and its retry gets the recording', async () => {
    await withProxy(chatTape, { faults: { reset: 1 }, attempts: 1 }, async (p) => {
      const e = await chat(openai(p.url, { maxRetries: 0 })).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.APIConnectionError);
      expect((await chat(openai(p.url, { maxRetries: 0 }))).choices[0]!.message.content).toBe(recorded.chat);
    });
  });
});

describe('createFetch with chaos', () => {
  it('openai retries a 429 and gets the recording; a cut stream throws; a timeout fires', async () => {
    const before = readFileSync(chatTape);
    const f = createFetch({ tape: chatTape, mode: 'replay', chaos: { faults: { 429: 1 }, attempts: 1, seed: 3, retryAfterMs: 10 } });
    try {
      // On the host the proxy recorded for, its upstream's (a loopback host's port is not compared).
      expect((await chat(openai('http://127.0.0.1:9', { fetch: f }))).choices[0]!.message.content).toBe(recorded.chat);
      const c = openai('http://127.0.0.1:9', { fetch: f, maxRetries: 0 });
      const cut = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] }, { headers: { 'x-tapedeck-chaos': 'cut' } });
      await expect(drainOpenAI(cut)).rejects.toThrow();
      const t = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] }, { headers: { 'x-tapedeck-chaos': 'timeout' }, timeout: 200 }).catch((x: unknown) => x);
      expect(t).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      const reset = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] }, { headers: { 'x-tapedeck-chaos': 'reset' } }).catch((x: unknown) => x);
      expect(reset).toBeInstanceOf(OpenAI.APIConnectionError);
      expect(reset).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      expect((await f.stats()).faults).toEqual({ 429: 1, cut: 1, timeout: 1, reset: 1 });
    } finally {
      await f.close();
    }
    expect(readFileSync(chatTape).equals(before)).toBe(true);
  });
});

describe('latency', () => {
  it('a delay longer than the client’s timeout is the SDK’s own timeout, through createFetch', async () => {
    const f = createFetch({ tape: chatTape, mode: 'replay', chaos: { latencyMs: 5000, seed: 1 } });
    try {
      const t0 = performance.now();
      const e = await chat(openai('http://127.0.0.1:9', { fetch: f, maxRetries: 0, timeout: 200 })).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      // The wait ended with the client's abort, not after the whole delay.
      expect(performance.now() - t0).toBeLessThan(4000);
    } finally {
      await f.close();
    }
  });
});
