// One turn of an OpenAI Realtime session through a tapedeck proxy, with the real openai client:
// a text message, a response asked for, its transcript (or undefined when the session ended
// first) and the error events the client got.
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

/**
 * Connects to the proxy at `url` (its CA for TLS) at once; `ask(text)` waits for the connect,
 * asks `text` once, then closes the session.
 */
export function openRealtime(url: string, ca: string | undefined): { opened: Promise<void>; ask: (text: string) => Promise<{ transcript?: string; errors: string[] }> } {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
  const errors: string[] = [];
  rt.on('error', (e) => errors.push(e.message));
  const closed = new Promise<void>((r) => rt.socket.once('close', () => r()));
  const opened = new Promise<void>((r) => rt.socket.once('open', () => r()));
  return {
    opened,
    ask: async (text) => {
      const done = new Promise<string | undefined>((r) => {
        rt.on('response.done', (e) => r((e.response.output?.[0] as { content?: { transcript?: string }[] } | undefined)?.content?.[0]?.transcript));
        void closed.then(() => r(undefined));
      });
      await opened;
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      rt.send({ type: 'response.create' });
      const transcript = await done;
      rt.close();
      await closed;
      return { transcript, errors };
    },
  };
}

/** Asks `text` over the proxy at `url` (its CA for TLS), then closes the session. */
export function askRealtime(url: string, ca: string | undefined, text: string): Promise<{ transcript?: string; errors: string[] }> {
  return openRealtime(url, ca).ask(text);
}
