// A HEAD request the tape cannot answer: the 400 has no body (HEAD answers have none), so a
// client saw a bare status and `x-tapedeck-error: E_MISS`, and what differed was only on the
// proxy's stderr. The miss's line is in `x-tapedeck-message`; a GET's answer is unchanged.
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-head-miss-'));
let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy({ tape: join(dir, 'none.tape'), mode: 'replay', port: 0, onWarning: () => {} });
});
afterAll(async () => {
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

function ask(method: string, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const r = request(`${proxy.url}${path}`, { method }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    r.on('error', reject);
    r.end();
  });
}

describe('a HEAD miss', () => {
  it('says what missed in x-tapedeck-message', async () => {
    const head = await ask('HEAD', '/v1/files?purpose=batch');
    expect(head.status).toBe(400);
    expect(head.body).toBe('');
    expect(head.headers['x-tapedeck-error']).toBe('E_MISS');
    const message = String(head.headers['x-tapedeck-message']);
    expect(message).toMatch(/no tape at .*none\.tape/);
    // The same words the body of a GET's miss starts with.
    const get = await ask('GET', '/v1/files?purpose=batch');
    expect(get.headers['x-tapedeck-message']).toBeUndefined();
    expect((JSON.parse(get.body) as { error: { message: string } }).error.message.split('\n')[0]).toContain(message.split(';')[0]!);
  });
});
