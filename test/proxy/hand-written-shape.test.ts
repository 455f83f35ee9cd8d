// Hand-written answers have the shape their request asks for (docs/hand-written.md, "What is
// checked"): before these checks, each case below was added without a word and replayed wrong
// through the real SDKs (the OpenAI SDK returned the event stream's text as a completion, read
// no chunk from a JSON body, took a stream with no end for a whole answer; the Anthropic SDK
// ended a stream of OpenAI chunks with no event). What is refused is named by recording, field
// and fix; what is accepted replays through the SDKs as written.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-shape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
let n = 0;
const tapeFor = (name: string) => join(dir, `${name}-${n++}.tape`);

const OPENAI = 'https://api.openai.com/v1/chat/completions';
const ANTHROPIC = 'https://api.anthropic.com/v1/messages';
const ask = (content: string, stream?: boolean) => ({ model: 'gpt-4o-mini', ...(stream ? { stream: true as const } : {}), messages: [{ role: 'user' as const, content }] });
const claude = (content: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 20, stream: true as const, messages: [{ role: 'user' as const, content }] });
const completion = (text: string) => ({
  id: 'chatcmpl-hand',
  object: 'chat.completion',
  created: 1767225600,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
});
const chunk = (delta: object, finish: string | null = null) => ({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] });
const openaiEvents = (text: string) => [{ data: chunk({ role: 'assistant', content: text }) }, { data: chunk({}, 'stop') }, { data: '[DONE]' }];
const anthropicEvents = (text: string) => [
  { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
];

/** The error of adding `bad` after a good recording: nothing is written. */
async function refused(bad: WrittenRecording): Promise<{ message: string; hint: string }> {
  const tape = tapeFor('refused');
  const e = await rejectionOf(addRecordings({ tape }, [{ request: { url: OPENAI, body: ask('fine') }, response: { body: completion('fine') } }, bad]));
  expect(e.code).toBe('E_RECORDING');
  expect(existsSync(tape)).toBe(false);
  const hint = e.hint ?? '';
  return { message: e.message.slice(0, e.message.length - hint.length).trim(), hint };
}

async function streamText(s: AsyncIterable<{ choices: { delta?: { content?: string | null } }[] }>): Promise<string> {
  let text = '';
  for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
  return text;
}

describe('a hand-written answer has the shape its request asks for (OpenAI and Anthropic, through their SDKs)', () => {
  it('a stream written for a plain call is refused (the OpenAI SDK returned the stream text as the completion); one body replays', async () => {
    const bad = { request: { url: OPENAI, body: ask('plain asked') }, response: { events: openaiEvents('hi') } };
    const e = await refused(bad);
    expect(e.message).toBe(
      'Hand-written recording #1: `response.events` make the answer a stream (text/event-stream), but the request asks for one answer (`request.body` has no "stream": true): the SDK would read the stream\'s text where it expects the answer\'s JSON.',
    );
    expect(e.hint).toBe('Write the answer as "body": { ... }, the JSON OpenAI answers a call that does not stream; or, for a stream, add "stream": true to "request.body".');

    // Either fix replays as written.
    const tape = tapeFor('plain');
    await addRecordings({ tape }, [
      { request: { url: OPENAI, body: ask('plain asked') }, response: { body: completion('one body') } },
      { request: { url: OPENAI, body: ask('plain asked', true) }, response: { events: openaiEvents('a stream') } },
    ]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const client = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    expect((await client.chat.completions.create(ask('plain asked'))).choices[0]!.message.content).toBe('one body');
    expect(await streamText(await client.chat.completions.create(ask('plain asked', true)))).toBe('a stream');
    await f.close();
  });

  it('one JSON body written for a streamed call is refused (the OpenAI SDK read 0 chunks and ended normally)', async () => {
    const e = await refused({ request: { url: OPENAI, body: ask('stream asked', true) }, response: { body: completion('hi') } });
    expect(e.message).toBe(
      'Hand-written recording #1: `response.body` is one answer, but the request asks for a stream (`request.body` has "stream": true): the SDK would read no event from it and end the stream empty.',
    );
    expect(e.hint).toMatch(/^Write chat completion chunks: .*"finish_reason": "stop", then \{ "data": "\[DONE\]" \}, as "events": \[\.\.\.\] instead of "body"; or, for one answer, leave "stream": true out of "request.body"\.$/);
  });

  it('a stream with no end is refused unless "cut": true; a cut one replays as a dropped connection; a whole one marked cut is refused', async () => {
    const noEnd = [{ data: chunk({ role: 'assistant', content: 'half an ans' }) }];
    const e = await refused({ request: { url: OPENAI, body: ask('no end', true) }, response: { events: noEnd } });
    expect(e.message).toBe(
      'Hand-written recording #1: `response.events` are not a whole OpenAI stream: OpenAI ends one with a chunk with a `finish_reason`, then `[DONE]`, and replayed, the SDK would take what is there for the whole answer.',
    );
    expect(e.hint).toMatch(/^End it with a chunk with a `finish_reason`, then `\[DONE\]`, or add "cut": true for a stream whose connection drops after its events\. Write chat completion chunks/);

    // Anthropic's end is message_stop: its stream without it is refused the same way.
    const anthropicNoEnd = await refused({ request: { url: ANTHROPIC, body: claude('no end') }, response: { events: anthropicEvents('half').slice(0, 3) } });
    expect(anthropicNoEnd.message).toContain('`response.events` are not a whole Anthropic stream: Anthropic ends one with a `message_stop` event');

    // The usage chunk asked for, as the recorder asks it of a live stream (docs/modes.md rule 11).
    const usage = await refused({ request: { url: OPENAI, body: { ...ask('usage', true), stream_options: { include_usage: true } } }, response: { events: [{ data: { ...chunk({ content: 'x' }, 'stop'), usage: null } }] } });
    expect(usage.message).toBe('Hand-written recording #1: `response.events` are not a whole answer: the usage chunk asked for with stream_options.include_usage never came; replayed, the SDK would take it for one.');
    expect(usage.hint).toContain('"usage": {');

    // Marked cut, the same events are what a dropped connection gives: the SDK raises.
    const tape = tapeFor('cut');
    await addRecordings({ tape }, [{ request: { url: OPENAI, body: ask('no end', true) }, response: { events: noEnd, cut: true } }]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const s = await new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 }).chat.completions.create(ask('no end', true));
    await expect(streamText(s)).rejects.toThrow();
    await f.close();

    // Ending whole and marked cut: the SDK would read the whole answer and raise nothing.
    const whole = await refused({ request: { url: OPENAI, body: ask('whole', true) }, response: { events: openaiEvents('all'), cut: true } });
    expect(whole.message).toContain('`response.cut` is true, but `response.events` end as a whole OpenAI stream does');
    expect(whole.hint).toBe('Remove the ending (a chunk with a `finish_reason`, then `[DONE]`) for a stream cut before its end, or leave "cut" out for a whole stream.');
  });

  it("another provider's events are refused (the Anthropic SDK ended a stream of OpenAI chunks with no event); Anthropic's replay", async () => {
    const e = await refused({ request: { url: ANTHROPIC, body: claude('wrong provider') }, response: { events: openaiEvents('openai chunk to anthropic') } });
    expect(e.message).toBe("Hand-written recording #1: `response.events` are not in Anthropic's stream format: the SDK would read no answer from them.");
    expect(e.hint).toMatch(/^Write Anthropic's events: .*message_stop/);
    // And the other way round, and a Responses call given chat chunks.
    expect((await refused({ request: { url: OPENAI, body: ask('wrong provider', true) }, response: { events: anthropicEvents('x') } })).message).toContain(
      "`response.events` are not in OpenAI's chat.completions stream format",
    );
    expect((await refused({ request: { url: 'https://api.openai.com/v1/responses', body: { model: 'gpt-4o-mini', input: 'hi', stream: true } }, response: { events: openaiEvents('x') } })).message).toContain(
      "`response.events` are not in OpenAI's responses stream format (they make an openai-chat answer)",
    );
    // An empty stream is named as one.
    expect((await refused({ request: { url: OPENAI, body: ask('empty', true) }, response: { events: [] } })).message).toContain('`response.events` are empty: the SDK would read a stream that ends at once');

    const tape = tapeFor('anthropic');
    await addRecordings({ tape }, [{ request: { url: ANTHROPIC, body: claude('right provider') }, response: { events: anthropicEvents('Bonjour') } }]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const client = new Anthropic({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    const { stream: _s, ...plain } = claude('right provider');
    const m = await client.messages.stream(plain).finalMessage();
    expect(m.content[0]).toMatchObject({ type: 'text', text: 'Bonjour' });
    await f.close();
  });

  it('error answers and routes no provider owns are not judged: a 429 JSON body for a streamed call raises RateLimitError; an error event; a plain JSON route; events on another route', async () => {
    const tape = tapeFor('errors');
    await addRecordings({ tape }, [
      { request: { url: OPENAI, body: ask('rate limited', true) }, response: { status: 429, body: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } } },
      { request: { url: ANTHROPIC, body: claude('overloaded') }, response: { events: [anthropicEvents('x')[0]!, { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }] } },
      { request: { url: 'https://api.openai.com/v1/models', method: 'GET' }, response: { body: { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] } } },
      { request: { url: 'https://example.com/feed', body: { stream: true } }, response: { events: [{ data: 'tick' }] } },
    ]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const openai = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    await expect(openai.chat.completions.create(ask('rate limited', true))).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    const anthropic = new Anthropic({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    await expect(
      (async () => {
        for await (const _ of await anthropic.messages.create(claude('overloaded')));
      })(),
    ).rejects.toThrow(/Overloaded/);
    expect((await openai.models.list()).data.map((m) => m.id)).toEqual(['gpt-4o-mini']);
    expect(await (await f('https://example.com/feed', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stream":true}' })).text()).toBe('data: tick\n\n');
    await f.close();
  });
});

describe('the stream a request asks for is read as its key reads it: Gemini by its URL, Ollama by its default, Bedrock by its operation', () => {
  const gemini = (op: string) => `https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:${op}`;
  const contents = [{ role: 'user', parts: [{ text: 'Hi Gemini' }] }];
  const geminiChunk = (text: string, finish?: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }], modelVersion: 'gemini-2.5-flash' });

  it('Gemini: events for :generateContent and a body for :streamGenerateContent?alt=sse are refused; events for the stream replay through @google/genai', async () => {
    const plain = await refused({ request: { url: gemini('generateContent'), body: { contents } }, response: { events: [{ data: geminiChunk('x', 'STOP') }] } });
    expect(plain.message).toContain('the request asks for one answer (`request.url` calls Gemini generateContent, which answers once)');
    expect(plain.hint).toContain('call `:streamGenerateContent?alt=sse` in "request.url"');
    const body = await refused({ request: { url: gemini('streamGenerateContent?alt=sse'), body: { contents } }, response: { body: geminiChunk('x', 'STOP') } });
    expect(body.message).toContain('`response.body` is one answer, but the request asks for a stream (`request.url` calls Gemini streamGenerateContent, which streams)');
    const noEnd = await refused({ request: { url: gemini('streamGenerateContent?alt=sse'), body: { contents } }, response: { events: openaiEvents('x') } });
    expect(noEnd.message).toContain('are not a whole Gemini stream: Gemini ends one with a chunk whose candidate has a `finishReason`');

    const tape = tapeFor('gemini');
    await addRecordings({ tape }, [{ request: { url: gemini('streamGenerateContent?alt=sse'), body: { contents } }, response: { events: [{ data: geminiChunk('Hello ') }, { data: geminiChunk('there', 'STOP') }] } }]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const ai = new GoogleGenAI({ apiKey: 'replay', httpOptions: { fetch: f } } as ConstructorParameters<typeof GoogleGenAI>[0]);
    let text = '';
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents })) text += c.text ?? '';
    expect(text).toBe('Hello there');
    await f.close();
  });

  it('Ollama streams unless "stream": false: a JSON body for its default is refused with the NDJSON fix, which replays through the ollama SDK', async () => {
    const url = 'http://127.0.0.1:11434/api/chat';
    const body = { model: 'llama3.2', messages: [{ role: 'user', content: 'Hi Ollama' }] };
    const done = { model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content: 'Hi' }, done: true, done_reason: 'stop' };
    const e = await refused({ request: { url, body }, response: { body: done } });
    expect(e.message).toContain('the request asks for a stream (`request.body` has no "stream": false, and Ollama streams unless told not to)');
    expect(e.hint).toContain('Ollama streams lines of JSON (NDJSON), not server-sent events');
    expect(e.hint).toContain('or, for one answer, add "stream": false to "request.body"');
    const sse = await refused({ request: { url, body }, response: { events: [{ data: done }] } });
    expect(sse.message).toContain("`response.events` are not in Ollama's stream format");

    const tape = tapeFor('ollama');
    const lines = [{ ...done, message: { role: 'assistant', content: 'Hel' }, done: false, done_reason: undefined }, { ...done, message: { role: 'assistant', content: 'lo' } }];
    await addRecordings({ tape }, [
      { request: { url, body }, response: { headers: { 'content-type': 'application/x-ndjson' }, body: lines.map((l) => `${JSON.stringify(l)}\n`).join('') } },
      { request: { url, body: { ...body, stream: false } }, response: { body: { ...done, message: { role: 'assistant', content: 'one body' } } } },
    ]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const ollama = new Ollama({ host: 'http://127.0.0.1:11434', fetch: f });
    let text = '';
    for await (const part of await ollama.chat({ ...body, stream: true })) text += part.message.content;
    expect(text).toBe('Hello');
    expect((await ollama.chat({ ...body, stream: false })).message.content).toBe('one body');
    await f.close();
  });

  it('Bedrock: its streams are binary, so a stream written for converse-stream is refused with the way that works', async () => {
    const url = 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku/converse-stream';
    const e = await refused({ request: { url, body: { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] } }, response: { events: [{ data: { contentBlockDelta: { delta: { text: 'x' } } } }] } });
    expect(e.message).toContain("`response.events` are not in Bedrock's stream format");
    expect(e.hint).toContain('Bedrock streams are AWS binary event streams (application/vnd.amazon.eventstream), which a hand-written recording cannot hold');
  });
});

describe('tapedeck add names the file and the place of a recording of the wrong shape', () => {
  it('the user-tester\'s file: a stream for a plain call, first in its array', () => {
    const file = join(dir, 'shape-mismatch.json');
    writeFileSync(file, JSON.stringify([{ request: { url: '/v1/chat/completions', body: ask('plain asked') }, response: { events: openaiEvents('hi') } }]));
    const tape = join(dir, 'cli-shape.tape');
    const r = spawnSync(process.execPath, [CLI, 'add', tape, file], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_RECORDING Hand-written recording #0 \(\S+shape-mismatch\.json \[0\]\): `response\.events` make the answer a stream .*\nhint: Write the answer as "body": \{ \.\.\. \}.*\n$/);
    expect(existsSync(tape)).toBe(false);
  });
});
