// A miss through a test's tape.serve() proxy is what the developer reads first (the SDK raises
// it in the failing test), so it must name the command that records this test, as a miss
// through tape.fetch does. Before, the proxy's own wording was used: "re-record: restart
// tapedeck serve with --mode record", a server the test never ran.
import OpenAI from 'openai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { openTestTape } from '../../src/testing/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-serve-miss-command-'));
const tape = join(dir, 'chat.tape');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const COMMAND = "TAPEDECK_MODE=update npx vitest run test/chat.test.ts -t '^chat asks$'";

const ask = (client: OpenAI, content: string) =>
  client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).then((r) => r.choices[0]!.message.content);

beforeAll(async () => {
  // A fake OpenAI API, gone once the tape is recorded.
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const rec = createFetch({ tape, mode: 'record', summary: false });
  try {
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec });
    expect(await ask(client, 'What is the capital of France?')).toBe('Paris.');
  } finally {
    await rec.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

describe("a miss through tape.serve() names the test's record command", () => {
  it('as a miss through tape.fetch does, not `tapedeck serve --mode record`', async () => {
    const t = openTestTape({ tape, mode: 'replay', test: 'test/chat.test.ts > chat asks', recordCommand: COMMAND, failOnMiss: false });
    try {
      const { url } = await t.serve({ upstream: 'http://127.0.0.1:9', tls: false });
      const viaProxy = await ask(new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), 'What is the capital of Spain?').catch((e: unknown) => e as Error);
      const viaFetch = await ask(new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch }), 'What is the capital of Spain?').catch((e: unknown) => e as Error);
      expect(viaProxy).toBeInstanceOf(Error);
      expect(viaFetch).toBeInstanceOf(Error);
      const proxyMessage = (viaProxy as Error).message;
      expect(proxyMessage).toContain('tapedeck miss');
      expect(proxyMessage).not.toContain('tapedeck serve');
      expect(proxyMessage.toLowerCase()).toContain(`record it: ${COMMAND}`.toLowerCase());
      // The same words as the fetch's miss for the same request.
      expect(proxyMessage.replace(/^\d+ /, '')).toBe((viaFetch as Error).message.replace(/^\d+ /, ''));
    } finally {
      await t.close().catch(() => {});
    }
  });
});
