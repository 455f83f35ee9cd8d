// Gateways take their credentials in headers named `*-token` (`x-api-token`, `x-gateway-token`):
// such a header reached the tape in clear and `tapedeck scan` found nothing, although
// `x-auth-token` and `x-access-token` were masked. A bare `token` JSON member stays unmasked (a
// logprob token, a page cursor): the rule is for header names. Through createFetch with the real
// openai SDK; scan judges a tape recorded before the rule.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-token-headers-'));
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hi' }, logprobs: { content: [{ token: 'hi', logprob: 0 }] } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const HEADERS = { 'x-api-token': 'GW-TOKEN-5f2c8a9e7d3b1046', 'x-gateway-token': 'GW2-9a8b7c6d5e4f3021', 'X-Csrf-Token': 'CSRF-0a1b2c3d4e5f6789' };

describe('headers named *-token', () => {
  it('are masked on the tape; the call replays', async () => {
    const tape = join(dir, 'gw.tape');
    const client = (f: typeof fetch) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, fetch: f, defaultHeaders: HEADERS });
    const ask = async (f: typeof fetch) => (await client(f).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], logprobs: true })).choices[0]!;
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await ask(rec);
    } finally {
      await rec.close();
    }
    const bytes = readFileSync(tape);
    for (const v of Object.values(HEADERS)) expect(bytes.includes(Buffer.from(v))).toBe(false);
    const stored = (await readTape(tape)).records[0]!.value as { request: { headers: Record<string, string> } };
    expect(stored.request.headers['x-api-token']).toMatch(/^\[REDACTED:[0-9a-f]+\]$/);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      // The answer's logprob `token` members are no header: kept.
      expect((await ask(play)).logprobs?.content?.[0]?.token).toBe('hi');
    } finally {
      await play.close();
    }
  });

  it('redactor and scan: a header name ending in token is a secret; a body member named so is not', () => {
    const r = redactor();
    expect(r.isSecretHeader('x-gateway-token')).toBe(true);
    expect(r.headers({ 'x-api-token': HEADERS['x-api-token'] })['x-api-token']).not.toBe(HEADERS['x-api-token']);
    expect(r.isSecretField('next_page_token')).toBe(false);
    const found = secretsInValue({ request: { headers: { 'x-api-token': HEADERS['x-api-token'] }, body: { next_page_token: 'Zk9PqL2mX8vR4tY7wQ1e' } } });
    expect(found.map((f) => f.path)).toEqual(['$.request.headers["x-api-token"]']);
  });
});
