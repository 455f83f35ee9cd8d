// A user trial: a call header given to generateText (`headers: { 'x-gateway-token': … }`, how
// gateways take their credentials) reached the tape in clear through replayCacheMiddleware, even
// with ReplayCache's `redact: { headers: [...] }`: the header rules (a name ending in `token`, the
// credential headers, redact.headers) applied to HTTP headers only, and a ReplayCache request's
// `headers` member was judged by the field rules alone. createFetch masked the same header.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayCache, readTape, replayCacheMiddleware } from '../../src/store/index.ts';
import { redactor } from '../../src/store/redact.ts';
import { redactRequest } from '../../src/store/request-redact.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ai-sdk-headers-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

const TOKEN = 'gw_live_7Hq2LmN9pXvR4sT8wYz1';
const KEYED = /^\[REDACTED:[0-9a-f]{16}\]$/;

const modelOn = (cache: ReplayCache) =>
  wrapLanguageModel({ model: createOpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test-not-real' }).chat('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });

/** The stored request headers of each recording on a tape. */
async function storedHeaders(tape: string): Promise<Record<string, unknown>[]> {
  const { records } = await readTape(tape);
  return records.map((r) => ((r.value as { request: { headers?: Record<string, unknown> } }).request.headers ?? {}));
}

describe('replayCacheMiddleware: call headers on the tape', () => {
  it('masks a gateway token given as a call header (keyed), and the call replays with it', async () => {
    const tape = join(dir, 'gateway.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    const live = await generateText({ model: modelOn(rec), prompt: 'hi', headers: { 'x-gateway-token': TOKEN } });
    await rec.close();
    expect(readFileSync(tape).includes(TOKEN)).toBe(false);
    const [h] = await storedHeaders(tape);
    expect(h!['x-gateway-token']).toMatch(KEYED);

    const calls = up.calls.length;
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect((await generateText({ model: modelOn(cache), prompt: 'hi', headers: { 'x-gateway-token': TOKEN } })).text).toBe(live.text);
    } finally {
      await cache.close();
    }
    expect(up.calls.length).toBe(calls);
  });

  it('masks the headers createFetch masks (credentials plainly, names ending in token keyed) and the names redact.headers adds', async () => {
    const tape = join(dir, 'many.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record', redact: { headers: ['x-tenant-ref'] } });
    await generateText({
      model: modelOn(rec),
      prompt: 'hi',
      headers: { Authorization: 'Bearer LEAKEDPLAIN1234567890abcdef', 'x-custom-token': 'LEAKEDCUSTOM-9f8e7d6c5b4a39281706', 'x-tenant-ref': 'tenant-4711-blue', 'x-trace': 'plain-trace-1' },
    });
    await rec.close();
    const bytes = readFileSync(tape);
    for (const secret of ['LEAKEDPLAIN1234567890abcdef', 'LEAKEDCUSTOM-9f8e7d6c5b4a39281706', 'tenant-4711-blue']) expect(bytes.includes(secret)).toBe(false);
    const [h] = await storedHeaders(tape);
    // The AI SDK sends names in lowercase (and adds its user-agent).
    expect(h).toMatchObject({ authorization: '[REDACTED]', 'x-custom-token': expect.stringMatching(KEYED), 'x-tenant-ref': expect.stringMatching(KEYED), 'x-trace': 'plain-trace-1' });
  });

  it('keeps masks keyed: one value one mask, two values two', async () => {
    const tape = join(dir, 'keyed.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    for (const t of [TOKEN, TOKEN, 'gw_live_OTHERtoken9876543210']) await generateText({ model: modelOn(rec), prompt: `ask ${t === TOKEN ? 1 : 2}`, headers: { 'x-gateway-token': t } });
    await rec.close();
    const masks = (await storedHeaders(tape)).map((h) => h['x-gateway-token']);
    expect(masks).toHaveLength(3);
    expect(masks[0]).toMatch(KEYED);
    expect(masks[1]).toBe(masks[0]);
    expect(masks[2]).toMatch(KEYED);
    expect(masks[2]).not.toBe(masks[0]);
  });
});

describe('ReplayCache: a headers member of your own request', () => {
  it('is redacted as headers on put, and the request is still served', async () => {
    const tape = join(dir, 'own.tape');
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], headers: { 'x-gateway-token': TOKEN, 'x-request-source': 'unit' } };
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    await rec.put(request, { answer: 42 });
    await rec.close();
    expect(readFileSync(tape).includes(TOKEN)).toBe(false);
    expect((await storedHeaders(tape))[0]).toEqual({ 'x-gateway-token': expect.stringMatching(KEYED), 'x-request-source': 'unit' });
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await cache.get(request)).toEqual({ answer: 42 });
    } finally {
      await cache.close();
    }
  });
});

describe('redactRequest', () => {
  const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });

  it('judges a top-level headers map by the header rules too; the rest of the request as value() does', () => {
    const request = { model: 'gpt-4o', prompt: 'hi', client_secret: 'shh-1234', headers: { 'x-gateway-token': TOKEN, 'x-api-key': 'sk-ant-whatever', accept: 'application/json', 'x-list-token': ['a-1', 'b-2'] } };
    const out = redactRequest(r, request);
    expect(out.client_secret).toMatch(KEYED);
    expect(out.headers['x-gateway-token']).toBe(r.mask(TOKEN));
    expect(out.headers['x-api-key']).toBe('[REDACTED]');
    expect(out.headers.accept).toBe('application/json');
    expect(out.headers['x-list-token']).toEqual([r.mask('a-1'), r.mask('b-2')]);
    // The caller's request is not changed.
    expect(request.headers['x-gateway-token']).toBe(TOKEN);
    // value() alone: a member named headers deeper down, or anywhere in a proxy body, is not a header map.
    expect(r.value(request).headers['x-gateway-token']).toBe(TOKEN);
  });

  it('gives back the same request when nothing is masked, with or without headers; a headers member that is no header map is left to value()', () => {
    const plain = { model: 'gpt-4o', prompt: 'hi' };
    expect(redactRequest(r, plain)).toBe(plain);
    const withHeaders = { model: 'gpt-4o', prompt: 'hi', headers: { accept: 'application/json', 'x-n': 3, 'x-unset': undefined } };
    expect(redactRequest(r, withHeaders)).toBe(withHeaders);
    const notHeaders = { model: 'gpt-4o', headers: { 'x-gateway-token': { nested: TOKEN } } };
    expect(redactRequest(r, notHeaders)).toBe(notHeaders);
    expect(redactRequest(redactor({ keepSecrets: true }), { headers: { 'x-gateway-token': TOKEN } }).headers['x-gateway-token']).toBe(TOKEN);
  });
});
