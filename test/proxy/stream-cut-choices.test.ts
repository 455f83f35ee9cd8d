// A stream whose connection ends cleanly before its final event is no whole answer, whatever
// came before: a chat stream of n: 3 where choice 0 finished but choices 1 and 2 never did (no
// `data: [DONE]`), an audio transcription stream without `transcript.text.done`, a speech stream
// (`stream_format: 'sse'`) without `speech.audio.done`. Recorded, each replayed as if it were
// the answer (the SDK raised "missing finish_reason for choice 1" on every replay, or took half
// a transcript for the whole); now none is recorded, through createFetch or the proxy, and a
// replay is a miss. Streams that do end keep being recorded.
import OpenAI, { toFile } from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamComplete } from '../../src/providers/sse-assemble.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFake, type FakeServer } from './loopback.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cut-choices-'));
const SSE = 'text/event-stream';
const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const chunk = (index: number, delta: unknown, finish: string | null = null) => data({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index, delta, finish_reason: finish }] });
const three = chunk(0, { role: 'assistant', content: 'First ' }) + chunk(1, { role: 'assistant', content: 'Second ' }) + chunk(2, { role: 'assistant', content: 'Third ' });
const transcript = data({ type: 'transcript.text.delta', delta: 'Hello ', logprobs: [] }) + data({ type: 'transcript.text.delta', delta: 'there', logprobs: [] });
const transcriptDone = data({ type: 'transcript.text.done', text: 'Hello there', usage: { type: 'tokens', input_tokens: 5, output_tokens: 2, total_tokens: 7 } });
const speech = data({ type: 'speech.audio.delta', audio: Buffer.from('chunk0').toString('base64') }) + data({ type: 'speech.audio.delta', audio: Buffer.from('chunk1').toString('base64') });
const speechDone = data({ type: 'speech.audio.done', usage: { input_tokens: 3, output_tokens: 9, total_tokens: 12 } });

describe('streamComplete', () => {
  it('a chat stream of several choices is whole only when every choice it began finished, or [DONE] came', () => {
    expect(streamComplete(SSE, three + chunk(0, {}, 'stop'))).toBe(false);
    expect(streamComplete(SSE, three + chunk(0, {}, 'stop') + chunk(2, {}, 'stop'))).toBe(false);
    expect(streamComplete(SSE, three + chunk(0, {}, 'stop') + chunk(2, {}, 'length') + chunk(1, {}, 'stop'))).toBe(true);
    expect(streamComplete(SSE, `${three}data: [DONE]\n\n`)).toBe(true);
    // One choice, as before: its finish_reason (or [DONE]) ends it; Azure's filter chunk has no choices.
    expect(streamComplete(SSE, data({ choices: [], prompt_filter_results: [] }) + chunk(0, { content: 'Hi' }) + chunk(0, {}, 'stop'))).toBe(true);
    expect(streamComplete(SSE, data({ choices: [], prompt_filter_results: [] }) + chunk(0, { content: 'Hi' }))).toBe(false);
  });

  it('a transcription stream needs transcript.text.done, a speech stream speech.audio.done', () => {
    expect(streamComplete(SSE, transcript)).toBe(false);
    expect(streamComplete(SSE, transcript + transcriptDone)).toBe(true);
    expect(streamComplete(SSE, speech)).toBe(false);
    expect(streamComplete(SSE, speech + speechDone)).toBe(true);
  });

  it('a stream of a shape it does not know is still taken as it ended', () => {
    expect(streamComplete(SSE, data({ hello: 1 }))).toBe(true);
    expect(streamComplete(SSE, 'event: thread.run.created\ndata: {"id":"run_1","object":"thread.run"}\n\n')).toBe(true);
  });
});

/** Which cut stream the fake answers: by path, and for chat by the last user message. */
let fake: FakeServer;
beforeAll(async () => {
  fake = await startFake((req, res, body) => {
    res.writeHead(200, { 'content-type': SSE });
    const path = req.url ?? '';
    if (path.endsWith('/audio/transcriptions')) return res.end(transcript + (body.includes('whole-audio') ? transcriptDone : ''));
    if (path.endsWith('/audio/speech')) return res.end(speech + (body.includes('whole speech') ? speechDone : ''));
    // Choice 0 finishes, then the connection ends cleanly: choices 1 and 2 never came.
    if (body.includes('whole')) return res.end(`${three}${chunk(0, {}, 'stop')}${chunk(1, {}, 'stop')}${chunk(2, {}, 'stop')}data: [DONE]\n\n`);
    res.end(three + chunk(0, { content: 'done.' }) + chunk(0, {}, 'stop'));
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

async function outcome<T>(p: Promise<T>): Promise<T | Error> {
  return p.catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
}

/** The three cut calls and the whole ones beside them, each call's result or error. */
async function calls(client: OpenAI) {
  const choices = async (content: string) => {
    const s = client.chat.completions.stream({ model: 'gpt-4o', n: 3, messages: [{ role: 'user', content }] });
    return (await s.finalChatCompletion()).choices.map((c) => c.message.content);
  };
  const transcribe = async (name: string) => {
    const s = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', stream: true, file: await toFile(Buffer.from(`RIFF-${name}`), 'a.wav', { type: 'audio/wav' }) });
    const types: string[] = [];
    for await (const e of s) types.push(e.type);
    return types;
  };
  const speak = async (input: string) => (await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input, stream_format: 'sse' })).text();
  return {
    cutChoices: await outcome(choices('three')),
    wholeChoices: await outcome(choices('three whole')),
    cutTranscript: await outcome(transcribe('cut-audio')),
    wholeTranscript: await outcome(transcribe('whole-audio')),
    cutSpeech: await outcome(speak('cut speech')),
    wholeSpeech: await outcome(speak('whole speech')),
  };
}

async function recordedPaths(tape: string): Promise<string[]> {
  return (await readTape(tape)).records
    .map((r) => r.value)
    .filter(isHttpRecord)
    .map((r) => `${r.route} ${new TextDecoder().decode(r.response.body).includes('done') || new TextDecoder().decode(r.response.body).includes('[DONE]') ? 'whole' : 'cut'}`);
}

function expectReplay(got: Awaited<ReturnType<typeof calls>>, recorded: Awaited<ReturnType<typeof calls>>) {
  // The whole ones replay as recorded; each cut one is a miss (a 404 with tapedeck's diagnosis).
  expect(got.wholeChoices).toEqual(recorded.wholeChoices);
  expect(got.wholeTranscript).toEqual(recorded.wholeTranscript);
  expect(got.wholeSpeech).toEqual(recorded.wholeSpeech);
  for (const k of ['cutChoices', 'cutTranscript', 'cutSpeech'] as const) {
    expect(got[k], k).toBeInstanceOf(Error);
    expect((got[k] as Error).message, k).toMatch(/tapedeck miss/);
  }
}

const expectedRoutes = ['POST /v1/audio/speech whole', 'POST /v1/audio/transcriptions whole', 'POST /v1/chat/completions whole'];

describe('a stream that ends cleanly before its final event, recorded', () => {
  it('createFetch: only the whole ones are recorded, the cut ones miss on replay', async () => {
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const rec = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m) });
    let recorded: Awaited<ReturnType<typeof calls>>;
    try {
      recorded = await calls(new OpenAI({ apiKey: 'sk-test', baseURL: `${fake.url}/v1`, fetch: rec, maxRetries: 0 }));
    } finally {
      await rec.close();
    }
    // The SDK itself sees choice 1 unfinished; the audio streams look whole to it.
    expect((recorded.cutChoices as Error).message).toMatch(/missing finish_reason for choice 1/);
    expect(recorded.cutTranscript).toEqual(['transcript.text.delta', 'transcript.text.delta']);
    expect(recorded.wholeChoices).toEqual(['First ', 'Second ', 'Third ']);
    expect((await recordedPaths(tape)).sort()).toEqual(expectedRoutes);
    expect(warnings.join('\n')).toMatch(/not recorded/);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expectReplay(await calls(new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch: play, maxRetries: 0 })), recorded);
    } finally {
      await play.close();
    }
  });

  it('the proxy: only the whole ones are recorded, the cut ones miss on replay', async () => {
    const tape = join(dir, 'proxy.tape');
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    let recorded: Awaited<ReturnType<typeof calls>>;
    try {
      recorded = await calls(new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 }));
    } finally {
      await proxy.close();
    }
    expect((await recordedPaths(tape)).sort()).toEqual(expectedRoutes);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expectReplay(await calls(new OpenAI({ apiKey: 'sk-test', baseURL: `${play.url}/v1`, maxRetries: 0 })), recorded);
    } finally {
      await play.close();
    }
  });
});
