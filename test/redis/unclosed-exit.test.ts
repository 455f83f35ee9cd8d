// A script that opens a ReplayCache on Redis and never closes it exits, as the same script on a
// tape file does. Before, the client's connection held the process open forever (a CI job or a
// one-off script hung until its timeout), in replay mode too, where the cache reads everything
// at open and asks Redis nothing more. The connection is held only while a command is in
// flight: a put made from a callback and not awaited is still stored before the process ends,
// and an awaited close() still returns. On a Redis Cluster the same holds for the node clients
// the cluster client connects (it has no socket of its own), which kept the process alive.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster } from './setup.ts';

const store = join(import.meta.dirname, '../../dist/store/index.js');

/** Runs a module script in a child; what it printed, its exit code and how long it took. */
function run(script: string): Promise<{ out: string; code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', `import { ReplayCache } from ${JSON.stringify(store)};\n${script}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Longer than any exit should take: a child still running then is the hang.
      timeout: 20_000,
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ out, code, signal, ms: Date.now() - started }));
  });
}

const ask = (text: string) => `{ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ${JSON.stringify(text)} }] }`;

redisDescribe('a Redis-backed ReplayCache left open', () => {
  const redis = useRedis();

  it('lets the process exit once idle, after storing a put nobody awaited; replay exits too, and close() still returns', async () => {
    const url = `${redis.current.url}/0?namespace=${freshNamespace('unclosed')}`;
    const recorded = await run(`
      const cache = await ReplayCache.open(${JSON.stringify(url)}, { mode: 'update' });
      if ((await cache.get(${ask('first')})) === undefined) await cache.put(${ask('first')}, 'answer one');
      // A put from a callback (an upstream response's 'end'), not awaited by anything.
      if ((await cache.get(${ask('late')})) === undefined) setTimeout(() => void cache.put(${ask('late')}, 'answer two'), 50);
      console.log('script done');
    `);
    expect(recorded.signal, recorded.out).toBeNull();
    expect(recorded.code, recorded.out).toBe(0);
    expect(recorded.out).toContain('script done');

    const replayed = await run(`
      const cache = await ReplayCache.open(${JSON.stringify(url)}, { mode: 'replay' });
      console.log(JSON.stringify([await cache.get(${ask('first')}), await cache.get(${ask('late')})]));
    `);
    expect(replayed.signal, replayed.out).toBeNull();
    expect(replayed.code, replayed.out).toBe(0);
    expect(replayed.out).toContain('["answer one","answer two"]');
    expect(replayed.ms).toBeLessThan(15_000);

    const closed = await run(`
      const cache = await ReplayCache.open(${JSON.stringify(url)}, { mode: 'replay' });
      await cache.close();
      console.log('closed', cache.closed);
    `);
    expect(closed.code, closed.out).toBe(0);
    expect(closed.out).toContain('closed true');
  }, 90_000);
});

redisDescribe('a ReplayCache on a Redis Cluster left open', () => {
  const cluster = useRedisCluster();

  it('lets the process exit once idle, with puts spread over the masters stored first', async () => {
    const url = `${cluster.current.url}?namespace=${freshNamespace('unclosed-cluster')}`;
    const asks = ['one', 'two', 'three', 'four', 'five', 'six'];
    const recorded = await run(`
      const cache = await ReplayCache.open(${JSON.stringify(url)}, { mode: 'update' });
      for (const a of ${JSON.stringify(asks)}) {
        const req = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: a }] };
        if ((await cache.get(req)) === undefined) await cache.put(req, 'answer ' + a);
      }
      setTimeout(() => void cache.put(${ask('late')}, 'answer late'), 50);
      console.log('script done');
    `);
    expect(recorded.signal, recorded.out).toBeNull();
    expect(recorded.code, recorded.out).toBe(0);
    expect(recorded.out).toContain('script done');

    const replayed = await run(`
      const cache = await ReplayCache.open(${JSON.stringify(url)}, { mode: 'replay' });
      const got = [];
      for (const a of ${JSON.stringify([...asks, 'late'])}) got.push(await cache.get({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: a }] }));
      console.log(JSON.stringify(got));
    `);
    expect(replayed.signal, replayed.out).toBeNull();
    expect(replayed.code, replayed.out).toBe(0);
    expect(replayed.out).toContain(JSON.stringify([...asks, 'late'].map((a) => `answer ${a}`)));
  }, 120_000);
});
