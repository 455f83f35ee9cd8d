// End to end on a real Redis: two `tapedeck serve` processes share one store. One records through
// the official OpenAI SDK against a local fake provider; the provider stops; the other replays
// the same answers. On a single server and on a 3-master cluster; then Redis is killed mid-run.
import OpenAI from 'openai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { pullTape } from '../../src/store/redis-transfer.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { startRedis } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster } from './setup.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-proj-' + 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7cD0eF';

interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop: () => Promise<void>;
}

const running = new Set<Served>();
afterEach(async () => {
  for (const s of running) await s.stop();
});

/** Starts `tapedeck serve` and resolves once it says where it listens. */
function serve(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        const s: Served = {
          child,
          url: m[1]!,
          output: () => out,
          stop: async () => {
            running.delete(s);
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        };
        running.add(s);
        resolve(s);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`tapedeck serve exited: ${out}`)));
  });
}

const client = (base: string) => new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });

async function script(c: OpenAI) {
  const a = await c.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello from the fleet' }] });
  const b = await c.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello from the fleet' }] });
  const stream = await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
  return { first: a.choices[0]!.message.content, repeat: b.choices[0]!.message.content, ids: [a.id, b.id], streamed };
}

function fleet(label: string, server: () => { url: string }) {
  it.skipIf(!existsSync(CLI))(`${label}: one proxy records through the OpenAI SDK, another replays it with the provider gone`, async () => {
    const store = `${server().url}?namespace=${freshNamespace('fleet')}`;
    const up = await startUpstream();
    // The replaying proxy starts first, on an empty store: it learns of the recordings the
    // other one makes later by asking Redis on a miss.
    const replayer = await serve(['--store', store]);
    const recorder = await serve(['--store', store, '--mode', 'record', '--upstream', up.url]);
    const live = await script(client(recorder.url));
    expect(up.calls.length).toBe(3);
    // Each call of the repeat got its own answer from the provider (ordered repeats).
    expect(live.ids[0]).not.toBe(live.ids[1]);
    await up.close();
    const replayed = await script(client(replayer.url));
    expect(replayed).toEqual(live);
    // A proxy started after the recording loads it all at start.
    const late = await serve(['--store', store]);
    expect(await script(client(late.url))).toEqual(live);
    // The key was forwarded upstream, never stored.
    await recorder.stop();
    const tape = join(dir, `${label.replace(/\W/g, '')}-${Date.now()}.tape`);
    await pullTape(store, tape);
    const bytes = readFileSync(tape);
    expect(bytes.includes(Buffer.from(KEY))).toBe(false);
    expect((await readTape(tape)).records.filter((r) => (r.value as { kind?: string }).kind === 'http')).toHaveLength(3);
  });
}

redisDescribe('tapedeck serve --store redis://, single server', () => {
  const redis = useRedis();
  fleet('single server', () => redis.current);

  it.skipIf(!existsSync(CLI))('Redis down at start: serve exits with E_STORE_UNAVAILABLE, the URL masked, and how to fix it', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--store', 'redis://app:s3cret-pw@127.0.0.1:1/0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (out += c));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(out).toContain('E_STORE_UNAVAILABLE');
    expect(out).toContain('redis://app:***@127.0.0.1:1/0');
    expect(out).toMatch(/redis-server --port 1/);
    expect(out).not.toContain('s3cret-pw');
  });

  it.skipIf(!existsSync(CLI))('a store URL given without --store: the argument error masks its password', () => {
    const r = spawnSync(process.execPath, [CLI, 'serve', 'redis://app:s3cret-pw@127.0.0.1:6379/0'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('redis://app:***@127.0.0.1:6379/0');
    expect(r.stderr).not.toContain('s3cret-pw');
  });
});

redisDescribe('tapedeck serve --store redis://, 3-master cluster', () => {
  const cluster = useRedisCluster();
  fleet('cluster', () => cluster.current);
});

redisDescribe('Redis killed mid-run', () => {
  it.skipIf(!existsSync(CLI))('replay keeps serving what it loaded; an answer that cannot be recorded is a 503 E_RECORD_FAILED (or, when asked, served marked unrecorded), nothing is recorded half', async () => {
    // Persistence on, so the server that comes back holds exactly what was acknowledged.
    const redis = await startRedis({ password: 'k1ll-pw', args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    const up = await startUpstream();
    try {
      const store = `${redis.url}?namespace=${freshNamespace('kill')}`;
      const recorder = await serve(['--store', store, '--mode', 'update', '--upstream', up.url]);
      const lenient = await serve(['--store', store, '--mode', 'update', '--upstream', up.url, '--on-record-failure', 'serve']);
      const c = client(recorder.url);
      const first = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'before the crash' }] });
      const replayer = await serve(['--store', store]);
      await redis.kill();
      // Replay answers from what it loaded at start: Redis is not on the replay path of a hit.
      const again = await client(replayer.url).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'before the crash' }] });
      expect(again.choices[0]!.message.content).toBe(first.choices[0]!.message.content);
      // A miss must ask Redis (another proxy may have recorded it): it fails with that error.
      const miss = await fetch(`${replayer.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'never recorded' }] }),
      });
      expect(miss.status).toBe(503);
      const body = (await miss.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('E_STORE_UNAVAILABLE');
      expect(body.error.message).toContain('redis://:***@127.0.0.1');
      expect(JSON.stringify(body)).not.toContain('k1ll-pw');
      // A new request in update mode: the provider answers, the record cannot be written; the
      // client gets a 503 E_RECORD_FAILED naming the store, never an answer that looks recorded.
      const during = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'during the crash' }] }).catch((e: unknown) => e);
      expect(during).toMatchObject({ status: 503 });
      const failed = (during as { error: { code: string; message: string } }).error;
      expect(failed.code).toBe('E_RECORD_FAILED');
      expect(failed.message).toContain('redis://:***@127.0.0.1');
      // Asked to serve such answers: the live answer, marked unrecorded, and counted.
      const served = await fetch(`${lenient.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'during the crash, served' }] }),
      });
      expect(served.status).toBe(200);
      expect(served.headers.get('x-tapedeck-recorded')).toBe('false');
      expect(served.headers.get('x-tapedeck-match')).toBe('recording');
      expect(((await served.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toContain('during the crash, served');
      const stats = (await (await fetch(`${lenient.url}/__tapedeck/stats`)).json()) as { unrecorded: number; appendFailures: number };
      expect(stats).toMatchObject({ unrecorded: 1, appendFailures: 1 });
      await lenient.stop();
      expect(lenient.output()).toMatch(/1 not recorded \(1 of them served anyway\)/);
      await redis.restart();
      const records = await RedisRecords.open(store);
      try {
        const all = await records.readAll();
        // Exactly the acknowledged record survived, whole; the one made while Redis was gone is absent.
        expect(all).toHaveLength(1);
      } finally {
        await records.close();
      }
      await recorder.stop();
      expect(recorder.output()).toContain('E_STORE_UNAVAILABLE');
      expect(recorder.output()).toContain('redis://:***@127.0.0.1');
      expect(recorder.output() + replayer.output()).not.toContain('k1ll-pw');
    } finally {
      await up.close().catch(() => {});
      await redis.stop();
    }
  });
});
