// Behind a corporate proxy, HTTPS_PROXY / HTTP_PROXY name the way out, as curl and openai-python
// read them; Node's fetch reads neither, and so neither did tapedeck's connection to the
// upstream. A record run then failed with "unreachable (ENOTFOUND)" and "check --upstream and the
// network". tapedeck serve, a command run where curl is, now goes through the proxy the variables
// name (a CONNECT tunnel, the proxy's user and password as Proxy-Authorization, never on the
// tape); createFetch, which stands in for the app's own fetch, says the variable is set and was
// not used, and how to use it. Neither quotes the variable's value (a proxy URL carries a
// password). NO_PROXY that excludes the host, or no variable, changes nothing.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tlsMaterial } from '../../src/proxy/tls.ts';
import { connect as netConnect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { proxyVariableFor } from '../../src/proxy/env-proxy.ts';
import { listenLoopback, startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-envproxy-'));
/** A loopback port nothing listens on: the upstream refuses at once. */
let closedPort = 0;
let upstream: Upstream;
/** A corporate forward proxy: CONNECT tunnels only, and the only one that knows the API's name. */
let corp: Awaited<ReturnType<typeof listenLoopback>>;
const connects: { target: string; auth: string | undefined }[] = [];
const API_HOST = 'llm-api.corp.internal';
beforeAll(async () => {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closedPort = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  upstream = await startUpstream();
  const server = createHttpServer((_req, res) => {
    res.writeHead(405);
    res.end();
  });
  server.on('connect', (req, client, head) => {
    connects.push({ target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    if (req.headers['proxy-authorization'] !== `Basic ${Buffer.from('corp-user:S3cretProxyPass').toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const to = netConnect(Number(port), host === API_HOST ? '127.0.0.1' : host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      to.write(head);
      to.pipe(client);
      client.pipe(to);
    });
    to.on('error', () => client.destroy());
    client.on('error', () => to.destroy());
  });
  corp = await listenLoopback(server);
});
afterAll(async () => {
  await upstream.close();
  await corp.close();
  rmSync(dir, { recursive: true, force: true });
});

const NAMES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));
afterEach(() => {
  for (const n of NAMES) {
    if (saved[n] === undefined) delete process.env[n];
    else process.env[n] = saved[n];
  }
});
function setEnv(vars: Record<string, string>): void {
  for (const n of NAMES) delete process.env[n];
  Object.assign(process.env, vars);
}

const BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const PROXY_URL = 'http://corp-user:S3cretProxyPass@127.0.0.1:3128';

/** The error text of a record-mode call through `tapedeck serve` to the refusing upstream. */
async function viaServe(): Promise<string> {
  const proxy = await startProxy({ tape: join(dir, `serve-${Math.random()}.tape`), mode: 'record', upstream: `http://127.0.0.1:${closedPort}`, port: 0 });
  try {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' }, body: BODY });
    expect(res.status).toBe(502);
    return JSON.stringify(await res.json());
  } finally {
    await proxy.close();
  }
}

/** The error text of a record-mode createFetch call to the refusing upstream. */
async function viaFetch(): Promise<string> {
  const f = createFetch({ tape: join(dir, `fetch-${Math.random()}.tape`), mode: 'record', summary: false });
  try {
    const res = await f(`http://127.0.0.1:${closedPort}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
    return JSON.stringify(await res.json());
  } catch (e) {
    return `${(e as Error).message} ${JSON.stringify((e as { details?: unknown }).details ?? {})}`;
  } finally {
    await f.close();
  }
}

describe('tapedeck serve behind a forward proxy', () => {
  it('records through the proxy HTTP_PROXY names, its password on no tape, and replays without it', async () => {
    const corpUrl = `http://corp-user:S3cretProxyPass@127.0.0.1:${new URL(corp.url).port}`;
    setEnv({ HTTP_PROXY: corpUrl, NO_PROXY: 'localhost' });
    const tape = join(dir, 'corp.tape');
    const before = upstream.calls.length;
    const proxy = await startProxy({ tape, mode: 'record', upstream: `http://${API_HOST}:${new URL(upstream.url).port}`, port: 0 });
    let text;
    try {
      const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' }, body: BODY });
      expect(res.status).toBe(200);
      text = JSON.stringify(await res.json());
    } finally {
      await proxy.close();
    }
    expect(upstream.calls.length).toBe(before + 1);
    expect(connects.at(-1)?.target).toBe(`${API_HOST}:${new URL(upstream.url).port}`);
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain('S3cretProxyPass');
    expect(bytes).not.toContain(Buffer.from('corp-user:S3cretProxyPass').toString('base64'));

    setEnv({});
    const replay = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const res = await fetch(`${replay.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-x' }, body: BODY });
      expect(JSON.stringify(await res.json())).toBe(text);
    } finally {
      await replay.close();
    }
  });

  it('an https upstream: TLS runs inside the tunnel, to the API\'s own name (an untrusted certificate is refused there)', async () => {
    const tls = await tlsMaterial({});
    const api = await listenLoopback(createHttpsServer({ cert: tls.cert, key: tls.key }, (_req, res) => res.end('{}')) as unknown as import('node:http').Server);
    try {
      setEnv({ HTTPS_PROXY: `http://corp-user:S3cretProxyPass@127.0.0.1:${new URL(corp.url).port}` });
      const proxy = await startProxy({ tape: join(dir, 'tls.tape'), mode: 'record', upstream: `https://${API_HOST}:${new URL(api.url).port}`, port: 0 });
      try {
        const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
        expect(res.status).toBe(502);
        expect(JSON.stringify(await res.json())).toMatch(/certificate|Hostname/i);
      } finally {
        await proxy.close();
      }
      expect(connects.at(-1)).toEqual({ target: `${API_HOST}:${new URL(api.url).port}`, auth: `Basic ${Buffer.from('corp-user:S3cretProxyPass').toString('base64')}` });
    } finally {
      await api.close();
    }
  });

  it('a proxy that is down or refuses is named by its variable, never by its URL', async () => {
    setEnv({ HTTP_PROXY: PROXY_URL });
    const down = await viaServe();
    expect(down).toMatch(/the proxy named by HTTP_PROXY is unreachable \(ECONNREFUSED\)/);
    expect(down).not.toContain('S3cretProxyPass');
    expect(down).not.toContain('corp-user');
    setEnv({ HTTP_PROXY: `http://someone:wrong-pass-123@127.0.0.1:${new URL(corp.url).port}` });
    const refused = await viaServe();
    expect(refused).toMatch(/the proxy named by HTTP_PROXY answered 407/);
    expect(refused).not.toContain('wrong-pass-123');
  });
});

describe('an unreachable upstream while a proxy variable is set', () => {
  it('createFetch says so too, in its own terms', async () => {
    setEnv({ http_proxy: PROXY_URL });
    const text = await viaFetch();
    expect(text).toMatch(/http_proxy is set/);
    expect(text).toContain('setGlobalDispatcher');
    expect(text).not.toContain('S3cretProxyPass');
  });

  it('tapedeck serve goes direct, and says nothing of a proxy, when NO_PROXY excludes the host, when only HTTPS_PROXY is set for an http upstream, or with no variable', async () => {
    setEnv({ HTTP_PROXY: PROXY_URL, NO_PROXY: 'localhost,127.0.0.1' });
    expect(await viaServe()).not.toMatch(/PROXY is set/i);
    setEnv({ HTTPS_PROXY: PROXY_URL });
    expect(await viaServe()).not.toMatch(/PROXY is set/i);
    setEnv({});
    const text = await viaServe();
    expect(text).toContain('ECONNREFUSED');
    expect(text).not.toMatch(/PROXY/);
  });

  it('reads the variables as curl does: the scheme\'s own, lower case first, NO_PROXY by host, suffix, port or *', () => {
    const P = 'http://proxy:3128';
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: P })).toBe('HTTPS_PROXY');
    expect(proxyVariableFor('https://api.openai.com/v1', { https_proxy: P, HTTPS_PROXY: P })).toBe('https_proxy');
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTP_PROXY: P })).toBeUndefined();
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: P, NO_PROXY: '.openai.com' })).toBeUndefined();
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: P, NO_PROXY: 'openai.com' })).toBeUndefined();
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: P, NO_PROXY: 'example.com, *' })).toBeUndefined();
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: P, NO_PROXY: 'api.openai.com:8443' })).toBe('HTTPS_PROXY');
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: P, NO_PROXY: 'api.openai.com:443' })).toBeUndefined();
    expect(proxyVariableFor('https://notopenai.com/v1', { HTTPS_PROXY: P, NO_PROXY: 'openai.com' })).toBe('HTTPS_PROXY');
    expect(proxyVariableFor('https://api.openai.com/v1', { HTTPS_PROXY: '  ' })).toBeUndefined();
  });
});
