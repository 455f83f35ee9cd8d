// The proxy over raw HTTP: errors and their shapes, limits, ordering of repeated requests,
// redaction on disk, non-JSON requests, a client that leaves mid-stream, concurrency, shutdown.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { parseSize, serveOptions } from '../../src/proxy/cli.ts';
import { startUpstream } from './fake-upstream.ts';
import { ReplayStore } from '../../src/replay/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-proxy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

const KEY = 'sk-proj-' + 'Qw3eRt5yUi7oPa9sDf1gHj3kLz5xCv7bNm9QwErT'; // 8 + 40 characters

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }], ...extra });

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function httpRecords(tape: string): Promise<HttpRecord[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
}

/** Records `bodies` in order through a record-mode proxy, then closes everything. */
async function record(tape: string, bodies: unknown[], opts: Parameters<typeof startProxy>[0] = {}) {
  const up = await startUpstream();
  const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, ...opts });
  const out = [];
  try {
    for (const b of bodies) out.push(await post(`${proxy.url}/v1/chat/completions`, b));
  } finally {
    await proxy.close();
    await up.close();
  }
  return out;
}

describe('replay', () => {
  it('two bodies with the same CRC-32 each get their own recording, again and again', async () => {
    // The repeat fast path finds a body by its CRC-32: a collision must never serve the other
    // body's answer. Two chat bodies with one CRC, found by the birthday bound (~2^16 tries);
    // they differ in 12 hex digits, since bodies that differ within 32 bits never share a CRC.
    const { crc32 } = await import('node:zlib');
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    const { createHash } = await import('node:crypto');
    for (let i = 0; !pair; i++) {
      const body = JSON.stringify(chat(`Question ${createHash('sha256').update(String(i)).digest('hex').slice(0, 12)}?`));
      const c = crc32(body);
      const other = seen.get(c);
      if (other !== undefined) pair = [other, body];
      else seen.set(c, body);
    }
    expect(crc32(pair[0])).toBe(crc32(pair[1]));
    expect(pair[0]).not.toBe(pair[1]);
    const tape = tapePath();
    const recorded = await record(tape, pair);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      for (const round of [0, 1, 2]) {
        for (const k of round === 1 ? [1, 0] : [0, 1]) {
          const r = await post(`${proxy.url}/v1/chat/completions`, pair[k]!);
          expect(r.status).toBe(200);
          expect(r.text).toBe(recorded[k]!.text);
        }
      }
    } finally {
      await proxy.close();
    }
  });

  it('serves identical requests in recorded order, then repeats the last; --strict-order misses instead', async () => {
    const tape = tapePath();
    const rec = await record(tape, [chat('same'), chat('same'), chat('other')]);
    expect(rec.map((r) => JSON.parse(r.text).choices[0].message.content)).toEqual(['Echo 1: same', 'Echo 2: same', 'Echo 3: other']);

    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await post(`${proxy.url}/v1/chat/completions`, chat('same')));
      expect(got.map((r) => JSON.parse(r.text).choices[0].message.content)).toEqual(['Echo 1: same', 'Echo 2: same', 'Echo 2: same', 'Echo 2: same']);
      expect(got[0]!.headers.get('x-tapedeck-match')).toBe('exact');
      expect(got[0]!.headers.get('x-tapedeck-key')).toMatch(/^[0-9a-f]{64}$/);
      expect(got[0]!.headers.get('x-tapedeck-trace')).toMatch(/^[0-9a-f]{64}$/);
      expect(got[0]!.headers.get('x-tapedeck-trace')).not.toBe(got[1]!.headers.get('x-tapedeck-trace'));
      expect(got[0]!.headers.get('x-request-id')).toBe('req_1');
      // Whitespace and key order do not matter: the key is over canonical JSON.
      const respelled = await post(`${proxy.url}/v1/chat/completions`, `{ "messages": [{"content":"other","role":"user"}], "temperature": 0.0, "model": "gpt-4o-mini" }`);
      expect(JSON.parse(respelled.text).choices[0].message.content).toBe('Echo 3: other');
      // A key with one recording answers the same bytes the same way every time (the replay
      // fast path remembers them), and a different body is still matched on its own.
      for (let i = 0; i < 3; i++) {
        const again = await post(`${proxy.url}/v1/chat/completions`, chat('other'));
        expect([JSON.parse(again.text).choices[0].message.content, again.headers.get('x-tapedeck-match')]).toEqual(['Echo 3: other', 'exact']);
      }
      expect((await post(`${proxy.url}/v1/chat/completions`, chat('unrecorded'))).status).toBe(400);
    } finally {
      await proxy.close();
    }

    const strict = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true });
    try {
      const a = await post(`${strict.url}/v1/chat/completions`, chat('same'));
      const b = await post(`${strict.url}/v1/chat/completions`, chat('same'));
      const c = await post(`${strict.url}/v1/chat/completions`, chat('same'));
      expect([a.status, b.status, c.status]).toEqual([200, 200, 400]);
      expect(JSON.parse(c.text).error.code).toBe('E_MISS');
      expect(JSON.parse(c.text).error.message).toMatch(/Already used: #0, #1|used/);
    } finally {
      await strict.close();
    }
  });

  it('refuses a miss status that is no error status (a 2xx miss reads as an answer)', async () => {
    const { createFetch } = await import('../../src/proxy/fetch.ts');
    const { createReplayFetch } = await import('../../src/browser/fetch.ts');
    const loaded = { name: 'empty.tape', format: 'json', header: { created: '2026-01-01T00:00:00.000Z', tapedeckVersion: '0.1.0' }, records: [], warnings: [] } as never;
    // The same calls with an error status are taken.
    await createFetch({ tape: tapePath(), mode: 'replay', missStatus: 404 }).close();
    expect(typeof createReplayFetch({ tape: loaded, missStatus: 404 })).toBe('function');
    for (const missStatus of [200, 204, 302, 600, 400.5]) {
      for (const make of [() => createFetch({ tape: tapePath(), mode: 'replay', missStatus }), () => createReplayFetch({ tape: loaded, missStatus })]) {
        let code: string | undefined;
        try {
          make();
        } catch (e) {
          code = (e as { code?: string }).code;
        }
        expect(code, String(missStatus)).toBe('E_ARG');
      }
    }
  });

  it('answers misses with 400 (or the configured status) and the diagnostics, in the provider shape', async () => {
    const tape = tapePath();
    await record(tape, [chat('hello')]);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, missStatus: 599 });
    try {
      const r = await post(`${proxy.url}/v1/chat/completions`, chat('hello, changed'));
      expect(r.status).toBe(599);
      expect(r.headers.get('x-tapedeck-match')).toBe('miss');
      const e = JSON.parse(r.text).error;
      expect(e.code).toBe('E_MISS');
      expect(e.type).toBe('tapedeck_miss');
      expect(e.tapedeck.closest.length).toBeGreaterThan(0);
      expect(e.message).toContain('hello, changed');
      const a = await post(`${proxy.url}/v1/messages`, { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, { 'anthropic-version': '2023-06-01' });
      expect(a.status).toBe(599);
      const ae = JSON.parse(a.text);
      expect(ae.type).toBe('error');
      expect(ae.error.code).toBe('E_MISS');
      expect(ae.error.message).toBe('tapedeck miss: no recording for POST /v1/messages; re-record: restart tapedeck serve with --mode record');
      expect(ae.message).toBe(ae.error.message); // what the Anthropic SDK shows
      expect((await fetch(`${proxy.url}/v1/models`)).status).toBe(599);
    } finally {
      await proxy.close();
    }
  });

  it('hybrid matching falls back by signature and says so in a header', async () => {
    const tape = tapePath();
    await record(tape, [chat('original prompt')]);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, match: 'hybrid' });
    try {
      const r = await post(`${proxy.url}/v1/chat/completions`, chat('reworded prompt'));
      expect(r.status).toBe(200);
      expect(r.headers.get('x-tapedeck-match')).toBe('signature');
      expect(r.headers.get('x-tapedeck-warning')).toContain('signature');
    } finally {
      await proxy.close();
    }
  });

  it('replays non-JSON requests by method, path and query, headers only when asked', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, matchHeaders: ['x-variant'] });
    const a = await (await fetch(`${proxy.url}/v1/models?limit=2`, { headers: { 'x-variant': 'a' } })).json();
    const b = await (await fetch(`${proxy.url}/v1/models?limit=2`, { headers: { 'x-variant': 'b' } })).json();
    await proxy.close();
    await up.close();
    const play = await startProxy({ tape, mode: 'replay', port: 0, matchHeaders: ['x-variant'] });
    try {
      expect(await (await fetch(`${play.url}/v1/models?limit=2`, { headers: { 'x-variant': 'b' } })).json()).toEqual(b);
      expect(await (await fetch(`${play.url}/v1/models?limit=2`, { headers: { 'x-variant': 'a' } })).json()).toEqual(a);
      expect((await fetch(`${play.url}/v1/models?limit=3`, { headers: { 'x-variant': 'a' } })).status).toBe(400);
    } finally {
      await play.close();
    }
  });

  it('JSON bodies that are not LLM requests match on their canonical JSON', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const rec = await post(`${proxy.url}/v1/embeddings`, { model: 'text-embedding-3-small', input: 'abc' });
    await proxy.close();
    await up.close();
    expect((await httpRecords(tape))[0]!.match).toBe('llm'); // `input` reads as a Responses request
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expect((await post(`${play.url}/v1/embeddings`, '{"input":"abc","model":"text-embedding-3-small"}')).text).toBe(rec.text);
    } finally {
      await play.close();
    }
    // A JSON body with no LLM shape at all.
    const tape2 = tapePath();
    const up2 = await startUpstream();
    const p2 = await startProxy({ upstream: up2.url, tape: tape2, mode: 'record', port: 0 });
    const r2 = await post(`${p2.url}/v1/echo`, { anything: [1, 2, 3] });
    await p2.close();
    await up2.close();
    expect((await httpRecords(tape2))[0]!.match).toBe('json');
    const play2 = await startProxy({ tape: tape2, mode: 'replay', port: 0 });
    try {
      const again = await post(`${play2.url}/v1/echo`, '{ "anything": [1, 2, 3.0] }');
      expect(again.status).toBe(r2.status);
      expect(again.text).toBe(r2.text);
      expect((await post(`${play2.url}/v1/echo`, { anything: [1, 2] })).status).toBe(400);
    } finally {
      await play2.close();
    }
  });
});

describe('errors', () => {
  it('malformed JSON is 400 with the byte offset, in every mode but passthrough', async () => {
    const tape = tapePath();
    await record(tape, [chat('x')]);
    const up = await startUpstream();
    for (const mode of ['replay', 'record', 'update'] as const) {
      const proxy = await startProxy({ tape, upstream: up.url, mode, port: 0 });
      try {
        const r = await post(`${proxy.url}/v1/chat/completions`, '{"model": "gpt-4o-mini", "messages": [');
        expect(r.status).toBe(400);
        const e = JSON.parse(r.text).error;
        expect(e.code).toBe('E_JSON');
        expect(e.tapedeck.offset).toBeTypeOf('number');
        const dup = await post(`${proxy.url}/v1/chat/completions`, '{"model":"a","model":"b","messages":[]}');
        expect(dup.status).toBe(400);
      } finally {
        await proxy.close();
      }
    }
    expect(up.calls.length).toBe(0);
    await up.close();
  });

  it('a body over the limit is 413, by content-length or by counting', async () => {
    const tape = tapePath();
    await record(tape, [chat('x')]);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, maxBodyBytes: 1024 });
    try {
      const big = await post(`${proxy.url}/v1/chat/completions`, chat('y'.repeat(5000)));
      expect(big.status).toBe(413);
      expect(JSON.parse(big.text).error.code).toBe('E_BODY_TOO_LARGE');
      // Chunked, no content-length: the proxy counts.
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        for (let i = 0; i < 10; i++) req.write('x'.repeat(200));
        req.end();
      });
      expect(status).toBe(413);
      // The proxy is still fine.
      expect((await post(`${proxy.url}/v1/chat/completions`, chat('x'))).status).toBe(200);
    } finally {
      await proxy.close();
    }
  });

  it('an unreachable upstream is 502 E_UPSTREAM; upstream errors pass through, recorded only when asked', async () => {
    const tape = tapePath();
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
    await new Promise<void>((r) => dead.close(() => r()));
    const proxy = await startProxy({ upstream: deadUrl, tape, mode: 'record', port: 0 });
    try {
      const r = await post(`${proxy.url}/v1/chat/completions`, chat('x'));
      expect(r.status).toBe(502);
      expect(JSON.parse(r.text).error.code).toBe('E_UPSTREAM');
    } finally {
      await proxy.close();
    }

    const up = await startUpstream();
    for (const recordErrors of [false, true]) {
      const t = tapePath();
      const p = await startProxy({ upstream: up.url, tape: t, mode: 'record', port: 0, recordErrors });
      const r = await post(`${p.url}/v1/fail`, { x: 1 });
      await p.close();
      expect(r.status).toBe(500);
      expect(JSON.parse(r.text).error.message).toMatch(/^upstream failure/);
      // Nothing recorded: not even the tape the run made is left.
      if (recordErrors) expect((await httpRecords(t)).length).toBe(1);
      else expect(existsSync(t)).toBe(false);
    }
    await up.close();
  });

  it('bad options fail up front with stable codes', async () => {
    await expect(startProxy({ tape: tapePath(), mode: 'recrod', port: 0 })).rejects.toMatchObject({ code: 'E_MODE' });
    await expect(startProxy({ tape: tapePath(), mode: 'record', port: 0 })).rejects.toMatchObject({ code: 'E_ARG' });
    expect(() => createHandler({ upstream: 'ftp://x', tape: 'x' })).toThrow(/upstream/);
    expect(() => serveOptions(['--timing', 'fast'])).toThrow(/timing/);
    expect(() => serveOptions(['--bogus'])).toThrow(/bogus/);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(serveOptions(['--tape', 'a.tape', '--strict-order', '--timing', '25']).timing).toBe(25);
  });
});

describe('redaction', () => {
  it('no byte of the key, in headers, body or URL, reaches the tape; replay still matches', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, redact: { headers: ['x-internal-token'] } });
    const body = {
      model: 'gpt-4o-mini',
      temperature: 0,
      api_key: KEY,
      metadata: { note: `debug with ${KEY}` },
      messages: [{ role: 'user', content: `My key is ${KEY}, keep it safe` }],
    };
    const extra = { 'x-api-key': KEY, 'openai-organization': 'org-secret123', 'x-internal-token': 'internal-secret-42', cookie: 'session=cookie-secret-77' };
    const first = await post(`${proxy.url}/v1/chat/completions?api_key=${KEY}`, body, extra);
    await proxy.close();
    await up.close();
    expect(first.status).toBe(200);
    expect(up.calls[0]!.body).toContain(KEY); // the upstream got the real request
    const bytes = readFileSync(tape);
    for (const secret of [KEY, KEY.slice(8), KEY.slice(20), 'org-secret123', 'internal-secret-42', 'cookie-secret-77', 'secretcookievalue123']) {
      expect(bytes.indexOf(Buffer.from(secret)), secret).toBe(-1);
    }
    const [rec] = await httpRecords(tape);
    // A credential is masked alike for every value; other secrets by a keyed mask of each value.
    expect(rec!.request.headers.authorization).toBe('[REDACTED]');
    const cookies = rec!.response.headers['set-cookie'] as string[];
    expect(cookies).toHaveLength(2);
    for (const c of cookies) expect(c).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    expect(cookies[0]).not.toBe(cookies[1]);

    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const again = await post(`${play.url}/v1/chat/completions?api_key=${KEY}`, body, extra);
      expect(again.status).toBe(200);
      // The answer echoed the key: it was masked on the tape, so the replay has it masked too.
      expect(first.text).toContain(KEY);
      const mask = /\[REDACTED:[0-9a-f]{16}\]/.exec(again.text)?.[0];
      expect(again.text).toBe(first.text.replaceAll(KEY, mask!));
    } finally {
      await play.close();
    }
  });

  it('keepSecrets stores them (for tapes that never leave the machine)', async () => {
    const tape = tapePath();
    await record(tape, [chat('x')], { redact: { keepSecrets: true } });
    expect(readFileSync(tape).indexOf(Buffer.from(KEY))).toBeGreaterThan(0);
  });
});

describe('streams and clients', () => {
  it('a client that disconnects mid-stream costs nobody else, and the answer is still recorded whole', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const body = JSON.stringify(chat('a slow story please', { stream: true }));
    const firstChunk = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.once('data', (c: Buffer) => {
          resolve(c.toString());
          req.destroy(); // gone, mid-stream
        });
      });
      req.on('error', () => {});
      req.on('error', reject);
      req.end(body);
    });
    expect(firstChunk).toContain('data: ');
    // Others are served meanwhile.
    const other = await post(`${proxy.url}/v1/chat/completions`, chat('quick one'));
    expect(other.status).toBe(200);
    await proxy.close(); // waits for the abandoned stream to be read and recorded
    await up.close();
    const recs = await httpRecords(tape);
    const streamed = recs.find((r) => (r.request.body as { stream?: boolean }).stream)!;
    expect(Buffer.from(streamed.response.body).toString()).toMatch(/data: \[DONE\]\n\n$/);
    expect(streamed.response.chunks!.length).toBeGreaterThan(3);
  });

  it('close() lets an in-flight stream finish and writes it to the tape', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const pending = post(`${proxy.url}/v1/chat/completions`, chat('slow story for shutdown', { stream: true }));
    while (up.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closed = proxy.close();
    const r = await pending;
    await closed;
    await up.close();
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/data: \[DONE\]\n\n$/);
    expect((await httpRecords(tape)).length).toBe(1);
  });

  it('200 concurrent clients all get their own recording', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const prompts = Array.from({ length: 20 }, (_, i) => `question ${i}`);
    const recorded = await Promise.all(prompts.map((p) => post(`${rec.url}/v1/chat/completions`, chat(p))));
    await rec.close();
    await up.close();
    expect((await httpRecords(tape)).length).toBe(20);
    const answer = new Map(prompts.map((p, i) => [p, JSON.parse(recorded[i]!.text).choices[0].message.content as string]));

    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const asks = Array.from({ length: 200 }, (_, i) => prompts[(i * 7) % prompts.length]!);
      const got = await Promise.all(asks.map((p) => post(`${play.url}/v1/chat/completions`, chat(p, i(p)))));
      got.forEach((r, i) => {
        expect(r.status).toBe(200);
        expect(JSON.parse(r.text).choices[0].message.content).toBe(answer.get(asks[i]!));
      });
      const stats = play.handler.stats();
      expect(stats.hits).toBe(200);
      expect(stats.p50Ms).toBeTypeOf('number');
    } finally {
      await play.close();
    }
    function i(_p: string) {
      return {};
    }
  });

  it('update mode replays what the tape has and records what is missing, once', async () => {
    const tape = tapePath();
    await record(tape, [chat('known')]);
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'update', port: 0 });
    try {
      const known = await post(`${proxy.url}/v1/chat/completions`, chat('known'));
      expect(known.headers.get('x-tapedeck-match')).toBe('exact');
      const fresh = await post(`${proxy.url}/v1/chat/completions`, chat('fresh'));
      expect(fresh.headers.get('x-tapedeck-match')).toBe('recorded');
      await proxy.handler.close();
      expect(up.calls.length).toBe(1);
    } finally {
      await proxy.close();
      await up.close();
    }
    expect((await httpRecords(tape)).length).toBe(2);
  });

  it('record mode replaces the old recordings of requests it re-records, and keeps the rest', async () => {
    const tape = tapePath();
    await record(tape, [chat('a'), chat('b')]);
    await record(tape, [chat('a')]);
    const recs = await httpRecords(tape);
    expect(recs.map((r) => (r.request.body as { messages: { content: string }[] }).messages[0]!.content).sort()).toEqual(['a', 'b']);
  });

  it('passthrough mode forwards everything and never touches the tape', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'passthrough', port: 0 });
    try {
      const a = await post(`${proxy.url}/v1/chat/completions`, chat('same'));
      const b = await post(`${proxy.url}/v1/chat/completions`, chat('same'));
      expect(a.headers.get('x-tapedeck-match')).toBe('passthrough');
      expect(JSON.parse(b.text).choices[0].message.content).toBe('Echo 2: same');
    } finally {
      await proxy.close();
      await up.close();
    }
    expect(existsSync(tape)).toBe(false);
  });

  it('POST /v1/replay returns an answer by its trace token, byte for byte', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const store = new ReplayStore();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, replay: store });
    const replayOf = (base: string, body: unknown) =>
      fetch(`${base}/v1/replay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    try {
      const live = await post(`${proxy.url}/v1/chat/completions`, chat('trace me'));
      const token = live.headers.get('x-tapedeck-trace')!;
      const key = live.headers.get('x-tapedeck-key')!;
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      const again = await replayOf(proxy.url, { trace_token: token, query: key, document_id: 'POST /v1/chat/completions' });
      expect(again.status).toBe(200);
      expect(again.headers.get('content-type')).toBe('application/json');
      expect(await again.text()).toBe(live.text);
      expect((await replayOf(proxy.url, { trace_token: token, query: 'other', document_id: 'POST /v1/chat/completions' })).status).toBe(409);
      expect((await replayOf(proxy.url, { trace_token: '0'.repeat(64), query: key, document_id: 'POST /v1/chat/completions' })).status).toBe(404);
      expect((await fetch(`${proxy.url}/v1/replay`, { method: 'POST', body: '{' })).status).toBe(400);
    } finally {
      await proxy.close();
      await up.close();
    }
    // A replayed answer carries the same token, and is replayable from a fresh store.
    const play = await startProxy({ tape, mode: 'replay', port: 0, replay: new ReplayStore() });
    const none = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const r = await post(`${play.url}/v1/chat/completions`, chat('trace me'));
      const token = r.headers.get('x-tapedeck-trace')!;
      const back = await replayOf(play.url, { trace_token: token, query: r.headers.get('x-tapedeck-key'), document_id: 'POST /v1/chat/completions' });
      expect(await back.text()).toBe(r.text);
      expect((await replayOf(none.url, { trace_token: token, query: 'q', document_id: 'd' })).status).toBe(501);
    } finally {
      await play.close();
      await none.close();
    }
  });

  it('health and stats', async () => {
    const tape = tapePath();
    await record(tape, [chat('x')]);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      await post(`${proxy.url}/v1/chat/completions`, chat('x'));
      await post(`${proxy.url}/v1/chat/completions`, chat('nope'));
      const health = await (await fetch(`${proxy.url}/__tapedeck/health`)).json();
      expect(health).toMatchObject({ status: 'ok', mode: 'replay', recordings: 1 });
      const stats = await (await fetch(`${proxy.url}/__tapedeck/stats`)).json();
      expect(stats).toMatchObject({ hits: 1, misses: 1, byMatch: { exact: 1, miss: 1 }, inFlight: 0 });
      expect(stats.p50Ms).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('latency percentiles stay real past the window, where one request in eight is timed', async () => {
    const tape = tapePath();
    await record(tape, [chat('busy')]);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const body = JSON.stringify(chat('busy'));
      // 4096 timed one by one, then 1000 of which one in eight is timed.
      for (let i = 0; i < 5096; i++) {
        const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(r.status).toBe(200);
        await r.arrayBuffer();
      }
      const stats = proxy.handler.stats();
      expect(stats.hits).toBe(5096);
      // An untimed request taken for a timed one would count the whole process's age.
      expect(stats.p99Ms).toBeGreaterThan(0);
      expect(stats.p99Ms!).toBeLessThan((stats.uptimeS * 1000) / 2);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('mounts in an existing server under a prefix (Express-style app.use)', async () => {
    const tape = tapePath();
    await record(tape, [chat('mounted')]);
    const handler = createHandler({ tape, mode: 'replay' });
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/llm/')) {
        req.url = req.url.slice(4);
        return handler(req, res);
      }
      res.writeHead(200).end('app');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await post(`${base}/llm/v1/chat/completions`, chat('mounted'));
      expect(JSON.parse(r.text).choices[0].message.content).toBe('Echo 1: mounted');
      expect(await (await fetch(`${base}/other`)).text()).toBe('app');
    } finally {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
