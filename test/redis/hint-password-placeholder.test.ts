// A command or URL a Redis error's hint tells the user to run or write never holds the password
// (it is masked), but it must not hold the mask either: `'redis://:***@host:port'` run as written
// is refused by the server (WRONGPASS), and a URL rebuilt from the host and port alone dropped the
// password (NOAUTH). The hint writes `<password>` where the password goes and says so; with the
// password put there, the command works. Real redis-server with requirepass.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { redisCliTarget } from '../../src/store/backends/redis-damage.ts';
import { indexLost } from '../../src/store/backends/redis-missing.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { pushTape } from '../../src/store/redis-transfer.ts';
import { recordCommandFor } from '../../src/vitest/fixture.ts';
import { freshNamespace, redisDescribe, rejectedWith, useRedis } from './setup.ts';

const PASSWORD = 's3cret-pw';
const CLI = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hint-password-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The redis:// and rediss:// URLs a text names (quoted or in parentheses). */
const urlsIn = (text: string): string[] => [...text.matchAll(/(rediss?:\/\/[^\s')]+)/g)].map((m) => m[1]!.replace(/[.,;]$/, ''));

describe('commands named in Redis hints and warnings', () => {
  it('put <password> where the masked password was, never *** ', () => {
    expect(redisCliTarget('redis://app:***@cache:6379/0?namespace=ci', 'ci')).toBe(`'redis://app:<password>@cache:6379/0' --namespace ci`);
    expect(redisCliTarget('redis://cache:6379/0', 'ci')).toBe(`'redis://cache:6379/0' --namespace ci`);
    const hint = indexLost('rediss://:***@cache:6380/2?namespace=ci', 'ci', 3).hint!;
    expect(hint).toContain(`tapedeck push <tape> 'rediss://:<password>@cache:6380/2' --namespace ci`);
    expect(hint).toContain('<password>');
    expect(hint).not.toContain('***');
  });

  it('the vitest command that records a test again, for a store from TAPEDECK_STORE', () => {
    const cmd = recordCommandFor('test/a.test.ts', ['a'], 'npx vitest run', 'redis://u:pw-1@h:1/0?namespace=ci');
    expect(cmd).toBe("TAPEDECK_STORE='redis://u:<password>@h:1/0?namespace=ci' TAPEDECK_MODE=update npx vitest run test/a.test.ts -t '^a$'");
  });
});

redisDescribe('Redis hints for a store with a password', () => {
  const redis = useRedis({ password: PASSWORD });
  const base = () => `redis://:${PASSWORD}@127.0.0.1:${redis.current.port}`;

  it.skipIf(!existsSync(CLI))('tapedeck inspect <redis-url>: the pull it names works once the password is put in', async () => {
    const ns = freshNamespace('inspect');
    const tape = join(dir, 'src.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { text: 'hello' });
    await cache.close();
    await pushTape(tape, `${base()}/0`, { namespace: ns });

    const r = spawnSync(process.execPath, [CLI, 'inspect', `${base()}/0?namespace=${ns}`], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    const hint = r.stderr.split('\n').find((l) => l.startsWith('hint: '))!;
    expect(hint).toBeDefined();
    expect(r.stderr).not.toContain(PASSWORD);
    expect(hint).not.toContain('***');
    expect(hint).toContain(`tapedeck pull 'redis://:<password>@127.0.0.1:${redis.current.port}/0' file.tape --namespace ${ns}`);
    expect(hint).toMatch(/password in place of <password>/);

    // The command as the hint gives it, the password put where it says.
    const command = /tapedeck (pull '[^']*' file\.tape --namespace \S+)/.exec(hint)![1]!;
    const words = command.split(' ').map((w) => w.replace(/^'|'$/g, '').replace('<password>', PASSWORD));
    const pulled = spawnSync(process.execPath, [CLI, ...words], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    expect(pulled.stderr).toBe('');
    expect(pulled.status).toBe(0);
    expect(existsSync(join(dir, 'file.tape'))).toBe(true);
  });

  it('a database the server does not have: the URL to use keeps the user and a place for the password', async () => {
    const e = await rejectedWith(RedisRecords.open(`${base()}/99`));
    expect(e.code).toBe('E_ARG');
    expect(e.hint).not.toContain(PASSWORD);
    expect(e.hint).not.toContain('***');
    const [url] = urlsIn(e.hint!);
    expect(url).toBe(`redis://:<password>@127.0.0.1:${redis.current.port}/0`);
    expect(e.hint).toMatch(/password in place of <password>/);
    await (await RedisRecords.open(url!.replace('<password>', PASSWORD))).close();
  });

  it('rediss:// to a plain server: the redis:// URL to write keeps the password place', async () => {
    const e = await rejectedWith(RedisRecords.open(`rediss://:${PASSWORD}@127.0.0.1:${redis.current.port}/3`, { connect: { connectTimeoutMs: 1000 } }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.hint).not.toContain(PASSWORD);
    expect(e.hint).not.toContain('***');
    const [url] = urlsIn(e.hint!);
    expect(url).toBe(`redis://:<password>@127.0.0.1:${redis.current.port}/3`);
    expect(e.hint).toMatch(/password in place of <password>/);
    await (await RedisRecords.open(url!.replace('<password>', PASSWORD))).close();
  });
});
