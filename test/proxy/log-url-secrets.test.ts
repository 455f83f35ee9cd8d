// What tapedeck serve writes to its log (a CI log) about a request's URL holds none of its
// secrets. The miss line named the path as the client sent it, so a key in it (a gateway's
// `/v1/<key>/…`, Gemini's `;key=`) was printed whole while the tape and the miss masked it; and a
// request sent to it as to a forward proxy (HTTP_PROXY) had its whole URL, `?key=AIza…` included,
// quoted in the log and in the answer the client's test prints.
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-log-secrets-'));
const OPENAI_KEY = 'sk-proj-Q7fK2mP9xL4vR8tN3wB6yZ1cH5jD0gS2aE7uI9oF';
const GOOGLE_KEY = 'AIzaSyD4kP9mX2vL7qR3tN8wB5yZ1cH6jF0gS4a';
let upstream: Server;
let upstreamUrl = '';

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Sends raw bytes to a port and reads all it answers until it closes. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (c) => (out += c.toString('utf8')));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

describe("tapedeck serve's log", () => {
  it('names a missed request by its path with the keys in it masked', async () => {
    const tape = join(dir, 'miss.tape');
    const rec = await startProxy({ upstream: upstreamUrl, tape, mode: 'record', port: 0, onWarning: () => {} });
    await (await fetch(`${rec.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat })).text();
    await rec.close();
    const lines: string[] = [];
    const rep = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {}, onMiss: (line) => lines.push(line) });
    try {
      for (const path of [`/v1/${OPENAI_KEY}/chat/completions`, `/v1beta/models/gemini-2.0-flash:generateContent;key=${GOOGLE_KEY}`]) {
        const res = await fetch(`${rep.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat });
        expect(res.status).toBe(400);
        await res.text();
      }
    } finally {
      await rep.close();
    }
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^POST \/v1\/\[REDACTED[^\]]*\]\/chat\/completions: /);
    expect(lines[1]).toMatch(/^POST \/v1beta\/models\/gemini-2\.0-flash:generateContent;key=\[REDACTED[^\]]*\]: /);
    for (const l of lines) {
      expect(l).not.toContain(OPENAI_KEY.slice(8, 24));
      expect(l).not.toContain(GOOGLE_KEY.slice(4, 20));
    }
  });

  it('quotes a forward-proxy request without the keys in its URL, in the log and in the answer', async () => {
    const warnings: string[] = [];
    const proxy = await startProxy({ tape: join(dir, 'fwd.tape'), mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      const body = '{"contents":[]}';
      const answer = await raw(
        proxy.port,
        `POST http://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent?alt=json&key=${GOOGLE_KEY} HTTP/1.1\r\nHost: generativelanguage.googleapis.com\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      const answer2 = await raw(proxy.port, `GET http://gateway.example/v1/${OPENAI_KEY}/models HTTP/1.1\r\nHost: gateway.example\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('E_FORWARD_PROXY');
      expect(answer).toContain('generateContent?alt=json&key=%5BREDACTED%5D');
      const log = warnings.join('\n');
      expect(log).toContain('refused POST http://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent?alt=json&key=%5BREDACTED%5D with 400 E_FORWARD_PROXY');
      expect(log).toMatch(/refused GET http:\/\/gateway\.example\/v1\/\[REDACTED[^\]]*\]\/models with 400/);
      for (const text of [answer, answer2, log]) {
        expect(text).not.toContain(GOOGLE_KEY.slice(4, 20));
        expect(text).not.toContain(OPENAI_KEY.slice(8, 24));
      }
    } finally {
      await proxy.close();
    }
  });
});
