// Anthropic's `anthropic-beta` header turns features on (longer output, interleaved thinking, a
// larger context): the same body sent with other betas gets another answer. Recordings are filed
// apart by it, so a call with betas never replays the recording made without them, and the miss
// names the header. Driven by the real Anthropic SDK against a loopback fake.
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { keyedHeaders, routeEndpoint } from '../../src/providers/index.ts';
import { headersOnOtherRoute } from '../../src/proxy/other-route.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-beta-'));
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const ARGS = { model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Say hi' }] };
const BETAS = ['output-128k-2025-02-19', 'interleaved-thinking-2025-05-14'];

/** The text of one call (with `betas`, through the SDK's beta client, which sends the header). */
async function say(fetchImpl: typeof fetch, betas?: string[], baseURL = upstream.url): Promise<{ text: string; match: string | null }> {
  const client = new Anthropic({ apiKey: 'k', baseURL, fetch: fetchImpl, maxRetries: 0 });
  const r = betas ? await client.beta.messages.create({ ...ARGS, betas }).withResponse() : await client.messages.create(ARGS).withResponse();
  const block = r.data.content[0];
  return { text: block?.type === 'text' ? block.text : '', match: r.response.headers.get('x-tapedeck-match') };
}

/** The error a call that must miss raises. */
async function missOf(fetchImpl: typeof fetch, betas?: string[], baseURL = upstream.url): Promise<Error & { status?: number }> {
  try {
    const got = await say(fetchImpl, betas, baseURL);
    throw new Error(`served ${JSON.stringify(got)} where a miss was expected`);
  } catch (e) {
    if (!(e instanceof Anthropic.APIError)) throw e;
    return e;
  }
}

describe('anthropic-beta files recordings apart', () => {
  const tape = join(dir, 'beta.tape');

  it('a call with betas misses the recording made without them, and the miss names the header', async () => {
    const rec = createFetch({ tape, mode: 'record' });
    let plain;
    try {
      plain = await say(rec);
    } finally {
      await rec.close();
    }
    expect(plain.text).toMatch(/^Echo \d+: Say hi$/);

    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await say(play)).toEqual({ ...plain, match: 'exact' });
      const miss = await missOf(play, BETAS);
      expect(miss.message).toContain('anthropic-beta');
      expect(miss.message).toContain('interleaved-thinking-2025-05-14');
      expect(miss.message).toMatch(/without it/);
    } finally {
      await play.close();
    }
  });

  it('update mode records the beta call beside the plain one; each replays its own answer, whatever order the betas are listed in', async () => {
    const up = createFetch({ tape, mode: 'update' });
    let beta;
    try {
      beta = await say(up, BETAS);
    } finally {
      await up.close();
    }
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const plain = await say(play);
      expect(beta.text).not.toBe(plain.text);
      expect((await say(play, BETAS)).text).toBe(beta.text);
      expect((await say(play, [...BETAS].reverse())).text).toBe(beta.text);
      const other = await missOf(play, ['context-1m-2025-08-07']);
      expect(other.message).toContain('context-1m-2025-08-07');
      expect(other.message).toContain('interleaved-thinking-2025-05-14');
      expect((await say(play)).text).toBe(plain.text);
    } finally {
      await play.close();
    }
  });

  it('the proxy files them apart too', async () => {
    const proxyTape = join(dir, 'proxy.tape');
    const recording = await startProxy({ tape: proxyTape, mode: 'record', upstream: upstream.url, port: 0 });
    let plain, beta;
    try {
      plain = await say(fetch, undefined, recording.url);
      beta = await say(fetch, BETAS, recording.url);
    } finally {
      await recording.close();
    }
    expect(beta.text).not.toBe(plain.text);
    const replaying = await startProxy({ tape: proxyTape, mode: 'replay', upstream: upstream.url, port: 0 });
    try {
      expect((await say(fetch, BETAS, replaying.url)).text).toBe(beta.text);
      expect((await say(fetch, undefined, replaying.url)).text).toBe(plain.text);
      expect((await missOf(fetch, ['context-1m-2025-08-07'], replaying.url)).message).toContain('anthropic-beta');
    } finally {
      await replaying.close();
    }
  });
});

describe('the miss names the route that holds the same request', () => {
  it('sent with betas that were never recorded: the plain recording of the same body is named, not an unrelated call with other betas', async () => {
    const tape = join(dir, 'holds.tape');
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await say(rec);
      // Another body, recorded with betas: like with like, but not this request.
      const client = new Anthropic({ apiKey: 'k', baseURL: upstream.url, fetch: rec, maxRetries: 0 });
      await client.beta.messages.create({ ...ARGS, messages: [{ role: 'user', content: 'Something else' }], betas: BETAS });
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const miss = await missOf(play, ['context-1m-2025-08-07']);
      expect(miss.message).toContain('anthropic-beta: context-1m-2025-08-07 sent; recorded without it for POST /v1/messages');
    } finally {
      await play.close();
    }
  });
});

describe('a recording filed before the header kept recordings apart', () => {
  it('is not served to a call sent without its betas: a miss that says why', async () => {
    const made = join(dir, 'made.tape');
    const rec = createFetch({ tape: made, mode: 'record' });
    let beta;
    try {
      beta = await say(rec, BETAS);
    } finally {
      await rec.close();
    }
    // The same record as an older tapedeck filed it: under the plain route, its header stored.
    const old = join(dir, 'old.tape');
    const { records } = await readTape(made);
    expect(records).toHaveLength(1);
    const value = records[0]!.value as { route: string; request: { headers: Record<string, string> } };
    expect(value.route).toBe('POST /v1/messages (anthropic-beta: interleaved-thinking-2025-05-14,output-128k-2025-02-19)');
    expect(value.request.headers['anthropic-beta']).toBe(BETAS.join(','));
    await createTape(old);
    await appendRecords(old, [{ ...value, route: 'POST /v1/messages' }]);

    const play = createFetch({ tape: old, mode: 'replay' });
    try {
      const miss = await missOf(play);
      expect(miss.message).toContain('recorded with anthropic-beta: interleaved-thinking-2025-05-14,output-128k-2025-02-19, sent without it');
      // With its betas it is not found under the plain route either: a miss, never the answer of a guess.
      expect((await missOf(play, BETAS)).message).toContain('anthropic-beta');
      expect(beta.text).toMatch(/^Echo \d+: Say hi$/);
    } finally {
      await play.close();
    }
  });
});

describe('keyedHeaders and the miss sentence', () => {
  it('adds the header values of an Anthropic route, sorted and deduplicated, and nothing elsewhere', () => {
    const req = { method: 'POST', url: '/v1/messages' };
    expect(keyedHeaders(req, { 'anthropic-beta': ' b ,a,b,, ' })).toBe(' (anthropic-beta: a,b)');
    expect(keyedHeaders(req, { 'anthropic-beta': ['b', 'a'] })).toBe(' (anthropic-beta: a,b)');
    expect(keyedHeaders(req, { 'anthropic-beta': ' , ' })).toBe('');
    expect(keyedHeaders(req, {})).toBe('');
    expect(keyedHeaders({ method: 'POST', url: '/v1/messages/count_tokens' }, { 'anthropic-beta': 'x' })).toBe(' (anthropic-beta: x)');
    // OpenAI has no such header: its route is the URL alone.
    expect(keyedHeaders({ method: 'POST', url: '/v1/chat/completions' }, { 'anthropic-beta': 'x' })).toBe('');
  });

  it('routeEndpoint takes the method and URL back out of a route name', () => {
    expect(routeEndpoint('POST /v1/messages (anthropic-beta: a,b)')).toEqual({ method: 'POST', url: '/v1/messages' });
    expect(routeEndpoint('GET /v1/models?limit=2')).toEqual({ method: 'GET', url: '/v1/models?limit=2' });
  });

  it('names the values sent and those recorded, plain recordings last', () => {
    const routes = new Map([
      ['POST /v1/messages', { count: 2 }],
      ['POST /v1/messages (anthropic-beta: b)', { count: 1 }],
      ['POST /v1/messagesX (anthropic-beta: c)', { count: 1 }],
      ['POST /v1/messages (anthropic-beta: d)', { count: 0 }],
    ]);
    expect(headersOnOtherRoute('POST /v1/messages (anthropic-beta: a)', routes)).toBe('anthropic-beta: a sent; recorded with b for POST /v1/messages');
    expect(headersOnOtherRoute('POST /v1/messages (anthropic-beta: a)', new Map([['POST /v1/messages', { count: 1 }]]))).toBe('anthropic-beta: a sent; recorded without it for POST /v1/messages');
    expect(headersOnOtherRoute('POST /v1/messages', new Map([['POST /v1/messages (anthropic-beta: b)', { count: 1 }]]))).toBe('no anthropic-beta sent; recorded with anthropic-beta: b for POST /v1/messages');
    expect(headersOnOtherRoute('POST /v1/messages (anthropic-beta: a)', new Map([['POST /v1/messagesX', { count: 1 }]]))).toBeUndefined();
  });
});
