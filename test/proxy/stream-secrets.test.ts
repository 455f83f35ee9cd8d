// A key the model repeats in a streamed answer, with the real SDKs: cut across the stream's
// events (OpenAI's and Anthropic's server-sent events, Ollama's NDJSON lines, Bedrock's
// event-stream frames) it never reaches the tape, not even a piece of it, and the replayed
// stream reads as the whole answer would after redaction: the key's mask where it stood, the
// same mask as the prompt's. Bedrock's frames stay frames (lengths and CRCs right), so the AWS
// SDK replays them. `tapedeck scan` finds such a key in a tape written without redaction.
import Anthropic from '@anthropic-ai/sdk';
import { ConverseStreamCommand, InvokeModelWithResponseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { remapChunkEnds } from '../../src/store/stream-redact.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { decodeEventStream, encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { awsClient, MODEL } from '../providers/bedrock-clients.ts';
import { startBedrock } from '../providers/fake-bedrock.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stream-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'sk-proj-' + 'Zx9Cv8Bn7Mq6Wl5Ek4Rj3Th2Yg1Uf0IdOsPaLkMjNh';
const TOKEN = 'Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56';
const MASK = /\[REDACTED:[0-9a-f]{16}\]/;

/** Every 6-character piece of the key past its prefix: a piece on the tape is a piece of the key. */
function pieces(secret: string, from: number): string[] {
  const out: string[] = [];
  for (let i = from; i + 6 <= secret.length; i++) out.push(secret.slice(i, i + 6));
  return out;
}

async function expectNoPiece(tape: string, secret: string, from: number): Promise<void> {
  const bytes = readFileSync(tape);
  const exported = await exportTapeJSON(tape);
  for (const p of pieces(secret, from)) {
    expect(bytes.includes(Buffer.from(p)), `${p} in the tape's bytes`).toBe(false);
    expect(exported.includes(p), `${p} in the export`).toBe(false);
  }
}

async function records(tape: string): Promise<HttpRecord[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
}

/** The text the last user message holds, whatever the shape. */
function lastUser(body: { messages?: { content: unknown }[] }): string {
  const c = body.messages?.at(-1)?.content;
  return typeof c === 'string' ? c : Array.isArray(c) ? c.map((b: { text?: string }) => b.text ?? '').join('') : '';
}

const cut = (s: string, n: number) => s.match(new RegExp(`[\\s\\S]{1,${n}}`, 'g')) ?? [];

/**
 * A loopback provider that echoes the prompt as a stream, 7 characters an event, each event a
 * write of its own: OpenAI chat (SSE), Anthropic messages (SSE with event names), Ollama chat (NDJSON).
 */
async function startEcho(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw) as { model: string; messages: { content: unknown }[] };
    const text = `echo: ${lastUser(body)}`;
    const events: string[] = [];
    if (req.url!.startsWith('/v1/chat/completions')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1767225600, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      events.push(chunk({ role: 'assistant', content: '' }), ...cut(text, 7).map((p) => chunk({ content: p })), chunk({}, 'stop'), 'data: [DONE]\n\n');
    } else if (req.url!.startsWith('/v1/messages')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
      events.push(
        ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        ...cut(text, 7).map((p) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } })),
        ev('content_block_stop', { index: 0 }),
        ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }),
        ev('message_stop', {}),
      );
    } else {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      const line = (content: string, done: boolean) => `${JSON.stringify({ model: body.model, created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content }, done, ...(done ? { done_reason: 'stop' } : {}) })}\n`;
      events.push(...cut(text, 7).map((p) => line(p, false)), line('', true));
    }
    for (const e of events) {
      res.write(e);
      await new Promise((r) => setTimeout(r, 2));
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** The mask the stored request's prompt holds where the key was. */
function promptMask(rec: HttpRecord): string {
  const m = MASK.exec(JSON.stringify(rec.request.body));
  expect(m, 'the prompt is masked').not.toBeNull();
  return m![0];
}

describe('a key cut across the events of a streamed answer', () => {
  it('OpenAI chat (SSE): no piece of it on the tape; the replayed stream reads with the prompt\'s mask; each event keeps its chunk', async () => {
    const tape = join(dir, 'openai.tape');
    const echo = await startEcho();
    const prompt = `my key is ${KEY}, keep it`;
    const rec = createFetch({ tape, mode: 'record' });
    const live = new OpenAI({ apiKey: 'sk-test', baseURL: `${echo.url}/v1`, fetch: rec, maxRetries: 0 });
    let liveText = '';
    for await (const c of await live.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: prompt }] })) liveText += c.choices[0]?.delta?.content ?? '';
    await rec.close();
    await echo.close();
    expect(liveText).toBe(`echo: ${prompt}`);

    await expectNoPiece(tape, KEY, 'sk-proj-'.length);
    const [r] = await records(tape);
    const mask = promptMask(r!);
    // One chunk per event still: the events the key crossed were rewritten, not merged.
    expect(r!.response.chunks!.length).toBe(cut(`echo: ${prompt}`, 7).length + 3);

    const play = createFetch({ tape, mode: 'replay' });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch: play, maxRetries: 0 });
    let replayed = '';
    for await (const c of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: prompt }] })) replayed += c.choices[0]?.delta?.content ?? '';
    await play.close();
    expect(replayed).toBe(`echo: my key is ${mask}, keep it`);
  });

  it('Anthropic messages (SSE with event names) and Ollama chat (NDJSON): the same', async () => {
    const echo = await startEcho();
    const prompt = `key ${KEY} end`;
    const anthropicTape = join(dir, 'anthropic.tape');
    const ollamaTape = join(dir, 'ollama.tape');
    const recA = createFetch({ tape: anthropicTape, mode: 'record' });
    const recO = createFetch({ tape: ollamaTape, mode: 'record' });
    const claude = (fetch: typeof globalThis.fetch, url: string) => new Anthropic({ apiKey: 'sk-ant-test', baseURL: url, fetch, maxRetries: 0 });
    const ollama = (fetch: typeof globalThis.fetch, host: string) => new Ollama({ host, fetch });
    const ask = async (a: Anthropic, o: Ollama) => {
      const stream = a.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: prompt }] });
      const msg = await stream.finalMessage();
      let said = '';
      for await (const part of await o.chat({ model: 'llama3.2', stream: true, messages: [{ role: 'user', content: prompt }] })) said += part.message.content;
      return [msg.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), said];
    };
    expect(await ask(claude(recA, echo.url), ollama(recO, echo.url))).toEqual([`echo: ${prompt}`, `echo: ${prompt}`]);
    await recA.close();
    await recO.close();
    await echo.close();

    for (const tape of [anthropicTape, ollamaTape]) await expectNoPiece(tape, KEY, 'sk-proj-'.length);
    const maskA = promptMask((await records(anthropicTape))[0]!);
    const maskO = promptMask((await records(ollamaTape))[0]!);
    const playA = createFetch({ tape: anthropicTape, mode: 'replay' });
    const playO = createFetch({ tape: ollamaTape, mode: 'replay' });
    expect(await ask(claude(playA, 'http://127.0.0.1:9'), ollama(playO, 'http://127.0.0.1:9'))).toEqual([`echo: key ${maskA} end`, `echo: key ${maskO} end`]);
    await playA.close();
    await playO.close();
  });
});

describe('a key cut across the elements of a streamed JSON array', () => {
  it('Gemini streamGenerateContent without alt=sse (one array, an element a write): masked across the elements', async () => {
    const text = `echo: ${KEY} end`;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      const pieces = cut(text, 7);
      const parts = pieces.map((p, i) => JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: p }] }, index: 0, ...(i === pieces.length - 1 ? { finishReason: 'STOP' } : {}) }], modelVersion: 'gemini-2.5-flash' }));
      res.end(`[${parts.join(',\r\n')}]`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1beta/models/gemini-2.5-flash:streamGenerateContent`;
    const tape = join(dir, 'gemini-array.tape');
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'say it' }] }] });
    const call = async (f: typeof fetch, at: string) => {
      const res = await f(at, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const arr = (await res.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[];
      return arr.map((e) => e.candidates[0]!.content.parts[0]!.text).join('');
    };
    const rec = createFetch({ tape, mode: 'record' });
    expect(await call(rec, url)).toBe(text);
    await rec.close();
    await new Promise((r) => server.close(r));
    await expectNoPiece(tape, KEY, 'sk-proj-'.length);
    const play = createFetch({ tape, mode: 'replay' });
    expect(await call(play, url)).toMatch(/^echo: \[REDACTED:[0-9a-f]{16}\] end$/);
    await play.close();
  });
});

describe('Bedrock event-stream answers holding a key', () => {
  it('a key whole inside one frame: the frame is encoded again around its mask, so its CRCs hold and the AWS SDK replays it', async () => {
    const tape = join(dir, 'bedrock-one-frame.tape');
    const fake = await startBedrock();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    const converse = async (url: string) => {
      const client = awsClient(url, { http1: true });
      let text = '';
      for await (const e of (await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: `say ${KEY}` }] }] }))).stream!) text += e.contentBlockDelta?.delta?.text ?? '';
      client.destroy();
      return text.trim();
    };
    expect(await converse(rec.url)).toMatch(/^Echo \d+: say sk-proj-/);
    await rec.close();
    await fake.close();
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    // Masked in place as text, the frame's length and CRC no longer fit it: the SDK refused the stream.
    expect(await converse(play.url)).toMatch(/^Echo \d+: say \[REDACTED:[0-9a-f]{16}\]$/);
    await play.close();
    await expectNoPiece(tape, KEY, 'sk-proj-'.length);
  });

  it('a key inside a frame, a bearer token cut across two, and a key in an InvokeModel chunk: masked in frames the AWS SDK replays', async () => {
    const tape = join(dir, 'bedrock.tape');
    const fake = await startBedrock();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    // The fake streams the prompt back a word a frame: the key whole in one, the token's
    // `Bearer` and its value in two.
    const prompt = `use ${KEY} or Bearer ${TOKEN} now`;
    const calls = async (url: string) => {
      const client = awsClient(url, { http1: true });
      let converse = '';
      for await (const e of (await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: prompt }] }] }))).stream!) converse += e.contentBlockDelta?.delta?.text ?? '';
      const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: prompt }] });
      let invoke = '';
      for await (const e of (await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', body }))).body!) {
        const ev = JSON.parse(new TextDecoder().decode(e.chunk!.bytes)) as { type: string; delta?: { text?: string } };
        if (ev.type === 'content_block_delta') invoke += ev.delta?.text ?? '';
      }
      client.destroy();
      return [converse.trim(), invoke.trim()];
    };
    const live = await calls(rec.url);
    await rec.close();
    await fake.close();
    expect(live[0]).toMatch(new RegExp(`^Echo \\d+: ${prompt}$`));
    expect(live[1]).toMatch(new RegExp(`^Echo \\d+: ${prompt}$`));

    await expectNoPiece(tape, KEY, 'sk-proj-'.length);
    await expectNoPiece(tape, TOKEN, 0);
    // Not in the InvokeModel chunks' base64 either.
    const stored = JSON.stringify(await records(tape));
    for (const r of await records(tape)) {
      const b64 = [...Buffer.from(r.response.body).toString('latin1').matchAll(/"bytes":"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString());
      for (const chunk of b64) expect(chunk.includes(KEY.slice(8, 20)) || chunk.includes(TOKEN.slice(0, 12))).toBe(false);
    }
    expect(stored).not.toContain(TOKEN);

    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    const replayed = await calls(play.url);
    await play.close();
    for (const text of replayed) {
      expect(text).toMatch(new RegExp(`^Echo \\d+: use \\[REDACTED:[0-9a-f]{16}\\] or \\[REDACTED:[0-9a-f]{16}\\] now$`));
      expect(text).not.toContain(KEY.slice(8, 20));
    }
  });
});

describe('ReplayCache put of a streamed answer\'s raw bytes', () => {
  it('masks a key cut across its events, and encodes event-stream frames again around a mask', async () => {
    const tape = join(dir, 'cache.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    const sse = cut(`echo: ${KEY} done`, 7).map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`).join('');
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'sse' }] }, { ok: true }, { raw: { body: sse, contentType: 'text/event-stream' } });
    const frame = encodeEventStreamMessage({
      headers: [{ name: ':event-type', type: 'string', value: 'contentBlockDelta' }, { name: ':message-type', type: 'string', value: 'event' }],
      body: new TextEncoder().encode(JSON.stringify({ contentBlockIndex: 0, delta: { text: `key ${KEY} ok` }, p: 'abc' })),
    });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'frames' }] }, { ok: true }, { raw: { body: frame, contentType: 'application/vnd.amazon.eventstream' } });
    await cache.close();
    await expectNoPiece(tape, KEY, 'sk-proj-'.length);
    const again = await ReplayCache.open(tape, { mode: 'replay' });
    const raw = await again.getRecord({ model: 'm', messages: [{ role: 'user', content: 'sse' }] });
    const text = [...new TextDecoder().decode(raw!.raw!.body).matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content).join('');
    expect(text).toMatch(/^echo: \[REDACTED:[0-9a-f]{16}\] done$/);
    const frames = decodeEventStream((await again.getRecord({ model: 'm', messages: [{ role: 'user', content: 'frames' }] }))!.raw!.body);
    expect(JSON.parse(new TextDecoder().decode(frames[0]!.body))).toMatchObject({ contentBlockIndex: 0, delta: { text: expect.stringMatching(/^key \[REDACTED:[0-9a-f]{16}\] ok$/) }, p: 'abc' });
    await again.close();
  });
});

describe('tapedeck scan', () => {
  it('finds a key cut across the events of a stream, in SSE and in event-stream frames, on a tape written without redaction', async () => {
    const echo = await startEcho();
    const fake = await startBedrock();
    const sse = join(dir, 'kept-sse.tape');
    const frames = join(dir, 'kept-frames.tape');
    const recS = createFetch({ tape: sse, mode: 'record', redact: { keepSecrets: true } });
    const live = new OpenAI({ apiKey: 'sk-test', baseURL: `${echo.url}/v1`, fetch: recS, maxRetries: 0 });
    for await (const _ of await live.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: `a ${KEY} b` }] })) void _;
    await recS.close();
    const recB = await startProxy({ upstream: fake.url, tape: frames, mode: 'record', port: 0, redact: { keepSecrets: true } });
    const client = awsClient(recB.url, { http1: true });
    for await (const _ of (await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: `a Bearer ${TOKEN} b` }] }] }))).stream!) void _;
    client.destroy();
    await recB.close();
    await echo.close();
    await fake.close();

    const out = spawnSync(process.execPath, [CLI, 'scan', sse, frames], { encoding: 'utf8' });
    expect(out.status).toBe(1);
    // The SSE answer: the key runs over events 2-9 of the stream (7 characters each, after `echo: a `).
    expect(out.stdout).toMatch(/kept-sse\.tape: record 0 \(byte \d+\) \$\.response\.body events \d+-\d+: key format "sk-p…"/);
    expect(out.stdout).toMatch(/kept-frames\.tape: record 0 \(byte \d+\) \$\.response\.body frames \d+-\d+: bearer token "Bear…"/);
  });
});

describe('chunk boundaries of a redacted stream', () => {
  it('stay between the same units, and move to the end of a unit that changed', () => {
    const original = new TextEncoder().encode('aaaa|bbbbbb|cc|');
    const final = new TextEncoder().encode('aaaa|bX|cc|');
    const before = [5, 12, 15];
    const after = [5, 8, 11];
    // 2: inside an unchanged unit; 5, 12: between units; 9: inside the unit that changed; 15: the end.
    expect(remapChunkEnds([2, 5, 9, 12, 15], before, after, original, final)).toEqual([2, 5, 8, 8, 11]);
    expect(remapChunkEnds([5], before, [5, 8], original, final)).toBeUndefined();
  });
});
