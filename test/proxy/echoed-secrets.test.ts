// A server that repeats the request's own secrets in its answer: a `?token=` value, an API key
// sent in a header under no known prefix, a `client_secret` member of the body, a bearer token.
// None of them looks like a credential, so no pattern finds them in the answer; they are masked
// because the request carried them. Whole in a JSON answer, cut across the events of a stream,
// cut across two writes of a plain text answer, in a response header: no piece of any of them
// reaches the tape, and the replayed answer reads with each value's mask where it stood.
import OpenAI from 'openai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-echoed-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Plain letters and digits: no provider prefix, nothing the credential patterns know.
const TOKEN = 'qZ7tR2mV9xK4wP1sHn6c';
const API_KEY = 'live3f9a8b7c6d5e4f3a2b1c0d';
const CLIENT_SECRET = 'oc9Hq2Lw7Vb4Nx1Mz8Kp';
const BEARER = 'tk5Rn8Qw2Ez6Ty3Ui9Op4As';
const SECRETS = [TOKEN, API_KEY, CLIENT_SECRET, BEARER];

/** Every 6-character piece of a secret: a piece on the tape is a piece of the secret. */
function pieces(secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 6 <= secret.length; i++) out.push(secret.slice(i, i + 6));
  return out;
}

async function expectNoSecret(tape: string): Promise<void> {
  const bytes = readFileSync(tape);
  const exported = await exportTapeJSON(tape);
  for (const s of SECRETS) {
    for (const p of pieces(s)) {
      expect(bytes.includes(Buffer.from(p)), `${p} (of ${s}) in the tape's bytes`).toBe(false);
      expect(exported.includes(p), `${p} (of ${s}) in the export`).toBe(false);
    }
  }
}

async function records(tape: string): Promise<HttpRecord[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
}

const cut = (s: string, n: number) => s.match(new RegExp(`[\\s\\S]{1,${n}}`, 'g')) ?? [];

/** What the request carried: its `?token=`, its x-api-key, its body's client_secret, its bearer token. */
function carried(req: IncomingMessage, raw: string): string {
  const url = new URL(req.url!, 'http://x');
  const body = raw === '' ? {} : (JSON.parse(raw) as { client_secret?: string; messages?: { content: string }[] });
  const bearer = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
  return `token ${url.searchParams.get('token') ?? ''}, key ${String(req.headers['x-api-key'] ?? '')}, secret ${body.client_secret ?? ''}, bearer ${bearer}, said ${body.messages?.at(-1)?.content ?? ''}`;
}

/** A loopback server answering with what the request carried, as JSON, as a stream or as text in two writes. */
async function startEchoing(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const raw = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(Buffer.concat(parts)) : Buffer.concat(parts)).toString('utf8');
    const text = carried(req, raw);
    const path = new URL(req.url!, 'http://x').pathname;
    if (path === '/v1/chat/completions') {
      const body = JSON.parse(raw) as { model: string; stream?: boolean };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'x-echo-token': TOKEN });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1767225600, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1767225600, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      for (const e of [chunk({ role: 'assistant', content: '' }), ...cut(text, 7).map((p) => chunk({ content: p })), chunk({}, 'stop'), 'data: [DONE]\n\n']) {
        res.write(e);
        await new Promise((r) => setTimeout(r, 1));
      }
      res.end();
      return;
    }
    // Plain text in two writes, the second starting inside the bearer token.
    res.writeHead(200, { 'content-type': 'text/plain' });
    const at = text.indexOf(BEARER) + 5;
    res.write(text.slice(0, at));
    await new Promise((r) => setTimeout(r, 5));
    res.end(text.slice(at));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** Records what `call` gets from the echoing server onto a new tape; returns it and the tape. */
async function recorded<T>(name: string, call: (f: typeof fetch, base: string) => Promise<T>, opts: { redact?: { keepSecrets: boolean } } = {}): Promise<{ tape: string; live: T }> {
  const tape = join(dir, name);
  const up = await startEchoing();
  const rec = createFetch({ tape, mode: 'record', ...opts });
  try {
    return { tape, live: await call(rec, up.url) };
  } finally {
    await rec.close();
    await up.close();
  }
}

/** The text of a streamed chat answer. */
async function streamed(f: typeof fetch, base: string): Promise<string> {
  let out = '';
  for await (const c of (await client(base, f).chat.completions.create({ ...ASK, stream: true } as never)) as unknown as AsyncIterable<{ choices: { delta?: { content?: string } }[] }>) out += c.choices[0]?.delta?.content ?? '';
  return out;
}

const client = (base: string, f: typeof fetch) =>
  new OpenAI({ apiKey: BEARER, baseURL: `${base}/v1`, fetch: f, maxRetries: 0, defaultHeaders: { 'x-api-key': API_KEY }, defaultQuery: { token: TOKEN } });
const ASK = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'repeat what I sent' }], client_secret: CLIENT_SECRET };

describe('secrets of the request that the answer repeats', () => {
  it('a JSON answer and a response header: masked, and replayed with the masks where they stood', async () => {
    const { tape, live } = await recorded('json.tape', async (f, base) => (await client(base, f).chat.completions.create(ASK as never)).choices[0]!.message.content);
    for (const s of SECRETS) expect(live).toContain(s);
    await expectNoSecret(tape);
    const [r] = await records(tape);
    expect(String(r!.response.headers['x-echo-token'])).toMatch(/^\[REDACTED(:[0-9a-f]{16})?\]$/);

    const play = createFetch({ tape, mode: 'replay' });
    try {
      const replayed = (await client('http://127.0.0.1:9', play).chat.completions.create(ASK as never)).choices[0]!.message.content!;
      expect(replayed).toMatch(/^token \[REDACTED:[0-9a-f]{16}\], key \[REDACTED\], secret \[REDACTED:[0-9a-f]{16}\], bearer \[REDACTED\], said repeat what I sent$/);
      // The token's mask is the one its request's URL holds: a reviewer sees it is the same value.
      const urlMask = /token=(%5BREDACTED%3A[0-9a-f]{16}%5D)/.exec(r!.request.url)![1]!;
      expect(replayed).toContain(decodeURIComponent(urlMask));
    } finally {
      await play.close();
    }
  });

  it('a streamed answer that cuts them across its events: no piece on the tape; the chunks still end between events', async () => {
    const { tape, live } = await recorded('sse.tape', streamed);
    for (const s of SECRETS) expect(live).toContain(s);
    await expectNoSecret(tape);
    const [r] = await records(tape);
    // The stream's chunks were kept (not merged into one), each still ending at an event's end.
    // (How many the socket delivered depends on its timing: writes 1 ms apart may arrive as one.)
    const body = Buffer.from(r!.response.body).toString('utf8');
    const chunks = r!.response.chunks!;
    expect(chunks.length).toBeGreaterThan((cut(live, 7).length + 3) / 2);
    for (const [, end] of chunks) expect(body.slice(end - 2, end)).toBe('\n\n');

    const play = createFetch({ tape, mode: 'replay' });
    let replayed: string;
    try {
      replayed = await streamed(play, 'http://127.0.0.1:9');
    } finally {
      await play.close();
    }
    expect(replayed).toMatch(/^token \[REDACTED:[0-9a-f]{16}\], key \[REDACTED\], secret \[REDACTED:[0-9a-f]{16}\], bearer \[REDACTED\], said repeat what I sent$/);
  });

  it('a plain text answer in two writes, the bearer token cut between them: masked whole', async () => {
    const ask = (f: typeof fetch, base: string) => f(`${base}/v1/whoami?token=${TOKEN}`, { headers: { authorization: `Bearer ${BEARER}`, 'x-api-key': API_KEY } });
    const { tape, live } = await recorded('text.tape', async (f, base) => (await ask(f, base)).text());
    expect(live).toContain(BEARER);
    await expectNoSecret(tape);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await (await ask(play, 'http://127.0.0.1:9')).text()).toMatch(/^token \[REDACTED:[0-9a-f]{16}\], key \[REDACTED\], secret , bearer \[REDACTED\], said $/);
    } finally {
      await play.close();
    }
  });

  it('a gzip request body: its client_secret is found in the decoded body', async () => {
    const ask = (f: typeof fetch, base: string) =>
      f(`${base}/v1/whoami`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ client_secret: CLIENT_SECRET, messages: [{ content: 'zipped' }] })) });
    const { tape, live } = await recorded('gzip.tape', async (f, base) => (await ask(f, base)).text());
    expect(live).toContain(CLIENT_SECRET);
    await expectNoSecret(tape);
  });

  it('with keepSecrets the answer is kept as it came', async () => {
    const { tape } = await recorded('kept.tape', (f, base) => client(base, f).chat.completions.create(ASK as never), { redact: { keepSecrets: true } });
    const [r] = await records(tape);
    const text = Buffer.from(r!.response.body).toString('utf8');
    for (const s of SECRETS) expect(text).toContain(s);
  });
});
