// jest on a shared Redis store (TAPEDECK_STORE=redis://…): the CommonJS bundle jest loads
// (dist/testing/jest.cjs) must load the node-redis client with require. jest's CommonJS runtime
// refuses a dynamic import() unless node runs with --experimental-vm-modules, and the store then
// failed every test with "npm install redis" though the client was installed. jest really runs
// (spawned) against a real redis-server and the fake provider; the recording lands in Redis.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from '../vitest/child.ts';
import { freshNamespace, redisDescribe, useRedis } from '../redis/setup.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('jest-redis-store');

const testFile = `const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
test('asks once', async () => {
  const res = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from jest' }] }),
  });
  expect(res.status).toBe(200);
});
`;

/** jest spawned on `project` with the setup file and reporter of the CommonJS bundles. */
function jest(project: string, env: Record<string, string>, extra: Record<string, unknown> = {}) {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_RUN_ID: _id, TAPEDECK_STORE: _s, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const config = JSON.stringify({ rootDir: project, transform: {}, setupFilesAfterEnv: [join(dist, 'jest.cjs')], reporters: ['default', join(dist, 'jest-reporter.cjs')], ...extra });
  return outputOf(spawn(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache'], { cwd: project, env: { ...base, ...env } }));
}

redisDescribe('jest on a Redis store', () => {
  const redis = useRedis();
  it('records into Redis, then replays from it with the provider gone', { timeout: 120_000 }, async () => {
    const project = join(suite.dir, 'redis');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'ask.test.js'), testFile);
    const store = `${redis.current.url}/0?namespace=${freshNamespace('jest')}`;
    const rec = await jest(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TAPEDECK_STORE: store });
    expect(rec.out).not.toContain('npm install redis');
    expect(rec.code, rec.out).toBe(0);
    expect(rec.out).toMatch(/1 Redis namespace on redis:\/\/[^,]+, 1 written, 1 recording added/);
    const replay = await jest(project, { UPSTREAM: 'http://127.0.0.1:9', TAPEDECK_MODE: 'replay', TAPEDECK_STORE: store, CI: '1' });
    expect(replay.code, replay.out).toBe(0);
    expect(replay.out).toMatch(/1 replayed, 0 misses/);
  });

  // A client that is installed but throws when loaded (here through jest's module map, as a
  // damaged install would): the error says why it failed, and not to install it.
  it('a client that fails to load is named with its own error, not "npm install redis"', { timeout: 120_000 }, async () => {
    const project = join(suite.dir, 'broken');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'ask.test.js'), testFile);
    writeFileSync(join(project, 'broken-redis.js'), "throw new Error('this copy of node-redis is damaged');\n");
    const store = `${redis.current.url}/0?namespace=${freshNamespace('jest-broken')}`;
    const r = await jest(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TAPEDECK_STORE: store }, { moduleNameMapper: { '^redis$': '<rootDir>/broken-redis.js' } });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain('(loading the Redis client): this copy of node-redis is damaged.');
    expect(r.out).toContain('is installed but failed to load');
    expect(r.out).not.toContain('needs the node-redis client: npm install redis');
  });
});
