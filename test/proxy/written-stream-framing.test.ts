// Hand-written streams in the framing their request is answered in (docs/hand-written.md): a
// user trial found Gemini's JSON-array stream (`:streamGenerateContent` without `?alt=sse`)
// accepted as server-sent events its client cannot parse, and an NDJSON stream with one broken
// line refused as "not ending with done: true" although it did. What is refused names what is
// wrong and where; what is accepted replays as written.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-framing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const tapeFor = (name: string) => join(dir, `${name}-${n++}.tape`);
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

/** The error of adding `bad`: nothing is written. */
async function refused(bad: WrittenRecording): Promise<{ message: string; hint: string }> {
  const tape = tapeFor('refused');
  const e = await rejectionOf(addRecordings({ tape }, [bad]));
  expect(e.code).toBe('E_RECORDING');
  expect(existsSync(tape)).toBe(false);
  const hint = e.hint ?? '';
  return { message: e.message.slice(0, e.message.length - hint.length).trim(), hint };
}

const gemini = (op: string) => `https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:${op}`;
const contents = [{ role: 'user', parts: [{ text: 'x' }] }];
const geminiChunk = (text: string, finish?: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }] });

describe("Gemini's JSON-array stream (:streamGenerateContent without ?alt=sse)", () => {
  it('events are refused: they replay as server-sent events, which a JSON-array reader cannot parse', async () => {
    const e = await refused({ request: { url: gemini('streamGenerateContent'), body: { contents } }, response: { events: [{ data: geminiChunk('hello', 'STOP') }] } });
    expect(e.message).toBe(
      'Hand-written recording #0: `response.events` make the answer server-sent events (text/event-stream), but `request.url` has no `?alt=sse`: Gemini answers `:streamGenerateContent` without it with one JSON array sent piece by piece, and its client would not parse the events.',
    );
    expect(e.hint).toContain('Write the chunks as one JSON array in "body": [{ "candidates": [');
    expect(e.hint).toContain('or, for events, add `?alt=sse` to "request.url" (as @google/genai and the AI SDK call it)');
  });

  it('an event-stream body is refused the same way', async () => {
    const e = await refused({
      request: { url: gemini('streamGenerateContent'), body: { contents } },
      response: { headers: { 'content-type': 'text/event-stream' }, body: `data: ${JSON.stringify(geminiChunk('hello', 'STOP'))}\n\n` },
    });
    expect(e.message).toContain('`response.headers["content-type"]` makes the answer server-sent events (text/event-stream), but `request.url` has no `?alt=sse`');
  });

  it('one object for the array stream is told to write the array, not events', async () => {
    const e = await refused({ request: { url: gemini('streamGenerateContent'), body: { contents } }, response: { body: geminiChunk('hello', 'STOP') } });
    expect(e.message).toContain('`response.body` is one answer, but the request asks for a stream');
    expect(e.hint).toContain('Write the chunks as one JSON array in "body"');
    expect(e.hint).not.toContain('"events"');
  });

  it('the array written as "body" is accepted and replays as the JSON array its client reads', async () => {
    const tape = tapeFor('array');
    const chunks = [geminiChunk('hel'), geminiChunk('lo', 'STOP')];
    await addRecordings({ tape }, [{ request: { url: gemini('streamGenerateContent'), body: { contents } }, response: { body: chunks } }]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const r = await f(gemini('streamGenerateContent'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents }) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(await r.text())).toEqual(chunks);
    await f.close();
  });

  it('an array body for ?alt=sse is named as the array stream, with the events to write', async () => {
    const e = await refused({ request: { url: gemini('streamGenerateContent?alt=sse'), body: { contents } }, response: { body: [geminiChunk('hello', 'STOP')] } });
    expect(e.message).toContain('`response.body` is a JSON array, the stream Gemini sends without `?alt=sse`, but `request.url` asks for server-sent events');
    expect(e.hint).toContain('Write Gemini\'s chunks as events');
  });
});

describe('a stream with a line or event that is not JSON names it (it was refused as "not whole")', () => {
  const ollama = 'http://127.0.0.1:11434/api/chat';
  const asked = { model: 'llama3.2', messages: [{ role: 'user', content: 'p' }] };
  const line = (content: string, done: boolean) => JSON.stringify({ message: { role: 'assistant', content }, done, ...(done ? { done_reason: 'stop' } : {}) });

  it('NDJSON: the trial\'s file, a trailing comma in line 2 of a stream that ends with "done": true', async () => {
    const body = `${line('a', false)}\n${line('b', false).replace(/}$/, ',}')}\n${line('', true)}\n`;
    const e = await refused({ request: { url: ollama, body: asked }, response: { headers: { 'content-type': 'application/x-ndjson' }, body } });
    expect(e.message).toMatch(/^Hand-written recording #0: line 2 of `response\.body` is not JSON \(.+\): \{"message":\{"role":"assistant","content":"b"\},"done":false,\}; the Ollama client would fail reading it\.$/);
    expect(e.message).not.toContain('ends one with');
    expect(e.hint).toContain('Make each line one JSON object');
  });

  it('NDJSON: a last line without its newline that does not parse is named too', async () => {
    const body = `${line('a', false)}\n${line('', true).slice(0, -3)}`;
    const e = await refused({ request: { url: ollama, body: asked }, response: { headers: { 'content-type': 'application/x-ndjson' }, body } });
    expect(e.message).toMatch(/^Hand-written recording #0: line 2 of `response\.body` is not JSON \(/);
  });

  it('`tapedeck add` of the trial\'s file names the line', () => {
    const file = join(dir, 'ollama-badline.json');
    const body = `${line('a', false)}\n${line('b', false).replace(/}$/, ',}')}\n${line('', true)}\n`;
    writeFileSync(file, JSON.stringify([{ request: { url: ollama, body: asked }, response: { headers: { 'content-type': 'application/x-ndjson' }, body } }]));
    const tape = join(dir, 'cli-badline.tape');
    const r = spawnSync(process.execPath, [CLI, 'add', tape, file], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_RECORDING Hand-written recording #0 \(\S+ollama-badline\.json \[0\]\): line 2 of `response\.body` is not JSON \(/);
  });

  it('server-sent events: an event whose data is text that is not JSON is named by its place (Gemini was "not whole", OpenAI was accepted)', async () => {
    const g = await refused({ request: { url: gemini('streamGenerateContent?alt=sse'), body: { contents } }, response: { events: [{ data: '{"candidates": [' }, { data: geminiChunk('x', 'STOP') }] } });
    expect(g.message).toMatch(/^Hand-written recording #0: `response\.events\[0\]\.data` is not JSON \(.+\): \{"candidates": \[; the Gemini client would fail reading it\.$/);
    expect(g.hint).toContain('Give the data as a JSON object');

    const chunk = (delta: object, finish: string | null = null) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
    const o = await refused({
      request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] } },
      response: { events: [{ data: chunk({ content: 'a' }) }, { data: '{"object":"chat.completion.chunk",}' }, { data: chunk({}, 'stop') }, { data: '[DONE]' }] },
    });
    expect(o.message).toMatch(/^Hand-written recording #0: `response\.events\[1\]\.data` is not JSON \(.+\): \{"object":"chat\.completion\.chunk",\}; the OpenAI client would fail reading it\.$/);
  });

  it('server-sent events written as a text body: the event is named by its number', async () => {
    const body = `data: ${JSON.stringify(geminiChunk('a'))}\n\ndata: not json\n\ndata: ${JSON.stringify(geminiChunk('b', 'STOP'))}\n\n`;
    const e = await refused({ request: { url: gemini('streamGenerateContent?alt=sse'), body: { contents } }, response: { headers: { 'content-type': 'text/event-stream' }, body } });
    expect(e.message).toMatch(/^Hand-written recording #0: event 2 of `response\.body` has data that is not JSON \(.+\): not json; the Gemini client would fail reading it\.$/);
  });
});
