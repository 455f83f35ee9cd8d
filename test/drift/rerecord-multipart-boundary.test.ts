// `tapedeck rerecord` of a tape holding multipart uploads: the tape stores the body rebuilt with
// the normalized boundary, but the recorded Content-Type still names the boundary the client
// picked, so the upload was sent again with a body no multipart parser could read (the API
// answered 400, nothing was re-recorded). The Content-Type sent now names the body's boundary.
// Recorded through createFetch with the real OpenAI SDK against a loopback fake that reads the
// form as a server does (the WHATWG multipart parser); the CLI runs from dist.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { CLI } from '../mcp/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-multipart-'));
let server: Server;
let base = '';
const seen: { path: string; fields: string[] | string }[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    let form: FormData;
    try {
      form = await new Request('http://x/', { method: 'POST', headers, body: Buffer.concat(chunks) }).formData();
    } catch (e) {
      seen.push({ path: req.url!, fields: `unreadable: ${(e as Error).message}` });
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'Could not parse multipart form', type: 'invalid_request_error' } }));
    }
    seen.push({ path: req.url!, fields: [...form.keys()] });
    const file = form.get('file') as File;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/v1/files') res.end(JSON.stringify({ id: `file-${file.size}`, object: 'file', bytes: file.size, created_at: 1, filename: file.name, purpose: form.get('purpose') }));
    else res.end(JSON.stringify({ text: `transcript of ${file.name} (${file.size} bytes) in ${form.get('language')}` }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: 'sk-live-openai-key' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

describe('tapedeck rerecord of multipart uploads', () => {
  it('sends each upload as a form the API can read, and re-records it', async () => {
    expect(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
    const tape = join(dir, 'uploads.tape');
    const fetch = createFetch({ tape, mode: 'record', summary: false });
    try {
      const c = new OpenAI({ apiKey: 'sk-test-key', baseURL: `${base}/v1`, fetch, maxRetries: 0 });
      await c.audio.transcriptions.create({ file: await toFile(Buffer.from('RIFF0000WAVEdata'), 'a.wav'), model: 'whisper-1', language: 'en' });
      await c.files.create({ file: await toFile(Buffer.from('{"a":1}\n'), 'b.jsonl'), purpose: 'batch' });
    } finally {
      await fetch.close();
    }
    seen.length = 0;
    const out = join(dir, 'uploads.rerecorded.tape');
    const r = await run(['rerecord', tape, '--yes', '--out', out]);
    expect(seen).toEqual([
      { path: '/v1/audio/transcriptions', fields: ['file', 'model', 'language'] },
      { path: '/v1/files', fields: ['file', 'purpose'] },
    ]);
    expect(r.stdout + r.stderr).toMatch(/recorded 2 of 2/);
    const rerecorded = (await readTape(out)).records.map((x) => x.value).filter(isHttpRecord);
    expect(rerecorded.map((x) => x.response.status)).toEqual([200, 200]);
    expect(JSON.stringify(rerecorded.map((x) => x.response.body))).not.toMatch(/Could not parse/);
  });
});
