// One turn of a raw OpenAI Realtime session (ws, no SDK) through a proxy: a user message, a
// response asked for, the transcript deltas joined. The connect's query, subprotocols and
// headers are the caller's, for tests of what the connect carries.
import { WebSocket } from 'ws';

/** What the connect sends besides `/v1/realtime?model=gpt-realtime` and the `realtime` subprotocol. */
export interface Connect {
  query?: string;
  protocols?: string[];
  headers?: Record<string, string>;
}

/**
 * Connects to the proxy at `url`, says `text`, asks for a response and returns its transcript.
 *
 * @example
 * await spokenBack(proxy.url, 'hello') // 'You said: hello'
 */
export async function spokenBack(url: string, text: string, connect: Connect = {}): Promise<string> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime${connect.query ?? ''}`, ['realtime', ...(connect.protocols ?? [])], { headers: connect.headers ?? {} });
  let transcript = '';
  const done = new Promise<void>((resolve, reject) => {
    ws.on('message', (d) => {
      const e = JSON.parse(d.toString()) as { type: string; delta?: string };
      if (e.type === 'session.created') {
        ws.send(JSON.stringify({ type: 'conversation.item.create', item: { id: 'item_u1', type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
        ws.send(JSON.stringify({ type: 'response.create' }));
      }
      if (e.type === 'response.output_audio_transcript.delta') transcript += e.delta;
      if (e.type === 'response.done' || e.type === 'error') resolve();
    });
    ws.once('error', reject);
  });
  await done;
  ws.close();
  await new Promise((r) => ws.once('close', r));
  return transcript;
}
