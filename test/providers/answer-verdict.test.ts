// The verdict the record paths give a live answer (src/providers/answer-verdict.ts): whole, cut
// (before its end, or before the usage chunk its request asked for), or the API's error event.
import { describe, expect, it } from 'vitest';
import { answerVerdict } from '../../src/providers/answer-verdict.ts';
import { streamErrorOf } from '../../src/providers/stream-error.ts';
import { usageChunkMissing } from '../../src/providers/usage-chunk.ts';

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
});
