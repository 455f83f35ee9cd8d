// Upstream timeouts, a client that goes away, and shutdown with a hung upstream, through every
// entry point that calls the upstream: `tapedeck serve` (the built CLI, as users run it),
// startProxy in-process, and createFetch. Timeouts here are small (300 ms) so a hang ends fast;
// assertions are on outcomes (status, error code, what reached the tape, what the upstream saw),
// never on durations: vitest's own test timeout is the only clock.
import { spawn, spawnSync } from 'node:child_process';
import { CLI, serve } from './serve-cli.ts';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { serveOptions } from '../../src/proxy/cli.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { errorOf } from '../helpers.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-timeouts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `t${n++}.tape`);
const httpRecords = async (tape: string): Promise<HttpRecord[]> => (existsSync(tape) ? (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord) : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = { 'content-type': 'application/json' };
const chat = (content: string, stream = false) => JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content }] });

/** Waits until the fake provider has received `count` requests. */
async function received(up: Upstream, count: number): Promise<void> {
  while (up.calls.length < count) await sleep(5);
}

/**
 * A TCP server that accepts connections and never says a word. An https:// upstream pointed at
 * it never completes its TLS handshake, so the connection is never established: undici's
 * connect phase (TCP and TLS) is what must time out. Deterministic, unlike a blackhole address.
 */
async function silentServer(): Promise<{ url: string; sockets: Socket[]; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: TcpServer = createTcpServer((s) => {
    sockets.push(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    sockets,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * A listening TCP socket that never accepts (Python: Node accepts by itself), with its accept
 * queue filled by one connection of ours. Linux drops further SYNs while the queue is full, so a
 * new connection stays half-open: the TCP handshake itself never completes.
 */
async function unacceptingServer(): Promise<{ url: string; close(): void }> {
  const py = spawn('python3', ['-c', 'import socket,sys\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((r) => py.stdout.once('data', (d: Buffer) => r(Number(String(d).trim()))));
  const filler = tcpConnect(port, '127.0.0.1');
  filler.on('error', () => {});
  await new Promise<void>((r) => filler.once('connect', () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      filler.destroy();
      py.stdin.end();
      py.kill();
    },
  };
}
const hasPython = process.platform === 'linux' && spawnSync('python3', ['-c', 'pass']).status === 0;


/** True when nothing listens on the port any more (a new server can bind it). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createTcpServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

describe('connect timeout', () => {
  it('an upstream that never completes the connection: 504 E_UPSTREAM_TIMEOUT (connect), through the proxy and createFetch, nothing recorded', async () => {
    const silent = await silentServer();
    const tape = fresh();
    // The idle timeout is far away, so only the connect timeout can end these calls.
    const proxy = await startProxy({ upstream: silent.url, tape, mode: 'record', port: 0, connectTimeoutMs: 300, idleTimeoutMs: 120_000 });
    try {
      const r = await fetch(`${proxy.url}/v1/chat/completions?api-key=sekrit-query-key`, { method: 'POST', headers: json, body: chat('hello') });
      expect(r.status).toBe(504);
      expect(r.headers.get('x-should-retry')).toBe('true');
      const text = await r.text();
      const body = JSON.parse(text) as { error: { code: string; message: string; tapedeck: { timeout: string; limitMs: number; upstream: string; hint: string } } };
      expect(body.error.code).toBe('E_UPSTREAM_TIMEOUT');
      expect(body.error.tapedeck).toMatchObject({ timeout: 'connect', limitMs: 300, upstream: `${silent.url}/v1/chat/completions` });
      expect(body.error.tapedeck.hint).toContain('--connect-timeout');
      // The query (where Azure puts its key) is never echoed.
      expect(text).not.toContain('sekrit');
      // The connection was really attempted (and is not what the timeout blamed wrongly).
      expect(silent.sockets.length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
    expect(await httpRecords(tape)).toEqual([]);

    const tape2 = fresh();
    const f = createFetch({ tape: tape2, mode: 'record', connectTimeoutMs: 300, idleTimeoutMs: 120_000 });
    try {
      const r = await f(`${silent.url}/v1/messages`, { method: 'POST', headers: { ...json, 'anthropic-version': '2023-06-01' }, body: chat('hello') });
      expect(r.status).toBe(504);
      const body = (await r.json()) as { type: string; error: { type: string; code: string; tapedeck: { timeout: string } } };
      // Anthropic's shape and error type for a gateway timeout.
      expect(body).toMatchObject({ type: 'error', error: { type: 'timeout_error', code: 'E_UPSTREAM_TIMEOUT', tapedeck: { timeout: 'connect' } } });
    } finally {
      await f.close();
      await silent.close();
    }
    expect(await httpRecords(tape2)).toEqual([]);
  }, 30_000);
});

describe.skipIf(!hasPython)('connect timeout at the TCP handshake', () => {
  it('a connection the upstream never accepts: 504 E_UPSTREAM_TIMEOUT (connect)', async () => {
    const stuck = await unacceptingServer();
    const tape = fresh();
    const proxy = await startProxy({ upstream: stuck.url, tape, mode: 'record', port: 0, connectTimeoutMs: 300, idleTimeoutMs: 120_000 });
    try {
      const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: json, body: chat('hello') });
      expect(r.status).toBe(504);
      expect(((await r.json()) as { error: { code: string; tapedeck: Record<string, unknown> } }).error).toMatchObject({ code: 'E_UPSTREAM_TIMEOUT', tapedeck: { timeout: 'connect', limitMs: 300 } });
    } finally {
      await proxy.close();
      stuck.close();
    }
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);
});

describe('a global fetch dispatcher the user installed', () => {
  it('is used as it is (its connect timeout, not one of ours that would drop its settings)', async () => {
    const GLOBAL = Symbol.for('undici.globalDispatcher.1');
    const g = globalThis as unknown as Record<symbol, { constructor: new (o: object) => { close(): Promise<void> } }>;
    await fetch('data:,');
    const original = g[GLOBAL]!;
    // An Agent of Node's own undici with the user's settings (as setGlobalDispatcher installs it).
    const mine = new original.constructor({ connect: { timeout: 300 } });
    g[GLOBAL] = mine as never;
    const silent = await silentServer();
    // tapedeck's own limit is far beyond the test timeout: only the user's agent can end this.
    const f = createFetch({ mode: 'passthrough', connectTimeoutMs: 120_000 });
    try {
      const r = await f(`${silent.url}/v1/chat/completions`, { method: 'POST', headers: json, body: chat('hello') });
      expect(r.status).toBe(504);
      const body = (await r.json()) as { error: { message: string; tapedeck: Record<string, unknown> } };
      expect(body.error.tapedeck).toMatchObject({ timeout: 'connect' });
      expect(body.error.tapedeck.limitMs).toBeUndefined();
      expect(body.error.message).toContain('global fetch dispatcher');
    } finally {
      g[GLOBAL] = original;
      await f.close();
      await mine.close();
      await silent.close();
    }
  }, 30_000);
});

describe.skipIf(!existsSync(CLI))('idle timeout, tapedeck serve --idle-timeout', () => {
  it('no headers in time: 504 E_UPSTREAM_TIMEOUT; silence mid-answer: the client stream breaks; the upstream connection is closed; nothing recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const srv = serve(['--upstream', up.url, '--tape', tape, '--mode', 'record', '--port', '0', '--idle-timeout', '300']);
    try {
      const base = await srv.url;
      const r = await fetch(`${base}/v1/hang?x=1`, { method: 'POST', headers: json, body: chat('are you there') });
      expect(r.status).toBe(504);
      const body = (await r.json()) as { error: { code: string; message: string; tapedeck: Record<string, unknown> } };
      expect(body.error.code).toBe('E_UPSTREAM_TIMEOUT');
      expect(body.error.tapedeck).toMatchObject({ timeout: 'idle', limitMs: 300, upstream: `${up.url}/v1/hang` });
      expect(body.error.message).toContain('300 ms');
      expect(body.error.tapedeck.hint).toContain('--idle-timeout');
      // The abort reached the upstream: its request was closed.
      await up.calls[0]!.aborted;

      // Headers and one event, then silence: the client must see a broken stream, never an
      // answer that looks complete.
      const s = await fetch(`${base}/v1/hang-body`, { method: 'POST', headers: json, body: chat('tell me', true) });
      expect(s.status).toBe(200);
      await expect(s.text()).rejects.toThrow();
      await up.calls[1]!.aborted;

      // A normal exchange still records, so the tape is there and holds only that one.
      const ok = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: json, body: chat('hello') });
      expect(ok.status).toBe(200);
      await ok.text();
    } finally {
      srv.child.kill('SIGTERM');
      expect(await srv.exited).toBe(0);
      await up.close();
    }
    expect((await httpRecords(tape)).map((r) => r.route)).toEqual(['POST /v1/chat/completions']);
  }, 30_000);
});

describe('idle timeout, createFetch', () => {
  it('no headers in time: a 504 answer; silence mid-answer: reading the body fails with E_UPSTREAM_TIMEOUT; nothing recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const f = createFetch({ tape, mode: 'record', idleTimeoutMs: 300 });
    try {
      const r = await f(`${up.url}/v1/hang`, { method: 'POST', headers: json, body: chat('are you there') });
      expect(r.status).toBe(504);
      expect(((await r.json()) as { error: { code: string; tapedeck: { timeout: string } } }).error).toMatchObject({ code: 'E_UPSTREAM_TIMEOUT', tapedeck: { timeout: 'idle' } });
      await up.calls[0]!.aborted;

      const s = await f(`${up.url}/v1/hang-body`, { method: 'POST', headers: json, body: chat('tell me', true) });
      expect(s.status).toBe(200);
      const reader = s.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('partial');
      const err = await reader.read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_UPSTREAM_TIMEOUT');
      expect((err as TapedeckError).details).toMatchObject({ timeout: 'idle', limitMs: 300, upstream: `${up.url}/v1/hang-body` });
      await up.calls[1]!.aborted;
    } finally {
      await f.close();
      await up.close();
    }
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);

  it("the OpenAI SDK raises it as an API error with tapedeck's code and message, not as a connection error", async () => {
    const up = await startUpstream();
    const f = createFetch({ tape: fresh(), mode: 'record', idleTimeoutMs: 300 });
    try {
      // The fake provider hangs on this path; the SDK posts to baseURL + /chat/completions.
      const client = new OpenAI({ baseURL: `${up.url}/v1/hang`, apiKey: 'sk-test', maxRetries: 0, fetch: f });
      const err = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).then(
        () => undefined,
        (e: unknown) => e as { status?: number; code?: string; message: string },
      );
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err).toMatchObject({ status: 504, code: 'E_UPSTREAM_TIMEOUT' });
      expect(err!.message).toContain('idle timeout');
    } finally {
      await f.close();
      await up.close();
    }
  }, 30_000);

  it('passthrough answers are bounded too', async () => {
    const up = await startUpstream();
    const f = createFetch({ mode: 'passthrough', idleTimeoutMs: 300 });
    try {
      const s = await f(`${up.url}/v1/hang-body`, { method: 'POST', headers: json, body: chat('tell me', true) });
      await expect(s.text()).rejects.toThrow(/idle timeout/);
    } finally {
      await f.close();
      await up.close();
    }
  }, 30_000);
});

describe('a client that goes away', () => {
  it('proxy: before the upstream answered, its request upstream is closed at once; nothing recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    // Default timeouts (10 minutes idle): only the client's leaving can end the upstream call.
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    try {
      const ac = new AbortController();
      const pending = fetch(`${proxy.url}/v1/hang`, { method: 'POST', headers: json, body: chat('are you there'), signal: ac.signal });
      await received(up, 1);
      ac.abort();
      await expect(pending).rejects.toThrow();
      await up.calls[0]!.aborted;
      // The exchange is over: close() does not wait for it.
      await proxy.close();
      expect(proxy.handler.inFlight).toBe(0);
    } finally {
      await proxy.close();
      await up.close();
    }
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);

  it('createFetch: the caller aborting before the upstream answered closes the upstream request; nothing recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const f = createFetch({ tape, mode: 'record' });
    try {
      const ac = new AbortController();
      const pending = f(`${up.url}/v1/hang`, { method: 'POST', headers: json, body: chat('are you there'), signal: ac.signal });
      await received(up, 1);
      ac.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      await up.calls[0]!.aborted;
    } finally {
      await f.close();
      await up.close();
    }
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);

  it('proxy: the OpenAI SDK breaking out of a stream that has started still leaves the whole answer on the tape', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
      // "slow" makes the fake provider pause 20 ms between events, so the break comes mid-answer.
      const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a slow story' }] });
      for await (const _ of stream) break;
    } finally {
      await proxy.close();
      await up.close();
    }
    const records = await httpRecords(tape);
    expect(records).toHaveLength(1);
    expect(Buffer.from(records[0]!.response.body).toString()).toMatch(/"finish_reason":"stop"[\s\S]*data: \[DONE\]\n\n$/);
  }, 30_000);
});

describe('bounded shutdown', () => {
  it('tapedeck serve: SIGTERM with a hung upstream exits within --shutdown-timeout, frees the port, keeps the earlier records', async () => {
    if (!existsSync(CLI)) return;
    const up = await startUpstream();
    const tape = fresh();
    const srv = serve(['--upstream', up.url, '--tape', tape, '--mode', 'record', '--port', '0', '--shutdown-timeout', '300']);
    const base = await srv.url;
    const port = Number(new URL(base).port);
    for (const q of ['first', 'second']) {
      const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: json, body: chat(q) });
      expect(r.status).toBe(200);
      await r.text();
    }
    const hung = fetch(`${base}/v1/hang`, { method: 'POST', headers: json, body: chat('are you there') }).then(
      async (r) => ({ status: r.status, body: await r.text() }),
      (e: unknown) => ({ status: 0, body: String(e) }),
    );
    await received(up, 3);
    srv.child.kill('SIGTERM');
    expect(await srv.exited).toBe(0);
    // The hung exchange was cut: its client got 503 (the proxy shut down), the upstream saw its
    // request closed, and the port is free.
    const outcome = await hung;
    expect(outcome.status).toBe(503);
    expect(outcome.body).toContain('E_PROXY_CLOSED');
    await up.calls[2]!.aborted;
    expect(await portFree(port)).toBe(true);
    expect(srv.stderr()).toContain('shutdown timeout (300 ms): cutting 1 request(s) still in flight');
    await up.close();
    const records = await httpRecords(tape);
    expect(records.map((r) => (r.request.body as { messages: { content: string }[] }).messages[0]!.content).sort()).toEqual(['first', 'second']);
  }, 60_000);

  it('startProxy close() finishes with an upstream hung before and during its answer; nothing half recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, shutdownTimeoutMs: 300 });
    const before = fetch(`${proxy.url}/v1/hang`, { method: 'POST', headers: json, body: chat('one') }).then((r) => r.status);
    const during = fetch(`${proxy.url}/v1/hang-body`, { method: 'POST', headers: json, body: chat('two', true) });
    const duringRes = await during;
    const duringText = duringRes.text().then(
      () => 'complete',
      () => 'broken',
    );
    await received(up, 2);
    await proxy.close();
    expect(await before).toBe(503);
    expect(await duringText).toBe('broken');
    await Promise.all(up.calls.map((c) => c.aborted));
    await up.close();
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);

  it('createHandler close() cuts a paced replay to a client that stops reading', async () => {
    // Record one stream, then replay it at 1 s between chunks to a client that never reads.
    const up = await startUpstream();
    const tape = fresh();
    const rec = createFetch({ tape, mode: 'record' });
    await (await rec(`${up.url}/v1/chat/completions`, { method: 'POST', headers: json, body: chat('story', true) })).text();
    await rec.close();
    await up.close();
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, timing: 1000, shutdownTimeoutMs: 300 });
    const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: json, body: chat('story', true) });
    expect(r.headers.get('x-tapedeck-match')).toBe('exact');
    const text = r.text().then(
      () => 'complete',
      () => 'broken',
    );
    await proxy.close();
    expect(await text).toBe('broken');
  }, 30_000);

  it('createFetch close() finishes with a recorded stream whose upstream hangs mid-answer; nothing recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const f = createFetch({ tape, mode: 'record', shutdownTimeoutMs: 300 });
    const r = await f(`${up.url}/v1/hang-body`, { method: 'POST', headers: json, body: chat('tell me', true) });
    expect(r.status).toBe(200);
    // Nobody reads it: close() reads it to record it, and must give up on the hung upstream.
    await f.close();
    await up.calls[0]!.aborted;
    await up.close();
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);
});

describe('timeout settings', () => {
  it('tapedeck serve rejects bad values with the flag named', () => {
    for (const flag of ['--connect-timeout', '--idle-timeout', '--shutdown-timeout']) {
      for (const bad of ['abc', '0', '-5', '1.5', '', '99999999999']) {
        // `--flag=value`, so values that look like options (-5) reach the parser too.
        const e = errorOf(() => serveOptions(['--tape', 'x.tape', `${flag}=${bad}`]));
        expect(e.code, `${flag} ${bad}`).toBe('E_ARG');
        expect(e.message.startsWith(`Invalid ${flag} ${JSON.stringify(bad)}.`), e.message).toBe(true);
      }
    }
    expect(serveOptions(['--tape', 'x.tape', '--connect-timeout', '250', '--idle-timeout', '900000', '--shutdown-timeout', '5000'])).toMatchObject({ connectTimeoutMs: 250, idleTimeoutMs: 900_000, shutdownTimeoutMs: 5000 });
    // A negative value as its own argument, as a user types it, reaches the flag's own check
    // (parseArgs alone said only that the argument "is ambiguous").
    const e = errorOf(() => serveOptions(['--tape', 'x.tape', '--idle-timeout', '-5']));
    expect(e.message.startsWith('Invalid --idle-timeout "-5".'), e.message).toBe(true);
  });

  it.skipIf(!existsSync(CLI))('tapedeck serve --idle-timeout nope: exit 2, one error line naming the flag, no stack', async () => {
    const bad = serve(['--tape', join(dir, 'x.tape'), '--port', '0', '--idle-timeout', 'nope']);
    expect(await bad.exited).toBe(2);
    const lines = bad.stderr().trim().split('\n');
    expect(lines[0]).toBe('tapedeck: E_ARG Invalid --idle-timeout "nope".');
    expect(bad.stderr()).not.toMatch(/\n\s+at /);
  });

  it('createHandler and createFetch reject bad values where they are made', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 31, '100' as unknown as number]) {
      expect(errorOf(() => createFetch({ mode: 'passthrough', idleTimeoutMs: bad })).code).toBe('E_ARG');
      expect(errorOf(() => createHandler({ mode: 'passthrough', upstream: 'http://127.0.0.1:9', connectTimeoutMs: bad })).code).toBe('E_ARG');
      expect(errorOf(() => createHandler({ mode: 'passthrough', upstream: 'http://127.0.0.1:9', shutdownTimeoutMs: bad })).message).toMatch(/^Invalid shutdownTimeoutMs /);
    }
  });
});

describe('bounded shutdown with a client that stopped reading', () => {
  it('startProxy close() finishes while a recorded stream is stalled on a client that reads nothing', async () => {
    const { createServer } = await import('node:http');
    const { request } = await import('node:http');
    // An upstream that streams without end, as fast as it is read.
    let stalled!: () => void;
    const backpressure = new Promise<void>((r) => (stalled = r));
    let upstreamClosed!: () => void;
    const cut = new Promise<void>((r) => (upstreamClosed = r));
    const upstream = createServer((req, res) => {
      req.resume();
      res.once('close', () => upstreamClosed());
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (res.destroyed) return;
        stalled();
        res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
    const tape = fresh();
    const proxy = await startProxy({ upstream: upUrl, tape, mode: 'record', port: 0, shutdownTimeoutMs: 300 });
    // A client that gets the headers and then reads nothing (a paused socket never even sees
    // the proxy close it, so the test closes it at the end).
    let client: Socket | undefined;
    const headers = new Promise<void>((resolve) => {
      const r = request(`${proxy.url}/v1/files`, { method: 'POST', headers: json }, (res) => {
        res.pause();
        client = res.socket;
        resolve();
      });
      r.on('error', () => {});
      r.end(chat('big'));
    });
    await headers;
    // The whole chain is full: the proxy waits for the client, the upstream for the proxy.
    await backpressure;
    // Before the bound was enforced for answers under way, this close() never returned.
    await proxy.close();
    // The upstream call was aborted: the upstream saw its answer cut.
    await cut;
    client?.destroy();
    await new Promise<void>((r) => {
      upstream.closeAllConnections();
      upstream.close(() => r());
    });
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);
});

describe('bounded shutdown with a client that never finishes its request', () => {
  it('startProxy close() finishes while a request body is still arriving; the upstream never saw it', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, shutdownTimeoutMs: 300 });
    // Headers that promise 1000 bytes, then only 10 of them.
    const sock = tcpConnect(proxy.port, '127.0.0.1');
    sock.on('error', () => {});
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":');
    while (proxy.handler.inFlight === 0) await sleep(5);
    await proxy.close();
    // The proxy closed the connection (the client is reading, so it sees it).
    await closed;
    await up.close();
    expect(up.calls).toHaveLength(0);
    expect(await httpRecords(tape)).toEqual([]);
  }, 30_000);
});
