// End to end with the official SDKs: record through the proxy and through createFetch against a
// fake provider, stop the provider, replay, and get the same results (streams and tool calls
// included), byte for byte where the bytes are visible.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-sdk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPENAI_KEY = 'sk-proj-' + 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cD0eF'; // 8 + 40 characters
const ANTHROPIC_KEY = 'sk-ant-api03-' + 'Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1ZyXwV';

const weatherToolOpenAI = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const weatherToolAnthropic = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

/** Every call a test makes, so recording and replay run the same script. */
async function openaiScript(client: OpenAI) {
  const chat = await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello there' }] });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
  const tool = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherToolOpenAI] });
  const toolStream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris, streamed?' }], tools: [weatherToolOpenAI] });
  const toolFinal = await toolStream.finalChatCompletion();
  const raw = await client.chat.completions
    .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Raw bytes please' }] })
    .asResponse();
  return {
    chat: chat.choices[0]!.message.content,
    chatId: chat.id,
    streamed,
    toolCall: tool.choices[0]!.message.tool_calls,
    toolStreamCall: toolFinal.choices[0]!.message.tool_calls,
    rawBytes: await raw.text(),
    rawMatch: raw.headers.get('x-tapedeck-match'),
  };
}

async function anthropicScript(client: Anthropic) {
  const msg = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello Claude' }] });
  const stream = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Stream a haiku' }] });
  let streamed = '';
  stream.on('text', (t) => (streamed += t));
  const final = await stream.finalMessage();
  const tool = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, tools: [weatherToolAnthropic], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  const toolStream = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, tools: [weatherToolAnthropic], messages: [{ role: 'user', content: 'Weather, streamed' }] }).finalMessage();
  return { msg: msg.content, streamed, final: final.content, stop: final.stop_reason, tool: tool.content, toolStream: toolStream.content };
}

function openai(baseURL: string, fetchImpl?: typeof fetch) {
  return new OpenAI({ baseURL, apiKey: OPENAI_KEY, maxRetries: 0, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
}
function anthropic(baseURL: string, fetchImpl?: typeof fetch) {
  return new Anthropic({ baseURL, apiKey: ANTHROPIC_KEY, maxRetries: 0, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
}

function assertNoSecrets(tape: string) {
  const bytes = readFileSync(tape);
  for (const secret of [OPENAI_KEY, ANTHROPIC_KEY, OPENAI_KEY.slice(8), ANTHROPIC_KEY.slice(13), 'secretcookievalue123']) {
    expect(bytes.indexOf(Buffer.from(secret)), `${secret} found in ${tape}`).toBe(-1);
  }
}

describe('through the proxy', () => {
  let upstream: Upstream;
  const tape = join(dir, 'proxy.tape');
  let recorded: { openai: Awaited<ReturnType<typeof openaiScript>>; anthropic: Awaited<ReturnType<typeof anthropicScript>> };

  beforeAll(async () => {
    upstream = await startUpstream();
    const proxy = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
    try {
      recorded = {
        openai: await openaiScript(openai(`${proxy.url}/v1`)),
        anthropic: await anthropicScript(anthropic(proxy.url)),
      };
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it('recorded live answers, with the keys forwarded upstream', () => {
    expect(recorded.openai.chat).toBe('Echo 1: Hello there');
    expect(recorded.openai.streamed).toBe('Echo 2: Stream me a story ');
    expect(recorded.openai.toolCall?.[0]).toMatchObject({ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(recorded.openai.toolStreamCall?.[0]).toMatchObject({ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(recorded.openai.rawMatch).toBe('recording');
    expect(recorded.anthropic.streamed).toMatch(/^Echo \d+: Stream a haiku $/);
    expect(recorded.anthropic.toolStream[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(upstream.calls[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const h = upstream.calls.find((c) => c.url.startsWith('/v1/messages'))!.headers;
    expect(h['x-api-key'] ?? h.authorization).toMatch(new RegExp(`^(Bearer )?${ANTHROPIC_KEY}$`));
  });

  it('replays the same results with the upstream gone, streams byte for byte', async () => {
    for (const timing of ['none', 'recorded', 1] as const) {
      const proxy = await startProxy({ tape, mode: 'replay', port: 0, timing });
      try {
        const o = await openaiScript(openai(`${proxy.url}/v1`));
        expect({ ...o, rawMatch: 'recording' }).toEqual(recorded.openai);
        expect(o.rawMatch).toBe('exact');
        expect(o.rawBytes).toContain(': keep-alive\n\n\ndata: [DONE]\n\n');
        expect(await anthropicScript(anthropic(proxy.url))).toEqual(recorded.anthropic);
        expect(proxy.handler.stats().misses).toBe(0);
      } finally {
        await proxy.close();
      }
    }
  });

  it('never writes the API keys or cookies to the tape', () => assertNoSecrets(tape));

  it('a changed prompt is a miss with diagnostics, raised by the SDK as a 400', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const err = await openai(`${proxy.url}/v1`)
        .chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello there!' }] })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.code).toBe('E_MISS');
      expect(e.message.split('\n')[0]).toBe('400 tapedeck miss: message 0 (user) text differs from the closest recording; re-record: restart tapedeck serve with --mode record');
      expect((e.error as { tapedeck: { report: string } }).tapedeck.report).toMatch(/Closest recordings:/);
      const aerr = await anthropic(proxy.url)
        .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello Claudette' }] })
        .then(
          () => null,
          (x: unknown) => x,
        );
      expect(aerr).toBeInstanceOf(Anthropic.BadRequestError);
      expect((aerr as InstanceType<typeof Anthropic.BadRequestError>).errorCode).toBe('E_MISS');
      expect((aerr as Error).message.split('\n')[0]).toBe('400 tapedeck miss: message 1 (user) text differs from the closest recording; re-record: restart tapedeck serve with --mode record');
    } finally {
      await proxy.close();
    }
  });
});

describe('through createFetch', () => {
  const tape = join(dir, 'fetch.tape');

  it('records and replays both SDKs with the provider gone', async () => {
    const upstream = await startUpstream();
    const rec = createFetch({ tape, mode: 'record' });
    let recorded;
    try {
      recorded = { o: await openaiScript(openai(`${upstream.url}/v1`, rec)), a: await anthropicScript(anthropic(upstream.url, rec)) };
    } finally {
      await rec.close();
      await upstream.close();
    }
    expect(recorded.o.chat).toBe('Echo 1: Hello there');
    expect(recorded.o.rawMatch).toBe('recording');
    assertNoSecrets(tape);

    for (const timing of ['none', 'recorded'] as const) {
      const play = createFetch({ tape, mode: 'replay', timing });
      try {
        const o = await openaiScript(openai(`${upstream.url}/v1`, play));
        expect({ ...o, rawMatch: 'recording' }).toEqual(recorded.o);
        expect(await anthropicScript(anthropic(upstream.url, play))).toEqual(recorded.a);
        expect((await play.stats()).misses).toBe(0);
      } finally {
        await play.close();
      }
    }
  });

  it('close() records answers whose bodies the caller never read, and they stay readable', async () => {
    const unreadTape = join(dir, 'unread.tape');
    const upstream = await startUpstream();
    const rec = createFetch({ tape: unreadTape, mode: 'record' });
    const send = (body: unknown) =>
      rec(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    let plain: Response;
    let streamed: Response;
    try {
      plain = await send({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'not read' }] });
      streamed = await send({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'not read either' }] });
      expect([plain.status, streamed.status]).toEqual([200, 200]);
    } finally {
      await rec.close(); // must not wait for bodies nobody reads
      await upstream.close();
    }
    // Read after close: the whole answers, and they are the ones on the tape.
    const [plainText, streamText] = [await plain.text(), await streamed.text()];
    expect(JSON.parse(plainText).choices[0].message.content).toContain('not read');
    expect(streamText).toContain('data: [DONE]');
    const play = createFetch({ tape: unreadTape, mode: 'replay' });
    try {
      const again = await play(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'not read either' }] }) });
      expect(await again.text()).toBe(streamText);
    } finally {
      await play.close();
    }
  });

  it('replays a tape recorded through the proxy (same records)', async () => {
    const proxyTape = join(dir, 'shared.tape');
    const upstream = await startUpstream();
    const proxy = await startProxy({ upstream: upstream.url, tape: proxyTape, mode: 'record', port: 0 });
    let viaProxy;
    try {
      viaProxy = await openaiScript(openai(`${proxy.url}/v1`));
    } finally {
      await proxy.close();
      await upstream.close();
    }
    const play = createFetch({ tape: proxyTape, mode: 'replay' });
    try {
      // On the host the proxy recorded for, its upstream's (a loopback host's port is not compared).
      const o = await openaiScript(openai('http://127.0.0.1:9/v1', play));
      expect({ ...o, rawMatch: 'recording' }).toEqual(viaProxy);
    } finally {
      await play.close();
    }
  });

  it('a miss comes back as the provider-shaped 400', async () => {
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const err = await openai('http://api.example.invalid/v1', play)
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'never recorded' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as { code: string }).code).toBe('E_MISS');
    } finally {
      await play.close();
    }
  });
});
