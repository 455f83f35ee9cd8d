// Behind a corporate proxy, HTTPS_PROXY / HTTP_PROXY name the way out, as curl and openai-python
// read them; Node's fetch reads neither, and so neither did tapedeck's connection to the
// upstream. A record run then failed with "unreachable (ENOTFOUND)" and "check --upstream and the
// network", which sent the user looking at the wrong thing. The error now says the variable is
// set and was not used, and how to go through the proxy, without quoting its value (a proxy URL
// carries a password). NO_PROXY that excludes the host, or no variable, changes nothing.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { proxyVariableFor } from '../../src/proxy/env-proxy.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-envproxy-'));
/** A loopback port nothing listens on: the upstream refuses at once. */
let closedPort = 0;
beforeAll(async () => {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closedPort = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

describe('an unreachable upstream while a proxy variable is set', () => {
  it('tapedeck serve says HTTP_PROXY was not used and how to use it, without its value', async () => {
    setEnv({ HTTP_PROXY: PROXY_URL });
    const text = await viaServe();
    expect(text).toContain('ECONNREFUSED');
    expect(text).toMatch(/HTTP_PROXY is set/);
    expect(text).toContain('EnvHttpProxyAgent');
    expect(text).toContain('NODE_OPTIONS');
    expect(text).not.toContain('S3cretProxyPass');
    expect(text).not.toContain('corp-user');
  });

  it('createFetch says so too, in its own terms', async () => {
    setEnv({ http_proxy: PROXY_URL });
    const text = await viaFetch();
    expect(text).toMatch(/http_proxy is set/);
    expect(text).toContain('setGlobalDispatcher');
    expect(text).not.toContain('S3cretProxyPass');
  });

  it('says nothing of it when NO_PROXY excludes the host, when only HTTPS_PROXY is set for an http upstream, or with no variable', async () => {
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
