// Shared by the import suites: the two requests every source records (a plain and a streamed
// chat completion), reading an answer out of an OpenAI stream's text, and replaying a tape
// through the real OpenAI SDK on createFetch.
import OpenAI from 'openai';
// The module object, not a named import: Polly and nock patch `http.request` on it, which a
// named binding of the ESM wrapper would not see.
import http from 'node:http';
import { createFetch } from '../../src/proxy/fetch.ts';

/** The plain request body, keys in the order the OpenAI SDK sends them. */
export const PLAIN = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Name a colour' }] };
export const STREAMED = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Count to three' }], stream: true as const };

/** An answer as a client sees it: the plain reply's id and text, the streamed reply's id and text. */
export interface Answers {
  plainId: string;
  plain: string;
  streamId: string;
  stream: string;
}

/** The id and the joined content deltas of an OpenAI chat-completion event stream. */
export function streamText(sse: string): { id: string; text: string } {
  let id = '';
  let text = '';
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const ev = JSON.parse(line.slice(6)) as { id: string; choices: { delta: { content?: string } }[] };
    id ||= ev.id;
    text += ev.choices[0]?.delta.content ?? '';
  }
  return { id, text };
}

/** The answers a tape replays through the OpenAI SDK (createFetch in replay mode; no server runs). */
export async function replayAnswers(tape: string): Promise<Answers> {
  const f = createFetch({ tape, mode: 'replay' });
  try {
    const client = new OpenAI({ apiKey: 'sk-replay-key-not-used', baseURL: 'http://127.0.0.1:9/v1', fetch: f, maxRetries: 0 });
    const plain = await client.chat.completions.create(PLAIN);
    let streamId = '';
    let stream = '';
    for await (const c of await client.chat.completions.create(STREAMED)) {
      streamId ||= c.id;
      stream += c.choices[0]?.delta.content ?? '';
    }
    return { plainId: plain.id, plain: plain.choices[0]!.message.content ?? '', streamId, stream };
  } finally {
    await f.close();
  }
}

/** A POST with node:http (what Polly's and nock's node adapters intercept); resolves to the answer text. */
export function httpPost(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(data)), ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** Answers from the raw texts a client received live. */
export function answersOf(plainJson: string, sse: string): Answers {
  const p = JSON.parse(plainJson) as { id: string; choices: { message: { content: string } }[] };
  const s = streamText(sse);
  return { plainId: p.id, plain: p.choices[0]!.message.content, streamId: s.id, stream: s.text };
}
