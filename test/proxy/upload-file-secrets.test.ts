// Secrets in uploaded files that reached the tape: JSON text inside a string of an uploaded JSONL
// line (a batch input whose message holds `{"client_secret": "…"}`; the same text in a JSON body
// was masked), and a `.env` or YAML file's secret-named lines sent with Google's resumable upload
// (the same file sent as a multipart part was masked). Both now masked where they stand, through
// createFetch with the real SDKs against loopback fakes; the same upload still replays.
import { GoogleGenAI } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-upload-file-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'Mn2bV6cX0zL8kJ4hG7fD1sA5';
const PASSWORD = 'Pg7xQ2vLm9Rt4Wz8';

/** An OpenAI files endpoint and Google's resumable upload (start, then the bytes to the URL it gives). */
async function startFake() {
  const sessions = new Map<string, number>();
  let n = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url!, 'http://x');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (url.pathname === '/v1/files') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ id: `file-${++n}`, object: 'file', bytes: body.length, created_at: 1, filename: 'b.jsonl', purpose: 'batch' }));
    }
    if (req.headers['x-goog-upload-command'] === 'start') {
      const id = randomBytes(8).toString('hex');
      sessions.set(id, Number(req.headers['x-goog-upload-header-content-length']));
      res.writeHead(200, { 'x-goog-upload-url': `${origin}/upload/v1beta/files?upload_id=${id}&upload_protocol=resumable`, 'x-goog-upload-status': 'active', 'content-length': '0' });
      return res.end();
    }
    if (sessions.get(url.searchParams.get('upload_id') ?? '') !== body.length) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { code: 400, message: 'bad upload', status: 'INVALID_ARGUMENT' } }));
    }
    const file = { name: `files/${createHash('sha256').update(body).digest('hex').slice(0, 10)}`, sizeBytes: String(body.length), state: 'ACTIVE' };
    res.writeHead(200, { 'content-type': 'application/json', 'x-goog-upload-status': 'final' });
    res.end(JSON.stringify({ file }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const batchLine = (member: string, space: string) =>
  JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: `config: {"${member}":${space}"${SECRET}"}` }] } }) + '\n';

describe('secrets in uploaded files', () => {
  it('JSON text inside a string of an uploaded JSONL line is masked; the same file replays', async () => {
    const fake = await startFake();
    for (const [member, space] of [['password', ''], ['client_secret', ' ']] as const) {
      const tape = join(dir, `jsonl-${member}.tape`);
      const send = async (f: typeof fetch) => {
        const c = new OpenAI({ apiKey: 'sk-x', baseURL: `${fake.url}/v1`, fetch: f, maxRetries: 0 });
        return (await c.files.create({ file: await toFile(Buffer.from(`{"custom_id":"z","method":"POST","url":"/v1/embeddings","body":{"input":"plain"}}\n${batchLine(member, space)}`), 'b.jsonl'), purpose: 'batch' })).id;
      };
      const rec = createFetch({ tape, mode: 'record' });
      let id;
      try {
        id = await send(rec);
      } finally {
        await rec.close();
      }
      const onDisk = readFileSync(tape);
      expect(onDisk.includes(SECRET), `${member} value on the tape`).toBe(false);
      expect(onDisk.includes('plain')).toBe(true);
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await send(play)).toBe(id);
      } finally {
        await play.close();
      }
    }
    await fake.close();
  });

  it('a .env or YAML file sent with Google\'s resumable upload has its secret-named values masked, as a multipart part does', async () => {
    const fake = await startFake();
    const files = { '.env': `DB_HOST=db.internal\nDB_PASSWORD=${PASSWORD}\n`, 'config.yaml': `db:\n  host: db.internal\n  password: ${PASSWORD}\n` };
    for (const [name, content] of Object.entries(files)) {
      const tape = join(dir, `gemini-${name}.tape`);
      const send = async (f: typeof fetch) => {
        const ai = new GoogleGenAI({ apiKey: 'AIza-not-a-real-key-000000000000000000', httpOptions: { baseUrl: fake.url, fetch: f, retryOptions: { attempts: 1 } } } as never);
        return (await ai.files.upload({ file: new Blob([content], { type: 'text/plain' }), config: { mimeType: 'text/plain', displayName: name } })).name;
      };
      const rec = createFetch({ tape, mode: 'record' });
      let id;
      try {
        id = await send(rec);
      } finally {
        await rec.close();
      }
      const onDisk = readFileSync(tape);
      expect(onDisk.includes(PASSWORD), `${name}: password on the tape`).toBe(false);
      expect(onDisk.includes('db.internal'), `${name}: the rest of the file kept`).toBe(true);
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await send(play)).toBe(id);
      } finally {
        await play.close();
      }
    }
    await fake.close();
  });
});
