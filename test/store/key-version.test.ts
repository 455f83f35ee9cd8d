// Request key spec version 2 at the store: answers of a different shape (streamed or plain, n
// choices, another format...) never share a recording, through ReplayCache and createFetch
// alike, and tapes written with version-1 keys replay without re-recording (the committed
// fixture in test/fixtures/v1-tape was written by the version-1 code).
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('key-version');

const FIXTURE = join(import.meta.dirname, '../fixtures/v1-tape');
type Entry = { tape: string; name: string; path?: string; request: Record<string, unknown>; key: string | null; recordedKey?: string; body?: string };
const v1 = JSON.parse(readFileSync(join(FIXTURE, 'keys.json'), 'utf8')) as { entries: Entry[] };

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi.' }] };
const responses = { model: 'gpt-4o-mini', input: 'Say hi.' };
const anthropic = { model: 'claude-sonnet-4-5', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hi.' }] };
const embed = { model: 'text-embedding-3-small', input: ['hello', 'world'] };

/** Each shape-deciding argument: a request, and the same request with the other shape. */
const SHAPES: [string, Record<string, unknown>, Record<string, unknown>][] = [
  ['stream', chat, { ...chat, stream: true }],
  ['stream_options.include_usage', { ...chat, stream: true }, { ...chat, stream: true, stream_options: { include_usage: true } }],
  ['n', chat, { ...chat, n: 3 }],
  ['response_format', chat, { ...chat, response_format: { type: 'json_object' } }],
  ['logprobs', chat, { ...chat, logprobs: true }],
  ['top_logprobs', { ...chat, logprobs: true }, { ...chat, logprobs: true, top_logprobs: 5 }],
  ['Responses stream', responses, { ...responses, stream: true }],
  ['Responses text.format', responses, { ...responses, text: { format: { type: 'json_object' } } }],
  ['Responses background', responses, { ...responses, background: true }],
  ['Responses include', responses, { ...responses, include: ['message.output_text.logprobs'] }],
  ['Anthropic stream', anthropic, { ...anthropic, stream: true }],
  ['embeddings encoding_format', embed, { ...embed, encoding_format: 'base64' }],
  ['embeddings dimensions', embed, { ...embed, dimensions: 256 }],
];

describe('shape-deciding arguments separate recordings', () => {
  for (const [name, a, b] of SHAPES) {
    it(`${name}: ReplayCache serves each shape its own recording, whichever is asked alone`, async () => {
      const file = fresh();
      {
        await using cache = await ReplayCache.open(file, { mode: 'record' });
        await cache.put(a, { shape: 'a' });
        await cache.put(b, { shape: 'b' });
      }
      // Replay only one of them (a filtered or shuffled test run): it gets its own shape.
      for (const [req, want] of [[b, 'b'], [a, 'a']] as const) {
        await using cache = await ReplayCache.open(file, { mode: 'replay' });
        expect(await cache.get(req)).toEqual({ shape: want });
      }
    });
  }

  it('through createFetch: a streamed and a plain call of one prompt each replay their own answer, alone', async () => {
    const tape = fresh();
    const upstream = async (_input: unknown, init?: RequestInit) => {
      const body = JSON.parse(new TextDecoder().decode(init!.body as Uint8Array)) as { stream?: boolean; n?: number };
      if (body.stream) return new Response('data: {"delta":"hi"}\n\ndata: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
      return new Response(JSON.stringify({ choices: Array.from({ length: body.n ?? 1 }, () => ({ message: { content: 'hi' } })) }), { headers: { 'content-type': 'application/json' } });
    };
    const post = (f: typeof fetch, body: unknown) =>
      f('https://api.example.test/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const rec = createFetch({ tape, mode: 'record', fetch: upstream as typeof fetch });
    for (const b of [chat, { ...chat, stream: true }, { ...chat, n: 2 }]) await (await post(rec, b)).text();
    await rec.close();
    for (const [body, check] of [
      [{ ...chat, stream: true }, (t: string) => expect(t).toContain('data: [DONE]')],
      [{ ...chat, n: 2 }, (t: string) => expect(JSON.parse(t).choices).toHaveLength(2)],
      [chat, (t: string) => expect(JSON.parse(t).choices).toHaveLength(1)],
    ] as const) {
      const play = createFetch({ tape, mode: 'replay' });
      const res = await post(play, body);
      expect(res.status).toBe(200);
      check(await res.text());
      await play.close();
    }
  });
});

describe('a tape written with version-1 keys', () => {
  it('the fixture really holds version-1 keys: plain and streamed calls share one', () => {
    const byName = new Map(v1.entries.filter((e) => e.tape === 'cache.tape').map((e) => [e.name, e]));
    expect(byName.get('chat')!.key).toBe(byName.get('chat-stream')!.key);
    expect(requestKeys(byName.get('chat')!.request).key).not.toBe(requestKeys(byName.get('chat-stream')!.request).key);
    // A plain chat call keys as it did: version 2 changed only what version 1 got wrong.
    expect(requestKeys(byName.get('chat')!.request).key).toBe(byName.get('chat')!.key);
  });

  it('ReplayCache re-keys it on open, with one warning line, and serves every request its own recording', async () => {
    const file = fresh();
    copyFileSync(join(FIXTURE, 'cache.tape'), file);
    const before = readFileSync(file);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const records = (await readTape(file)).records.map((r) => r.value as { request: unknown; value: unknown });
      // Replay each request alone, in reverse order, from a fresh open: nothing depends on order.
      // A request gets the first recording of its (version-2) key: the Responses call and the
      // chat call are the same conversation, so they share one, which is served only to a
      // request of the API it was made with (the other is a miss that names both).
      let otherApi = 0;
      for (const rec of [...records].reverse()) {
        await using cache = await ReplayCache.open(file, { mode: 'replay' });
        const first = records.find((r) => requestKeys(r.request).key === requestKeys(rec.request).key)!;
        if (requestKeys(first.request).provider === requestKeys(rec.request).provider) expect(await cache.get(rec.request)).toEqual(first.value);
        else {
          otherApi++;
          await expect(cache.get(rec.request)).rejects.toThrow(/another API/);
        }
      }
      expect(otherApi).toBe(1);
      const streamed = v1.entries.find((e) => e.tape === 'cache.tape' && e.name === 'chat-stream')!;
      {
        await using cache = await ReplayCache.open(file, { mode: 'replay' });
        expect(await cache.get(streamed.request)).toEqual({ id: 'stream-1', chunks: ['Hi', '!'] });
      }
      const lines = warn.mock.calls.filter((c) => String(c[0]).includes('spec version 1'));
      expect(lines.length).toBe(1); // one line for the tape, however often it is opened
      expect(String(lines[0]![0])).toContain(`${records.length} recording(s)`);
    } finally {
      warn.mockRestore();
    }
    // Replay never writes: the tape is as version 1 wrote it.
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('createFetch re-keys it on open: the streamed, plain, tool, Anthropic and embeddings calls replay their own answers', async () => {
    const tape = fresh();
    copyFileSync(join(FIXTURE, 'fetch.tape'), tape);
    const warnings: string[] = [];
    for (const e of [...v1.entries.filter((x) => x.tape === 'fetch.tape')].reverse()) {
      const play = createFetch({ tape, mode: 'replay', onWarning: (m) => warnings.push(m) });
      const res = await play(`https://api.example.test${e.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(e.request) });
      expect(res.status, e.name).toBe(200);
      expect(await res.text(), e.name).toBe(e.body);
      await play.close();
    }
    const rekeyed = warnings.filter((w) => w.includes('spec version 1'));
    expect(rekeyed.length).toBeGreaterThan(0);
    expect(rekeyed).toHaveLength(1); // one line for the tape, however often it is opened
  });

  it('update mode on a version-1 tape records only what is missing, and the new records carry version 2', async () => {
    const file = fresh();
    copyFileSync(join(FIXTURE, 'cache.tape'), file);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const stream = v1.entries.find((e) => e.tape === 'cache.tape' && e.name === 'chat-stream')!;
      {
        await using cache = await ReplayCache.open(file, { mode: 'update' });
        expect(await cache.get(stream.request)).toEqual({ id: 'stream-1', chunks: ['Hi', '!'] });
        expect(await cache.get({ ...stream.request, n: 2 })).toBeUndefined();
        await cache.put({ ...stream.request, n: 2 }, { id: 'new' });
      }
      const recs = (await readTape(file)).records.map((r) => r.value as { keyVersion?: number });
      expect(recs.at(-1)!.keyVersion).toBe(2);
      expect(recs.slice(0, -1).every((r) => r.keyVersion === undefined)).toBe(true);
    } finally {
      warn.mockRestore();
    }
  });
});
