// A server-sent event is dispatched only at the blank line after it (the WHATWG rules): a stream
// that ends inside its last event's terminator (the connection closed cleanly one byte early)
// has not delivered that event, and the SDKs do not see it (Anthropic's "stream ended without
// producing a Message", Gemini's "Incomplete JSON segment at the end", OpenAI's usage chunk
// missing). The text after the last line break was taken for a blank line, so such a stream was
// judged whole and recorded; now it is cut, and not recorded.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerVerdict } from '../../src/providers/answer-verdict.ts';
import { parseSse } from '../../src/providers/sse-parse.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFake, type FakeServer } from '../proxy/loopback.ts';

const SSE = 'text/event-stream';
const bytes = (s: string) => new TextEncoder().encode(s);
const data = (v: unknown, end = '\n\n') => `data: ${JSON.stringify(v)}${end}`;
const named = (v: { type: string }) => `event: ${v.type}\n${data(v)}`;

const chunk = (index: number, delta: unknown, finish: string | null = null) => data({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index, delta, finish_reason: finish }], usage: null });
const usage = data({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
/** OpenAI chat with `stream_options.include_usage`: the usage chunk, then `[DONE]`. */
const OPENAI_USAGE = chunk(0, { role: 'assistant', content: 'Hello there' }) + chunk(0, {}, 'stop') + usage + 'data: [DONE]\n\n';
/** OpenAI chat with `n: 2`: the second choice finishes last. */
const OPENAI_N2 = chunk(0, { role: 'assistant', content: 'One' }) + chunk(1, { role: 'assistant', content: 'Two' }) + chunk(0, {}, 'stop') + chunk(1, {}, 'stop') + 'data: [DONE]\n\n';
const ANTHROPIC = [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello there' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
  { type: 'message_stop' },
]
  .map(named)
  .join('');
/** Google ends each event with CRLF CRLF. */
const GEMINI =
  data({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello ' }] }, index: 0 }], modelVersion: 'gemini-2.0-flash' }, '\r\n\r\n') +
  data({ candidates: [{ content: { role: 'model', parts: [{ text: 'there' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 }, modelVersion: 'gemini-2.0-flash' }, '\r\n\r\n');

const CHAT = { method: 'POST', url: '/v1/chat/completions' };
const ASKED_USAGE = { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [] };
const GEMINI_ROUTE = { method: 'POST', url: '/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse' };

describe('parseSse', () => {
  it('drops an event whose blank line never came, whatever line end the text stops at', () => {
    expect(parseSse('data: a\n\ndata: b\n')).toEqual([{ event: 'message', data: 'a' }]);
    expect(parseSse('data: a\r\n\r\ndata: b\r\n')).toEqual([{ event: 'message', data: 'a' }]);
    expect(parseSse('data: a\r\rdata: b\r')).toEqual([{ event: 'message', data: 'a' }]);
    expect(parseSse('data: a\n\ndata: b')).toEqual([{ event: 'message', data: 'a' }]);
    expect(parseSse('data: a\n\ndata: b\n\n')).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: 'b' },
    ]);
  });
});

describe('a stream cut inside its last event or its terminator', () => {
  /** The cuts of 1..max bytes off the end that leave the stream judged whole. */
  const wholeCuts = (text: string, verdict: (s: string) => boolean, max: number) => {
    const out: number[] = [];
    for (let k = 1; k <= max; k++) if (verdict(text.slice(0, text.length - k))) out.push(k);
    return out;
  };

  it('Anthropic: any cut before the end of message_stop and its blank line is cut', () => {
    expect(answerVerdict({ method: 'POST', url: '/v1/messages' }, undefined, SSE, bytes(ANTHROPIC)).whole).toBe(true);
    expect(wholeCuts(ANTHROPIC, (s) => answerVerdict({ method: 'POST', url: '/v1/messages' }, undefined, SSE, bytes(s)).whole, 120)).toEqual([]);
  });

  it('Gemini: any cut into the last CRLF CRLF is cut (@google/genai reads `\\r\\n\\r` as an unfinished event)', () => {
    expect(answerVerdict(GEMINI_ROUTE, undefined, SSE, bytes(GEMINI)).whole).toBe(true);
    expect(wholeCuts(GEMINI, (s) => answerVerdict(GEMINI_ROUTE, undefined, SSE, bytes(s)).whole, 120)).toEqual([]);
  });

  it('OpenAI: a cut into [DONE] alone leaves a whole answer; one into the usage chunk, or the last finish chunk of n: 2, does not', () => {
    const done = 'data: [DONE]\n\n'.length;
    const usageCuts = wholeCuts(OPENAI_USAGE, (s) => answerVerdict(CHAT, ASKED_USAGE, SSE, bytes(s)).whole, 120);
    expect(usageCuts).toEqual(Array.from({ length: done }, (_, i) => i + 1));
    const n2Cuts = wholeCuts(OPENAI_N2, (s) => answerVerdict(CHAT, undefined, SSE, bytes(s)).whole, 120);
    expect(n2Cuts).toEqual(Array.from({ length: done }, (_, i) => i + 1));
  });
});

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-unterminated-'));
let fake: FakeServer;
beforeAll(async () => {
  // The whole stream, or (`[tend:K]` in the prompt) all of it but its last K bytes, ending cleanly.
  fake = await startFake((req, res, body) => {
    const path = req.url ?? '';
    const whole = path.endsWith('/v1/messages') ? ANTHROPIC : path.includes(':streamGenerateContent') ? GEMINI : OPENAI_USAGE;
    const k = Number(/\[tend:(\d+)\]/.exec(body)?.[1] ?? 0);
    res.writeHead(200, { 'content-type': path.includes(':streamGenerateContent') ? 'text/event-stream' : 'text/event-stream; charset=utf-8' });
    res.end(whole.slice(0, whole.length - k));
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('recorded through createFetch with the SDKs', () => {
  it('a stream one terminator byte short is not recorded, and replays as a miss; the whole one is recorded', async () => {
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const run = async (f: typeof fetch, base: string) => {
      const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: base, fetch: f, maxRetries: 0 });
      const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/v1`, fetch: f, maxRetries: 0 });
      const google = new GoogleGenAI({ apiKey: 'g-test', httpOptions: { baseUrl: base, fetch: f } as never });
      const out: Record<string, string> = {};
      const call = async (name: string, fn: () => Promise<string>) => {
        out[name] = await fn().catch((e: unknown) => `ERR ${(e as Error).message}`);
      };
      for (const tag of ['[tend:0]', '[tend:1]', '[tend:2]', '[tend:3]']) {
        await call(`anthropic ${tag}`, async () => (await anthropic.messages.stream({ model: 'claude-x', max_tokens: 16, messages: [{ role: 'user', content: `Hi ${tag}` }] }).finalText()));
        await call(`gemini ${tag}`, async () => {
          let text = '';
          for await (const c of await google.models.generateContentStream({ model: 'gemini-2.0-flash', contents: `Hi ${tag}` })) text += c.text ?? '';
          return text;
        });
      }
      for (const tag of ['[tend:0]', '[tend:15]']) {
        await call(`openai ${tag}`, async () => {
          let text = '';
          let tokens: number | undefined;
          const s = await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: `Hi ${tag}` }] });
          for await (const c of s) {
            text += c.choices[0]?.delta?.content ?? '';
            tokens ??= c.usage?.total_tokens;
          }
          return `${text} usage=${tokens}`;
        });
      }
      return out;
    };
    const rec = createFetch({ tape, mode: 'record', summary: false, onWarning: (m) => warnings.push(String(m)) });
    let recorded: Record<string, string>;
    try {
      recorded = await run(rec, fake.url);
    } finally {
      await rec.close();
    }
    // What the SDKs make of the streams live: the short ones fail or lack their usage.
    expect(recorded['anthropic [tend:0]']).toBe('Hello there');
    expect(recorded['anthropic [tend:1]']).toMatch(/^ERR /);
    expect(recorded['gemini [tend:0]']).toBe('Hello there');
    for (const k of [1, 2, 3]) expect(recorded[`gemini [tend:${k}]`]).toMatch(/^ERR /);
    expect(recorded['openai [tend:0]']).toBe('Hello there usage=5');
    expect(recorded['openai [tend:15]']).toBe('Hello there usage=undefined');

    const kept = (await readTape(tape)).records.flatMap((r) => (isHttpRecord(r.value) ? [`${r.value.route.split(' ')[1]!.split('?')[0]!.split('/').at(-1)} ${/\[tend:\d+\]/.exec(JSON.stringify(r.value.request.body))?.[0]}`] : []));
    expect(kept.sort()).toEqual(['completions [tend:0]', 'gemini-2.0-flash:streamGenerateContent [tend:0]', 'messages [tend:0]']);
    expect(warnings.join('\n')).toMatch(/ended before the answer was complete/);

    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const replayed = await run(play, 'http://127.0.0.1:9');
      for (const [name, got] of Object.entries(replayed)) {
        if (name.endsWith('[tend:0]')) expect(got, name).toBe(recorded[name]);
        else expect(got, name).toMatch(/tapedeck miss/);
      }
    } finally {
      await play.close();
    }
  });
});
