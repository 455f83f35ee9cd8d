// A redirect whose Location is an absolute URL on the upstream (Starlette's trailing-slash
// redirect names the host it was asked for, which is the upstream's, as the proxy forwards)
// sent the client around the proxy: its next request was not recorded, and a replay went to the
// live API, or failed offline. The proxy points such a Location at itself.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { pointLocation } from '../../src/proxy/answer-urls.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redirect-location-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

/** A server under `prefix` that redirects a trailing slash to the path without it, by an absolute URL on the host it was asked for. */
async function starlette(prefix: string): Promise<{ url: string; server: Server; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      asked.push(`${req.method} ${path}`);
      if (path.endsWith('/')) {
        res.writeHead(307, { location: `http://${req.headers.host}${path.slice(0, -1)}` });
        return res.end();
      }
      if (path === `${prefix}/elsewhere`) {
        res.writeHead(302, { location: 'https://example.com/docs' });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`, server, asked };
}

const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) };

describe('a redirect to the upstream, through the proxy', () => {
  it.each(['', '/api/openai'])('is followed through the proxy: both hops recorded, and replayed with the upstream gone (upstream prefix %j)', async (prefix) => {
    const up = await starlette(prefix);
    const tape = tapePath();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    let recorded: string;
    try {
      const r = await fetch(`${rec.url}/v1/chat/completions/`, post);
      expect(r.status).toBe(200);
      recorded = await r.text();
      expect(r.url).toBe(`${rec.url}/v1/chat/completions`);
    } finally {
      await rec.close();
    }
    expect(up.asked).toEqual([`POST ${prefix}/v1/chat/completions/`, `POST ${prefix}/v1/chat/completions`]);
    expect((await readTape(tape)).records.length).toBe(2);
    await new Promise((r) => up.server.close(r));
    // Replayed with the upstream down, as in CI: both hops come from the tape. Without an
    // upstream the proxy cannot know its path prefix, so only the prefix-less one replays so.
    for (const upstream of prefix === '' ? [up.url, undefined] : [up.url]) {
      const play = await startProxy({ tape, mode: 'replay', port: 0, ...(upstream ? { upstream } : {}) });
      try {
        const r = await fetch(`${play.url}/v1/chat/completions/`, post);
        expect(r.status).toBe(200);
        expect(await r.text()).toBe(recorded);
      } finally {
        await play.close();
      }
    }
  });

  it('a Location on another host is left as it is, and the tape keeps what the upstream sent', async () => {
    const up = await starlette('');
    const tape = tapePath();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    try {
      const r = await fetch(`${rec.url}/elsewhere`, { redirect: 'manual' });
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe('https://example.com/docs');
      const s = await fetch(`${rec.url}/v1/x/`, { redirect: 'manual' });
      expect(s.headers.get('location')).toBe(`${rec.url}/v1/x`);
    } finally {
      await rec.close();
      await new Promise((r) => up.server.close(r));
    }
    const stored = (await readTape(tape)).records.map((r) => (r.value as { response: { headers: Record<string, string> } }).response.headers.location);
    expect(stored).toEqual(['https://example.com/docs', `${up.url}/v1/x`]);
  });
});

describe('pointLocation', () => {
  const base = 'http://127.0.0.1:8080';
  it('moves a redirect on the upstream to the proxy, without the upstream prefix; leaves others alone', () => {
    expect(pointLocation({ location: 'http://llm:8000/v1/a?b=1' }, 307, base, 'http://llm:8000')).toEqual({ location: `${base}/v1/a?b=1` });
    expect(pointLocation({ location: 'http://LLM:8000/gw/v1/a' }, 308, base, 'http://llm:8000/gw/')).toEqual({ location: `${base}/v1/a` });
    expect(pointLocation({ location: 'http://llm:80/v1/a' }, 307, base, 'http://llm')).toEqual({ location: `${base}/v1/a` });
    expect(pointLocation({ location: 'http://llm:8000/gwx/v1/a' }, 301, base, 'http://llm:8000/gw')).toEqual({ location: `${base}/gwx/v1/a` });
    expect(pointLocation({ location: 'https://other/v1/a' }, 302, base, 'http://llm:8000')).toEqual({ location: 'https://other/v1/a' });
    expect(pointLocation({ location: '/v1/a' }, 307, base, 'http://llm:8000')).toEqual({ location: '/v1/a' });
    expect(pointLocation({ location: 'http://llm:8000/v1/a' }, 200, base, 'http://llm:8000')).toEqual({ location: 'http://llm:8000/v1/a' });
    // A replaying proxy without an upstream: any absolute location, on the proxy.
    expect(pointLocation({ location: 'https://api.example.com/v1/a' }, 303, base)).toEqual({ location: `${base}/v1/a` });
  });
});
