// A test tape's misses in every provider's error shape. Each provider's SDK reads its own error
// body (Gemini: `{ error: { code, message, status, details } }`, Bedrock: `{ message }` beside
// x-amzn-errortype, Ollama: `{ error: "<text>" }`), so the test helpers must not read the miss
// from one shape's body: the run summary and the failure at close name the route and say what
// differs, and a test never recorded says so in the SDK's error, whatever the provider. Also a
// miss answered by the test's own proxy (serve(), for clients that take no fetch, like the AWS
// SDK) fails the test, even when the code under test swallows it.
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { GoogleGenAI } from '@google/genai';
import { generateText } from 'ai';
import { Ollama } from 'ollama';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape, type TestTape } from '../../src/testing/session.ts';
import { aiSdkBedrock, awsClient, MODEL } from '../providers/bedrock-clients.ts';
import { startBedrock, type FakeBedrock } from '../providers/fake-bedrock.ts';
import { startGemini, type FakeGemini } from '../proxy/fake-gemini.ts';
import { startFakeOllama, type FakeOllama } from '../proxy/fake-ollama.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-miss-shapes-'));
const GEMINI_KEY = 'AIza' + 'SyMissShapes0123456789abcdefghijkl';
let gemini: FakeGemini;
let bedrock: FakeBedrock;
let ollamaUp: FakeOllama;
beforeAll(async () => {
  [gemini, bedrock, ollamaUp] = await Promise.all([startGemini(), startBedrock(), startFakeOllama()]);
});
afterAll(async () => {
  await Promise.all([gemini.close(), bedrock.close(), ollamaUp.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const COMMAND = 'TAPEDECK_MODE=update npx vitest run shapes.test.ts';
const open = (name: string, mode: 'update' | 'replay') => openTestTape({ tape: join(dir, `${name}.tape`), env: mode === 'replay' ? { TAPEDECK_MODE: 'replay' } : {}, recordCommand: COMMAND, test: name });

/** One call of a provider's client through a test tape, asking `prompt`. */
type Call = (tape: TestTape, prompt: string) => Promise<unknown>;

const CLIENTS: Record<string, { route: RegExp; call: Call }> = {
  '@google/genai': {
    route: /^POST \/v1beta\/models\/gemini-2\.5-flash:generateContent$/,
    call: (t, p) =>
      new GoogleGenAI({ apiKey: GEMINI_KEY, httpOptions: { baseUrl: gemini.url, fetch: t.fetch, retryOptions: { attempts: 1 } } as never }).models.generateContent({ model: 'gemini-2.5-flash', contents: p }),
  },
  '@ai-sdk/google': {
    route: /^POST \/v1beta\/models\/gemini-2\.5-flash:generateContent$/,
    call: (t, p) => generateText({ model: createGoogleGenerativeAI({ apiKey: GEMINI_KEY, baseURL: `${gemini.url}/v1beta`, fetch: t.fetch })('gemini-2.5-flash'), prompt: p, maxRetries: 0 }),
  },
  '@ai-sdk/amazon-bedrock': {
    route: /^POST \/model\/.+\/converse$/,
    call: (t, p) => generateText({ model: aiSdkBedrock(bedrock.url, { fetch: t.fetch })(MODEL), prompt: p, maxRetries: 0 }),
  },
  ollama: {
    route: /^POST \/api\/chat$/,
    call: (t, p) => new Ollama({ host: ollamaUp.url, fetch: t.fetch }).chat({ model: 'llama3.2', messages: [{ role: 'user', content: p }] }),
  },
};

describe("a test tape's misses, whatever the provider's error shape", () => {
  for (const [name, { route, call }] of Object.entries(CLIENTS)) {
    const slug = name.replace(/\W+/g, '-');
    it(`${name}: the failure at close names the route and what differs, as the SDK's error does`, async () => {
      const rec = open(slug, 'update');
      await call(rec, 'Name a colour.');
      await rec.close();

      const play = open(slug, 'replay');
      const err = (await call(play, 'Name a fruit.').catch((e: unknown) => e)) as Error;
      expect(String(err.message)).toContain('tapedeck miss');
      expect(String(err.message)).toContain('fruit');
      expect(play.misses).toHaveLength(1);
      const miss = play.misses[0]!;
      expect(miss.route).toMatch(route);
      // What differs, not "the tape has no recordings": the prompt of message 0.
      expect(miss.diagnosis).toBe('message 0 (user) text differs from the closest recording');
      const failed = (await play.close().catch((e: unknown) => e)) as Error & { code?: string };
      expect(failed.code).toBe('E_MISS');
      expect(failed.message).toContain(miss.route);
      expect(failed.message).toContain(`Record it: ${COMMAND}`);
    });

    it(`${name}: a test never recorded says so in the SDK's error`, async () => {
      const play = open(`never-${slug}`, 'replay');
      // Not the request the test above recorded beside it: that tape would be named as this
      // test's under an old name (a renamed test's miss says so).
      const err = (await call(play, 'Name a shape.').catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      expect(String(err.message)).toContain('this test was never recorded');
      expect(play.misses.map((m) => m.diagnosis)).toEqual(['the tape does not exist yet (this test was never recorded)']);
      expect(play.misses[0]!.route).toMatch(route);
      await expect(play.close()).rejects.toMatchObject({ code: 'E_MISS' });
    });
  }

  it("the AWS SDK through the test's own proxy (serve): a swallowed miss still fails the test", async () => {
    const rec = open('aws-serve', 'update');
    const up = await rec.serve({ upstream: bedrock.url, tls: false });
    const ask = (url: string, text: string) => awsClient(url, { http1: true }).send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text }] }] }));
    await ask(up.url, 'Name a colour.');
    await rec.close();

    const play = open('aws-serve', 'replay');
    const { url } = await play.serve({ tls: false });
    // The code under test catches the error and carries on.
    const swallowed = await ask(url, 'Name a fruit.').then(() => 'answered', (e: Error) => e.message);
    expect(swallowed).toContain('tapedeck miss');
    expect(play.misses).toHaveLength(1);
    expect(play.misses[0]!.route).toMatch(/^POST \/model\/.+\/converse$/);
    expect(play.misses[0]!.diagnosis).toBe('message 0 (user) text differs from the closest recording');
    await expect(play.close()).rejects.toMatchObject({ code: 'E_MISS' });
  });
});
