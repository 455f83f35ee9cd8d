// Bedrock failing a stream after its 200, with the real AWS SDK (HTTP/2 to the proxy, as it
// ships): the fake Bedrock sends the first events of a ConverseStream or an
// InvokeModelWithResponseStream answer, then an exception frame (`:message-type` `exception`,
// `:exception-type` throttlingException or modelStreamErrorException), as Bedrock does. The SDK
// raises that modeled exception. Through tapedeck that is an upstream error, as a 4xx/5xx is:
// without recordErrors passed through and not recorded (not counted as a cut stream whose record
// failed); with recordErrors recorded, and replayed with Bedrock stopped as the same SDK
// exception, with the same message. The same through createFetch, with the AI SDK's Bedrock
// provider (which reports the exception as a stream error).
import {
  BedrockRuntimeServiceException,
  ConverseStreamCommand,
  InvokeModelWithResponseStreamCommand,
  ModelStreamErrorException,
  ThrottlingException,
  type BedrockRuntimeClient,
} from '@aws-sdk/client-bedrock-runtime';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { streamText } from 'ai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { awsClient, CREDENTIALS, MODEL } from './bedrock-clients.ts';
import { startBedrock } from './fake-bedrock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bedrock-stream-error-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a caller sees of a failed stream: the events before the error, and the error. */
interface Outcome {
  events: unknown[];
  error: unknown;
}

/** A ConverseStream call read to its end (or its error). */
async function converseStream(client: BedrockRuntimeClient, prompt: string): Promise<Outcome> {
  const events: unknown[] = [];
  try {
    const out = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: prompt }] }] }));
    for await (const e of out.stream!) events.push(e);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** An InvokeModelWithResponseStream call (Anthropic body) read to its end (or its error). */
async function invokeStream(client: BedrockRuntimeClient, prompt: string): Promise<Outcome> {
  const events: unknown[] = [];
  const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: prompt }] });
  try {
    const out = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', body }));
    for await (const e of out.body!) events.push(JSON.parse(new TextDecoder().decode(e.chunk!.bytes)));
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** The calls each test makes: both stream APIs, each failing with one of Bedrock's stream exceptions. */
async function failingCalls(url: string): Promise<Outcome[]> {
  const client = awsClient(url);
  try {
    return [await converseStream(client, 'STREAM THROTTLED please'), await invokeStream(client, 'STREAM MODEL ERROR please')];
  } finally {
    client.destroy();
  }
}

/** The error as a test compares it: its SDK class, name, message and fault. */
function described(e: unknown): { cls: string; name: string; message: string; fault: string } {
  expect(e).toBeInstanceOf(BedrockRuntimeServiceException);
  const x = e as BedrockRuntimeServiceException;
  return { cls: x.constructor.name, name: x.name, message: x.message, fault: x.$fault };
}

/** The live calls failed as Bedrock's stream exceptions fail them: after some events, with the modeled exception. */
function failedAsBedrockDoes(live: Outcome[]): void {
  expect(live[0]!.events.length).toBeGreaterThan(0);
  expect(live[0]!.error).toBeInstanceOf(ThrottlingException);
  expect((live[0]!.error as Error).message).toBe('Too many tokens, please wait before trying again.');
  expect(live[1]!.events.length).toBeGreaterThan(0);
  expect(live[1]!.error).toBeInstanceOf(ModelStreamErrorException);
  expect((live[1]!.error as ModelStreamErrorException).originalStatusCode).toBe(424);
}

describe('a Bedrock stream that fails with an exception frame, through the proxy with the AWS SDK', () => {
  it('without recordErrors: passed through, counted as an upstream error, not recorded', async () => {
    const tape = join(dir, 'plain.tape');
    const fake = await startBedrock({ gapMs: 2 });
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: (w: string) => warnings.push(w) });
    try {
      failedAsBedrockDoes(await failingCalls(proxy.url));
    } finally {
      // Closing waits for the exchanges still being judged (the SDK threw at the frame).
      await proxy.close();
      await fake.close();
    }
    // Passed through as an error answer is, not counted as a failed record (a cut stream).
    expect(proxy.handler.stats()).toMatchObject({ errors: 0, recorded: 0, appendFailures: 0, byMatch: { passthrough: 2 } });
    expect(warnings.join('\n')).toMatch(/carried an error event \(throttlingException: Too many tokens, please wait before trying again\.\); not recorded \(recordErrors records it\)/);
    expect(warnings.join('\n')).toMatch(/carried an error event \(modelStreamErrorException: Model stream error/);
    expect(warnings.join('\n')).not.toMatch(/ended before the answer was complete/);
    const records = await readTape(tape).then((t) => t.records.map((r) => r.value).filter(isHttpRecord)).catch(() => []);
    expect(records).toEqual([]);
  });

  it('with recordErrors: recorded, and replayed with Bedrock stopped as the same SDK exception and message', async () => {
    const tape = join(dir, 'recorded.tape');
    const fake = await startBedrock({ gapMs: 2 });
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, recordErrors: true, onWarning: () => {} });
    let live: Outcome[];
    try {
      live = await failingCalls(rec.url);
    } finally {
      await rec.close();
      await fake.close();
    }
    expect(rec.handler.stats()).toMatchObject({ recorded: 2, appendFailures: 0 });
    failedAsBedrockDoes(live);
    const records = (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
    expect(records).toHaveLength(2);
    for (const r of records) expect(r.response.status).toBe(200);

    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    let again: Outcome[];
    try {
      again = await failingCalls(play.url);
    } finally {
      await play.close();
    }
    expect(play.handler.stats()).toMatchObject({ hits: 2, misses: 0 });
    expect(again.map((o) => described(o.error))).toEqual(live.map((o) => described(o.error)));
    expect((again[1]!.error as ModelStreamErrorException).originalMessage).toBe((live[1]!.error as ModelStreamErrorException).originalMessage);
    // The events before the exception, as they came live.
    expect(again.map((o) => o.events)).toEqual(live.map((o) => o.events));
  });
});

describe('a Bedrock stream that fails with an exception frame, through createFetch with the AI SDK provider', () => {
  /** A streamText call on the fake (its URL, as the provider signs for it): its text, and the errors it reported. */
  async function aiSdkStream(fetch: typeof globalThis.fetch, baseURL: string): Promise<{ text: string; errors: string[] }> {
    const errors: unknown[] = [];
    const bedrock = createAmazonBedrock({ baseURL, region: 'us-east-1', ...CREDENTIALS, fetch });
    const s = streamText({ model: bedrock(MODEL), prompt: 'STREAM THROTTLED from the ai sdk', maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    const text = await s.text.catch((e: unknown) => (errors.push(e), ''));
    return { text, errors: errors.map((e) => JSON.stringify(e)) };
  }

  it('without recordErrors is passed through, not recorded; with it, replays as the same error', async () => {
    const fake = await startBedrock({ gapMs: 2 });
    const plain = createFetch({ tape: join(dir, 'ai-plain.tape'), mode: 'record', summary: false, onWarning: () => {} });
    const rec = createFetch({ tape: join(dir, 'ai-recorded.tape'), mode: 'record', recordErrors: true, summary: false, onWarning: () => {} });
    let live: Awaited<ReturnType<typeof aiSdkStream>>;
    try {
      await aiSdkStream(plain, fake.url);
      live = await aiSdkStream(rec, fake.url);
    } finally {
      await plain.close();
      await rec.close();
      await fake.close();
    }
    expect(await plain.stats()).toMatchObject({ errors: 0, recorded: 0, appendFailures: 0, byMatch: { passthrough: 1 } });
    expect(await rec.stats()).toMatchObject({ errors: 0, recorded: 1, appendFailures: 0 });
    expect(live.errors.join('\n')).toContain('Too many tokens, please wait before trying again.');

    const play = createFetch({ tape: join(dir, 'ai-recorded.tape'), mode: 'replay' });
    try {
      expect(await aiSdkStream(play, fake.url)).toEqual(live);
      expect(await play.stats()).toMatchObject({ hits: 1, misses: 0 });
    } finally {
      await play.close();
    }
  });
});
