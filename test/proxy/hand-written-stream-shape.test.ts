// Hand-written streams checked event by event against what the SDKs read: OpenAI chat chunks
// carry `delta` and end with a `finish_reason`, `[DONE]` (and the usage chunk asked for);
// Anthropic events are named as their `type` and their deltas are ones the SDK reads; Responses
// streams start with `response.created` and name their item. The hints' shapes replay through
// the real SDKs.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings, type WrittenEvent, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const tapeFor = () => join(dir, `t${n++}.tape`);

const CHAT = 'https://api.openai.com/v1/chat/completions';
const chatBody = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Hi' }] };
const chunk = (choice: object) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, ...choice }] });
const chat = (events: WrittenEvent[], body: object = chatBody): WrittenRecording => ({ request: { url: CHAT, body }, response: { events } });

const MSG = 'https://api.anthropic.com/v1/messages';
const anthBody = { model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] };
const anthData = [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
  { type: 'message_stop' },
];
const anth = (events: WrittenEvent[]): WrittenRecording => ({ request: { url: MSG, body: anthBody }, response: { events } });
const named = (data: readonly object[]) => data.map((d) => ({ event: (d as { type: string }).type, data: d }));

async function refused(w: WrittenRecording): Promise<string> {
  const e = await rejectionOf(addRecordings({ tape: tapeFor() }, [w]));
  expect(e).toBeInstanceOf(TapedeckError);
  expect(e.code).toBe('E_RECORDING');
  return `${e.message} ${e.hint ?? ''}`;
}

describe('OpenAI chat streams written by hand', () => {
  const role = { data: chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }) };
  const text = { data: chunk({ delta: { content: 'Hi there' }, finish_reason: null }) };
  const stop = { data: chunk({ delta: {}, finish_reason: 'stop' }) };
  const done = { data: '[DONE]' };

  it('a stream without a finish_reason, without [DONE], or without the usage chunk asked for is refused', async () => {
    expect(await refused(chat([role, text, done]))).toContain('finish_reason');
    expect(await refused(chat([role, text, stop]))).toContain('[DONE]');
    expect(await refused(chat([role, text, stop, done], { ...chatBody, stream_options: { include_usage: true } }))).toContain('usage');
  });

  it('a chunk without `delta` (a message pasted from a plain answer) or with its text outside `delta.content` is refused, naming it', async () => {
    const pasted = await refused(chat([{ data: chunk({ message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }) }, done]));
    expect(pasted).toContain('response.events[0].data.choices[0]');
    expect(pasted).toContain('delta');
    const deltaText = await refused(chat([role, { data: chunk({ delta: { text: 'Hi there' }, finish_reason: null }) }, stop, done]));
    expect(deltaText).toContain('response.events[1].data.choices[0].delta');
    expect(deltaText).toContain('delta.content');
  });

  it('the hint shows a first delta with its role, and that shape is read by chat.completions.stream().finalChatCompletion()', async () => {
    const hint = await refused(chat([role, text, done]));
    expect(hint).toContain('"role": "assistant"');
    const tape = tapeFor();
    await addRecordings({ tape }, [chat([role, text, stop, done])]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const final = await new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 }).chat.completions.stream(chatBody as never).finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe('Hi there');
    } finally {
      await f.close();
    }
  });
});

describe('Anthropic streams written by hand', () => {
  it('events without their `event` name, or named other than their type, are refused naming the event', async () => {
    expect(await refused(anth(anthData.map((d) => ({ data: d }))))).toContain('response.events[0].event');
    const renamed = named(anthData);
    renamed[2] = { event: 'message', data: anthData[2]! };
    expect(await refused(anth(renamed))).toContain('response.events[2].event');
  });

  it('a text delta of another type, or a delta with no content_block_start, is refused naming the event', async () => {
    const textType = anthData.slice();
    textType[2] = { type: 'content_block_delta', index: 0, delta: { type: 'text', text: 'Hello' } } as never;
    const t = await refused(anth(named(textType)));
    expect(t).toContain('response.events[2].data.delta.type');
    expect(t).toContain('text_delta');
    const noStart = await refused(anth(named([anthData[0]!, ...anthData.slice(2)])));
    expect(noStart).toContain('content_block_start');
    expect(noStart).toContain('response.events[1]');
  });
});

describe('Responses API streams written by hand', () => {
  const RESP = 'https://api.openai.com/v1/responses';
  const respBody = { model: 'gpt-4o-mini', stream: true, input: 'Hi' };
  const item = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] };
  const response = (status: string, output: object[]) => ({ id: 'resp_1', object: 'response', created_at: 1, status, model: 'gpt-4o-mini', output });
  const ev = (data: { type: string }) => ({ event: data.type, data });
  const whole = [
    ev({ type: 'response.created', response: response('in_progress', []) } as never),
    ev({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } } as never),
    ev({ type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } } as never),
    ev({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello there' } as never),
    ev({ type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hello there' } as never),
    ev({ type: 'response.content_part.done', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Hello there', annotations: [] } } as never),
    ev({ type: 'response.output_item.done', output_index: 0, item } as never),
    ev({ type: 'response.completed', response: response('completed', [item]) } as never),
  ];
  const resp = (events: WrittenEvent[]): WrittenRecording => ({ request: { url: RESP, body: respBody }, response: { events } });

  it('a stream that does not start with response.created, or a delta without its item_id, is refused; the hint starts with response.created', async () => {
    const noCreated = await refused(resp(whole.slice(1)));
    expect(noCreated).toContain('response.created');
    const bare = whole.slice();
    bare[3] = ev({ type: 'response.output_text.delta', delta: 'Hello there' } as never);
    expect(await refused(resp(bare))).toContain('response.events[3].data.item_id');
  });

  it('a whole stream as the hint describes it is read by the OpenAI SDK', async () => {
    const tape = tapeFor();
    await addRecordings({ tape }, [resp(whole)]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const final = await new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 }).responses.stream(respBody as never).finalResponse();
      expect(final.output_text).toBe('Hello there');
    } finally {
      await f.close();
    }
  });
});
