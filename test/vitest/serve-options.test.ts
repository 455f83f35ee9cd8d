// tape.serve() starts a proxy on the test's tape for clients that take no fetch (a child process,
// a realtime SDK). Before, it was given the tape, the mode and redaction only: a test whose tape
// options said hostMatch 'any' (or ignoreArgs, volatileText, match...) replayed through
// tape.fetch and missed through tape.serve(). Now the proxy gets the options the fetch gets.
// Recorded here for one loopback host (`localhost`), replayed through a proxy whose upstream is
// another (`127.0.0.1`): their names are compared (docs/matching.md, "Hosts").
import OpenAI from 'openai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { openTestTape, type TestTapeOptions } from '../../src/testing/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-serve-options-'));
const tape = join(dir, 'chat.tape');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = (client: OpenAI, temperature: number) =>
  client.chat.completions.create({ model: 'gpt-4o-mini', temperature, messages: [{ role: 'user', content: 'What is the capital of France?' }] }).then((r) => r.choices[0]!.message.content);

beforeAll(async () => {
  // A fake OpenAI API on `localhost`, gone once the tape is recorded.
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, 'localhost', r));
  const rec = createFetch({ tape, mode: 'record', summary: false });
  try {
    const client = new OpenAI({ baseURL: `http://localhost:${(server.address() as AddressInfo).port}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec });
    expect(await ask(client, 0)).toBe('Paris.');
  } finally {
    await rec.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

/** The recorded request, asked through the proxy of a test tape opened with `opts`, its upstream another host. */
async function throughServe(opts: Omit<TestTapeOptions, 'tape'>, temperature = 0): Promise<{ answer: string | null | Error; misses: number }> {
  const t = openTestTape({ tape, mode: 'replay', test: 'chat > asks', failOnMiss: false, ...opts });
  try {
    const { url } = await t.serve({ upstream: 'http://127.0.0.1:9', tls: false });
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const answer = await ask(client, temperature).catch((e: unknown) => e as Error);
    return { answer, misses: t.misses.length };
  } finally {
    await t.close();
  }
}

describe("tape.serve() takes the test tape's options", () => {
  it("hostMatch 'any': the recording of another host answers the proxy", async () => {
    expect(await throughServe({ hostMatch: 'any' })).toEqual({ answer: 'Paris.', misses: 0 });
  });

  it('without it the host is compared, and the request misses', async () => {
    const r = await throughServe({});
    expect(r.misses).toBe(1);
    expect(String((r.answer as Error).message)).toContain('recorded for http://localhost');
  });

  it('ignoreArgs: an ignored argument that differs still finds the recording', async () => {
    expect(await throughServe({ hostMatch: 'any', ignoreArgs: ['temperature'] }, 0.7)).toEqual({ answer: 'Paris.', misses: 0 });
    expect((await throughServe({ hostMatch: 'any' }, 0.7)).misses).toBe(1);
  });

  it('the chaos option: the proxy faults as the fetch does, until tape.chaos() asks for other faults', async () => {
    const t = openTestTape({ tape, mode: 'replay', test: 'chat > asks', failOnMiss: false, hostMatch: 'any', chaos: { faults: { 429: 1 }, attempts: 1 } });
    try {
      const first = await t.serve({ upstream: 'http://127.0.0.1:9', tls: false });
      const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
      expect(((await ask(client, 0).catch((e: unknown) => e)) as { status?: number }).status).toBe(429);
      t.chaos(undefined);
      const second = await t.serve({ upstream: 'http://127.0.0.1:9', tls: false });
      expect(await ask(new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), 0)).toBe('Paris.');
    } finally {
      await t.close();
    }
  });

  it('the same options through tape.fetch answer as through the proxy', async () => {
    const t = openTestTape({ tape, mode: 'replay', test: 'chat > asks', failOnMiss: false, hostMatch: 'any', ignoreArgs: ['temperature'] });
    try {
      const client = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
      expect(await ask(client, 0.7)).toBe('Paris.');
    } finally {
      await t.close();
    }
  });
});
