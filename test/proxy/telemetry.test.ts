// The OpenAI Agents SDK exports its traces with the global fetch to POST /v1/traces/ingest; an
// app routed through a tape (installFetchSwitch, tape.install()) records those uploads too.
// Each run's uploads hold new trace ids and timestamps, so, keyed by body, replay missed every
// one of them and told the user to re-record, which never helps. A telemetry upload is now
// filed under its route alone and replayed in order, whatever its ids.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { isTelemetry } from '../../src/providers/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-telemetry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const INGEST = 'https://api.openai.com/v1/traces/ingest';
/** A trace export as OpenAITracingExporter sends it: fresh ids and times every run. */
const upload = (run: string) => ({
  data: [
    { object: 'trace', id: `trace_${run}`, workflow_name: 'Agent workflow', group_id: null, metadata: null },
    { object: 'trace.span', id: `span_${run}`, trace_id: `trace_${run}`, started_at: new Date().toISOString(), ended_at: new Date().toISOString(), span_data: { type: 'agent', name: 'Weather' } },
  ],
});
const post = (f: typeof fetch, body: unknown) =>
  f(INGEST, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-proj-secret', 'OpenAI-Beta': 'traces=v1' }, body: JSON.stringify(body) });

describe('telemetry uploads (the Agents SDK trace export)', () => {
  it('replay answers a later run\'s uploads, whose trace ids differ, with the recorded answers', async () => {
    const tape = join(dir, 'traces.tape');
    let live = 0;
    const rec = createFetch({ tape, mode: 'record', summary: false, fetch: (async () => (live++, new Response(null, { status: 204 }))) as typeof fetch });
    for (const run of ['aaa', 'bbb']) expect((await post(rec, upload(run))).status).toBe(204);
    await rec.close();
    expect(live).toBe(2);

    const summaries: string[] = [];
    const replay = createFetch({ tape, mode: 'replay', summary: (t) => summaries.push(t), fetch: (async () => { throw new Error('no network in replay'); }) as typeof fetch });
    for (const run of ['ccc', 'ddd', 'eee']) {
      const res = await post(replay, upload(run));
      expect(res.status).toBe(204);
      expect(res.headers.get('x-tapedeck-match')).toBe('exact');
    }
    await replay.close();
    expect(summaries.join('')).toMatch(/0 misses/);
  });

  it('is the trace ingest route only: other JSON bodies still key by what they hold', () => {
    expect(isTelemetry({ method: 'POST', url: '/v1/traces/ingest' })).toBe(true);
    expect(isTelemetry({ method: 'POST', url: '/prefix/v1/traces/ingest?x=1' })).toBe(true);
    expect(isTelemetry({ method: 'GET', url: '/v1/traces/ingest' })).toBe(false);
    expect(isTelemetry({ method: 'POST', url: '/v1/responses' })).toBe(false);
    expect(isTelemetry({ method: 'POST', url: '/v1/traces' })).toBe(false);
  });
});
