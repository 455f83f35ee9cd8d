// tapedeck serve used as HTTP_PROXY (curl -x): the E_FORWARD_PROXY hint names the base URL to
// give the client instead. It must be one the client's SDK takes (the SDK adds the endpoint),
// never one that ends with the endpoint path: following `baseURL: 'http://proxy/v1/models'`
// sends `/v1/models/chat/completions`, and every call misses.
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-forward-base-'));
let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy({ tape: join(dir, 'none.tape'), mode: 'replay', port: 0, onWarning: () => {} });
});
afterAll(async () => {
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What `curl -x <proxy> -X POST <target>` gets back: the hint of the refusal. */
function hintFor(target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxy.port, method: 'POST', path: target, headers: { host: new URL(target).host, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => {
        expect(res.statusCode).toBe(400);
        resolve(text);
      });
    });
    req.on('error', reject);
    req.end('{}');
  });
}

const baseIn = (text: string) => /baseURL: '([^']*)'/.exec(text)?.[1];

describe('the E_FORWARD_PROXY hint', () => {
  it.each([
    ['http://api.openai.com/v1/models', '/v1'],
    ['http://api.openai.com/v1/audio/transcriptions', '/v1'],
    ['http://api.openai.com/v1/chat/completions', '/v1'],
    ['http://api.groq.com/openai/v1/chat/completions', '/openai/v1'],
    ['http://localhost:11434/api/chat', ''],
    ['http://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent', ''],
    ['http://api.anthropic.com/v1/messages', ''],
  ])('for %s names the proxy%s as the base URL', async (target, path) => {
    const text = await hintFor(target);
    expect(text).toContain('E_FORWARD_PROXY');
    expect(baseIn(text)).toBe(`${proxy.url}${path}`);
  });
});
