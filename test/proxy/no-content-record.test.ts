// An upstream answer with no body (204 No Content to a DELETE, 304, a HEAD) in record mode:
// it is no stream, so no trailer can be declared on it (node:http refuses one where the answer
// has no chunked body). The client must get the upstream's status, as replay gives it, not a
// broken 500 with a body that never comes.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-no-content-'));
let up: Server;
let upstream: string;

beforeAll(async () => {
  // DELETE: 204 with no body and no content-length, as many APIs answer it; HEAD: the size of the resource.
  up = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'DELETE') res.writeHead(204).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'file-1', object: 'file', deleted: false }));
    });
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
});
afterAll(async () => {
  up.closeAllConnections();
  await new Promise((r) => up.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('a 204 No Content in record mode', () => {
  it('reaches the client as 204, is recorded, and replays as 204', async () => {
    const tape = join(dir, 'd204.tape');
    const warnings: string[] = [];
    const rec = await startProxy({ upstream, tape, mode: 'record', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      const r = await fetch(`${rec.url}/v1/files/file-1`, { method: 'DELETE', headers: { authorization: 'Bearer sk-test' } });
      expect(r.status).toBe(204);
      expect(r.headers.get('x-tapedeck-match')).toBe('recorded');
      expect(await r.text()).toBe('');
      // Through the OpenAI SDK too (files.delete answers its JSON; a 204 is taken as no body).
      const sdk = new OpenAI({ apiKey: 'sk-test', baseURL: `${rec.url}/v1`, maxRetries: 0 });
      await sdk.files.delete('file-2');
      expect(rec.handler.stats()).toMatchObject({ recorded: 2, errors: 0 });
    } finally {
      await rec.close();
    }
    expect(warnings).toEqual([]);
    const play = await startProxy({ upstream, tape, mode: 'replay', port: 0 });
    try {
      const r = await fetch(`${play.url}/v1/files/file-1`, { method: 'DELETE', headers: { authorization: 'Bearer sk-test' } });
      expect(r.status).toBe(204);
      expect(r.headers.get('x-tapedeck-match')).toBe('exact');
    } finally {
      await play.close();
    }
  });
});

describe('a HEAD answer', () => {
  it('keeps the content-length the upstream gave, recording and replaying', async () => {
    const sized = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '42' }).end(req.method === 'HEAD' ? undefined : Buffer.alloc(42)));
    });
    await new Promise<void>((r) => sized.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(sized.address() as AddressInfo).port}`;
    const tape = join(dir, 'head.tape');
    try {
      const rec = await startProxy({ upstream: origin, tape, mode: 'record', port: 0, onWarning: () => {} });
      try {
        const r = await fetch(`${rec.url}/v1/files/f/content`, { method: 'HEAD' });
        expect(r.status).toBe(200);
        expect(r.headers.get('x-tapedeck-match')).toBe('recorded');
        expect(r.headers.get('content-length')).toBe('42');
      } finally {
        await rec.close();
      }
    } finally {
      sized.closeAllConnections();
      await new Promise((r) => sized.close(r));
    }
    const play = await startProxy({ upstream: origin, tape, mode: 'replay', port: 0 });
    try {
      const r = await fetch(`${play.url}/v1/files/f/content`, { method: 'HEAD' });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-tapedeck-match')).toBe('exact');
      expect(r.headers.get('content-length')).toBe('42');
    } finally {
      await play.close();
    }
  });
});
