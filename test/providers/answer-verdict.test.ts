// The verdict the record paths give a live answer (src/providers/answer-verdict.ts): whole, cut
// (before its end, or before the usage chunk its request asked for), or the API's error event.
import { describe, expect, it } from 'vitest';
import { answerVerdict } from '../../src/providers/answer-verdict.ts';
import { streamErrorOf } from '../../src/providers/stream-error.ts';
import { usageChunkMissing } from '../../src/providers/usage-chunk.ts';
import { encodeEventStreamMessage, type EventStreamHeader } from '../../src/providers/wire/aws-eventstream.ts';

const SSE = 'text/event-stream; charset=utf-8';
const CHAT = { method: 'POST', url: '/v1/chat/completions' };
const asked = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [] };
const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const bytes = (s: string) => new TextEncoder().encode(s);
const content = data({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }], usage: null });
const finish = data({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null });
const usage = data({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });

describe('answerVerdict', () => {
  it('a chat stream that asked for usage is whole with its usage chunk, or with [DONE] (a server that ignores stream_options)', () => {
    expect(answerVerdict(CHAT, asked, SSE, bytes(content + finish + usage + 'data: [DONE]\n\n'))).toEqual({ whole: true });
    expect(answerVerdict(CHAT, asked, SSE, bytes(content + finish + usage))).toEqual({ whole: true });
    expect(answerVerdict(CHAT, asked, SSE, bytes(content + finish + 'data: [DONE]\n\n'))).toEqual({ whole: true });
  });

  it('is cut when it ends after the finish reason without the usage chunk; without usage asked that stream is whole', () => {
    expect(answerVerdict(CHAT, asked, SSE, bytes(content + finish))).toMatchObject({ whole: false, cut: true, missing: expect.stringContaining('include_usage') });
    expect(answerVerdict(CHAT, { ...asked, stream_options: { include_usage: false } }, SSE, bytes(content + finish))).toEqual({ whole: true });
    expect(usageChunkMissing(asked, 'application/json', bytes('{}'))).toBe(false);
  });

  it('a stream cut before its end is cut; one that carried an error event is an error, with what it said', () => {
    expect(answerVerdict(CHAT, undefined, SSE, bytes(content))).toEqual({ whole: false, cut: true });
    expect(answerVerdict(CHAT, undefined, SSE, bytes(content + data({ error: { message: 'boom', type: 'server_error' } })))).toEqual({ whole: false, cut: false, error: 'server_error: boom' });
    const anthropic = `event: message_start\ndata: {"type":"message_start","message":{}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`;
    expect(answerVerdict({ method: 'POST', url: '/v1/messages' }, undefined, SSE, bytes(anthropic))).toEqual({ whole: false, cut: false, error: 'overloaded_error: Overloaded' });
  });

  it('streamErrorOf reads the Responses API failure and keeps control characters off the terminal', () => {
    expect(streamErrorOf(SSE, data({ type: 'response.failed', response: { error: { code: 'server_error', message: 'x\u001b[2Jy' } } }))).toBe('server_error: x [2Jy');
    expect(streamErrorOf(SSE, content + finish)).toBeUndefined();
    expect(streamErrorOf('application/json', '{"error":{}}')).toBeUndefined();
  });

  it("an Ollama NDJSON stream with an `{ error }` line is an error with its text; one cut without it stays cut", () => {
    const OLLAMA = { method: 'POST', url: '/api/chat' };
    const NDJSON = 'application/x-ndjson';
    const line = (v: unknown) => JSON.stringify(v) + '\n';
    const part = line({ model: 'llama3.2', created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: 'Hi' }, done: false });
    const failed = part + line({ error: 'an error was encountered while running the model: unexpected EOF' });
    expect(answerVerdict(OLLAMA, undefined, NDJSON, bytes(failed))).toEqual({ whole: false, cut: false, error: 'an error was encountered while running the model: unexpected EOF' });
    expect(answerVerdict(OLLAMA, undefined, NDJSON, bytes(part))).toEqual({ whole: false, cut: true });
    // A done line is no error, and a model's text that says "error" is none either.
    expect(streamErrorOf(NDJSON, line({ message: { role: 'assistant', content: 'error' }, done: false }) + line({ done: true }))).toBeUndefined();
  });

  it('a Bedrock event stream with an exception frame is an error named by its exception type; one cut without it stays cut', () => {
    const CONVERSE = { method: 'POST', url: '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream' };
    const EVENTSTREAM = 'application/vnd.amazon.eventstream';
    const frame = (headers: Record<string, string>, body: unknown) =>
      encodeEventStreamMessage({ headers: Object.entries(headers).map(([name, value]): EventStreamHeader => ({ name, type: 'string', value })), body: bytes(JSON.stringify(body)) });
    const event = (type: string, body: unknown) => frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, body);
    const exception = (type: string, message: string) => frame({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, { message });
    const concat = (...parts: Uint8Array[]) => {
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) (out.set(p, at), (at += p.length));
      return out;
    };
    const start = event('messageStart', { p: 'abc', role: 'assistant' });
    const delta = event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' }, p: 'abcd' });
    expect(answerVerdict(CONVERSE, undefined, EVENTSTREAM, concat(start, delta, exception('throttlingException', 'Too many requests, please wait before trying again.')))).toEqual({
      whole: false,
      cut: false,
      error: 'throttlingException: Too many requests, please wait before trying again.',
    });
    expect(streamErrorOf(EVENTSTREAM, concat(start, exception('modelStreamErrorException', 'Model stream error')))).toBe('modelStreamErrorException: Model stream error');
    expect(answerVerdict(CONVERSE, undefined, EVENTSTREAM, concat(start, delta))).toEqual({ whole: false, cut: true });
    // A frame cut halfway is no error frame: the stream is cut.
    const cutFrame = exception('throttlingException', 'Too many requests');
    expect(answerVerdict(CONVERSE, undefined, EVENTSTREAM, concat(start, cutFrame.subarray(0, cutFrame.length - 5)))).toEqual({ whole: false, cut: true });
  });
});
