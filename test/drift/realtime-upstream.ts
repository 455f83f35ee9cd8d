// A loopback realtime server for the drift tests, whose answers are scripted by options: how the
// text and audio are split into deltas (a real server splits them differently on every run),
// what the model says, which arguments its tool call gets, and whether an event is added. It
// speaks OpenAI Realtime (GA names) and Gemini Live (JSON in binary frames) over a real
// WebSocket, with random ids per run as the real servers have. `recordSessions` records one
// session of each through the proxy with a plain `ws` client, so the tapes are the recorder's own.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startProxy } from '../../src/proxy/server.ts';
import { pcmFor } from '../realtime/fake-realtime.ts';

export interface RealtimeScript {
  /** Characters per text, transcript and tool-argument delta. */
  textChunk: number;
  /** Bytes per audio delta. */
  audioChunk: number;
  /** What the model says before the user's words. */
  lead: string;
  /** The city the weather tool is called for. */
  city: string;
  /** Send an event the base script does not (`rate_limits.updated` / a `sessionResumptionUpdate`). */
  extraEvent: boolean;
  /** Call a second tool beside the weather tool. */
  secondTool: boolean;
}

export const BASE: RealtimeScript = { textChunk: 6, audioChunk: 2400, lead: 'You said:', city: 'Paris', extraEvent: false, secondTool: false };

const rid = (p: string) => `${p}_${randomBytes(8).toString('hex')}`;
const pieces = (s: string, n: number) => s.match(new RegExp(`[\\s\\S]{1,${n}}`, 'g')) ?? [];
const audioPieces = (b: Buffer, n: number) => {
  const out: string[] = [];
  for (let i = 0; i < b.length; i += n) out.push(b.subarray(i, i + n).toString('base64'));
  return out;
};

/** Two lists merged turn about (a real server interleaves audio with its transcript). */
function interleave<T>(a: readonly T[], b: readonly T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i < a.length) out.push(a[i]!);
    if (i < b.length) out.push(b[i]!);
  }
  return out;
}

/** The audio a reply is spoken as: the same bytes for the same words, whatever the split. */
const speech = (reply: string) => pcmFor(reply, 9600);

function openai(ws: WebSocket, s: RealtimeScript): void {
  const send = (e: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: rid('event'), ...e }));
  send({ type: 'session.created', session: { id: rid('sess'), object: 'realtime.session', type: 'realtime', model: 'gpt-realtime' } });
  let said = '';
  ws.on('message', (data) => {
    const e = JSON.parse(data.toString()) as { type: string; item?: { content?: { text?: string }[] } };
    if (e.type === 'conversation.item.create') {
      said = e.item?.content?.map((c) => c.text ?? '').join('') ?? '';
      send({ type: 'conversation.item.added', previous_item_id: null, item: { id: rid('item'), type: 'message', role: 'user' } });
      return;
    }
    if (e.type !== 'response.create') return;
    const id = rid('resp');
    const item = rid('item');
    const at = { response_id: id, item_id: item, output_index: 0 };
    send({ type: 'response.created', response: { id, status: 'in_progress', output: [] } });
    if (s.extraEvent) send({ type: 'rate_limits.updated', rate_limits: [{ name: 'tokens', limit: 1000, remaining: 900, reset_seconds: 1 }] });
    if (said.includes('weather')) {
      const calls = [{ name: 'get_weather', args: JSON.stringify({ city: s.city, unit: 'C' }) }, ...(s.secondTool ? [{ name: 'get_time', args: JSON.stringify({ city: s.city }) }] : [])];
      calls.forEach((c, k) => {
        const call = rid('call');
        const fn = rid('item');
        const where = { response_id: id, item_id: fn, output_index: k };
        send({ type: 'response.output_item.added', response_id: id, output_index: k, item: { id: fn, type: 'function_call', name: c.name, call_id: call, arguments: '' } });
        for (const p of pieces(c.args, s.textChunk)) send({ type: 'response.function_call_arguments.delta', ...where, call_id: call, delta: p });
        send({ type: 'response.function_call_arguments.done', ...where, call_id: call, name: c.name, arguments: c.args });
        send({ type: 'response.output_item.done', response_id: id, output_index: k, item: { id: fn, type: 'function_call', name: c.name, call_id: call, arguments: c.args } });
      });
      send({ type: 'response.done', response: { id, status: 'completed', output: [], usage: { total_tokens: 40, input_tokens: 30, output_tokens: 10 } } });
      return;
    }
    const reply = `${s.lead} ${said}`;
    send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { id: item, type: 'message', role: 'assistant', content: [] } });
    send({ type: 'response.content_part.added', ...at, content_index: 0, part: { type: 'audio', transcript: '' } });
    // Audio and its transcript interleaved, each split by the script.
    const transcript = pieces(reply, s.textChunk).map((d) => ({ type: 'response.output_audio_transcript.delta', ...at, content_index: 0, delta: d }));
    const audio = audioPieces(speech(reply), s.audioChunk).map((d) => ({ type: 'response.output_audio.delta', ...at, content_index: 0, delta: d }));
    for (const e of interleave(audio, transcript)) send(e);
    send({ type: 'response.output_audio.done', ...at, content_index: 0 });
    send({ type: 'response.output_audio_transcript.done', ...at, content_index: 0, transcript: reply });
    // The same words as text too (a text part of the same item).
    for (const d of pieces(reply, s.textChunk)) send({ type: 'response.output_text.delta', ...at, content_index: 1, delta: d });
    send({ type: 'response.output_text.done', ...at, content_index: 1, text: reply });
    send({ type: 'response.output_item.done', response_id: id, output_index: 0, item: { id: item, type: 'message', role: 'assistant' } });
    send({ type: 'response.done', response: { id, status: 'completed', output: [], usage: { total_tokens: 30 + reply.length, input_tokens: 30, output_tokens: reply.length } } });
  });
}

function gemini(ws: WebSocket, s: RealtimeScript): void {
  const send = (m: unknown) => ws.send(Buffer.from(JSON.stringify(m)), { binary: true });
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { setup?: unknown; clientContent?: { turns?: { parts?: { text?: string }[] }[] } };
    if (m.setup) {
      send({ setupComplete: {} });
      return;
    }
    const said = (m.clientContent?.turns ?? []).flatMap((t) => t.parts ?? []).map((p) => p.text ?? '').join('');
    if (s.extraEvent) send({ sessionResumptionUpdate: { newHandle: rid('handle'), resumable: true } });
    if (said.includes('weather')) {
      const calls = [{ id: rid('function-call'), name: 'get_weather', args: { city: s.city, unit: 'C' } }, ...(s.secondTool ? [{ id: rid('function-call'), name: 'get_time', args: { city: s.city } }] : [])];
      send({ toolCall: { functionCalls: calls } });
      return;
    }
    const reply = `${s.lead} ${said}`;
    if (said.includes('in text')) {
      // A text answer: the model's words as text parts.
      for (const t of pieces(reply, s.textChunk)) send({ serverContent: { modelTurn: { parts: [{ text: t }] } } });
    } else {
      // A spoken answer: audio parts and the output transcription, interleaved.
      const audio = audioPieces(speech(reply), s.audioChunk).map((d) => ({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: 'audio/pcm;rate=24000', data: d } }] } } }));
      const transcript = pieces(reply, s.textChunk).map((t) => ({ serverContent: { outputTranscription: { text: t } } }));
      for (const f of interleave(audio, transcript)) send(f);
    }
    send({ serverContent: { generationComplete: true } });
    send({ serverContent: { turnComplete: true }, usageMetadata: { promptTokenCount: 20, responseTokenCount: reply.length, totalTokenCount: 20 + reply.length } });
  });
}

/** What the client says, in order: two spoken answers (one also as text), then a tool call. */
const OPENAI_TURNS = ['hello there, how are you', 'tell me more', 'what is the weather?'];
const GEMINI_TURNS = ['hello there, how are you', 'now answer in text', 'what is the weather?'];

async function talk(url: string, turns: readonly string[], gemini: boolean): Promise<void> {
  const ws = new WebSocket(url);
  let ends = 0;
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as { type?: string; toolCall?: unknown; setupComplete?: unknown; serverContent?: { turnComplete?: boolean } };
    if (m.type === 'response.done' || m.toolCall || m.setupComplete || m.serverContent?.turnComplete) ends++;
  });
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const until = async (n: number) => {
    while (ends < n) await new Promise((r) => setTimeout(r, 2));
  };
  let want = 0;
  if (gemini) {
    ws.send(JSON.stringify({ setup: { model: 'models/gemini-live-2.5-flash-preview' } }));
    await until(++want);
  }
  for (const text of turns) {
    if (gemini) ws.send(JSON.stringify({ clientContent: { turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true } }));
    else {
      ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
      ws.send(JSON.stringify({ type: 'response.create' }));
    }
    await until(++want);
  }
  ws.close(1000, 'done');
  await new Promise((r) => ws.once('close', r));
}

/**
 * Records one OpenAI Realtime session and one Gemini Live session into `tape`, the server
 * answering as `script` says.
 *
 * @example
 * await recordSessions(join(dir, 'rechunked.tape'), { ...BASE, textChunk: 10 })
 */
export async function recordSessions(tape: string, script: RealtimeScript): Promise<void> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  wss.on('connection', (ws, req) => ((req.url ?? '').includes('BidiGenerateContent') ? gemini(ws, script) : openai(ws, script)));
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const proxy = await startProxy({ upstream: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, tape, mode: 'record', port: 0 });
  const base = proxy.url.replace('http', 'ws');
  try {
    await talk(`${base}/v1/realtime?model=gpt-realtime`, OPENAI_TURNS, false);
    await talk(`${base}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=AIza${'x'.repeat(35)}`, GEMINI_TURNS, true);
  } finally {
    await proxy.close();
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
  }
}
