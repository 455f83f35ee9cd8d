// Shared set-up of the real-Redis suites: one redis-server (or a 3-master cluster) per test file,
// started before its tests and stopped after them, whether they pass or fail. Without
// redis-server the suite is skipped with one line saying what to install, unless
// TAPEDECK_REQUIRE_REDIS is set (.ci/run sets it): then the missing server is a failure.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { verifyRedisCommand } from '../../src/store/redis-cli.ts';
import { redisMissing, REQUIRE_ENV, startRedis, startRedisCluster } from './harness.mjs';

export type Server = Awaited<ReturnType<typeof startRedis>>;
export type Cluster = Awaited<ReturnType<typeof startRedisCluster>>;

const missing = redisMissing();
if (missing && process.env[REQUIRE_ENV]) {
  throw new Error(`${REQUIRE_ENV} is set but the Redis suites cannot run: ${missing}`);
}
let told = false;

/**
 * `describe` for a suite that needs redis-server: skipped (with one line saying why) when it is
 * not installed.
 *
 * @example
 * redisDescribe('redis records', () => { const redis = useRedis(); it(...) })
 */
export function redisDescribe(name: string, fn: () => void): void {
  if (missing) {
    if (!told) console.log(`[redis suites skipped] ${missing}`);
    told = true;
    describe.skip(name, fn);
    return;
  }
  describe(name, fn);
}

/** A single-node redis-server for this describe block; `.current` is set once it answers. */
export function useRedis(opts: { password?: string; user?: string; tls?: boolean } = {}): { current: Server } {
  const ref = {} as { current: Server };
  beforeAll(async () => {
    ref.current = await startRedis(opts);
  }, 60_000);
  afterAll(async () => {
    await ref.current?.stop();
  });
  return ref;
}

/** A 3-master cluster for this describe block. */
export function useRedisCluster(): { current: Cluster } {
  const ref = {} as { current: Cluster };
  beforeAll(async () => {
    ref.current = await startRedisCluster();
  }, 120_000);
  afterAll(async () => {
    await ref.current?.stop();
  });
  return ref;
}

let nsCounter = 0;
/** A namespace no other test in this process uses. */
export const freshNamespace = (label: string): string => `t${process.pid}-${label}-${nsCounter++}`;

/**
 * The TapedeckError `p` rejects with; the test fails if it resolves, or rejects with anything
 * else.
 *
 * @example
 * expect((await rejectedWith(store.load())).code).toBe('E_STORE_UNAVAILABLE')
 */
export async function rejectedWith(p: Promise<unknown>): Promise<TapedeckError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    return e as TapedeckError;
  }
  throw new Error('expected a TapedeckError');
}

/**
 * `tapedeck verify <url> --namespace NS` run in this process: its exit code and what it printed.
 *
 * @example
 * const { code, out } = await verifyNamespace(redis.current.url, namespace)
 */
export async function verifyNamespace(url: string, namespace: string): Promise<{ code: number; out: string }> {
  let out = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((c: string | Uint8Array) => ((out += String(c)), true)) as typeof process.stdout.write;
  try {
    return { code: await verifyRedisCommand([url, '--namespace', namespace]), out };
  } finally {
    process.stdout.write = write;
  }
}
