// A fallback never takes a turn of another request (a user trial): under hybrid matching, a
// streamed "Tell me a joke" and a plain "Hi" fell back to the two recordings of "Hello", and
// "Hello", asked for the first time, was then answered by its SECOND recording. docs/modes.md
// rule 1 (the k-th ask of a key gets its k-th recording) holds whatever the fallbacks served,
// and a request whose own recordings exist is never answered by a fallback (docs/matching.md,
// "Fallbacks"). Through createFetch and the proxy, with the real OpenAI SDK.
import OpenAI from 'openai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-fallback-turns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The trial's tape: "Hello" recorded twice (chatcmpl-1, chatcmpl-2), then a streamed story
// (chatcmpl-3); and a plain "Goodbye" (chatcmpl-4), a fallback a used-up "Hello" could take.
const tape = join(dir, 'chat.tape');

const model = 'gpt-4o-mini';
const ask = (content: string) => ({ model, messages: [{ role: 'user' as const, content }] });

beforeAll(async () => {
  const upstream = await startUpstream({ gapMs: 0 });
  const rec = createFetch({ tape, mode: 'record' });
  try {
    const o = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec });
    await o.chat.completions.create(ask('Hello'));
    await o.chat.completions.create(ask('Hello'));
    for await (const _ of await o.chat.completions.create({ ...ask('Tell me a story'), stream: true }));
    await o.chat.completions.create(ask('Goodbye'));
  } finally {
    await rec.close();
    await upstream.close();
  }
});

/** An OpenAI client replaying the tape through `via`, and its close. */
async function replaying(via: 'createFetch' | 'proxy', match: 'signature' | 'hybrid', strictOrder = false, file = tape): Promise<{ client: OpenAI; close(): Promise<void> }> {
  if (via === 'proxy') {
    const proxy = await startProxy({ tape: file, mode: 'replay', port: 0, match, strictOrder, onWarning: () => {} });
    return { client: new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), close: () => proxy.close() };
  }
  const f = createFetch({ tape: file, mode: 'replay', match, strictOrder, onWarning: () => {} });
  // On the host the tape was recorded for (a loopback host's port is not compared).
  return { client: new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test', maxRetries: 0, fetch: f }), close: () => f.close() };
}

/** A plain request: the answer's id and how it was matched. */
async function plain(client: OpenAI, content: string): Promise<string> {
  const { data, response } = await client.chat.completions.create(ask(content)).withResponse();
  return `${response.headers.get('x-tapedeck-match')} ${data.id}`;
}

async function joke(client: OpenAI): Promise<string> {
  const { data, response } = await client.chat.completions.create({ ...ask('Tell me a joke'), stream: true }).withResponse();
  let id = '';
  for await (const c of data) id = c.id;
  return `${response.headers.get('x-tapedeck-match')} ${id}`;
}

describe.each(['createFetch', 'proxy'] as const)('%s', (via) => {
  it.each(['hybrid', 'signature'] as const)('match %s: a fallback does not move the turns of "Hello"', async (match) => {
    const { client, close } = await replaying(via, match);
    try {
      expect(await plain(client, 'Hi')).toBe('signature chatcmpl-1');
      // Before: `exact chatcmpl-2` (hybrid), its second recording at its first ask;
      // `signature chatcmpl-2` (signature), another recording of its signature.
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-1');
      expect(await plain(client, 'Hi')).toBe('signature chatcmpl-2');
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-2');
      // Past its last recording: the last again (repeats), never another request's.
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-2');
    } finally {
      await close();
    }
  });

  it.each(['hybrid', 'signature'] as const)('match %s: the trial, a stream and a plain fallback before "Hello"', async (match) => {
    const { client, close } = await replaying(via, match);
    try {
      expect(await joke(client)).toBe('signature chatcmpl-3');
      expect(await plain(client, 'Hi')).toBe('signature chatcmpl-1');
      // Before (hybrid): its second recording, the fallbacks having used the first.
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-1');
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-2');
    } finally {
      await close();
    }
  });

  it.each(['hybrid', 'signature'] as const)('match %s, strictOrder: "Hello" past its recordings misses; it never falls back to "Goodbye"', async (match) => {
    const { client, close } = await replaying(via, match, true);
    try {
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-1');
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-2');
      // Before (hybrid): a fallback to the next unused recording of its signature (the story).
      const err = await plain(client, 'Hello').then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.code).toBe('E_MISS');
      expect(e.message).toContain('the 2 recordings of this request are already used');
      // The fallback is still there for a request with no recording of its own.
      expect(await plain(client, 'Hi')).toBe('signature chatcmpl-4');
    } finally {
      await close();
    }
  });

  it.each(['hybrid', 'signature'] as const)('match %s, a damaged record after "Hello": its own turns are served, only a call past them is E_TAPE_DAMAGED', async (match) => {
    // The "Goodbye" record damaged: a lost record after the last "Hello", which may have been a
    // third "Hello" (docs/modes.md rule 18).
    const damaged = join(dir, `damaged-${via}-${match}.tape`);
    copyFileSync(tape, damaged);
    const bytes = readFileSync(damaged);
    const at = (await scanTape(damaged)).frames[3]!.offset + 30;
    bytes[at] = bytes[at]! ^ 0x5a;
    writeFileSync(damaged, bytes);
    const { client, close } = await replaying(via, match, false, damaged);
    try {
      expect(await plain(client, 'Hi')).toBe('signature chatcmpl-1');
      expect(await plain(client, 'Hi')).toBe('signature chatcmpl-2');
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-1');
      // Before: E_TAPE_DAMAGED, a fallback's serving taken for a repeat past the last recording.
      expect(await plain(client, 'Hello')).toBe('exact chatcmpl-2');
      const err = await plain(client, 'Hello').then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect((err as InstanceType<typeof OpenAI.InternalServerError>).code).toBe('E_TAPE_DAMAGED');
    } finally {
      await close();
    }
  });
});
