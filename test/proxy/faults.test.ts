// Faults that must not take the process down or wedge it: a bad mode, a damaged tape, a hung
// upstream, a path that tries to leave the upstream's prefix. Real SDKs where users meet them.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

/** Unhandled rejections seen while a test runs (vitest would only report them after the file). */
let unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});
const settle = () => new Promise((r) => setTimeout(r, 20));

/** A fetch that counts the calls an SDK makes through it (retries included). */
function counted(f: typeof fetch): { fetch: typeof fetch; calls: () => number } {
  let n = 0;
  return {
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      n++;
      return f(input, init);
    }) as typeof fetch,
    calls: () => n,
  };
}

describe('createFetch faults', () => {
  it('a bad TAPEDECK_MODE throws E_MODE where the fetch is created', () => {
    const saved = process.env.TAPEDECK_MODE;
    process.env.TAPEDECK_MODE = 'recrod';
    try {
      expect(() => createFetch({ tape: tapePath() })).toThrow(expect.objectContaining({ code: 'E_MODE' }));
    } finally {
      if (saved === undefined) delete process.env.TAPEDECK_MODE;
      else process.env.TAPEDECK_MODE = saved;
    }
  });

  it('a damaged tape is an API error with its code from the first call: no retry, no "Connection error.", no unhandled rejection', async () => {
    const tape = tapePath();
    writeFileSync(tape, 'this file is not a tape at all, and no record frame hides in it\n');
    const tf = createFetch({ tape, mode: 'replay', onWarning: () => {} });
    await settle();
    const { fetch: f, calls } = counted(tf);
    // Default retry settings: a retried error would show up as 3 calls.
    const client = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test', fetch: f });
    const err = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).not.toBeInstanceOf(OpenAI.APIConnectionError);
    expect((err as Error).message).not.toMatch(/Connection error/);
    expect((err as { code?: string }).code).toBe('E_TAPE_CORRUPT');
    expect((err as Error).message).toContain(tape);
    expect(calls()).toBe(1);

    const { fetch: f2, calls: calls2 } = counted(tf);
    const claude = new Anthropic({ baseURL: 'http://127.0.0.1:9', apiKey: 'sk-ant-test', fetch: f2 });
    const err2 = await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(Anthropic.APIError);
    expect(err2).not.toBeInstanceOf(Anthropic.APIConnectionError);
    // The code where that SDK reads one (error.details.error_code); the message is tapedeck's own.
    expect((err2 as InstanceType<typeof Anthropic.APIError>).errorCode).toBe('E_TAPE_CORRUPT');
    expect((err2 as Error).message).toContain(tape);
    expect(calls2()).toBe(1);

    await expect(tf.ready).rejects.toMatchObject({ code: 'E_TAPE_CORRUPT' });
    await tf.close(); // nothing to write, and no error: the calls reported it
    await settle();
    expect(unhandled).toEqual([]);
  });
});

describe('tape faults on open', () => {
  it('a 0-byte file at the tape path does not block a record run: warned, treated as empty, recorded, replayed', async () => {
    const up = await startUpstream();
    const tape = tapePath();
    writeFileSync(tape, '');
    const warnings: string[] = [];
    try {
      const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, onWarning: (m) => warnings.push(m) });
      const r = await rec(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(r.status).toBe(200);
      const recorded = await r.text();
      await rec.close();
      expect(warnings.join('\n')).toContain('0 bytes');
      const play = createFetch({ tape, mode: 'replay' });
      const again = await play(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(again.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await again.text()).toBe(recorded);
      await play.close();
    } finally {
      await up.close();
    }
  });
});

describe('request paths', () => {
  it('dot segments (plain, %2e-encoded, backslashes) never leave the upstream path prefix: 400 E_PROXY_PATH, nothing sent', async () => {
    const { request } = await import('node:http');
    const { startProxy } = await import('../../src/proxy/server.ts');
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: `${up.url}/api/openai/v1`, mode: 'passthrough', port: 0 });
    // node:http sends the path as given (fetch would resolve the dots on the client side).
    const get = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const r = request(`${proxy.url}${path}`, { method: 'GET', path }, (res) => {
          let b = '';
          res.on('data', (c: Buffer) => (b += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
        });
        r.on('error', reject);
        r.end();
      });
    try {
      for (const path of ['/v1/../../../../admin/keys', '/v1/%2e%2e/%2E%2E/%2e%2e/%2e%2e/admin/keys', '/v1\\..\\..\\..\\..\\admin\\keys', '/v1/.%2e/.%2e/..%2f..%2fadmin/keys', '/../admin']) {
        const r = await get(path);
        expect(r.status, path).toBe(400);
        expect(r.body, path).toContain('E_PROXY_PATH');
      }
      expect(up.calls.filter((c) => !c.url.startsWith('/api/openai/v1/'))).toEqual([]);
      expect(up.calls).toHaveLength(0);
      // Dots that stay inside the prefix are resolved and forwarded.
      const ok = await get('/v1/./x/../models');
      expect(ok.body).not.toContain('E_PROXY_PATH'); // the fake provider's own answer
      expect(up.calls.map((c) => c.url)).toEqual(['/api/openai/v1/v1/models']);
    } finally {
      await proxy.close();
      await up.close();
    }
  });
});
