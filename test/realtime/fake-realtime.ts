// A loopback realtime server that speaks the providers' wire formats over a real WebSocket:
// OpenAI Realtime (GA event names: session.created, response.output_text.delta,
// response.output_audio.delta, function calls, server VAD events while audio arrives,
// response.done with usage, error events) and Gemini Live (setup -> setupComplete, serverContent
// with text and inline audio, toolCall, interrupted, turnComplete with usageMetadata, JSON in
// binary frames, a close with a code and reason for a bad request). Ids are random per run, as
// the real servers' are, so a replay that gives the recorded ones back is told from a live call.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const rid = (p: string) => `${p}_${randomBytes(8).toString('hex')}`;

/** Deterministic PCM16 "speech" for a text: what a voice model would say, as bytes. */

/** The password the fake's database tool call carries (`connect to the database`). */
export const DB_PASSWORD = 'PlantedDbPw0987654321xyz';

export function pcmFor(text: string, bytes = 4800): Buffer {
  const b = Buffer.alloc(bytes);
  let h = 2166136261;
  for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  for (let i = 0; i < bytes; i += 2) {
    h = Math.imul(h ^ i, 16777619) >>> 0;
    b.writeInt16LE(((h >>> 8) % 20000) - 10000, i);
  }
  return b;
}

export interface FakeRealtime {
  url: string;
  /** Connects seen: path with query, headers, subprotocols. */
  connects: { url: string; headers: IncomingMessage['headers']; protocols: string[] }[];
  /** Every client frame received, parsed. */
  received: unknown[];
  /** Sessions still open. */
  readonly open: number;
  close(): Promise<void>;
}

export interface FakeRealtimeOptions {
  /**
   * OpenAI: members the server sets on the session at each `session.update` (a default of the
   * account that changed between two recordings): `session.updated` then differs though the
   * client sent the same. Read at each update: a test may change it between sessions.
   */
  defaults?: Record<string, unknown>;
}

export async function startFakeRealtime(opts: FakeRealtimeOptions = {}): Promise<FakeRealtime> {
  const connects: FakeRealtime['connects'] = [];
  const received: unknown[] = [];
  const sockets = new Set<WebSocket>();
  // Live API routes are served at their one path, as Google serves them: `/ws/google.ai...` (a
  // path the proxy mangled, `//ws/...` or one without `/ws`, is a 404 there).
  const verifyClient = ({ req }: { req: IncomingMessage }) => {
    const path = (req.url ?? '').split('?')[0]!;
    return !path.includes('BidiGenerateContent') || /^\/ws\/google\.(ai\.generativelanguage|cloud\.aiplatform)\.[^/]+\.(GenerativeService\.BidiGenerateContent(Constrained)?|LlmBidiService\/BidiGenerateContent)$/.test(path);
  };
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, verifyClient, handleProtocols: (set) => (set.has('realtime') ? 'realtime' : false) });
  wss.on('connection', (ws, req) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    connects.push({ url: req.url ?? '', headers: req.headers, protocols: String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim()).filter(Boolean) });
    if ((req.url ?? '').includes('BidiGenerateContent')) gemini(ws, received, new URL(req.url ?? '/', 'http://x'));
    else openai(ws, new URL(req.url ?? '/', 'http://x'), received, req.headers, opts);
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const port = (wss.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    received,
    get open() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.terminate();
        wss.close(() => r());
      }),
  };
}

function openai(ws: WebSocket, url: URL, received: unknown[], headers: IncomingMessage['headers'], opts: FakeRealtimeOptions): void {
  const send = (e: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: rid('event'), ...e }));
  const session = { id: rid('sess'), object: 'realtime.session', type: 'realtime', model: url.searchParams.get('model'), output_modalities: ['audio'], instructions: '', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: { type: 'server_vad' } }, output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy' } } };
  send({ type: 'session.created', session });
  let lastText = '';
  let audio = 0;
  let speaking = false;
  let pending: { id: string; item: string } | undefined;
  ws.on('message', (data) => {
    const e = JSON.parse(data.toString()) as Record<string, any>;
    received.push(e);
    switch (e.type) {
      case 'session.update':
        Object.assign(session, e.session ?? {}, opts.defaults ?? {});
        send({ type: 'session.updated', session });
        break;
      case 'input_audio_buffer.append': {
        audio += Buffer.from(e.audio, 'base64').length;
        // Server VAD: speech is heard once 100 ms (4,800 bytes of 24 kHz PCM16) have come.
        if (!speaking && audio >= 4800) {
          speaking = true;
          send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: rid('item') });
        }
        break;
      }
      case 'input_audio_buffer.commit': {
        const item = rid('item');
        send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: item });
        send({ type: 'conversation.item.added', previous_item_id: null, item: { id: item, type: 'message', role: 'user', content: [{ type: 'input_audio', transcript: null }] } });
        lastText = `audio of ${audio} bytes`;
        audio = 0;
        speaking = false;
        break;
      }
      case 'conversation.item.create': {
        const item = { id: e.item?.id ?? rid('item'), ...e.item, status: 'completed' };
        send({ type: 'conversation.item.added', previous_item_id: e.previous_item_id ?? null, item });
        send({ type: 'conversation.item.done', previous_item_id: e.previous_item_id ?? null, item });
        if (e.item?.type === 'message') lastText = e.item.content?.map((c: any) => c.text ?? '').join('') ?? '';
        // A server that repeats what the connect carried (a debug build, an error quoting it).
        if (lastText === 'how did I connect?') {
          const sub = String(headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).find((p) => p.startsWith('openai-insecure-api-key.'));
          lastText = `api-key ${String(headers['api-key'])} token ${url.searchParams.get('token')} subprotocol ${sub?.slice('openai-insecure-api-key.'.length)}`;
        }
        if (e.item?.type === 'function_call_output') lastText = `tool said ${e.item.output}`;
        break;
      }
      case 'conversation.item.truncate':
        send({ type: 'conversation.item.truncated', item_id: e.item_id, content_index: e.content_index, audio_end_ms: e.audio_end_ms });
        break;
      case 'response.cancel':
        if (pending) {
          send({ type: 'response.done', response: { id: pending.id, object: 'realtime.response', status: 'cancelled', status_details: { type: 'cancelled', reason: 'client_cancelled' }, output: [], usage: { total_tokens: 12, input_tokens: 10, output_tokens: 2 } } });
          pending = undefined;
        }
        break;
      case 'response.create':
        respond(lastText);
        break;
      default:
        send({ type: 'error', error: { type: 'invalid_request_error', code: 'unknown_event', message: `Unknown event type ${e.type}`, param: null, event_id: e.event_id ?? null } });
    }
  });

  function respond(text: string): void {
    const id = rid('resp');
    const item = rid('item');
    send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [] } });
    if (text.includes('fail')) {
      send({ type: 'error', error: { type: 'server_error', code: 'server_error', message: 'The server had an error while processing your request.', param: null, event_id: null } });
      send({ type: 'response.done', response: { id, object: 'realtime.response', status: 'failed', output: [], usage: { total_tokens: 0, input_tokens: 0, output_tokens: 0 } } });
      return;
    }
    if (text.includes('keylike')) {
      // Audio whose base64 holds a run shaped like a Google API key (it happens in long audio).
      send({ type: 'response.output_audio.delta', response_id: id, item_id: item, output_index: 0, content_index: 0, delta: `AIza${'Q'.repeat(36)}` });
      send({ type: 'response.done', response: { id, object: 'realtime.response', status: 'completed', output: [], usage: { total_tokens: 11, input_tokens: 10, output_tokens: 1 } } });
      return;
    }
    if (text === 'connect to the database') {
      // A tool call whose arguments carry a password (the server's, not the user's), streamed a
      // few characters a delta.
      const call = rid('call');
      const args = JSON.stringify({ host: 'db.internal', password: DB_PASSWORD });
      send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { id: item, type: 'function_call', status: 'in_progress', name: 'connect_db', call_id: call, arguments: '' } });
      for (let i = 0; i < args.length; i += 6) send({ type: 'response.function_call_arguments.delta', response_id: id, item_id: item, output_index: 0, call_id: call, delta: args.slice(i, i + 6) });
      send({ type: 'response.function_call_arguments.done', response_id: id, item_id: item, output_index: 0, call_id: call, name: 'connect_db', arguments: args });
      send({ type: 'response.done', response: { id, object: 'realtime.response', status: 'completed', output: [{ id: item, type: 'function_call', name: 'connect_db', call_id: call, arguments: args }], usage: { total_tokens: 40, input_tokens: 30, output_tokens: 10 } } });
      return;
    }
    if (text.includes('weather')) {
      const call = rid('call');
      send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { id: item, type: 'function_call', status: 'in_progress', name: 'get_weather', call_id: call, arguments: '' } });
      send({ type: 'response.function_call_arguments.delta', response_id: id, item_id: item, output_index: 0, call_id: call, delta: '{"city":' });
      send({ type: 'response.function_call_arguments.delta', response_id: id, item_id: item, output_index: 0, call_id: call, delta: '"Paris"}' });
      send({ type: 'response.function_call_arguments.done', response_id: id, item_id: item, output_index: 0, call_id: call, name: 'get_weather', arguments: '{"city":"Paris"}' });
      send({ type: 'response.done', response: { id, object: 'realtime.response', status: 'completed', output: [{ id: item, type: 'function_call', name: 'get_weather', call_id: call, arguments: '{"city":"Paris"}' }], usage: { total_tokens: 40, input_tokens: 30, output_tokens: 10 } } });
      return;
    }
    const reply = `You said: ${text}`;
    send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { id: item, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
    for (const w of reply.match(/\S+\s*/g) ?? []) send({ type: 'response.output_audio_transcript.delta', response_id: id, item_id: item, output_index: 0, content_index: 0, delta: w });
    const pcm = pcmFor(reply, 9600);
    send({ type: 'response.output_audio.delta', response_id: id, item_id: item, output_index: 0, content_index: 0, delta: pcm.subarray(0, 4800).toString('base64') });
    if (text.includes('slowly')) {
      // A model that speaks at its own pace: deltas 30 ms apart.
      const words = ['One, ', 'two, ', 'three.'];
      words.forEach((w, k) => setTimeout(() => send({ type: 'response.output_audio_transcript.delta', response_id: id, item_id: item, output_index: 0, content_index: 0, delta: w }), 30 * (k + 1)));
      setTimeout(() => send({ type: 'response.done', response: { id, object: 'realtime.response', status: 'completed', output: [], usage: { total_tokens: 13, input_tokens: 10, output_tokens: 3 } } }), 30 * (words.length + 1));
      return;
    }
    if (text.includes('crash')) {
      // The upstream goes away mid-answer: no close frame (the client sees 1006).
      setTimeout(() => ws.terminate(), 5);
      return;
    }
    if (text.includes('long story')) {
      // Speaks until the client interrupts: response.cancel ends it.
      pending = { id, item };
      return;
    }
    send({ type: 'response.output_audio.delta', response_id: id, item_id: item, output_index: 0, content_index: 0, delta: pcm.subarray(4800).toString('base64') });
    send({ type: 'response.output_text.delta', response_id: id, item_id: item, output_index: 0, content_index: 0, delta: reply });
    send({ type: 'response.output_audio.done', response_id: id, item_id: item, output_index: 0, content_index: 0 });
    send({ type: 'response.done', response: { id, object: 'realtime.response', status: 'completed', output: [{ id: item, type: 'message', role: 'assistant', content: [{ type: 'output_audio', transcript: reply }] }], usage: { total_tokens: 30 + reply.length, input_tokens: 30, output_tokens: reply.length, input_token_details: { audio_tokens: 0, text_tokens: 30 }, output_token_details: { audio_tokens: 10, text_tokens: reply.length - 10 } } } });
  }
}

function gemini(ws: WebSocket, received: unknown[], url: URL): void {
  // Gemini Live sends its JSON in binary frames.
  const send = (m: unknown) => ws.send(Buffer.from(JSON.stringify(m)), { binary: true });
  let audio = 0;
  let setup = false;
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as Record<string, any>;
    received.push(m);
    if (m.setup) {
      setup = true;
      send({ setupComplete: {} });
      return;
    }
    if (!setup) {
      ws.close(1007, 'Request contains an invalid argument.');
      return;
    }
    if (m.realtimeInput?.audio) {
      audio += Buffer.from(m.realtimeInput.audio.data, 'base64').length;
      return;
    }
    if (m.realtimeInput?.audioStreamEnd) {
      turn(`audio of ${audio} bytes`);
      audio = 0;
      return;
    }
    if (m.toolResponse) {
      const r = m.toolResponse.functionResponses?.[0];
      turn(`tool ${r?.name} said ${JSON.stringify(r?.response)}`);
      return;
    }
    if (m.clientContent) {
      const text = (m.clientContent.turns ?? []).flatMap((t: any) => t.parts ?? []).map((p: any) => p.text ?? '').join('');
      if (text.includes('invalid')) {
        ws.close(1007, 'Request contains an invalid argument.');
        return;
      }
      // A refusal that names the key it refused, in the close frame's reason (up to its 123
      // bytes: `pad` fills it).
      if (text.includes('quota')) {
        const reason = `Quota exceeded for key ${url.searchParams.get('key')}`;
        const pad = /pad/.test(text) ? '.'.repeat(Math.max(0, 123 - Buffer.byteLength(reason))) : '';
        ws.close(1011, reason + pad);
        return;
      }
      if (text.includes('weather')) {
        send({ toolCall: { functionCalls: [{ id: rid('function-call'), name: 'get_weather', args: { city: 'Paris' } }] } });
        return;
      }
      if (text.includes('long story')) {
        send({ serverContent: { modelTurn: { parts: [{ text: 'Once upon' }] } } });
        send({ serverContent: { interrupted: true } });
        return;
      }
      turn(text);
    }
  });

  function turn(text: string): void {
    const reply = `You said: ${text}`;
    for (const w of reply.match(/\S+\s*/g) ?? []) send({ serverContent: { modelTurn: { parts: [{ text: w }] } } });
    send({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: 'audio/pcm;rate=24000', data: pcmFor(reply).toString('base64') } }] } } });
    send({ serverContent: { generationComplete: true } });
    send({ serverContent: { turnComplete: true }, usageMetadata: { promptTokenCount: 20, responseTokenCount: reply.length, totalTokenCount: 20 + reply.length } });
  }
}
