// The Bedrock stand-in speaks the wire as the real clients expect it: the AWS SDK and the AI
// SDK's Bedrock provider, straight at the fake (no tapedeck), parse its answers, its event
// streams and its errors. The record/replay tests build on this.
import { ConverseCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand, ThrottlingException, type ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import { generateText, streamText, jsonSchema, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdkBedrock, awsClient, MODEL, MODEL_ARN } from './bedrock-clients.ts';
import { startBedrock, type FakeBedrock } from './fake-bedrock.ts';

let fake: FakeBedrock;
beforeAll(async () => {
  fake = await startBedrock({ gapMs: 1 });
});
afterAll(() => fake.close());

const weather = { toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } } };

describe('fake Bedrock through the real clients (no proxy)', () => {
  it('AWS SDK: Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream and a modeled error', async () => {
    const client = awsClient(fake.url, { http1: true });
    const plain = await client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hello there' }] }] }));
    expect(plain.output?.message?.content?.[0]?.text).toMatch(/^Echo \d+: hello there$/);
    expect(plain.stopReason).toBe('end_turn');
    expect(fake.calls.at(-1)!.url).toBe(`/model/${encodeURIComponent(MODEL)}/converse`);
    expect(fake.calls.at(-1)!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIATAPEDECKFAKE7Q2X\//);

    const streamed = await client.send(new ConverseStreamCommand({ modelId: MODEL_ARN, messages: [{ role: 'user', content: [{ text: 'stream me' }] }] }));
    const events: ConverseStreamOutput[] = [];
    for await (const e of streamed.stream!) events.push(e);
    expect(Object.keys(events[0]!)).toEqual(['messageStart']);
    expect(events.map((e) => e.contentBlockDelta?.delta?.text ?? '').join('')).toMatch(/^Echo \d+: stream me $/);
    expect(events.at(-2)!.messageStop?.stopReason).toBe('end_turn');
    expect(events.at(-1)!.metadata?.usage?.totalTokens).toBe(19);
    expect(fake.calls.at(-1)!.modelId).toBe(MODEL_ARN);

    const tools = await client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'weather?' }] }], toolConfig: { tools: [weather] } }));
    expect(tools.output?.message?.content?.[0]?.toolUse).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });

    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'invoke me' }] };
    const inv = await client.send(new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: JSON.stringify(body) }));
    expect(JSON.parse(new TextDecoder().decode(inv.body)).content[0].text).toMatch(/^Echo \d+: invoke me$/);

    const invStream = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', body: JSON.stringify(body) }));
    const types: string[] = [];
    for await (const e of invStream.body!) types.push(JSON.parse(new TextDecoder().decode(e.chunk!.bytes)).type);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');

    const err = await client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'THROTTLE' }] }] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottlingException);
    expect((err as Error).message).toBe('Too many requests, please wait before trying again.');
  });

  it('AI SDK Bedrock provider: text, stream, tool call, with SigV4 and with an API key', async () => {
    for (const apiKey of [false, true]) {
      const bedrock = aiSdkBedrock(fake.url, { apiKey });
      const r = await generateText({ model: bedrock(MODEL), prompt: 'hi from ai sdk' });
      expect(r.text).toMatch(/^Echo \d+: hi from ai sdk$/);
      expect(fake.calls.at(-1)!.headers.authorization).toMatch(apiKey ? /^Bearer / : /^AWS4-HMAC-SHA256 /);
      const s = streamText({ model: bedrock(MODEL), prompt: 'stream from ai sdk' });
      expect(await s.text).toMatch(/^Echo \d+: stream from ai sdk $/);
      expect(await s.finishReason).toBe('stop');
      const t = await generateText({
        model: bedrock(MODEL),
        prompt: 'weather?',
        tools: { get_weather: tool({ description: 'Weather for a city', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }) }) },
      });
      expect(t.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'Paris' } });
    }
  });
});
