// @ai-sdk/anthropic sends `anthropic-beta: structured-outputs-…` by itself whenever tools are
// passed, and recordings are filed apart by that header. A call recorded with tools and replayed
// without them missed with "no anthropic-beta sent; recorded with anthropic-beta: …", a header
// the user never set, instead of naming the tools. Now the body's difference from the closest
// recording filed under the other header comes first, and the header after it, as what follows.
// Driven by the real AI SDK (generateText, @ai-sdk/anthropic) against the loopback fake.
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, jsonSchema, tool } from 'ai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-beta-tools-'));
const tape = join(dir, 'agent.tape');
let upstream: Upstream;

const get_weather = tool({ description: 'Weather in a city', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }) });
const PROMPT = 'Weather in Paris?';

function model(f: typeof fetch) {
  return createAnthropic({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-ant-test', fetch: f })('claude-sonnet-4-5');
}

/** The error a call raises (the AI SDK wraps the miss's 4xx answer in an APICallError). */
async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('the call was served where a miss was expected');
}

beforeAll(async () => {
  upstream = await startUpstream();
  const rec = createFetch({ tape, mode: 'record', summary: false });
  try {
    await generateText({ model: model(rec), tools: { get_weather }, prompt: PROMPT, maxRetries: 0 });
  } finally {
    await rec.close();
  }
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a call recorded with tools, replayed without them (@ai-sdk/anthropic)', () => {
  it('was recorded under the beta header the AI SDK added for the tools', async () => {
    const records = (await readTape(tape)).records.map((r) => r.value as { route: string });
    expect(records.map((r) => r.route)).toEqual([expect.stringMatching(/^POST \/v1\/messages \(anthropic-beta: structured-outputs-/)]);
  });

  it('names the tools first, and the header only as what follows from them', async () => {
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      // The same call replays.
      const same = await generateText({ model: model(play), tools: { get_weather }, prompt: PROMPT, maxRetries: 0 });
      expect(same.toolCalls.map((c) => c.toolName)).toEqual(['get_weather']);
      const e = await failure(generateText({ model: model(play), prompt: PROMPT, maxRetries: 0 }));
      const message = e.message.replace(/^.*?tapedeck miss: /s, '');
      expect(message).toMatch(/^tools differ/);
      expect(message).toContain('get_weather');
      // The header is said after the body's difference, never as the headline.
      expect(message.indexOf('anthropic-beta')).toBeGreaterThan(message.indexOf('get_weather'));
      expect(message).toMatch(/; with it, no anthropic-beta sent/);
    } finally {
      await play.close();
    }
  });

  it('the other way round too: recorded without tools, replayed with them', async () => {
    const plain = join(dir, 'plain.tape');
    const rec = createFetch({ tape: plain, mode: 'record', summary: false });
    try {
      await generateText({ model: model(rec), prompt: PROMPT, maxRetries: 0 });
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape: plain, mode: 'replay', summary: false });
    try {
      const e = await failure(generateText({ model: model(play), tools: { get_weather }, prompt: PROMPT, maxRetries: 0 }));
      const message = e.message.replace(/^.*?tapedeck miss: /s, '');
      expect(message).toMatch(/^tools differ/);
      expect(message).toContain('+get_weather');
    } finally {
      await play.close();
    }
  });
});
