// An Ollama /api/pull whose NDJSON progress stream ends in an `{"error": …}` line after its 200
// (a manifest not found, a download that dropped) was recorded as a good answer, without a word,
// and every replay failed the same way. Such a stream is now the API's error answer sent after
// a 200, as an error event in an SSE stream is: not recorded, a warning naming the error (or
// recorded with recordErrors). A whole pull (last line `{"status":"success"}`) is still recorded.
// Through createFetch with the real ollama client against a loopback fake.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ollama-pull-error-'));
let server: Server;
let host = '';

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const j = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; name?: string };
    const lines: object[] = [{ status: 'pulling manifest' }, { status: 'pulling 9e62f93eb7d2', digest: 'sha256:9e62f93eb7d2', total: 2000, completed: 0 }];
    if ((j.model ?? j.name) === 'nosuch') lines.push({ error: 'pull model manifest: file does not exist' });
    else lines.push({ status: 'verifying sha256 digest' }, { status: 'writing manifest' }, { status: 'success' });
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const l of lines) res.write(`${JSON.stringify(l)}\n`);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

async function pull(f: typeof fetch, model: string): Promise<string[]> {
  const o = new Ollama({ host, fetch: f });
  const out: string[] = [];
  try {
    for await (const p of await o.pull({ model, stream: true })) out.push(p.status);
  } catch (e) {
    out.push(`ERR ${(e as Error).message.split('\n')[0]}`);
  }
  return out;
}

describe('an Ollama pull stream that ends in an error line', () => {
  it('is not recorded, with a warning naming the error; a whole pull is recorded', async () => {
    const tape = join(dir, 'pull.tape');
    const warnings: string[] = [];
    const rec = createFetch({ tape, mode: 'record', summary: false, onWarning: (w) => warnings.push(String((w as { message?: string }).message ?? w)) });
    try {
      expect((await pull(rec, 'nosuch')).at(-1)).toBe('ERR pull model manifest: file does not exist');
      expect((await pull(rec, 'llama3.2')).at(-1)).toBe('success');
    } finally {
      await rec.close();
    }
    expect(warnings.some((w) => w.includes('/api/pull') && w.includes('pull model manifest: file does not exist') && w.includes('not recorded')), warnings.join('\n')).toBe(true);
    const records = (await readTape(tape)).records.map((r) => JSON.stringify(r.value));
    expect(records.length).toBe(1);
    expect(records[0]).toContain('llama3.2');
  });

  it('is recorded with recordErrors', async () => {
    const tape = join(dir, 'pull-errors.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false, recordErrors: true, onWarning: () => {} });
    try {
      await pull(rec, 'nosuch');
    } finally {
      await rec.close();
    }
    expect((await readTape(tape)).records.length).toBe(1);
  });
});
