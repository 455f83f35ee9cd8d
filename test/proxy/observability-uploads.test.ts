// LLM observability SDKs upload their traces with the global fetch: Langfuse's JS SDK batches
// events to POST /api/public/ingestion, and an OTLP/HTTP exporter that uses fetch sends JSON to
// Langfuse's /api/public/otel/v1/traces. An app routed through a tape (tape.install(),
// installFetchSwitch) records those uploads beside its model calls. Every run's uploads hold new
// event ids and timestamps, so, keyed by body, each CI replay missed them and failed the test,
// and the miss said to re-record, which never helps. They are filed by route alone now, as the
// OpenAI Agents SDK's trace export is, and replayed in order offline.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { isTelemetry } from '../../src/providers/index.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-obs-'));
let collector: { url: string; server: Server; close(): Promise<void> };
let received = 0;
beforeAll(async () => {
  // A Langfuse server: its ingestion answer (207 with per-event results) and its OTLP endpoint's.
  collector = await listenLoopback(
    createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received++;
        if (req.url === '/api/public/ingestion') {
          const batch = (JSON.parse(body) as { batch: { id: string }[] }).batch;
          res.writeHead(207, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ successes: batch.map((e) => ({ id: e.id, status: 201 })), errors: [] }));
        } else if (/^\/api\/public\/otel\/v1\/(traces|metrics|logs)$/.test(req.url ?? '')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"partialSuccess":{}}');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ echo: body.length }));
        }
      });
    }),
  );
});
afterAll(async () => {
  await collector.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A Langfuse SDK ingestion batch: fresh event ids and timestamps every run. */
const langfuseBatch = (run: string) => ({
  batch: [
    { id: `evt-${run}-1`, timestamp: new Date().toISOString(), type: 'trace-create', body: { id: `trace-${run}`, name: 'chat', timestamp: new Date().toISOString() } },
    { id: `evt-${run}-2`, timestamp: new Date().toISOString(), type: 'generation-create', body: { id: `gen-${run}`, traceId: `trace-${run}`, model: 'gpt-4o-mini', startTime: new Date().toISOString() } },
  ],
  metadata: { batch_size: 2, sdk_name: 'langfuse-js', sdk_version: '3.39.2', public_key: 'pk-lf-1111' },
});
/** An OTLP/HTTP JSON export: fresh trace and span ids every run. */
const otlpSpans = (run: string) => ({
  resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'app' } }] }, scopeSpans: [{ spans: [{ traceId: `${run}`.padEnd(32, '0'), spanId: `${run}`.padEnd(16, '0'), name: 'chat', startTimeUnixNano: String(Date.now() * 1e6) }] }] }],
});

const OTLP = ['/api/public/otel/v1/traces', '/api/public/otel/v1/metrics', '/api/public/otel/v1/logs'];
const post = (f: typeof fetch, path: string, body: unknown, auth = 'Basic cGstbGYtMTExMTpzay1sZi0yMjIy') =>
  f(`${collector.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify(body) });

describe('observability uploads replay whatever ids a run sends', () => {
  it("Langfuse's ingestion batches and OTLP JSON exports to it of a later run are answered offline by the recorded answers", async () => {
    const tape = join(dir, 'obs.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    await post(rec, '/api/public/ingestion', langfuseBatch('aaa'));
    for (const p of OTLP) await post(rec, p, otlpSpans('aaa'));
    await rec.close();
    const live = received;

    const summaries: string[] = [];
    const replay = createFetch({ tape, mode: 'replay', summary: (t) => summaries.push(t) });
    try {
      for (const run of ['bbb', 'ccc']) {
        const res = await post(replay, '/api/public/ingestion', langfuseBatch(run));
        expect(res.status).toBe(207);
        expect(res.headers.get('x-tapedeck-match')).toBe('exact');
        for (const p of OTLP) expect((await post(replay, p, otlpSpans(run))).status).toBe(200);
      }
    } finally {
      await replay.close();
    }
    expect(received).toBe(live);
    expect(summaries.join('')).toMatch(/0 misses/);
  });

  it('are these routes only: another JSON body is still keyed by what it holds', async () => {
    expect(isTelemetry({ method: 'POST', url: '/api/public/ingestion' })).toBe(true);
    expect(isTelemetry({ method: 'POST', url: '/api/public/otel/v1/traces' })).toBe(true);
    expect(isTelemetry({ method: 'POST', url: '/v1/logs' })).toBe(false);
    expect(isTelemetry({ method: 'GET', url: '/api/public/ingestion' })).toBe(false);
    expect(isTelemetry({ method: 'POST', url: '/api/public/scores' })).toBe(false);
    expect(isTelemetry({ method: 'POST', url: '/v1/chat/completions' })).toBe(false);

    const tape = join(dir, 'other.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    await post(rec, '/api/public/scores', { traceId: 't1', name: 'quality', value: 1 });
    await rec.close();
    const replay = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const res = await post(replay, '/api/public/scores', { traceId: 't2', name: 'quality', value: 0 });
      expect(res.status).toBe(400);
    } finally {
      await replay.close();
    }
  });
});
