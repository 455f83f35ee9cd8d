// The API talkback records in the talkback import suite: OpenAI's chat completions and
// Anthropic's messages on the real wire format, plain JSON and server-sent events, and either of
// them gzip-compressed (Content-Encoding: gzip) when the user message says "gzip" and the client
// accepts it, as providers' front ends compress. Each answer carries the call's number, so a
// replay that went live would show it, and `sent` keeps each answer's text before compression.
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFake, type FakeServer } from './loopback.ts';

export interface WireUpstream extends FakeServer {
  /** Each answer's text as sent (before gzip), in call order. */
  sent: { path: string; contentType: string; gzip: boolean; text: string }[];
}

interface Ask {
  model: string;
  stream?: boolean;
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
}

const userText = (a: Ask): string => {
  const m = [...a.messages].reverse().find((x) => x.role === 'user');
  if (!m) return '';
  return typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('');
};

function openaiAnswer(n: number, a: Ask): { type: string; text: string } {
  const base = { id: `chatcmpl-tb${n}`, created: 1767225600 + n, model: a.model, system_fingerprint: 'fp_tb' };
  const words = `Call ${n} heard: ${userText(a)}`.split(' ');
  if (!a.stream) {
    const value = { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: words.join(' '), refusal: null }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: words.length, total_tokens: 9 + words.length } };
    return { type: 'application/json', text: JSON.stringify(value) };
  }
  const ev = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const events = [ev({ role: 'assistant', content: '' }), ...words.map((w, i) => ev({ content: i === 0 ? w : ` ${w}` })), ev({}, 'stop'), 'data: [DONE]\n\n'];
  return { type: 'text/event-stream; charset=utf-8', text: events.join('') };
}

function anthropicAnswer(n: number, a: Ask): { type: string; text: string } {
  const words = `Call ${n} heard: ${userText(a)}`.split(' ');
  const usage = { input_tokens: 11, output_tokens: words.length };
  if (!a.stream) {
    const value = { id: `msg_tb${n}`, type: 'message', role: 'assistant', model: a.model, content: [{ type: 'text', text: words.join(' ') }], stop_reason: 'end_turn', stop_sequence: null, usage };
    return { type: 'application/json', text: JSON.stringify(value) };
  }
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const events = [
    ev('message_start', { message: { id: `msg_tb${n}`, type: 'message', role: 'assistant', model: a.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('ping', {}),
    ...words.map((w, i) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: i === 0 ? w : ` ${w}` } })),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: words.length } }),
    ev('message_stop', {}),
  ];
  return { type: 'text/event-stream; charset=utf-8', text: events.join('') };
}

/** Starts the API on 127.0.0.1, port 0. */
export async function startWireUpstream(): Promise<WireUpstream> {
  const sent: WireUpstream['sent'] = [];
  const handle = (req: IncomingMessage, res: ServerResponse, body: string, n: number) => {
    const path = (req.url ?? '').split('?')[0]!;
    const ask = JSON.parse(body) as Ask;
    const answer = path === '/v1/messages' ? anthropicAnswer(n, ask) : path === '/v1/chat/completions' ? openaiAnswer(n, ask) : undefined;
    if (!answer) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"no such route"}}');
      return;
    }
    const gzip = userText(ask).includes('gzip') && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    sent.push({ path, contentType: answer.type, gzip, text: answer.text });
    const headers: Record<string, string> = { 'content-type': answer.type, 'x-request-id': `req_tb${n}` };
    if (gzip) headers['content-encoding'] = 'gzip';
    res.writeHead(200, headers);
    res.end(gzip ? gzipSync(answer.text) : answer.text);
  };
  const server = await startFake(handle);
  return Object.assign(server, { sent });
}
