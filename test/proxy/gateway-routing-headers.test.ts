// An LLM gateway's OpenAI-compatible endpoint may pick the provider or account by a header, the
// body and URL staying the same: Portkey's `x-portkey-virtual-key` / `x-portkey-provider` /
// `x-portkey-config`, Helicone's `Helicone-Target-Url`. Two such calls get two answers, so their
// recordings are filed apart: a call never replays the answer another virtual key or target
// got, and a virtual key (a secret-named header) is never written to the tape, in the route
// name either. Per-run headers of the same gateways (`x-portkey-trace-id`) change nothing.
// Driven by the real OpenAI SDK against a loopback fake provider.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-gateway-'));
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const VK_A = 'openai-prod-vk-7f3a9c';
const VK_B = 'anthropic-team-vk-2d81e4';

/** One chat call's text through `fetchImpl`, with the gateway headers given. */
async function say(fetchImpl: typeof fetch, headers: Record<string, string>, baseURL = `${upstream.url}/v1`): Promise<string> {
  const client = new OpenAI({ apiKey: 'sk-replay', baseURL, fetch: fetchImpl, maxRetries: 0, defaultHeaders: { 'x-portkey-api-key': 'pk-live-Qw3rTy8uIo1pAs5dFgHj', ...headers } });
  const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi' }] });
  return r.choices[0]!.message.content ?? '';
}

async function missOf(fetchImpl: typeof fetch, headers: Record<string, string>, baseURL?: string): Promise<Error> {
  try {
    const got = await say(fetchImpl, headers, baseURL);
    throw new Error(`served ${JSON.stringify(got)} where a miss was expected`);
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    return e;
  }
}

const trace = () => ({ 'x-portkey-trace-id': `run-${Math.random().toString(36).slice(2)}` });

describe('a gateway header that picks the provider files recordings apart', () => {
  it('each virtual key replays its own answer, in any order; an unrecorded one misses naming the header; the key is not on the tape', async () => {
    const tape = join(dir, 'portkey.tape');
    const rec = createFetch({ tape, mode: 'record' });
    let a, b;
    try {
      a = await say(rec, { 'x-portkey-virtual-key': VK_A, ...trace() });
      b = await say(rec, { 'x-portkey-virtual-key': VK_B, ...trace() });
    } finally {
      await rec.close();
    }
    expect(a).not.toBe(b);

    const play = createFetch({ tape, mode: 'replay' });
    try {
      // B first: before, the first recording of the body (A's) answered whoever asked first.
      expect(await say(play, { 'x-portkey-virtual-key': VK_B, ...trace() })).toBe(b);
      expect(await say(play, { 'x-portkey-virtual-key': VK_A, ...trace() })).toBe(a);
      const miss = await missOf(play, { 'x-portkey-virtual-key': 'groq-vk-0c4411', ...trace() });
      expect(miss.message).toContain('x-portkey-virtual-key');
      expect(miss.message).not.toContain('groq-vk-0c4411');
    } finally {
      await play.close();
    }
    const bytes = readFileSync(tape).toString('latin1');
    for (const secret of [VK_A, VK_B, 'pk-live-Qw3rTy8uIo1pAs5dFgHj']) expect(bytes).not.toContain(secret);
  });

  it('x-portkey-provider and Helicone-Target-Url pick the answer too; a call without them keeps its own recording', async () => {
    const tape = join(dir, 'provider.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const answers: string[] = [];
    const variants: Record<string, string>[] = [{}, { 'x-portkey-provider': 'openai' }, { 'x-portkey-provider': 'anthropic' }, { 'Helicone-Target-Url': 'https://api.groq.com' }, { 'Helicone-Target-Url': 'https://api.together.xyz' }];
    try {
      for (const v of variants) answers.push(await say(rec, v));
    } finally {
      await rec.close();
    }
    expect(new Set(answers).size).toBe(variants.length);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      for (const i of [4, 2, 0, 3, 1]) expect(await say(play, variants[i]!)).toBe(answers[i]);
    } finally {
      await play.close();
    }
  });

  it('the proxy files them apart too', async () => {
    const tape = join(dir, 'proxy.tape');
    const recording = await startProxy({ tape, mode: 'record', upstream: upstream.url, port: 0 });
    let a, b;
    try {
      a = await say(fetch, { 'x-portkey-virtual-key': VK_A, ...trace() }, `${recording.url}/v1`);
      b = await say(fetch, { 'x-portkey-virtual-key': VK_B, ...trace() }, `${recording.url}/v1`);
    } finally {
      await recording.close();
    }
    const replaying = await startProxy({ tape, mode: 'replay', upstream: upstream.url, port: 0 });
    try {
      expect(await say(fetch, { 'x-portkey-virtual-key': VK_B, ...trace() }, `${replaying.url}/v1`)).toBe(b);
      expect(await say(fetch, { 'x-portkey-virtual-key': VK_A, ...trace() }, `${replaying.url}/v1`)).toBe(a);
    } finally {
      await replaying.close();
    }
    expect(readFileSync(tape).toString('latin1')).not.toContain(VK_B);
  });

  it("joins a provider's own filing headers: Anthropic's betas through a gateway replay their own answer", async () => {
    const tape = join(dir, 'anthropic.tape');
    const ask = async (f: typeof fetch, provider: string, betas?: string[]) => {
      const client = new Anthropic({ apiKey: 'k', baseURL: upstream.url, fetch: f, maxRetries: 0, defaultHeaders: { 'x-portkey-provider': provider } });
      const args = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Say hi' }] };
      const r = betas ? await client.beta.messages.create({ ...args, betas }) : await client.messages.create(args);
      const block = r.content[0];
      return block?.type === 'text' ? block.text : '';
    };
    const rec = createFetch({ tape, mode: 'record' });
    const got: string[] = [];
    try {
      got.push(await ask(rec, 'anthropic'), await ask(rec, 'anthropic', ['output-128k-2025-02-19']), await ask(rec, 'bedrock', ['output-128k-2025-02-19']));
    } finally {
      await rec.close();
    }
    expect(new Set(got).size).toBe(3);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await ask(play, 'bedrock', ['output-128k-2025-02-19'])).toBe(got[2]);
      expect(await ask(play, 'anthropic')).toBe(got[0]);
      expect(await ask(play, 'anthropic', ['output-128k-2025-02-19'])).toBe(got[1]);
    } finally {
      await play.close();
    }
  });
});
