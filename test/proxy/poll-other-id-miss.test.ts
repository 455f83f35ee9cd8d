// A poll of an id the tape has no recording of (`GET /v1/batches/batch_abc124`, where the tape
// holds `batch_abc123`: ids the API makes anew on every live run) said only "no recording for
// GET …". The miss now names the recorded path that differs from it in its last part alone.
// Through createFetch with the real OpenAI SDK against a loopback fake.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-poll-other-id-'));
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.url!.split('/').pop();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'batch', status: 'in_progress', endpoint: '/v1/chat/completions', input_file_id: 'file-1', completion_window: '24h', created_at: 1 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('a poll of an id the tape has no recording of', () => {
  it('names the recorded path that differs in its last part', async () => {
    const tape = join(dir, 'poll.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      await new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: rec, maxRetries: 0 }).batches.retrieve('batch_abc123');
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const c = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: play, maxRetries: 0 });
      const miss = await c.batches.retrieve('batch_abc124').then(
        () => 'served',
        (e: Error) => e.message,
      );
      expect(miss).toMatch(/tapedeck miss: no recording for GET \/v1\/batches\/batch_abc124; the tape has GET \/v1\/batches\/batch_abc123/);
      // Another resource entirely keeps the general sentence.
      const other = await c.files.retrieve('file-9').then(
        () => 'served',
        (e: Error) => e.message,
      );
      expect(other).toMatch(/tapedeck miss: no recording for GET \/v1\/files\/file-9;/);
    } finally {
      await play.close();
    }
  });
});
