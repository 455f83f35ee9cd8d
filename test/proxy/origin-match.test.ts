// The host is part of an HTTP recording's match (docs/matching.md, "Hosts"). An app with a
// fallback provider sends the same path and body to a second OpenAI-compatible host when the
// first one fails: before origins were stored, the first host's recording answered the second
// host's request, a wrong answer served silently. Here with the real OpenAI SDK against two fake
// OpenAI-compatible servers, `localhost` and `127.0.0.1` (two loopback hosts: their names are
// compared, their ports are not, as test servers take a new one every run), through createFetch
// and the proxy; and tapes written before origins were stored, which answer any host.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { serveOptions } from '../../src/proxy/cli.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-origin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `t${n++}.tape`);

/** A fake OpenAI-compatible server: each answer says which server gave it and its call number; `down` makes it fail with a 500. */
interface Fake {
  url: string;
  down: boolean;
  calls: number;
  close(): Promise<void>;
}

async function fake(name: string, host: 'localhost' | '127.0.0.1'): Promise<Fake> {
  const f: Partial<Fake> & { server?: Server } = { down: false, calls: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (f.down) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `${name} is down`, type: 'server_error' } }));
        return;
      }
      const k = ++f.calls!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `chatcmpl-${name}-${k}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `${name} answer ${k}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }));
    });
  });
  // `localhost` as the system resolves it, so that the client reaches it under that name.
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  f.url = `http://${host}:${port}`;
  f.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return f as Fake;
}

const question = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of France?' }] };

/** The app: asks the primary, and the fallback when the primary fails. */
async function ask(primary: string, fallback: string, f: typeof fetch): Promise<string> {
  const client = (base: string) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: f });
  try {
    return (await client(primary).chat.completions.create(question)).choices[0]!.message.content!;
  } catch {
    return (await client(fallback).chat.completions.create(question)).choices[0]!.message.content!;
  }
}

/** One call to one host, its answer (or the SDK's error). */
async function askOnly(base: string, f: typeof fetch | undefined): Promise<string> {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', maxRetries: 0, ...(f ? { fetch: f } : {}) });
  return (await client.chat.completions.create(question)).choices[0]!.message.content!;
}

/** One call recorded into `tape` (record mode) from a new fake host on 127.0.0.1 named `name`: its URL and the answer. */
async function recordOne(tape: string, name: string): Promise<{ url: string; answer: string }> {
  const up = await fake(name, '127.0.0.1');
  try {
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      return { url: up.url, answer: await askOnly(up.url, rec) };
    } finally {
      await rec.close();
    }
  } finally {
    await up.close();
  }
}

const httpRecords = async (tape: string) => (await readTape(tape)).records.map((r) => r.value as HttpRecord);

let primary: Fake;
let fallback: Fake;
/** The primary and the fallback each recorded twice, in the order primary, fallback, primary, fallback. */
const both = join(dir, 'both.tape');
/** The primary alone recorded. */
const primaryOnly = join(dir, 'primary.tape');
// In replay nothing is listening on these: other ports of the same two hosts.
let replayPrimary: string;
let replayFallback: string;

beforeAll(async () => {
  primary = await fake('primary', 'localhost');
  fallback = await fake('fallback', '127.0.0.1');
  const rec = createFetch({ tape: both, mode: 'record', summary: false });
  try {
    expect(await ask(primary.url, fallback.url, rec)).toBe('primary answer 1');
    primary.down = true;
    expect(await ask(primary.url, fallback.url, rec)).toBe('fallback answer 1');
    primary.down = false;
    expect(await ask(primary.url, fallback.url, rec)).toBe('primary answer 2');
    primary.down = true;
    expect(await ask(primary.url, fallback.url, rec)).toBe('fallback answer 2');
    primary.down = false;
  } finally {
    await rec.close();
  }
  const one = createFetch({ tape: primaryOnly, mode: 'record', summary: false });
  try {
    expect(await ask(primary.url, fallback.url, one)).toBe('primary answer 3');
  } finally {
    await one.close();
  }
  replayPrimary = 'http://localhost:9';
  replayFallback = 'http://127.0.0.1:9';
  await primary.close();
  await fallback.close();
});

describe('createFetch, the real OpenAI SDK, a primary and a fallback host', () => {
  it('records where each request went: the origin, its loopback port kept, beside the route', async () => {
    const recs = await httpRecords(both);
    expect(recs.map((r) => r.origin)).toEqual([primary.url, fallback.url, primary.url, fallback.url]);
    expect(new Set(recs.map((r) => r.route))).toEqual(new Set(['POST /v1/chat/completions']));
    // One request, so one key: the origin is beside it, never in it.
    expect(new Set(recs.map((r) => r.key)).size).toBe(1);
    // Each host's recordings of the request are its own turns.
    expect(recs.map((r) => (r as HttpRecord & { repeat: number }).repeat)).toEqual([0, 0, 1, 1]);
  });

  it('replays each host its own answers, in the order they were recorded for it, whichever host is asked first', async () => {
    const f = createFetch({ tape: both, mode: 'replay', summary: false });
    try {
      expect(await askOnly(replayFallback, f)).toBe('fallback answer 1');
      expect(await askOnly(replayFallback, f)).toBe('fallback answer 2');
      expect(await askOnly(replayPrimary, f)).toBe('primary answer 1');
      expect(await askOnly(replayPrimary, f)).toBe('primary answer 2');
      expect((await f.stats()).misses).toBe(0);
    } finally {
      await f.close();
    }
  });

  it('the app with its fallback replays as it ran', async () => {
    const f = createFetch({ tape: both, mode: 'replay', summary: false });
    try {
      expect(await ask(replayPrimary, replayFallback, f)).toBe('primary answer 1');
      expect(await askOnly(replayFallback, f)).toBe('fallback answer 1');
    } finally {
      await f.close();
    }
  });

  it("a request to a host the tape has no recording for misses, naming the host it was recorded for and the opt-out; the primary's answer is not served", async () => {
    const f = createFetch({ tape: primaryOnly, mode: 'replay', summary: false });
    try {
      const err = await askOnly(replayFallback, f).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError> & { error: { tapedeck: Record<string, unknown> } };
      expect(e.code).toBe('E_MISS');
      const first = e.message.split('\n')[0]!;
      expect(first).toBe('400 tapedeck miss: recorded for http://localhost, not for http://127.0.0.1 (this request)');
      expect(e.message).toContain("hostMatch: 'any' if both hosts give the same answers");
      expect(e.error.tapedeck).toMatchObject({ code: 'E_MISS', kind: 'host', origin: 'http://127.0.0.1', recordedFor: ['http://localhost'], route: 'POST /v1/chat/completions' });
      // The primary, on another port of its host, is still answered.
      expect(await askOnly(replayPrimary, f)).toBe('primary answer 3');
    } finally {
      await f.close();
    }
  });

  it("with hostMatch 'any', the other host's recording answers", async () => {
    const f = createFetch({ tape: primaryOnly, mode: 'replay', hostMatch: 'any', summary: false });
    try {
      expect(await askOnly(replayFallback, f)).toBe('primary answer 3');
    } finally {
      await f.close();
    }
  });

  it('an invalid hostMatch is refused where the fetch is made, with the values it takes', () => {
    let err: unknown;
    try {
      createFetch({ tape: primaryOnly, mode: 'replay', hostMatch: 'none' as never });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_ARG');
    expect((err as TapedeckError).message).toContain('Invalid hostMatch "none"');
    expect((err as TapedeckError).hint).toMatch(/'origin'.*'any'/);
  });

  it('update mode records the fallback host as its own recording beside the primary one, and the run counts each host', async () => {
    const tape = fresh();
    await createTape(tape);
    await appendRecords(tape, (await readTape(primaryOnly)).records.map((r) => r.value));
    const up = await fake('mirror', '127.0.0.1');
    try {
      const texts: string[] = [];
      const f = createFetch({ tape, mode: 'update', summary: (t) => texts.push(t) });
      try {
        expect(await askOnly(replayPrimary, f)).toBe('primary answer 3');
        // The fallback's request is recorded live, not answered with the primary's recording.
        expect(await askOnly(up.url, f)).toBe('mirror answer 1');
        expect(await askOnly(up.url, f)).toBe('mirror answer 1');
        expect(up.calls).toBe(1);
      } finally {
        await f.close();
      }
      expect(texts.join('\n')).toMatch(/2 replayed, 1 recording added, 0 misses/);
      const recs = await httpRecords(tape);
      expect(recs.map((r) => r.origin)).toEqual([primary.url, up.url]);
      expect(recs.map((r) => (r as HttpRecord & { repeat: number }).repeat)).toEqual([0, 0]);
    } finally {
      await up.close();
    }
  });

  it('record mode re-records one host without replacing the other host\'s recording', async () => {
    const tape = fresh();
    await createTape(tape);
    await appendRecords(tape, (await readTape(both)).records.map((r) => r.value));
    expect((await recordOne(tape, 'again')).answer).toBe('again answer 1');
    const recs = await httpRecords(tape);
    // The fallback host's two recordings are replaced by the new one; the primary's stay.
    expect(recs.map((r) => r.response.body && Buffer.from(r.response.body).toString()).map((b) => JSON.parse(b).choices[0].message.content)).toEqual(['primary answer 1', 'primary answer 2', 'again answer 1']);
  });
});

describe('recordings without an origin (tapes written before origins were stored)', () => {
  /** The tape of the primary alone, its records as written before origins were stored. */
  async function oldTape(): Promise<string> {
    const tape = fresh();
    await createTape(tape);
    await appendRecords(
      tape,
      (await readTape(primaryOnly)).records.map((r) => {
        const { origin: _origin, ...rest } = r.value as HttpRecord;
        return rest;
      }),
    );
    expect(readFileSync(tape).includes('origin')).toBe(false);
    return tape;
  }

  it('answer any host, through createFetch and the proxy', async () => {
    const tape = await oldTape();
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect(await askOnly('https://api.groq.com', f)).toBe('primary answer 3');
      expect(await askOnly(replayFallback, f)).toBe('primary answer 3');
    } finally {
      await f.close();
    }
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, upstream: 'https://api.groq.com', onWarning: () => {} });
    try {
      expect(await askOnly(proxy.url, undefined)).toBe('primary answer 3');
    } finally {
      await proxy.close();
    }
  });

  it('are replaced when the request is recorded again for a host', async () => {
    const tape = await oldTape();
    const up = await recordOne(tape, 'fresh');
    expect(up.answer).toBe('fresh answer 1');
    expect((await httpRecords(tape)).map((r) => r.origin)).toEqual([up.url]);
  });
});

describe('the proxy', () => {
  it('records the origin of its upstream, and replays it to requests for that upstream alone', async () => {
    const a = await fake('upstream-a', 'localhost');
    const tape = fresh();
    try {
      const rec = await startProxy({ tape, mode: 'record', port: 0, upstream: a.url, onWarning: () => {} });
      try {
        expect(await askOnly(rec.url, undefined)).toBe('upstream-a answer 1');
      } finally {
        await rec.close();
      }
    } finally {
      await a.close();
    }
    expect((await httpRecords(tape)).map((r) => r.origin)).toEqual([a.url]);
    // The same upstream on another port (a loopback host's port is not compared).
    const same = await startProxy({ tape, mode: 'replay', port: 0, upstream: 'http://localhost:9', onWarning: () => {} });
    try {
      expect(await askOnly(same.url, undefined)).toBe('upstream-a answer 1');
    } finally {
      await same.close();
    }
    // Another upstream: a miss that names both, with the flag that lets any host answer.
    const misses: string[] = [];
    const other = await startProxy({ tape, mode: 'replay', port: 0, upstream: 'http://127.0.0.1:9', onWarning: () => {}, onMiss: (m) => misses.push(m) });
    try {
      const err = await askOnly(other.url, undefined).then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.BadRequestError>,
      );
      expect(err?.code).toBe('E_MISS');
      expect(err?.message).toContain('recorded for http://localhost, not for http://127.0.0.1 (this request)');
      expect(err?.message).toContain('--host-match any');
      expect(misses).toHaveLength(1);
    } finally {
      await other.close();
    }
    // No upstream (a proxy that only replays): no host to compare.
    const none = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      expect(await askOnly(none.url, undefined)).toBe('upstream-a answer 1');
    } finally {
      await none.close();
    }
    // tapedeck serve --host-match any.
    const opts = serveOptions(['--tape', tape, '--upstream', 'http://127.0.0.1:9', '--host-match', 'any', '--port', '0']);
    expect(opts.hostMatch).toBe('any');
    const any = await startProxy({ tape, mode: 'replay', port: 0, upstream: opts.upstream, hostMatch: opts.hostMatch, onWarning: () => {} });
    try {
      expect(await askOnly(any.url, undefined)).toBe('upstream-a answer 1');
    } finally {
      await any.close();
    }
  });

  it('--host-match takes origin or any; anything else is E_ARG with the values', () => {
    expect(serveOptions(['--tape', 'x.tape', '--host-match', 'origin']).hostMatch).toBe('origin');
    expect(serveOptions(['--tape', 'x.tape']).hostMatch).toBeUndefined();
    let err: unknown;
    try {
      serveOptions(['--tape', 'x.tape', '--host-match', 'host']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_ARG');
    expect((err as TapedeckError).message).toContain('Invalid --host-match "host"');
    expect((err as TapedeckError).hint).toMatch(/origin .*any/);
  });

  it("an upstream URL's user and password never reach the tape: the origin is stored without them", async () => {
    const a = await fake('guarded', '127.0.0.1');
    const tape = fresh();
    try {
      const port = new URL(a.url).port;
      const rec = await startProxy({ tape, mode: 'record', port: 0, upstream: `http://gateway-user:s3cret-Passw0rd@127.0.0.1:${port}`, onWarning: () => {} });
      try {
        expect(await askOnly(rec.url, undefined)).toBe('guarded answer 1');
      } finally {
        await rec.close();
      }
    } finally {
      await a.close();
    }
    const bytes = readFileSync(tape);
    expect(bytes.includes('s3cret-Passw0rd')).toBe(false);
    expect(bytes.includes('gateway-user')).toBe(false);
    expect((await httpRecords(tape)).map((r) => r.origin)).toEqual([a.url]);
  });
});

describe('hand-written recordings', () => {
  it('written with a full URL answer its host; written with a path alone, any host', async () => {
    const tape = fresh();
    const answer = (text: string) => ({ id: 'chatcmpl-w', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] });
    await addRecordings({ tape }, [
      { request: { url: 'https://api.openai.com/v1/chat/completions', body: question }, response: { body: answer('from openai') } },
      { request: { url: 'https://mirror.example.com/v1/chat/completions', body: question }, response: { body: answer('from the mirror') } },
      { request: { method: 'GET', url: '/v1/models' }, response: { body: { object: 'list', data: [] } } },
    ]);
    expect((await httpRecords(tape)).map((r) => r.origin)).toEqual(['https://api.openai.com', 'https://mirror.example.com', undefined]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect(await askOnly('https://mirror.example.com', f)).toBe('from the mirror');
      expect(await askOnly('https://api.openai.com', f)).toBe('from openai');
      expect((await f('https://example.test/v1/models')).status).toBe(200);
      expect((await f('https://api.openai.com/v1/models')).status).toBe(200);
    } finally {
      await f.close();
    }
  });
});
