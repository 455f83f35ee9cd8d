// @anthropic-ai/sdk's messages.batches.results() through `tapedeck serve`: the batch names its
// results by an absolute `results_url` on the upstream's host, which the SDK fetches as it is.
// Before, that request went around the proxy (never recorded) and a replay with the upstream gone
// failed with a connection error; now the proxy serves the URL on itself, the results (JSONL) are
// recorded and replayed, and the tape keeps the upstream's bytes.
import Anthropic from '@anthropic-ai/sdk';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-batch-results-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Message batches as Anthropic serves them, under a path prefix (a gateway's). */
async function startFakeBatches(prefix: string) {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const path = (req.url ?? '').split('?')[0]!.slice(prefix.length);
    const batch = (ended: boolean) => ({ id: 'msgbatch_1', type: 'message_batch', processing_status: ended ? 'ended' : 'in_progress', request_counts: { processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 }, results_url: ended ? `${origin}${prefix}/v1/messages/batches/msgbatch_1/results` : null });
    const json = (v: unknown) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end(JSON.stringify(v)));
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && path === '/v1/messages/batches') return json(batch(false));
      if (path === '/v1/messages/batches/msgbatch_1') return json(batch(true));
      if (path === '/v1/messages/batches/msgbatch_1/results') {
        res.writeHead(200, { 'content-type': 'application/binary' });
        return res.end(['r1', 'r2'].map((id) => JSON.stringify({ custom_id: id, result: { type: 'succeeded', message: { content: [{ type: 'text', text: `answer ${id}` }] } } })).join('\n') + '\n');
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: path } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  return { url, calls, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

async function batchScript(baseURL: string) {
  const client = new Anthropic({ apiKey: 'sk-ant-api03-test', baseURL, maxRetries: 0 });
  const b = await client.messages.batches.create({ requests: ['r1', 'r2'].map((custom_id) => ({ custom_id, params: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user' as const, content: custom_id }] } })) });
  const out: string[] = [];
  for await (const line of await client.messages.batches.results(b.id)) {
    if (line.result.type === 'succeeded') out.push(`${line.custom_id}: ${(line.result.message.content[0] as { text: string }).text}`);
  }
  return out;
}

describe('message batch results through the proxy', () => {
  for (const prefix of ['', '/gateway/anthropic']) {
    it(`records and replays the results the batch's results_url names${prefix ? ' (upstream with a path prefix)' : ''}`, async () => {
      const tape = join(dir, `batch${prefix.replace(/\//g, '-')}.tape`);
      const fake = await startFakeBatches(prefix);
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
      let recorded: string[];
      try {
        recorded = await batchScript(rec.url);
      } finally {
        await rec.close();
        await fake.close();
      }
      expect(recorded).toEqual(['r1: answer r1', 'r2: answer r2']);
      // The results went through the proxy (recorded), and the tape holds the upstream's URL as sent.
      const records = (await readTape(tape)).records.map((r) => r.value as { request: { method: string; url: string }; response: { body: Uint8Array } });
      expect(records.map((r) => r.request.url)).toContain('/v1/messages/batches/msgbatch_1/results');
      const retrieved = records.find((r) => r.request.method === 'GET' && r.request.url === '/v1/messages/batches/msgbatch_1')!;
      expect(Buffer.from(retrieved.response.body).toString()).toContain(`"results_url":"${fake.url}/v1/messages/batches/msgbatch_1/results"`);

      const play = await startProxy({ tape, mode: 'replay', port: 0 });
      try {
        expect(await batchScript(play.url)).toEqual(recorded);
      } finally {
        await play.close();
      }
    });
  }
});
