// Shared by the import suites: the two requests every source records (a plain and a streamed
// chat completion), reading an answer out of an OpenAI stream's text, and replaying a tape
// through the real OpenAI SDK on createFetch; and compressed answers as each source keeps them,
// against a native recording of the same answers.
import OpenAI from 'openai';
// The module object, not a named import: Polly and nock patch `http.request` on it, which a
// named binding of the ESM wrapper would not see.
import http from 'node:http';
import { expect } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON } from '../../src/store/export.ts';

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
export function httpPost(url: string, body: unknown, headers: Record<string, string | number> = {}): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
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

// ---- Compressed answers: what each source keeps of them, against a native recording ----

/** The codings an API answers with, and a pretty-printed JSON answer (gzip), by the user message asking for it. */
export const ENCODED = ['gzip', 'br', 'deflate', 'gzip pretty'] as const;

/** A chat request whose user message names how its answer is encoded. */
export const encodedAsk = (coding: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: coding }] });

/**
 * A stand-in API that answers each chat request with a small JSON completion compressed as its
 * user message says (`gzip`, `br`, `deflate`; `gzip pretty`: indented JSON), with
 * Content-Encoding, as providers do. `answers` holds each answer's text before compression.
 */
export async function startEncodingUpstream(): Promise<{ url: string; answers: Map<string, string>; close(): Promise<void> }> {
  const zlib = await import('node:zlib');
  const answers = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const ask = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { messages: { content: string }[] }).messages[0]!.content;
      const value = { id: `chatcmpl-${ask.replace(/\W/g, '')}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `Sent as ${ask}` }, finish_reason: 'stop' }] };
      const text = ask.endsWith('pretty') ? JSON.stringify(value, null, 2) : JSON.stringify(value);
      answers.set(ask, text);
      const coding = ask.split(' ')[0]!;
      const body = coding === 'br' ? zlib.brotliCompressSync(text) : coding === 'deflate' ? zlib.deflateSync(text) : zlib.gzipSync(text);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    answers,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Each answer of a tape as `tapedeck export --review` shows it, by the user message asking for it: its body and its Content-Encoding header. */
export async function reviewedAnswers(tape: string): Promise<Record<string, { body: unknown; contentEncoding: unknown }>> {
  const doc = JSON.parse(await exportTapeJSON(tape, { review: true })) as { records: { request: { body: { messages: { content: string }[] } }; response: { body: unknown; headers: Record<string, unknown> } }[] };
  return Object.fromEntries(doc.records.map((r) => [r.request.body.messages[0]!.content, { body: r.response.body, contentEncoding: r.response.headers['content-encoding'] ?? null }]));
}

/** The same answers recorded natively: createFetch in record mode calling the API (fetch decodes the answers). */
export async function nativeAnswers(url: string, tape: string): Promise<Record<string, { body: unknown; contentEncoding: unknown }>> {
  const f = createFetch({ tape, mode: 'record', onWarning: () => {} });
  try {
    for (const coding of ENCODED) await (await f(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(encodedAsk(coding)) })).text();
  } finally {
    await f.close();
  }
  return reviewedAnswers(tape);
}

/** POSTs a body to a tape replayed by createFetch: the answer's text. */
export async function replayedText(tape: string, url: string, body: unknown): Promise<string> {
  const f = createFetch({ tape, mode: 'replay' });
  try {
    return await (await f(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
  } finally {
    await f.close();
  }
}

/**
 * Checks a tape imported from the answers of {@link startEncodingUpstream}: each body stored as
 * the native recording stores the same answer (readable JSON, not opaque bytes), no
 * Content-Encoding left beside the decoded body, and replay giving the answer's exact text.
 */
export async function expectStoredAsNative(imported: string, native: Record<string, { body: unknown; contentEncoding: unknown }>, upstream: { url: string; answers: Map<string, string> }): Promise<void> {
  const got = await reviewedAnswers(imported);
  expect(Object.keys(got).sort()).toEqual([...ENCODED].sort());
  for (const coding of ENCODED) {
    expect(got[coding], coding).toEqual(native[coding]);
    expect(got[coding]!.body, coding).toMatchObject({ $type: 'bytes', json: JSON.parse(upstream.answers.get(coding)!) });
    expect(got[coding]!.contentEncoding, coding).toBeNull();
    expect(await replayedText(imported, upstream.url, encodedAsk(coding)), coding).toBe(upstream.answers.get(coding));
  }
}
