// Signature and hybrid matching never answer a request with a recording of another answer shape
// (a user trial): a streamed recording given to a plain request made the OpenAI SDK throw a
// TypeError, and a plain one given to a stream request made it yield no chunk at all, silently.
// The shape-deciding arguments partition the fallback candidates as they partition the keys
// (docs/matching.md, "Fallbacks"), through createFetch, the proxy and the browser's
// createReplayFetch, with the real OpenAI SDK.
import OpenAI from 'openai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReplayFetch, loadTape } from '../../src/browser/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-fallback-shape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The trial's tape: a plain "Hello" recorded twice, then a streamed "Tell me a story".
const tape = join(dir, 'chat.tape');
// Recordings of one shape only, for requests of the other ("Echo 4: Hello", "Echo 5: Tell me a story").
const plainOnly = join(dir, 'plain.tape');
const streamedOnly = join(dir, 'streamed.tape');

const model = 'gpt-4o-mini';
const ask = (content: string) => ({ model, messages: [{ role: 'user' as const, content }] });

beforeAll(async () => {
  const upstream = await startUpstream({ gapMs: 0 });
  const record = async (file: string, calls: (o: OpenAI) => Promise<void>) => {
    const rec = createFetch({ tape: file, mode: 'record' });
    try {
      await calls(new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec }));
    } finally {
      await rec.close();
    }
  };
  const drain = async (s: AsyncIterable<unknown>) => {
    for await (const _ of s);
  };
  try {
    await record(tape, async (o) => {
      await o.chat.completions.create(ask('Hello'));
      await o.chat.completions.create(ask('Hello'));
      await drain(await o.chat.completions.create({ ...ask('Tell me a story'), stream: true }));
    });
    await record(plainOnly, async (o) => void (await o.chat.completions.create(ask('Hello'))));
    await record(streamedOnly, async (o) => drain(await o.chat.completions.create({ ...ask('Tell me a story'), stream: true })));
  } finally {
    await upstream.close();
  }
});

type Via = 'createFetch' | 'proxy' | 'createReplayFetch';

/** An OpenAI client replaying `file` through `via` with `match`, and its close. */
async function replaying(via: Via, file: string, match: 'signature' | 'hybrid'): Promise<{ client: OpenAI; close(): Promise<void> }> {
  if (via === 'proxy') {
    const proxy = await startProxy({ tape: file, mode: 'replay', port: 0, match });
    return { client: new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), close: () => proxy.close() };
  }
  const f = via === 'createFetch' ? createFetch({ tape: file, mode: 'replay', match }) : createReplayFetch({ tape: await loadTape(readFileSync(file)), match, onWarning: () => {} });
  // On the host the tape was recorded for (a loopback host's port is not compared).
  return { client: new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test', maxRetries: 0, fetch: f }), close: () => f.close() };
}

/** A stream request read to its end: the chunks' text, their number and how it was matched. */
async function streamed(client: OpenAI, content: string): Promise<{ text: string; chunks: number; match: string | null }> {
  const { data, response } = await client.chat.completions.create({ ...ask(content), stream: true }).withResponse();
  let text = '';
  let chunks = 0;
  for await (const c of data) {
    chunks++;
    text += c.choices[0]?.delta?.content ?? '';
  }
  return { text, chunks, match: response.headers.get('x-tapedeck-match') };
}

/** A plain request: the answer's text and how it was matched. */
async function plain(client: OpenAI, content: string): Promise<{ text: string | null; match: string | null }> {
  const { data, response } = await client.chat.completions.create(ask(content)).withResponse();
  return { text: data.choices[0]!.message.content, match: response.headers.get('x-tapedeck-match') };
}

describe.each(['createFetch', 'proxy', 'createReplayFetch'] as const)('%s', (via) => {
  it.each(['signature', 'hybrid'] as const)('match %s: a stream request gets the streamed recording, a plain one a plain recording', async (match) => {
    const { client, close } = await replaying(via, tape, match);
    try {
      // Before: the plain "Hello" answer, which the SDK read as a stream of no chunk.
      const joke = await streamed(client, 'Tell me a joke');
      expect([joke.text, joke.match]).toEqual(['Echo 3: Tell me a story ', 'signature']);
      expect(joke.chunks).toBeGreaterThan(1);
      // Before: the story's event stream, which the SDK failed to read (a TypeError).
      for (let i = 0; i < 3; i++) {
        const hi = await plain(client, 'Hi');
        expect(hi.text).toMatch(/^Echo [12]: Hello$/);
        expect(hi.match).toBe('signature');
      }
      // Before: the story again, although "Hello" itself is recorded.
      const hello = await plain(client, 'Hello');
      expect(hello.text).toMatch(/^Echo [12]: Hello$/);
      expect(hello.match).toBe('exact');
    } finally {
      await close();
    }
  });

  it.each(['signature', 'hybrid'] as const)('match %s: with no recording of the same shape, a stream request misses (no empty stream)', async (match) => {
    const { client, close } = await replaying(via, plainOnly, match);
    try {
      const err = await streamed(client, 'Tell me a joke').then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('E_MISS');
      // The plain recording still answers a plain request of its signature.
      expect((await plain(client, 'Hi')).text).toBe('Echo 4: Hello');
    } finally {
      await close();
    }
  });

  it.each(['signature', 'hybrid'] as const)('match %s: with no recording of the same shape, a plain request misses (no event stream to parse)', async (match) => {
    const { client, close } = await replaying(via, streamedOnly, match);
    try {
      const err = await plain(client, 'Hi').then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('E_MISS');
      expect((await streamed(client, 'Tell me a joke')).text).toBe('Echo 5: Tell me a story ');
    } finally {
      await close();
    }
  });
});
