// Azure OpenAI end to end with the openai package's AzureOpenAI client (deployment paths, the
// api-key header, an Entra ID token), and one OpenAI-compatible API through the plain OpenAI
// client with its extra members. Record through the proxy and createFetch against a fake, stop
// it, replay: the same answers, the same stream bytes; a bumped api-version still replays; a
// changed prompt is the SDK's own NotFoundError with tapedeck's diagnosis.
import OpenAI, { AzureOpenAI } from 'openai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { assembleAnswer } from '../../src/providers/index.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { startFakeAzure, type FakeAzure } from './fake-azure.ts';
import { startFakeOllama } from './fake-ollama.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-azure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AZURE_KEY = '4f1c' + '9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b';
const ENTRA_TOKEN = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9' + '.eyJhdWQiOiJjb2duaXRpdmVzZXJ2aWNlcyJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
const AZURE_QUERY_KEY = '7d2e' + '8f1a9b3c4d5e6f708192a3b4c5d6e7f8';
const COMPAT_KEY = 'sk-or-v1-' + '0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071';

const weather = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

function azure(endpoint: string, apiVersion: string, f?: typeof fetch, entra = false) {
  return new AzureOpenAI({
    endpoint,
    apiVersion,
    maxRetries: 0,
    ...(entra ? { azureADTokenProvider: async () => ENTRA_TOKEN } : { apiKey: AZURE_KEY }),
    ...(f ? { fetch: f } : {}),
  });
}

/** Every call a run makes: plain, streamed, a tool call round trip, embeddings, Entra ID auth. */
async function azureScript(endpoint: string, apiVersion: string, f?: typeof fetch) {
  const client = azure(endpoint, apiVersion, f);
  // The body's `model` is the deployment too (the SDK puts it in the path); Azure ignores it.
  const chat = await client.chat.completions.create({ model: 'gpt-4o-prod', temperature: 0, messages: [{ role: 'user', content: 'Hello Azure' }] });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-prod', stream: true, messages: [{ role: 'user', content: 'Stream from Azure' }] });
  let streamed = '';
  for await (const c of stream) streamed += c.choices[0]?.delta?.content ?? '';
  const raw = await client.chat.completions.create({ model: 'gpt-4o-prod', stream: true, messages: [{ role: 'user', content: 'Raw Azure bytes' }] }).asResponse();
  const ask = [{ role: 'user' as const, content: 'Weather in Paris?' }];
  const call = await client.chat.completions.create({ model: 'gpt-4o-prod', messages: ask, tools: [weather] });
  const tc = call.choices[0]!.message.tool_calls![0]!;
  const answer = await client.chat.completions.create({
    model: 'gpt-4o-prod',
    tools: [weather],
    messages: [...ask, call.choices[0]!.message, { role: 'tool', tool_call_id: tc.id, content: '18C' }],
  });
  const emb = await client.embeddings.create({ model: 'embed-small', input: ['one', 'two'] });
  const entra = await azure(endpoint, apiVersion, f, true).chat.completions.create({ model: 'chat-mini', messages: [{ role: 'user', content: 'Signed in with Entra ID' }] });
  return {
    chat: chat.choices[0]!.message.content,
    filters: (chat as unknown as { prompt_filter_results: unknown }).prompt_filter_results,
    streamed,
    raw: await raw.text(),
    toolCall: tc.type === 'function' ? tc.function : undefined,
    answer: answer.choices[0]!.message.content,
    embeddings: emb.data.map((d) => d.embedding),
    entra: entra.choices[0]!.message.content,
  };
}

function assertNoSecrets(tape: string) {
  const bytes = readFileSync(tape);
  for (const secret of [AZURE_KEY, ENTRA_TOKEN, AZURE_QUERY_KEY, COMPAT_KEY, COMPAT_KEY.slice(9)]) expect(bytes.indexOf(Buffer.from(secret)), `${secret} in ${tape}`).toBe(-1);
}

async function caught<T>(p: Promise<T>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

describe('Azure OpenAI through the proxy', () => {
  let fake: FakeAzure;
  const tape = join(dir, 'proxy.tape');
  let recorded: Awaited<ReturnType<typeof azureScript>>;

  beforeAll(async () => {
    fake = await startFakeAzure(AZURE_KEY, ENTRA_TOKEN);
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      recorded = await azureScript(proxy.url, '2024-10-21');
    } finally {
      await proxy.close();
      await fake.close();
    }
  });

  it('recorded live answers on the deployment paths, with the credentials forwarded', () => {
    expect(recorded.chat).toBe('Azure gpt-4o-prod 1: Hello Azure');
    expect(recorded.streamed).toBe('Azure gpt-4o-prod 2: Stream from Azure ');
    expect(recorded.toolCall).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(recorded.answer).toBe('The tool said 18C');
    expect(recorded.embeddings).toHaveLength(2);
    expect(recorded.entra).toMatch(/^Azure chat-mini \d+: Signed in with Entra ID$/);
    expect(recorded.raw).toContain('"prompt_filter_results"');
    expect(fake.calls[0]!.url).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
    expect(fake.calls[0]!.headers['api-key']).toBe(AZURE_KEY);
    expect(fake.calls.at(-1)!.headers.authorization).toBe(`Bearer ${ENTRA_TOKEN}`);
  });

  it('replays with Azure gone, streams byte for byte, also after the SDK bumps api-version', async () => {
    for (const version of ['2024-10-21', '2025-04-01-preview']) {
      const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
      try {
        expect(await azureScript(proxy.url, version)).toEqual(recorded);
        // The first call's body with its members and message members reordered: still a hit.
        const res = await fetch(`${proxy.url}/openai/deployments/gpt-4o-prod/chat/completions?api-version=${version}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'api-key': AZURE_KEY },
          body: '{"messages":[{"content":"Hello Azure","role":"user"}],"temperature":0,"model":"gpt-4o-prod"}',
        });
        expect(res.headers.get('x-tapedeck-match')).toBe('exact');
        expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(recorded.chat);
        expect(proxy.handler.stats().misses).toBe(0);
      } finally {
        await proxy.close();
      }
    }
  });

  it('never writes the api-key or the Entra ID token to the tape', () => assertNoSecrets(tape));

  it('a changed prompt is the SDK NotFoundError with the diagnosis; another deployment is a miss that says so', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const client = azure(proxy.url, '2024-10-21');
      const err = await caught(client.chat.completions.create({ model: 'gpt-4o-prod', temperature: 0, messages: [{ role: 'user', content: 'Hello Azure!' }] }));
      expect(err).toBeInstanceOf(OpenAI.APIError);
      const e = err as InstanceType<typeof OpenAI.APIError>;
      expect(e.code).toBe('E_MISS');
      expect(e.message).toMatch(/^4\d\d tapedeck miss: message 0 \(user\) text differs from the closest recording; re-record: /);
      const other = await caught(client.chat.completions.create({ model: 'gpt-4o-staging', temperature: 0, messages: [{ role: 'user', content: 'Hello Azure' }] }));
      expect((other as InstanceType<typeof OpenAI.APIError>).code).toBe('E_MISS');
      expect((other as Error).message).toMatch(/tapedeck miss: model differs: gpt-4o-staging vs gpt-4o-prod in the recordings/);
    } finally {
      await proxy.close();
    }
  });
});

describe('Azure OpenAI through createFetch', () => {
  it('records and replays with Azure gone; the v1 path keys the model from the body', async () => {
    const tape = join(dir, 'fetch.tape');
    const fake = await startFakeAzure(AZURE_KEY, ENTRA_TOKEN);
    const rec = createFetch({ tape, mode: 'record' });
    const v1 = (f: typeof fetch) => new OpenAI({ baseURL: `${fake.url}/openai/v1`, apiKey: 'unused', defaultHeaders: { 'api-key': AZURE_KEY }, maxRetries: 0, fetch: f });
    let recorded;
    let v1Answer;
    try {
      recorded = await azureScript(fake.url, '2024-10-21', rec);
      v1Answer = (await v1(rec).chat.completions.create({ model: 'gpt-4o-v1', messages: [{ role: 'user', content: 'On the v1 path' }] })).choices[0]!.message.content;
      // The key in the query instead of the header (api-key=...): redacted in the stored URL too.
      const q = await rec(`${fake.url}/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21&api-key=${AZURE_QUERY_KEY}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': AZURE_KEY },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'key in the query' }] }),
      });
      expect(q.status).toBe(200);
      await q.text();
    } finally {
      await rec.close();
      await fake.close();
    }
    assertNoSecrets(tape);
    expect(v1Answer).toMatch(/^Azure gpt-4o-v1 \d+: On the v1 path$/);
    const play = createFetch({ tape, mode: 'replay', timing: 'recorded' });
    try {
      expect(await azureScript(fake.url, '2025-01-01-preview', play)).toEqual(recorded);
      expect((await v1(play).chat.completions.create({ model: 'gpt-4o-v1', messages: [{ role: 'user', content: 'On the v1 path' }] })).choices[0]!.message.content).toBe(v1Answer);
      const miss = await caught(v1(play).chat.completions.create({ model: 'gpt-4o-other', messages: [{ role: 'user', content: 'On the v1 path' }] }));
      expect((miss as InstanceType<typeof OpenAI.APIError>).message).toMatch(/tapedeck miss: .*model/);
    } finally {
      await play.close();
    }
  });
});

describe('Azure OpenAI tapes written before api-version left the route', () => {
  it('still replay, for the version they were recorded with and a newer one', async () => {
    const tape = join(dir, 'versioned.tape');
    const fake = await startFakeAzure(AZURE_KEY);
    const rec = createFetch({ tape, mode: 'record' });
    let first: string | null = null;
    try {
      first = (await azure(fake.url, '2024-10-21', rec).chat.completions.create({ model: 'gpt-4o-prod', messages: [{ role: 'user', content: 'Recorded long ago' }] })).choices[0]!.message.content;
    } finally {
      await rec.close();
      await fake.close();
    }
    // The record as an older tapedeck filed it: under its URL with the query.
    const older = join(dir, 'versioned-older.tape');
    await createTape(older);
    const records = (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
    expect(records.map((r) => r.route)).toEqual(['POST /openai/deployments/gpt-4o-prod/chat/completions']);
    await appendRecords(older, records.map((r) => ({ ...r, route: `${r.route}?api-version=2024-10-21`, request: { ...r.request, url: `${r.request.url}?api-version=2024-10-21` } })));
    const play = createFetch({ tape: older, mode: 'replay' });
    try {
      for (const version of ['2024-10-21', '2025-04-01-preview']) {
        const got = await azure(fake.url, version, play).chat.completions.create({ model: 'gpt-4o-prod', messages: [{ role: 'user', content: 'Recorded long ago' }] });
        expect(got.choices[0]!.message.content).toBe(first);
      }
    } finally {
      await play.close();
    }
  });
});

describe('an OpenAI-compatible API through the OpenAI client', () => {
  it('keys its extra members on purpose, keeps reasoning_content in streamed answers, replays', async () => {
    const tape = join(dir, 'compat.tape');
    const fake = await startFakeOllama();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    const client = (base: string) => new OpenAI({ baseURL: `${base}/v1`, apiKey: COMPAT_KEY, maxRetries: 0 });
    // OpenRouter-style routing and vLLM-style sampling members, and LM Studio's `ttl`.
    const body = (extra: Record<string, unknown>) => ({
      model: 'deepseek-reasoner',
      stream: true as const,
      messages: [{ role: 'user' as const, content: 'Think it over' }],
      provider: { order: ['deepseek'], allow_fallbacks: false },
      top_k: 40,
      min_p: 0.05,
      ttl: 300,
      ...extra,
    });
    async function run(base: string, extra: Record<string, unknown> = {}) {
      const s = client(base).chat.completions.stream(body(extra) as never);
      const final = await s.finalChatCompletion();
      return final.choices[0]!.message;
    }
    let recorded;
    try {
      recorded = await run(proxy.url);
    } finally {
      await proxy.close();
      await fake.close();
    }
    expect(recorded.content).toMatch(/^Echo \d+: Think it over $/);
    assertNoSecrets(tape);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      // `ttl` (how long LM Studio keeps the model loaded) is volatile: another value replays.
      expect(await run(play.url, { ttl: 5 })).toEqual(recorded);
      // A deciding member changed: a miss, whose diagnosis names it.
      const e = await caught(run(play.url, { provider: { order: ['together'] } }));
      expect((e as Error).message).toMatch(/tapedeck miss: .*provider/);
      const k = await caught(run(play.url, { top_k: 1 }));
      expect((k as Error).message).toMatch(/tapedeck miss: .*top_k/);
      // The tree's view of the stream keeps the reasoning.
      const rec = (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord)[0]!;
      const answer = assembleAnswer({ method: 'POST', url: '/v1/chat/completions' }, rec.response.headers['content-type'], rec.response.body) as { choices: { message: Record<string, unknown> }[] };
      expect(answer.choices[0]!.message.reasoning_content).toMatch(/^Reasoning \d+ $/);
    } finally {
      await play.close();
    }
  });
});
