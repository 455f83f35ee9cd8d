// The node-redis versions the Redis store works with. The optional peer range asked for
// node-redis 6, so `npm i llm-tapedeck` failed (ERESOLVE) in a project on node-redis 5, which
// works; and node-redis 4, which has no RESP type mapping, failed the store with a bare
// TypeError ("Cannot read properties of undefined (reading 'BLOB_STRING')"). The real clients
// (installed as the aliases redis5 and redis4) stand in for the `redis` package the store loads,
// against a real redis-server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { freshNamespace, redisDescribe, rejectedWith, useRedis } from '../redis/setup.ts';

const root = join(import.meta.dirname, '..', '..');

/** The store's modules loaded afresh, with `alias` (an installed node-redis) as the `redis` package. */
async function withClient(alias: 'redis4' | 'redis5') {
  vi.resetModules();
  vi.doMock('redis', () => import(alias));
  vi.doMock('redis/package.json', () => import(`${alias}/package.json`, { with: { type: 'json' } }));
  return (await import('../../src/store/replay-cache.ts')).ReplayCache;
}

const versionOf = (alias: string): string => (JSON.parse(readFileSync(join(root, 'node_modules', alias, 'package.json'), 'utf8')) as { version: string }).version;

it('the optional peer range of redis admits node-redis 5 and 6', async () => {
  // npm's own range check, as npm install runs it.
  const semver = (await import(join(root, 'node_modules', 'semver', 'index.js'))) as { satisfies(v: string, r: string): boolean };
  const range = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies.redis!;
  expect(semver.satisfies(versionOf('redis5'), range)).toBe(true);
  expect(semver.satisfies(versionOf('redis'), range)).toBe(true);
  expect(semver.satisfies(versionOf('redis4'), range)).toBe(false);
});

redisDescribe('the Redis store with older node-redis clients', () => {
  const redis = useRedis();

  it('node-redis 5: records and replays', async () => {
    const ReplayCache = await withClient('redis5');
    const store = `${redis.current.url}?namespace=${freshNamespace('redis5')}`;
    const req = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };
    const w = await ReplayCache.open(store, { mode: 'record' });
    await w.put(req, { text: 'from node-redis 5' });
    await w.close();
    const r = await ReplayCache.open(store, { mode: 'replay' });
    expect(await r.get(req)).toEqual({ text: 'from node-redis 5' });
    await r.close();
  });

  it('node-redis 4: E_STORE_UNAVAILABLE naming the version found and the ones needed', async () => {
    const ReplayCache = await withClient('redis4');
    const store = `${redis.current.url}?namespace=${freshNamespace('redis4')}`;
    const e = await rejectedWith(ReplayCache.open(store, { mode: 'record' }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.message).toContain(`node-redis ${versionOf('redis4')}`);
    expect(e.message).toMatch(/node-redis 5 or 6/);
    expect(e.hint).toContain('npm install redis@6');
  });
});
