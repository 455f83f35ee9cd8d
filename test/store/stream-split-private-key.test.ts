// A PEM private key the model writes out in a streamed answer arrives a few characters a
// `delta.content` event: no event holds enough of its body for the PEM search, which masked a
// whole body in one string only, so every piece reached the tape, and `tapedeck scan` missed it
// too. Here a real key is streamed by a loopback server speaking OpenAI's chat completions
// stream, read through the OpenAI SDK over createFetch: no 12 characters of the key's body are on
// the tape, the replayed answer reads as the recorded one with the body masked (markers kept),
// two keys stay two masks, and the scan reports the key cut across the events of a tape written
// with secrets kept.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { redactStream } from '../../src/store/stream-redact.ts';

const pem = (): string => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const KEY = pem();
const OTHER = pem();
/** The key's body: the lines between the markers, joined. */
const bodyOf = (k: string) => k.split('\n').filter((l) => l !== '' && !l.startsWith('-----')).join('');

/** The answer's text: prose around the key. */
const answerText = (key: string) => `Here is the key you asked for:\n\n${key}\nKeep it safe.`;

/** The text cut into pieces of 3-8 characters, as a model's tokens come. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0, n = 3; i < text.length; i += n, n = 3 + ((n * 7) % 6)) out.push(text.slice(i, i + n));
  return out;
}

function sse(text: string): string {
  const ev = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return ev({ role: 'assistant', content: '' }) + pieces(text).map((p) => ev({ content: p })).join('') + ev({}, 'stop') + 'data: [DONE]\n\n';
}

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-split-pem-'));
let server: Server;
let base = '';

beforeAll(async () => {
  // Streams the key named by the prompt ("key 1" or "key 2"), its events written one by one.
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const prompt = (JSON.parse(Buffer.concat(chunks).toString()) as { messages: { content: string }[] }).messages[0]!.content;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const ev of sse(answerText(prompt.includes('2') ? OTHER : KEY)).split(/(?<=\n\n)/)) res.write(ev);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** The streamed answer to each prompt, as the SDK joins it. */
async function ask(f: typeof fetch, prompts: string[]): Promise<string[]> {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/v1`, fetch: f, maxRetries: 0 });
  const out: string[] = [];
  for (const p of prompts) {
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: p }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    out.push(text);
  }
  return out;
}

/** A stream's deltas joined, as an SDK joins them. */
const joinedDeltas = (sseText: string): string =>
  [...sseText.matchAll(/^data: (\{.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { choices: { delta: { content?: string } }[] }).choices[0]!.delta.content ?? '').join('');

/** Every 12-character piece of a key's body in a text (the stored stream's deltas joined: its events hold only a few characters each). */
function leaked(text: string, key: string): string[] {
  const body = bodyOf(key).replace(/\n/g, '');
  const flat = text.replace(/\n/g, '');
  const out: string[] = [];
  for (let i = 0; i + 12 <= body.length; i += 6) if (flat.includes(body.slice(i, i + 12))) out.push(body.slice(i, i + 12));
  return out;
}

/** The answers on a tape, each stream's deltas joined. */
async function storedAnswers(tape: string): Promise<string[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord).map((r) => joinedDeltas(Buffer.from(r.response.body).toString('utf8')));
}

describe('a PEM private key cut across a stream\'s events', () => {
  it('redactStream masks its body across the events, markers and prose kept', () => {
    const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
    const body = new TextEncoder().encode(sse(answerText(KEY)));
    const out = redactStream(body, 'text/event-stream', r)!;
    const text = new TextDecoder().decode(out.body);
    const joined = joinedDeltas(text);
    expect(leaked(joined, KEY)).toEqual([]);
    expect(joined).toMatch(/^Here is the key you asked for:\n\n-----BEGIN PRIVATE KEY-----\n\[REDACTED:[0-9a-f]{16}\]\n-----END PRIVATE KEY-----\n\nKeep it safe\.$/);
    const other = new TextDecoder().decode(redactStream(new TextEncoder().encode(sse(answerText(OTHER))), 'text/event-stream', r)!.body);
    expect(/REDACTED:[0-9a-f]{16}/.exec(other)![0]).not.toBe(/REDACTED:[0-9a-f]{16}/.exec(text)![0]);
  });

  it('createFetch with the OpenAI SDK: none of the body reaches the tape; replay reads as recorded', async () => {
    const tape = join(dir, 'stream.tape');
    const rec = createFetch({ tape, mode: 'record' });
    let recorded: string[];
    try {
      recorded = await ask(rec, ['key 1', 'key 2']);
    } finally {
      await rec.close();
    }
    expect(recorded).toEqual([answerText(KEY), answerText(OTHER)]);
    const stored = await storedAnswers(tape);
    expect(stored).toHaveLength(2);
    expect(leaked(stored.join('\n'), KEY)).toEqual([]);
    expect(leaked(stored.join('\n'), OTHER)).toEqual([]);
    // Nor any piece of it as the events hold it.
    expect(readFileSync(tape).includes(Buffer.from(bodyOf(KEY).slice(0, 12)))).toBe(false);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const replayed = await ask(play, ['key 1', 'key 2']);
      for (const [i, key] of [KEY, OTHER].entries()) {
        expect(replayed[i]).toContain('-----BEGIN PRIVATE KEY-----\n[REDACTED:');
        expect(replayed[i]).toMatch(/\]\n-----END PRIVATE KEY-----\n\nKeep it safe\.$/);
        expect(replayed[i]).not.toContain(bodyOf(key).slice(0, 12));
      }
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }
  });

  it('scan reports it on a tape written with secrets kept', async () => {
    const tape = join(dir, 'kept.tape');
    const rec = createFetch({ tape, mode: 'record', redact: { keepSecrets: true } });
    try {
      await ask(rec, ['key 1']);
    } finally {
      await rec.close();
    }
    const records = (await readTape(tape)).records.map((r) => r.value);
    const found = records.flatMap((v) => secretsInValue(v));
    expect(found.some((f) => /events \d+-\d+$/.test(f.path) && f.kind === 'key format')).toBe(true);
  });
});
