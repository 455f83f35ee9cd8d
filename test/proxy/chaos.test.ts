// Faults on demand: the SPEC, the decider's rules (seed, key, ordinal, attempt), the header that
// forces or forbids a fault, the refusal outside replay, and that nothing reaches the upstream
// or the tape. The SDKs' side is test/proxy/chaos-sdk.test.ts.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Chaos, draw } from '../../src/chaos/decide.ts';
import { parseChaosSpec } from '../../src/chaos/options.ts';
import { TapedeckError } from '../../src/errors.ts';
import { serveOptions } from '../../src/proxy/cli.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { serve } from './serve-cli.ts';
import { answerEvents, malformedEvents, statusFault } from '../../src/providers/faults.ts';
import { decodeEventStream, encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-chaos-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tape = join(dir, 'chat.tape');
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
  const rec = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
  const r = await fetch(`${rec.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(r.status).toBe(200);
  await rec.close();
});
afterAll(() => upstream.close());

const post = (url: string, headers: Record<string, string> = {}) => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof TapedeckError ? e.code : String(e);
  }
  return undefined;
}

describe('the chaos SPEC', () => {
  it('reads faults, rates, latency, stall and cut counts', () => {
    expect(parseChaosSpec('429:0.2,cut:0.1,latency=150')).toEqual({ faults: { 429: 0.2, cut: 0.1 }, latencyMs: 150 });
    expect(parseChaosSpec('503, stall=40:0.5, cut=3, latency=20:0.25')).toEqual({ faults: { 503: 1, stall: 0.5, cut: 1 }, stallMs: 40, cutAfter: 3, latencyMs: 20, latencyRate: 0.25 });
    expect(parseChaosSpec('error:0.5,tool-error,exit,timeout', 'mcp')).toEqual({ faults: { error: 0.5, 'tool-error': 1, exit: 1, timeout: 1 } });
  });

  it('refuses what it does not know, with the item and the list of faults', () => {
    for (const bad of ['430', '429:2', '429:x', 'latency', 'latency=-1', '429:0.1:0.2', '', 'reset=3']) expect(codeOf(() => parseChaosSpec(bad)), bad).toBe('E_CHAOS_SPEC');
    expect(codeOf(() => parseChaosSpec('cut', 'mcp'))).toBe('E_CHAOS_SPEC');
    try {
      parseChaosSpec('429:0.1,overload');
    } catch (e) {
      expect((e as TapedeckError).message).toContain('"overload"');
      expect(String((e as TapedeckError).details.hint)).toContain('529');
    }
  });

  it('tapedeck serve flags build the same options (without --chaos, the settings alone)', () => {
    expect(serveOptions(['--chaos', '429:0.2', '--chaos-seed', '7', '--chaos-attempts', '1', '--chaos-stall', '50', '--chaos-live']).chaos).toEqual({ faults: { 429: 0.2 }, seed: 7, attempts: 1, stallMs: 50, live: true });
    expect(serveOptions([]).chaos).toBeUndefined();
    expect(serveOptions(['--chaos-seed', '7']).chaos).toEqual({ seed: 7 });
    expect(codeOf(() => serveOptions(['--chaos', 'nope']))).toBe('E_CHAOS_SPEC');
  });
});

describe('the decider', () => {
  it('draws from SHA-256 of the seed, the key, the ordinal and the attempt (checked against node:crypto)', () => {
    const oracle = (seed: number, tag: string, key: string, ordinal: number, attempt?: number) =>
      createHash('sha256').update(`tapedeck-chaos\0${seed}\0${tag}\0${key}\0${ordinal}${attempt === undefined ? '' : `\0${attempt}`}`).digest().readUInt32BE(0) / 2 ** 32;
    for (let i = 0; i < 50; i++) {
      expect(draw(i, 'fault', `k${i % 7}`, i % 5, i % 3)).toBe(oracle(i, 'fault', `k${i % 7}`, i % 5, i % 3));
      expect(draw(i, 'latency', 'k', i)).toBe(oracle(i, 'latency', 'k', i));
    }
  });

  it('attempts: N fails the first N attempts of a faulted call, then answers it and moves to the next call', () => {
    const c = new Chaos({ faults: { 429: 1 }, attempts: 2, seed: 9 }, 'http', () => {});
    const seq = Array.from({ length: 6 }, () => c.decide('k'));
    expect(seq.map((v) => v?.fault ?? 'answer')).toEqual(['429', '429', 'answer', '429', '429', 'answer']);
    expect(seq.map((v) => v && [v.ordinal, v.attempt])).toEqual([[0, 0], [0, 1], undefined, [1, 0], [1, 1], undefined]);
    expect(c.counts()).toEqual({ 429: 4 });
  });

  it('keys are counted apart: another request does not move this one’s ordinal', () => {
    const c = new Chaos({ faults: { 500: 1 }, attempts: 1, seed: 1 }, 'http', () => {});
    expect(c.decide('a')?.fault).toBe('500');
    expect(c.decide('b')?.fault).toBe('500');
    expect(c.decide('a')).toBeUndefined();
    expect(c.decide('b')).toBeUndefined();
  });

  it('says the seed with the first injected fault, once', () => {
    const said: string[] = [];
    const c = new Chaos({ faults: { 429: 1 } }, 'http', (m) => said.push(m));
    c.decide('a');
    c.decide('a');
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`--chaos-seed ${c.seed}`);
  });

  it('rates are shares of the calls: over 4000 calls each fault lands near its rate', () => {
    const c = new Chaos({ faults: { 429: 0.2, 503: 0.1 }, seed: 5 }, 'http', () => {});
    for (let i = 0; i < 4000; i++) c.decide(`k${i}`);
    const n = c.counts();
    expect(n['429']! / 4000).toBeGreaterThan(0.17);
    expect(n['429']! / 4000).toBeLessThan(0.23);
    expect(n['503']! / 4000).toBeGreaterThan(0.08);
    expect(n['503']! / 4000).toBeLessThan(0.12);
  });
});

describe('through the proxy', () => {
  async function faultSequence(seed: number): Promise<string[]> {
    const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { faults: { 429: 0.2, 500: 0.1, 503: 0.1 }, seed }, onWarning: () => {} });
    try {
      const out: string[] = [];
      for (let i = 0; i < 100; i++) {
        const r = await post(p.url);
        await r.arrayBuffer();
        out.push(r.headers.get('x-tapedeck-fault') ?? String(r.status));
      }
      return out;
    } finally {
      await p.close();
    }
  }

  it('the same seed gives the same 100 faults, another seed others; the tape is untouched', async () => {
    const before = readFileSync(tape);
    const a = await faultSequence(42);
    const b = await faultSequence(42);
    const c = await faultSequence(43);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    const faults = a.filter((x) => x !== '200').length;
    expect(faults).toBeGreaterThan(15);
    expect(faults).toBeLessThan(70);
    expect(new Set(a)).toEqual(new Set(['200', '429', '500', '503']));
    expect(readFileSync(tape).equals(before)).toBe(true);
  });

  it('x-tapedeck-chaos forces a fault or forbids one, and is not part of the key', async () => {
    const p = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      const none = await post(p.url, { 'x-tapedeck-chaos': 'none' });
      expect(none.status).toBe(200);
      expect(none.headers.get('x-tapedeck-match')).toBe('exact');
      expect(none.headers.get('x-tapedeck-fault')).toBeNull();
      const forced = await post(p.url, { 'x-tapedeck-chaos': '429' });
      expect(forced.status).toBe(429);
      expect(forced.headers.get('x-tapedeck-fault')).toBe('429');
      expect(forced.headers.get('retry-after')).toBe('1');
      expect(((await forced.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
      const bad = await post(p.url, { 'x-tapedeck-chaos': 'sometimes' });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('x-tapedeck-error')).toBe('E_CHAOS_SPEC');
      expect((await (await fetch(`${p.url}/__tapedeck/stats`)).json()).faults).toEqual({ 429: 1 });
    } finally {
      await p.close();
    }
  });

  it('is refused in record mode unless live; a live fault never reaches the upstream nor the tape (the answer recorded behind it does, once)', async () => {
    const t = join(dir, 'live.tape');
    await expect(startProxy({ upstream: upstream.url, tape: t, mode: 'record', port: 0, chaos: { faults: { 429: 1 } } })).rejects.toMatchObject({ code: 'E_CHAOS_MODE' });
    const plain = await startProxy({ upstream: upstream.url, tape: t, mode: 'record', port: 0 });
    try {
      const r = await post(plain.url, { 'x-tapedeck-chaos': '429' });
      expect(r.headers.get('x-tapedeck-error')).toBe('E_CHAOS_MODE');
    } finally {
      await plain.close();
    }
    const calls = upstream.calls.length;
    const live = await startProxy({ upstream: upstream.url, tape: t, mode: 'record', port: 0, chaos: { faults: { 429: 1 }, attempts: 1, live: true }, onWarning: () => {} });
    try {
      // The fault answers the client; the call's real answer is recorded behind it (one call
      // upstream, unmarked), and its retry is answered by that recording, not sent again.
      expect((await post(live.url)).status).toBe(429);
      expect(upstream.calls.length).toBe(calls + 1);
      expect(upstream.calls.at(-1)!.headers['x-tapedeck-chaos']).toBeUndefined();
      const ok = await post(live.url, { 'x-tapedeck-chaos': 'none' });
      expect(ok.status).toBe(200);
      expect(upstream.calls.length).toBe(calls + 1);
    } finally {
      await live.close();
    }
    const recs = (await readTape(t)).records.map((r) => r.value as { response: { status: number }; request: { headers: Record<string, unknown> } });
    expect(recs.map((r) => r.response.status)).toEqual([200]);
    expect(recs[0]!.request.headers['x-tapedeck-chaos']).toBeUndefined();
  });

  it('createFetch refuses chaos outside replay where it is made, once, not in every call and stats() later', async () => {
    const t = join(dir, 'made.tape');
    expect(() => createFetch({ tape: t, mode: 'record', chaos: { faults: { 429: 1 } } })).toThrow(expect.objectContaining({ code: 'E_CHAOS_MODE' }));
    expect(() => createFetch({ tape: t, mode: 'update', chaos: { faults: { 429: 1 } } })).toThrow(expect.objectContaining({ code: 'E_CHAOS_MODE' }));
    const live = createFetch({ tape: t, mode: 'record', chaos: { faults: { 429: 1 }, live: true }, summary: false, onWarning: () => {} });
    expect((await live.stats()).mode).toBe('record');
    await live.close();
  });
});

describe('what a fault looks like', () => {
  it('each provider’s status faults in its own shape, with the retry headers', () => {
    const gem = statusFault('/v1beta/models/gemini-2.5-flash:generateContent', {}, '429', 2500, 7);
    expect(gem.status).toBe(429);
    expect(JSON.parse(gem.body).error.status).toBe('RESOURCE_EXHAUSTED');
    expect(gem.headers).toMatchObject({ 'retry-after': '3', 'retry-after-ms': '2500', 'x-should-retry': 'true' });
    const gem529 = statusFault('/v1beta/models/gemini-2.5-flash:generateContent', {}, '529', 0, 7);
    expect([gem529.status, JSON.parse(gem529.body).error.status]).toEqual([503, 'UNAVAILABLE']);
    const bed = statusFault('/model/m/converse', {}, '429', 1000, 7);
    expect(bed.headers['x-amzn-errortype']).toMatch(/^ThrottlingException:/);
    expect(JSON.parse(bed.body).message).toContain('tapedeck chaos');
    expect(statusFault('/model/m/converse', {}, '529', 1000, 7).headers['x-amzn-errortype']).toMatch(/^ServiceUnavailableException:/);
    const ant = statusFault('/v1/messages', {}, '529', 1000, 7);
    expect([ant.status, JSON.parse(ant.body).error.type]).toEqual([529, 'overloaded_error']);
    const oai = statusFault('/v1/chat/completions', {}, '500', 1000, 7);
    expect([oai.status, JSON.parse(oai.body).error.type, oai.headers['retry-after']]).toEqual([500, 'server_error', undefined]);
    const oll = statusFault('/api/chat', {}, '503', 1000, 7);
    expect([oll.status, typeof JSON.parse(oll.body).error]).toEqual([503, 'string']);
  });

  it('malformed keeps each framing: SSE data line, NDJSON line, an event-stream frame with valid CRCs', () => {
    const sse = new TextEncoder().encode('data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n');
    const ev = answerEvents(sse, 'text/event-stream');
    expect(ev.map((e) => new TextDecoder().decode(e))).toEqual(['data: {"a":1}\n\n', 'data: {"b":2}\n\n', 'data: [DONE]\n\n']);
    const broken = malformedEvents(ev, 'text/event-stream').map((e) => new TextDecoder().decode(e));
    expect(broken[0]).toBe('data: {"a":1}\n\n');
    expect(broken[1]).toMatch(/^data: \{"b\n\n$/);
    const nd = answerEvents(new TextEncoder().encode('{"x":1}\n{"y":2}\n'), 'application/x-ndjson');
    expect(malformedEvents(nd, 'application/x-ndjson').map((e) => new TextDecoder().decode(e))).toEqual(['{"x":1}\n', '{"y\n']);
    const frame = (body: string) => encodeEventStreamMessage({ headers: [{ name: ':event-type', type: 'string', value: 'chunk' }], body: new TextEncoder().encode(body) });
    const stream = Buffer.concat([frame('{"bytes":"AAAA"}'), frame('{"bytes":"BBBB"}')]);
    const frames = answerEvents(stream, 'application/vnd.amazon.eventstream');
    expect(frames).toHaveLength(2);
    const out = decodeEventStream(Buffer.concat(malformedEvents(frames, 'application/vnd.amazon.eventstream')));
    expect(out.map((m) => new TextDecoder().decode(m.body))).toEqual(['{"bytes":"AAAA"}', '{"bytes"']);
  });

  it('stall pauses between events and latency delays the answer (lower bounds), both marked', async () => {
    const p = await startProxy({ tape, mode: 'replay', port: 0, chaos: { faults: { stall: 1 }, stallMs: 150, latencyMs: 200, seed: 1 }, onWarning: () => {} });
    try {
      const t0 = performance.now();
      const r = await post(p.url);
      expect(r.headers.get('x-tapedeck-fault')).toBe('stall, latency');
      const text = await r.text();
      // A whole JSON answer is two halves with the pause between them, then whole.
      expect(JSON.parse(text).choices[0].message.content).toMatch(/Hello there/);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(340);
    } finally {
      await p.close();
    }
  });
});

describe('tapedeck serve --chaos', () => {
  it('prints the seed with the first fault and the faults in its closing line; the tape is untouched', async () => {
    const before = readFileSync(tape);
    const s = serve(['--tape', tape, '--port', '0', '--chaos', '429', '--chaos-seed', '3', '--chaos-attempts', '1']);
    const url = await s.url;
    expect((await post(url)).status).toBe(429);
    expect((await post(url)).status).toBe(200);
    s.child.kill('SIGINT');
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toContain('first fault injected (429 on POST /v1/chat/completions) with seed 3');
    expect(s.stderr()).toMatch(/closed \(1 hit\(s\), 0 miss\(es\), 0 recorded, faults injected: 429 1\)/);
    expect(readFileSync(tape).equals(before)).toBe(true);
  });

  it('is refused in record mode without --chaos-live, with the flag to use', async () => {
    const s = serve(['--tape', join(dir, 'cli-rec.tape'), '--upstream', upstream.url, '--mode', 'record', '--port', '0', '--chaos', '429']);
    expect(await s.exited).not.toBe(0);
    expect(s.stderr()).toContain('E_CHAOS_MODE');
    expect(s.stderr()).toContain('--chaos-live');
  });
});

describe('the stats under faults', () => {
  // Every request the proxy or a tapedeck fetch got is one of `requests`, whether a fault
  // answered it, it retried a faulted call (answered from the recording held for it), or a
  // damaged recording answered it: a fault's answer was counted apart (`faults`) but not as a
  // request, and a retry not at all, so `hits` could exceed `requests`.
  it('count every request, the faulted ones and their retries included', async () => {
    for (const fault of ['429', '500', 'reset', 'timeout', 'cut']) {
      const p = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {}, chaos: { faults: { [fault]: 1 }, seed: 1, ...(fault === 'cut' ? {} : { attempts: 2 }) } });
      try {
        for (let i = 0; i < 3; i++) {
          const ctl = new AbortController();
          const t = setTimeout(() => ctl.abort(), 300);
          await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: ctl.signal })
            .then((r) => r.text())
            .catch(() => {})
            .finally(() => clearTimeout(t));
        }
        const s = (await (await fetch(`${p.url}/__tapedeck/stats`)).json()) as { requests: number; hits: number; faults: Record<string, number> };
        expect(s.requests, fault).toBe(3);
        expect(s.hits, fault).toBe(fault === 'cut' ? 3 : 1);
        expect(s.faults[fault], fault).toBe(fault === 'cut' ? 3 : 2);
      } finally {
        await p.close();
      }
    }
    // A tapedeck fetch counts them alike.
    const f = createFetch({ tape, mode: 'replay', summary: false, onWarning: () => {}, chaos: { faults: { 429: 1 }, seed: 1, attempts: 2 } });
    try {
      for (let i = 0; i < 3; i++) await (await f(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text();
      const s = await f.stats();
      expect(s.requests).toBe(3);
      expect(s.hits).toBe(1);
    } finally {
      await f.close();
    }
  });
});
