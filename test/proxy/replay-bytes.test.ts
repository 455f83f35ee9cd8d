// A replayed answer puts the recorded bytes on the wire, byte for byte, whatever they are: binary
// bodies, UTF-8 text with multi-byte characters, small bodies (written with their head in one go)
// and large ones (written as a Buffer), and a header value with a latin1 character. The oracle
// is the fake upstream's own bytes, read back with node:http as a client.
import { describe, expect, it } from 'vitest';
import { createServer, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startProxy } from '../../src/proxy/index.ts';

const allBytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + 3) % 256));
const ANSWERS: Record<string, { type: string; body: Buffer }> = {
  binary: { type: 'application/octet-stream', body: allBytes(512) },
  text: { type: 'application/json', body: Buffer.from(JSON.stringify({ content: 'Grüße, 日本語, emoji 🎉, é'.repeat(20) })) },
  edge: { type: 'application/octet-stream', body: allBytes(4096) },
  past: { type: 'application/octet-stream', body: allBytes(4097) },
  large: { type: 'application/json', body: Buffer.from(JSON.stringify({ content: 'ünïcödé 🎉 '.repeat(2000) })) },
  empty: { type: 'application/json', body: Buffer.alloc(0) },
};
const LATIN1_HEADER = 'caf\u00e9 cr\u00e8me';

function send(port: number, name: string): Promise<{ status: number; body: Buffer; header: string | undefined; length: string | undefined }> {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: name }] });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(parts), header: res.headers['x-note'] as string | undefined, length: res.headers['content-length'] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('replayed answer bytes', () => {
  it('are the recorded bytes on the wire, for any body and size', async () => {
    const up = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const name = JSON.parse(Buffer.concat(parts).toString()).messages[0].content as string;
        const a = ANSWERS[name]!;
        res.writeHead(200, { 'content-type': a.type, 'content-length': a.body.length, 'x-note': LATIN1_HEADER });
        res.end(a.body);
      });
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', () => r()));
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-replay-bytes-'));
    const tape = join(dir, 't.tape');
    try {
      const rec = await startProxy({ tape, mode: 'record', port: 0, upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}` });
      for (const name of Object.keys(ANSWERS)) expect((await send(rec.port, name)).body.equals(ANSWERS[name]!.body)).toBe(true);
      await rec.close();
      const play = await startProxy({ tape, mode: 'replay', port: 0 });
      try {
        // Twice: the first answer of a recording prepares its parts, the second reuses them.
        for (let round = 0; round < 2; round++) {
          for (const [name, a] of Object.entries(ANSWERS)) {
            const got = await send(play.port, name);
            expect(got.status).toBe(200);
            expect(got.body.toString('hex'), `${name}, round ${round}`).toBe(a.body.toString('hex'));
            expect(got.length).toBe(String(a.body.length));
            expect(got.header).toBe(LATIN1_HEADER);
          }
        }
      } finally {
        await play.close();
      }
    } finally {
      up.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
