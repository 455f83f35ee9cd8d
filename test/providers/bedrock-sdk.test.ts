// Bedrock through tapedeck with the real clients: the AWS SDK as shipped (HTTP/2 to the proxy)
// and the AI SDK's Bedrock provider (SigV4 and API key). Record against the loopback Bedrock,
// then replay with it stopped: the same answers, the same event-stream bytes (CRCs included),
// paced as recorded; a changed prompt is a miss the SDK raises as its own exception with
// tapedeck's diagnosis; a reordered body still hits; a cut stream is never recorded; no
// credential reaches the tape.
import {
  BedrockRuntimeServiceException,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  type ContentBlock,
  type ConverseStreamOutput,
  type Message,
} from '@aws-sdk/client-bedrock-runtime';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { decodeEventStream, headerString } from '../../src/providers/wire/aws-eventstream.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { ConversationTree } from '../../src/tree/tree.ts';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { aiSdkBedrock, awsClient, CREDENTIALS, MODEL, MODEL_ARN, SECRETS } from './bedrock-clients.ts';
import { startBedrock } from './fake-bedrock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bedrock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const weather = { toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } } };

async function records(tape: string): Promise<HttpRecord[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
}

/** Every secret the clients sent, and telltale pieces of a SigV4 header, must be absent from the tape's bytes. */
function expectNoSecrets(tape: string): void {
  const bytes = readFileSync(tape);
  for (const s of [...SECRETS, 'AWS4-HMAC-SHA256 Credential', 'Signature=']) {
    expect(bytes.includes(Buffer.from(s)), `${s} on the tape`).toBe(false);
    // Fragments too: a secret cut in two by a chunk boundary or a mask that keeps a prefix.
    if (s.length > 20) expect(bytes.includes(Buffer.from(s.slice(4, 20))), `part of ${s} on the tape`).toBe(false);
  }
}

const text = (c: ContentBlock[] | undefined) => (c ?? []).map((b) => b.text ?? '').join('');
async function events(stream: AsyncIterable<ConverseStreamOutput> | undefined): Promise<ConverseStreamOutput[]> {
  const out: ConverseStreamOutput[] = [];
  for await (const e of stream!) out.push(e);
  return out;
}

/** One run of every AWS SDK call; returns what a test compares between record and replay. */
async function awsCalls(proxy: ProxyServer) {
  const client = awsClient(proxy.url);
  const out: Record<string, unknown> = {};
  const plain = await client.send(new ConverseCommand({ modelId: MODEL, system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }], inferenceConfig: { maxTokens: 200, temperature: 0 } }));
  out.plain = plain.output;
  out.stream = await events((await client.send(new ConverseStreamCommand({ modelId: MODEL_ARN, messages: [{ role: 'user', content: [{ text: 'stream bedrock' }] }] }))).stream);
  // Tool round trip: the model asks for the tool, the result goes back, the model answers.
  const history: Message[] = [{ role: 'user', content: [{ text: 'weather in Paris?' }] }];
  const ask = await client.send(new ConverseCommand({ modelId: MODEL, messages: history, toolConfig: { tools: [weather] } }));
  const use = ask.output!.message!.content![0]!.toolUse!;
  history.push(ask.output!.message!, { role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ json: { tempC: 21 } }] } }] });
  const final = await client.send(new ConverseCommand({ modelId: MODEL, messages: history, toolConfig: { tools: [weather] } }));
  out.tool = [ask.output, final.output];
  const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'invoke bedrock' }] });
  out.invoke = JSON.parse(new TextDecoder().decode((await client.send(new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body }))).body));
  const chunks: unknown[] = [];
  for await (const e of (await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', body }))).body!) chunks.push(JSON.parse(new TextDecoder().decode(e.chunk!.bytes)));
  out.invokeStream = chunks;
  client.destroy();
  return out;
}

const converseBody = { messages: [{ role: 'user', content: [{ text: 'raw stream bytes' }] }], inferenceConfig: { maxTokens: 50 } };
const reordered = '{ "inferenceConfig" : { "maxTokens" : 50.0 },\n "messages":[{"content":[{"text":"raw stream bytes"}],"role":"user"}] }';

/** A ConverseStream call by hand (HTTP/1.1), for the answer's raw bytes and their timing. */
async function rawStream(url: string, body: string) {
  const t0 = performance.now();
  const res = await fetch(`${url}/model/${encodeURIComponent(MODEL)}/converse-stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ABSKQmVkcm9ja0FQSUtleS10YXBlZGVja2Zha2UtYXBpLWtleQ==' },
    body,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, match: res.headers.get('x-tapedeck-match'), bytes, ms: performance.now() - t0 };
}

describe('Bedrock through the proxy with the AWS SDK', () => {
  it('records, then replays with Bedrock stopped: same answers, same stream bytes and CRCs, recorded timing', async () => {
    const tape = join(dir, 'aws.tape');
    const fake = await startBedrock({ gapMs: 20 });
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    const live = await awsCalls(rec);
    const liveRaw = await rawStream(rec.url, JSON.stringify(converseBody));
    await rec.close();
    await fake.close();
    expect(liveRaw.status).toBe(200);
    expect(text((live.plain as { message: Message }).message.content)).toMatch(/^Echo \d+: hello bedrock$/);
    expect((live.tool as { message: Message }[])[1]!.message.content![0]!.text).toMatch(/^Echo \d+: $/);
    expectNoSecrets(tape);
    const recs = await records(tape);
    expect(recs).toHaveLength(7);
    // The stored request headers keep no SigV4 value at all.
    for (const r of recs) for (const h of ['authorization', 'x-amz-security-token', 'x-amz-date', 'x-amz-content-sha256']) expect(String(r.request.headers?.[h] ?? '')).not.toMatch(/AKIA|Signature=|\d{8}T\d{6}Z|^[0-9a-f]{64}$/);

    // The conversation tree continues the recorded answer where the next request continues
    // it: the tool round trip is one path (question, toolUse, toolResult, answer), no branch.
    const all = ConversationTree.fromRecords((await readTape(tape)).records);
    expect(all.warnings).toEqual([]);
    const roundTrip = ConversationTree.fromRecords(recs.filter((r) => JSON.stringify(r.request.body).includes('weather in Paris?')));
    expect(roundTrip.stats()).toMatchObject({ roots: 1, nodes: 4, branchPoints: 0, exchanges: 2 });

    const play = await startProxy({ tape, mode: 'replay', port: 0, timing: 'recorded' });
    const again = await awsCalls(play);
    expect(again).toEqual(live);
    const replayRaw = await rawStream(play.url, JSON.stringify(converseBody));
    expect(replayRaw.match).not.toBe('miss');
    expect(replayRaw.bytes.equals(liveRaw.bytes)).toBe(true);
    // Real frames: they decode, every CRC right, and end as ConverseStream ends.
    expect(decodeEventStream(replayRaw.bytes).map((m) => headerString(m, ':event-type')).slice(-2)).toEqual(['messageStop', 'metadata']);
    // Paced as recorded: the frames came 20 ms apart live.
    expect(replayRaw.ms).toBeGreaterThan(liveRaw.ms * 0.5);
    // Member order, spacing and number spelling do not matter.
    const re = await rawStream(play.url, reordered);
    expect(re.match).not.toBe('miss');
    expect(re.bytes.equals(liveRaw.bytes)).toBe(true);

    // A changed prompt: the SDK raises its own modeled exception with tapedeck's diagnosis.
    const client = awsClient(play.url);
    const err = await client.send(new ConverseCommand({ modelId: MODEL, system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'hello bedrock, changed' }] }], inferenceConfig: { maxTokens: 200, temperature: 0 } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BedrockRuntimeServiceException);
    const e = err as BedrockRuntimeServiceException & { tapedeck?: { code: string } };
    expect(['ValidationException', 'ResourceNotFoundException']).toContain(e.name);
    expect(e.$metadata.httpStatusCode === 404 ? 'ResourceNotFoundException' : 'ValidationException').toBe(e.name);
    expect(e.message).toMatch(/^tapedeck miss: /);
    expect(e.message.split('\n')[0]!.length).toBeLessThan(400);
    expect(e.tapedeck?.code).toBe('E_MISS');
    // Another model in the path is a miss too: the model is in the key.
    const other = await client.send(new ConverseCommand({ modelId: 'anthropic.claude-3-haiku-20240307-v1:0', system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }], inferenceConfig: { maxTokens: 200, temperature: 0 } })).catch((x: unknown) => x);
    expect((other as Error).message).toMatch(/^tapedeck miss: /);
    // The diagnosis reads the Converse shape: which message and what in it, the model in the path.
    expect(e.message).toMatch(/message 1 \(user\) text differs/);
    expect((other as Error).message).toMatch(/model differs: anthropic\.claude-3-haiku-20240307-v1:0 vs us\.anthropic\.claude-sonnet-4-5/);
    client.destroy();
    await play.close();
  });

  it('a stream cut before messageStop (or message_stop) is passed on but never recorded', async () => {
    const tape = join(dir, 'cut.tape');
    const fake = await startBedrock({ gapMs: 2 });
    const warnings: string[] = [];
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: (w: string) => warnings.push(w) });
    const client = awsClient(rec.url);
    const got = await events((await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'CUT STREAM here' }] }] }))).stream);
    expect(got.some((x) => x.messageStop)).toBe(false);
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: [{ role: 'user', content: 'CUT STREAM invoke' }] });
    const chunks: string[] = [];
    for await (const x of (await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', body }))).body!) chunks.push(JSON.parse(new TextDecoder().decode(x.chunk!.bytes)).type);
    expect(chunks).not.toContain('message_stop');
    // A whole one in the same session is recorded.
    await events((await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'whole stream' }] }] }))).stream);
    client.destroy();
    await rec.close();
    await fake.close();
    const recs = await records(tape);
    expect(recs.map((r) => JSON.stringify(r.request.body).includes('whole stream'))).toEqual([true]);
    expect(warnings.join('\n')).toMatch(/not recorded/);
  });
});

describe('Bedrock through the proxy with the AI SDK provider', () => {
  for (const apiKey of [false, true]) {
    it(`records and replays text, a stream and a tool round trip (${apiKey ? 'Bedrock API key' : 'SigV4'})`, async () => {
      const tape = join(dir, `ai-${apiKey}.tape`);
      const tools = {
        get_weather: tool({
          description: 'Weather for a city',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          execute: async ({ city }) => ({ city, tempC: 21 }),
        }),
      };
      const run = async (url: string) => {
        const bedrock = aiSdkBedrock(url, { apiKey });
        const a = await generateText({ model: bedrock(MODEL), prompt: 'hello from the ai sdk' });
        const s = streamText({ model: bedrock(MODEL), prompt: 'stream from the ai sdk' });
        const streamed = await s.text;
        const t = await generateText({ model: bedrock(MODEL), prompt: 'weather in Paris?', tools, stopWhen: stepCountIs(2) });
        return { a: a.text, streamed, calls: t.steps[0]!.toolCalls.map((c) => [c.toolName, c.input]), final: t.text };
      };
      const fake = await startBedrock({ gapMs: 2 });
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
      const live = await run(rec.url);
      await rec.close();
      await fake.close();
      expect(live.a).toMatch(/^Echo \d+: hello from the ai sdk$/);
      expect(live.calls).toEqual([['get_weather', { city: 'Paris' }]]);
      expectNoSecrets(tape);
      const play = await startProxy({ tape, mode: 'replay', port: 0 });
      expect(await run(play.url)).toEqual(live);
      const miss = await generateText({ model: aiSdkBedrock(play.url, { apiKey })(MODEL), prompt: 'hello from the ai sdk, changed', maxRetries: 0 }).catch((e: unknown) => e);
      expect((miss as Error).message).toMatch(/^tapedeck miss: /);
      await play.close();
    });
  }

  it('through createFetch (the provider calls the host itself): record, replay with Bedrock stopped, miss', async () => {
    const tape = join(dir, 'ai-fetch.tape');
    const fake = await startBedrock({ gapMs: 2 });
    const run = async (fetch: typeof globalThis.fetch) => {
      const bedrock = createAmazonBedrock({ baseURL: fake.url, region: 'us-east-1', ...CREDENTIALS, fetch });
      const a = await generateText({ model: bedrock(MODEL), prompt: 'fetch path', maxRetries: 0 });
      const s = streamText({ model: bedrock(MODEL), prompt: 'fetch stream' });
      return { a: a.text, s: await s.text };
    };
    const rec = createFetch({ tape, mode: 'record' });
    const live = await run(rec);
    await rec.close();
    await fake.close();
    expect(live.a).toMatch(/^Echo \d+: fetch path$/);
    expectNoSecrets(tape);
    const play = createFetch({ tape, mode: 'replay' });
    expect(await run(play)).toEqual(live);
    const miss = await generateText({ model: createAmazonBedrock({ baseURL: fake.url, region: 'us-east-1', ...CREDENTIALS, fetch: play })(MODEL), prompt: 'fetch path?', maxRetries: 0 }).catch((e: unknown) => e);
    expect((miss as Error).message).toMatch(/^tapedeck miss: /);
    await play.close();
  });
});
