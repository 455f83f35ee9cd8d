// A record run whose store goes away before it closes: its new recordings are stored, but the
// older ones they re-record stay and replay serves those first. The failure must say so and how
// to put it right (bring Redis back, record again), from createFetch and from tapedeck serve.
import OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { startRedis } from './harness.mjs';
import { freshNamespace, redisDescribe } from './setup.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const ASK = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello again' }] };

/** One record run through createFetch: the answer it recorded; the fetch is left open. */
async function recordOnce(store: string, up: Upstream) {
  const fetch = createFetch({ store, mode: 'record' });
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch, maxRetries: 0 });
  const answer = (await client.chat.completions.create(ASK)).choices[0]!.message.content;
  return { fetch, answer };
}

redisDescribe('a record run whose Redis is gone when it closes', () => {
  it('createFetch: close rejects with the store code, says the older recordings stay and are served first, and how to fix it', async () => {
    const redis = await startRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    const up = await startUpstream();
    try {
      const store = `${redis.url}?namespace=${freshNamespace('close')}`;
      const first = await recordOnce(store, up);
      await first.fetch.close();
      const second = await recordOnce(store, up);
      expect(second.answer).not.toBe(first.answer);
      await redis.kill();
      const err = await second.fetch.close().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TapedeckError);
      const e = err as TapedeckError;
      expect(e.code).toBe('E_STORE_UNAVAILABLE');
      expect(e.message).toContain('Closing the record run: its new recordings are stored, but the 1 older recording(s) of the requests it re-recorded could not be removed, so replay serves those older ones first');
      expect(e.message).toContain('is unavailable');
      expect(e.hint).toMatch(/^Start Redis there .* Then record again: a record run replaces the older recordings and these alike\.$/);
      // What the message says is what happens: back up, a replay serves the older answer first.
      await redis.restart();
      const replay = createFetch({ store, mode: 'replay' });
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch: replay, maxRetries: 0 });
      expect((await client.chat.completions.create(ASK)).choices[0]!.message.content).toBe(first.answer);
      await replay.close();
    } finally {
      await up.close().catch(() => {});
      await redis.stop();
    }
  });

  it.skipIf(!existsSync(CLI))('tapedeck serve: the shutdown failure is printed with its code and a hint line, and exits 1', async () => {
    const redis = await startRedis({ password: 'cl0se-pw' });
    const up = await startUpstream();
    try {
      const store = `${redis.url}?namespace=${freshNamespace('serve-close')}`;
      await (await recordOnce(store, up)).fetch.close();
      const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--store', store, '--mode', 'record', '--upstream', up.url], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      const url = await new Promise<string>((resolve, reject) => {
        const onData = (c: Buffer) => {
          out += c.toString();
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exited.then(() => reject(new Error(`tapedeck serve exited: ${out}`)));
      });
      await new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/v1`, maxRetries: 0 }).chat.completions.create(ASK);
      await redis.kill();
      child.kill('SIGTERM');
      expect(await exited).toBe(1);
      expect(out).toContain('tapedeck serve: shutdown failed: E_STORE_UNAVAILABLE Closing the record run: its new recordings are stored, but the 1 older recording(s)');
      expect(out).toMatch(/\nhint: Start Redis there .* Then record again: a record run replaces the older recordings and these alike\.\n/);
      expect(out).not.toContain('cl0se-pw');
    } finally {
      await up.close().catch(() => {});
      await redis.stop();
    }
  });
});
