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

  // How many uploads a run makes is the trace processor's timer's business, not the code's:
  // with strictOrder the upload past the recorded ones was a miss, which failed the test in CI.
  it('strictOrder: uploads past the recorded ones are answered, never a miss nor a repeat', async () => {
    const tape = join(dir, 'strict.tape');
    const rec = createFetch({ tape, mode: 'record', strictOrder: true, summary: false, fetch: (async () => new Response(null, { status: 204 })) as typeof fetch });
    expect((await post(rec, upload('aaa'))).status).toBe(204);
    await rec.close();

    const replay = createFetch({ tape, mode: 'replay', strictOrder: true, summary: false, fetch: (async () => { throw new Error('no network in replay'); }) as typeof fetch });
    for (const run of ['bbb', 'ccc', 'ddd']) expect((await post(replay, upload(run))).status).toBe(204);
    const s = await replay.stats();
    await replay.close();
    expect(s.misses).toBe(0);
    // A timer's extra batch is no loop running longer: not "answered again past their recordings".
    expect(s.repeats ?? 0).toBe(0);
  });

  // Each upload carries other spans: update mode answered the second one of the run that
  // recorded the first from that recording, so the run's traces never reached the API.
  it('update mode sends every upload past the recorded ones to the API', async () => {
    const tape = join(dir, 'update.tape');
    const sent: string[] = [];
    const live = (async (input: RequestInfo | URL, init?: RequestInit) => (sent.push(await new Request(input, init).text()), new Response(null, { status: 204 }))) as typeof fetch;
    const upd = createFetch({ tape, mode: 'update', summary: false, fetch: live });
    for (const run of ['aaa', 'bbb', 'ccc']) expect((await post(upd, upload(run))).status).toBe(204);
    const s = await upd.stats();
    await upd.close();
    expect(sent.map((b) => JSON.parse(b).data[0].id)).toEqual(['trace_aaa', 'trace_bbb', 'trace_ccc']);
    expect(s.repeatsOfMade ?? 0).toBe(0);

    // A later update run: the recorded ones replay offline, one more goes out.
    sent.length = 0;
    const again = createFetch({ tape, mode: 'update', summary: false, fetch: live });
    for (const run of ['ddd', 'eee', 'fff', 'ggg']) expect((await post(again, upload(run))).status).toBe(204);
    await again.close();
    expect(sent.map((b) => JSON.parse(b).data[0].id)).toEqual(['trace_ggg']);
  });

  it('is the trace ingest route only: other JSON bodies still key by what they hold', () => {
    expect(isTelemetry({ method: 'POST', url: '/v1/traces/ingest' })).toBe(true);
    expect(isTelemetry({ method: 'POST', url: '/prefix/v1/traces/ingest?x=1' })).toBe(true);
    expect(isTelemetry({ method: 'GET', url: '/v1/traces/ingest' })).toBe(false);
    expect(isTelemetry({ method: 'POST', url: '/v1/responses' })).toBe(false);
    expect(isTelemetry({ method: 'POST', url: '/v1/traces' })).toBe(false);
  });
});
