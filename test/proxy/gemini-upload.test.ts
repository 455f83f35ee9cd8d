// @google/genai's files.upload (Google's resumable upload: a `start` request answered with an
// X-Goog-Upload-URL, then the file's bytes sent there with `X-Goog-Upload-Command: upload,
// finalize`) through createFetch and the proxy against a loopback fake: the SDK sends the bytes
// with its default `Content-Type: application/json`, which tapedeck read as JSON and refused
// (400 E_JSON, nothing recorded); now they are recorded as bytes and replayed with the fake gone,
// another file is a miss, and the key (header, and ?key= echoed in the upload URL) stays off the tape.
import { GoogleGenAI } from '@google/genai';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-gemini-upload-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'AIza' + 'SyUpL0ad-Ab3dEf6hIj9kLm2nOp5qRs8tU';
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(4000)]);
const other = Buffer.concat([png.subarray(0, 8), randomBytes(4000)]);

/** The Files API's resumable upload, as Google speaks it (the start's query echoed into the upload URL). */
async function startFakeUploads() {
  const sessions = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = Buffer.concat(parts);
    const url = new URL(req.url!, 'http://x');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.headers['x-goog-upload-command'] === 'start') {
      const id = randomBytes(8).toString('hex');
      sessions.set(id, Number(req.headers['x-goog-upload-header-content-length']));
      const q = new URLSearchParams(url.search);
      q.set('upload_id', id);
      q.set('upload_protocol', 'resumable');
      res.writeHead(200, { 'x-goog-upload-url': `${origin}/upload/v1beta/files?${q}`, 'x-goog-upload-status': 'active', 'content-length': '0' });
      return res.end();
    }
    const size = sessions.get(url.searchParams.get('upload_id') ?? '');
    if (size !== body.length) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { code: 400, message: 'bad upload', status: 'INVALID_ARGUMENT' } }));
    }
    const file = { name: `files/${randomBytes(4).toString('hex')}`, sizeBytes: String(body.length), sha256Hash: createHash('sha256').update(body).digest('base64'), state: 'ACTIVE' };
    res.writeHead(200, { 'content-type': 'application/json', 'x-goog-upload-status': 'final' });
    res.end(JSON.stringify({ file }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const upload = (ai: GoogleGenAI, bytes: Buffer) => ai.files.upload({ file: new Blob([bytes], { type: 'image/png' }), config: { mimeType: 'image/png' } });
const genai = (baseUrl: string, fetchImpl?: typeof fetch) => new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl, ...(fetchImpl ? { fetch: fetchImpl } : {}), retryOptions: { attempts: 1 } } });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('base64');

function assertNoKey(tape: string) {
  const bytes = readFileSync(tape);
  for (const secret of [KEY, KEY.slice(4, 20)]) expect(bytes.indexOf(Buffer.from(secret)), `${secret} in ${tape}`).toBe(-1);
}

/** The same upload by hand, with the key in the query (which Google echoes into the upload URL). */
async function uploadWithQueryKey(f: typeof fetch, base: string, rewriteHost: boolean) {
  const start = await f(`${base}/upload/v1beta/files?key=${KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': String(png.length), 'x-goog-upload-header-content-type': 'image/png' },
    body: JSON.stringify({ file: { display_name: 'by hand' } }),
  });
  let at = start.headers.get('x-goog-upload-url')!;
  if (rewriteHost) at = `${base}${new URL(at).pathname}${new URL(at).search}`;
  const res = await f(at, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' }, body: png });
  return ((await res.json()) as { file: { sha256Hash: string } }).file.sha256Hash;
}

describe('Google resumable upload (files.upload)', () => {
  it('createFetch: records the upload, replays it with the upstream gone, another file is a miss', async () => {
    const tape = join(dir, 'fetch.tape');
    const fake = await startFakeUploads();
    const rec = createFetch({ tape, mode: 'record' });
    try {
      expect((await upload(genai(fake.url, rec), png)).sha256Hash).toBe(sha(png));
      expect(await uploadWithQueryKey(rec, fake.url, false)).toBe(sha(png));
    } finally {
      await rec.close();
      await fake.close();
    }
    assertNoKey(tape);

    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect((await upload(genai(fake.url, play), png)).sha256Hash).toBe(sha(png));
      expect(await uploadWithQueryKey(play, fake.url, false)).toBe(sha(png));
      // Another file: the start request (same metadata) replays, the bytes miss.
      await expect(upload(genai(fake.url, play), other)).rejects.toThrow(/tapedeck miss/);
      // A file of another size: the start request misses, naming the member and both values.
      await expect(upload(genai(fake.url, play), png.subarray(0, 2008))).rejects.toThrow(/tapedeck miss: file\.sizeBytes is \\"2008\\", the closest recording's \\"4008\\"/);
    } finally {
      await play.close();
    }
  });

  it('the proxy: records the upload, replays it with the upstream gone', async () => {
    const tape = join(dir, 'proxy.tape');
    const fake = await startFakeUploads();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      expect((await upload(genai(rec.url), png)).sha256Hash).toBe(sha(png));
      // A client of its own sends the file where X-Goog-Upload-URL says: the proxy points it at itself.
      expect(await uploadWithQueryKey(fetch, rec.url, false)).toBe(sha(png));
    } finally {
      await rec.close();
      await fake.close();
    }
    assertNoKey(tape);

    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expect((await upload(genai(play.url), png)).sha256Hash).toBe(sha(png));
      expect(await uploadWithQueryKey(fetch, play.url, false)).toBe(sha(png));
    } finally {
      await play.close();
    }
  });
});
