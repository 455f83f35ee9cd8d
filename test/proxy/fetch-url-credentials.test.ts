// A base URL with a user name and password in it (`http://user:pass@gateway/v1`) given to an SDK
// with a tapedeck fetch: Node's fetch refuses such a URL, and its TypeError quotes it whole, so
// the password went into the SDK's error (its cause), the test's output and CI logs, in every
// mode. The call is answered instead with a 400 E_ARG that shows the URL with the password hidden
// and says to send credentials in a header; nothing is sent, and nothing printed holds it.
import { inspect } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const PASSWORD = 'Pw7xQz2LmN9vRt4K';

describe('a URL with a password given to a tapedeck fetch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-url-credentials-'));
  let server: Server;
  let port = 0;
  let sent = 0;

  beforeAll(async () => {
    // An OpenAI-shaped API; no call may reach it.
    server = createServer((req, res) => {
      // A redirect to a URL with a password (a misconfigured gateway): fetch refuses to follow it.
      if (req.url === '/go') {
        req.resume();
        res.writeHead(307, { location: `http://gw-user:${PASSWORD}@127.0.0.1:${port}/v1/models` });
        res.end();
        return;
      }
      sent++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((ok) => server.close(ok));
    rmSync(dir, { recursive: true, force: true });
  });

  for (const mode of ['record', 'replay', 'passthrough'] as const) {
    it(`answers 400 E_ARG without the password in ${mode} mode, called directly and through the OpenAI SDK`, async () => {
      const f = createFetch({ tape: join(dir, `${mode}.tape`), mode, missStatus: 404 });
      try {
        const url = `http://gw-user:${PASSWORD}@127.0.0.1:${port}/v1/chat/completions?key=AIzaSyDqk3mQ5rT8vW1xZ4bN7cF0hJ2lP6sU9yE`;
        const outcome = await f(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }) }).then(
          async (res) => ({ status: res.status, body: await res.text() }),
          (error: unknown) => ({ error }),
        );
        const shown = inspect(outcome, { depth: 20 });
        expect(shown).not.toContain(PASSWORD);
        expect(shown).not.toContain('AIzaSy');
        expect(outcome).toMatchObject({ status: 400 });
        const body = (outcome as { body: string }).body;
        expect(body).toContain('E_ARG');
        expect(body).toContain('gw-user:***@127.0.0.1');
        expect(body).toContain('header');

        const client = new OpenAI({ apiKey: 'sk-test', baseURL: `http://gw-user:${PASSWORD}@127.0.0.1:${port}/v1`, fetch: f, maxRetries: 0 });
        const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(inspect(err, { depth: 20 })).not.toContain(PASSWORD);
        expect(String((err as Error).message)).toContain('Authorization');
      } finally {
        await f.close();
      }
      expect(sent).toBe(0);
    });
  }

  it('fails a redirect to a URL with a password as fetch does, without the password', async () => {
    const tape = join(dir, 'redirect.tape');
    for (const mode of ['record', 'replay'] as const) {
      const f = createFetch({ tape, mode });
      try {
        const err = await f(`http://127.0.0.1:${port}/go`).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, mode).toBeInstanceOf(TypeError);
        expect(inspect(err, { depth: 20 }), mode).not.toContain(PASSWORD);
      } finally {
        await f.close();
      }
    }
    expect(sent).toBe(0);
  });
});
