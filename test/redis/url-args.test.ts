// Redis-shaped arguments whose errors did not say what was wrong: a bad ?ttl= was found only at
// the first request (an HTTP 500 saying "NaN"), `tapedeck push --ttl 0` was refused while the
// ttlMs option took 0 as "forever", a Redis URL as pull's destination was written as a local
// path, a one-slash `redis:/host` given to verify or prune was a tape that did not exist, and a
// doubled ?namespace= was read as one of the two. Real redis-server; the CLI from dist.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { parseRedisUrl } from '../../src/store/backends/redis-connection.ts';
import { pullCommand, pushCommand } from '../../src/store/redis-cli.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { freshNamespace, redisDescribe, rejectedWith, useRedis } from './setup.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-args-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '../../dist/cli.js');
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: dir, timeout: 30_000 });

function caught(f: () => unknown): TapedeckError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    return e as TapedeckError;
  }
  throw new Error('expected a TapedeckError');
}

redisDescribe('Redis-shaped arguments', () => {
  const redis = useRedis();

  it('a bad ?ttl= is E_ARG where createFetch is made, naming what was typed; ?ttl=0 keeps records forever, as --ttl 0 does', async () => {
    for (const typed of ['abc', '-5', '']) {
      const e = caught(() => createFetch({ store: `${redis.current.url}/0?namespace=tq&ttl=${typed}`, mode: 'record' }));
      expect(e.code).toBe('E_ARG');
      expect(e.message).toContain(`?ttl= must be a number of seconds, 0 or more (0 keeps records forever), not ${JSON.stringify(typed)}`);
      expect(e.message).not.toContain('NaN');
    }
    // The option is named as given, not as a product in ms.
    const opt = await rejectedWith(RedisRecords.open(redis.current.url, { ttlMs: -5000 }));
    expect(opt.message).toContain('the ttlMs option is -5000');
    // One rule: 0 is "no TTL" in the URL, the option and push.
    const ns = freshNamespace('ttl0');
    const tape = join(dir, 'ttl0.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { text: 'there' });
    await cache.close();
    const out = process.stdout.write;
    process.stdout.write = () => true;
    try {
      expect(await pushCommand([tape, `${redis.current.url}/0?ttl=0`, '--namespace', ns, '--ttl', '0'])).toBe(0);
    } finally {
      process.stdout.write = out;
    }
    const store = await RedisRecords.open(`${redis.current.url}/0?ttl=0`, { namespace: ns });
    try {
      const [r] = await store.readAll();
      expect(r).toBeDefined();
      expect(r!.expiresAt).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('a doubled ?namespace= is E_ARG naming both', () => {
    const e = caught(() => parseRedisUrl(`${redis.current.url}/0?namespace=t1&namespace=zz`));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('?namespace= is given 2 times ("t1", "zz"); give it once');
  });

  it('a Redis URL as pull destination: E_ARG saying how to copy between namespaces, nothing written', async () => {
    const from = `${redis.current.url}/0?namespace=t1`;
    const e = await rejectedWith(pullCommand([from, `${redis.current.url}/0?namespace=zz`]));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain(`the destination ${redis.current.url}/0?namespace=zz is a Redis store; pull writes a tape file`);
    expect(e.hint).toBe(`To copy between namespaces or stores, pull into a file, then push it: tapedeck pull '${redis.current.url}/0' copy.tape --namespace t1, then tapedeck push copy.tape '${redis.current.url}/0' --namespace zz.`);
    expect(readdirSync(dir).filter((f) => f.startsWith('redis'))).toEqual([]);
  });

  it.skipIf(!existsSync(CLI))('a one-slash redis:/ URL to verify, prune or pull: write redis:// (two slashes), not "no such tape"', () => {
    const typo = `redis:/127.0.0.1:${redis.current.port}`;
    for (const args of [['verify', typo], ['prune', typo], ['pull', typo, 'x.tape'], ['push', 'x.tape', typo]]) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`tapedeck: E_ARG tapedeck ${args[0]}: "${typo}" is not a Redis URL (nor a tape path).`);
      expect(r.stderr).toContain(`write redis://127.0.0.1:${redis.current.port} (two slashes after the colon)`);
      expect(r.stderr).not.toContain('E_TAPE_NOT_FOUND');
    }
  });

  it.skipIf(!existsSync(CLI))('verify with a doubled ?namespace= on the command line: E_ARG', () => {
    const r = run(['verify', `${redis.current.url}/0?namespace=t1&namespace=zz`]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('?namespace= is given 2 times');
  });
});
