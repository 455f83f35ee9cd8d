// The Redis commands on a namespace or URL that is not what the user meant: a pull from an
// empty namespace never replaces a tape, prune says the namespace is empty, a misspelt query
// parameter or a bad % escape is E_ARG (the password never printed), --namespace and
// ?namespace= may not disagree, and a different redaction salt is a note, not a failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-ns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '../../dist/cli.js');
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
const PASSWORD = 'n5-pa55';

async function tape(name: string): Promise<string> {
  const path = join(dir, name);
  const cache = await ReplayCache.open(path, { mode: 'record' });
  await cache.put({ model: 'm', messages: [{ role: 'user', content: 'one' }] }, { text: 'first' });
  await cache.put({ model: 'm', messages: [{ role: 'user', content: 'two' }] }, { text: 'second' });
  await cache.close();
  return path;
}

redisDescribe('Redis commands on the wrong namespace or URL', () => {
  const redis = useRedis({ password: PASSWORD });

  it.skipIf(!existsSync(CLI))('pull from an empty namespace: E_TAPE_NOT_FOUND naming it, the tape untouched; prune says so too', async () => {
    const keep = await tape('keep.tape');
    const before = readFileSync(keep);
    const ns = freshNamespace('typo');
    const pull = run(['pull', `${redis.current.url}/0?namespace=${ns}`, keep, '--force']);
    expect(pull.status).toBe(1);
    expect(pull.stderr).toContain(`E_TAPE_NOT_FOUND`);
    expect(pull.stderr).toContain(`(namespace ${ns}) holds no recordings: the URL, database or namespace may be wrong`);
    expect(pull.stdout).toBe('');
    expect(readFileSync(keep).equals(before)).toBe(true);
    const prune = run(['prune', redis.current.url, '--namespace', ns]);
    expect(prune.status).toBe(1);
    expect(prune.stderr).toContain(`(namespace ${ns}) holds no recordings`);
    for (const r of [pull, prune]) expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  });

  it.skipIf(!existsSync(CLI))('an unknown query parameter is E_ARG naming it and the known ones; a bad % escape is E_ARG with the fix', async () => {
    const r = run(['verify', `${redis.current.url}/0?nmespace=pw`]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('E_ARG Invalid Redis URL redis://:***@127.0.0.1');
    expect(r.stderr).toContain('unknown query parameter "nmespace" (known: ?namespace=, ?ttl=)');
    const url = `redis://:pa%ss${PASSWORD}@127.0.0.1:${redis.current.port}/0`;
    const v = run(['verify', url]);
    expect(v.status).toBe(2);
    expect(v.stderr).toContain('tapedeck: E_ARG Invalid Redis URL redis://:***@127.0.0.1');
    expect(v.stderr).toContain('Percent-encode');
    expect(v.stdout + v.stderr + r.stdout + r.stderr).not.toContain(PASSWORD);
    // createFetch refuses it where it is made (it was a 500 at the first call, which SDKs retry).
    let refused: (Error & { code?: string }) | undefined;
    try {
      createFetch({ store: url, mode: 'replay' });
    } catch (e) {
      refused = e as Error & { code?: string };
    }
    expect(refused?.code).toBe('E_ARG');
    expect(refused?.message).toContain('Percent-encode');
    expect(refused?.message).not.toContain(PASSWORD);
  });

  it.skipIf(!existsSync(CLI))('an unreachable Redis: the fix names the server to start and the URL, not a flag the command does not have', async () => {
    // A port nothing listens on: the server of this suite, stopped would do, a fresh port is surer.
    const port = redis.current.port + 17;
    for (const args of [['verify', `redis://127.0.0.1:${port}/0`], ['pull', `redis://127.0.0.1:${port}/0`, join(dir, 'pulled.tape')]]) {
      const r = run(args);
      expect(r.status, r.stderr).not.toBe(0);
      expect(r.stderr).toContain('E_STORE_UNAVAILABLE');
      expect(r.stderr).toContain(`redis-server --port ${port}`);
      expect(r.stderr).not.toContain('--store');
    }
  });

  it.skipIf(!existsSync(CLI))('--namespace and ?namespace= disagreeing is E_USAGE; push and pull name the namespace', async () => {
    const t = await tape('named.tape');
    const ns = freshNamespace('named');
    const clash = run(['push', t, `${redis.current.url}/0?namespace=${ns}`, '--namespace', `${ns}-other`]);
    expect(clash.status).toBe(2);
    expect(clash.stderr).toContain(`tapedeck: E_USAGE tapedeck push: --namespace ${ns}-other and the URL's ?namespace=${ns} disagree.`);
    const push = run(['push', t, redis.current.url, '--namespace', ns]);
    expect(push.status, push.stderr).toBe(0);
    expect(push.stdout).toMatch(new RegExp(`to redis://:\\*\\*\\*@127\\.0\\.0\\.1:\\d+ \\(namespace ${ns}\\)`));
    const pull = run(['pull', redis.current.url, join(dir, 'back.tape'), '--namespace', ns]);
    expect(pull.stdout).toContain(`(namespace ${ns}) into`);
  });

  it.skipIf(!existsSync(CLI))('push into a namespace with another redaction salt: every record pushed, a note, exit 0', async () => {
    const ns = freshNamespace('salt');
    expect(run(['push', await tape('a.tape'), redis.current.url, '--namespace', ns]).status).toBe(0);
    const other = run(['push', await tape('b.tape'), redis.current.url, '--namespace', ns]);
    expect(other.status, other.stderr).toBe(0);
    expect(other.stdout).toContain('pushed 2 records');
    expect(other.stdout).not.toContain('damaged');
    expect(other.stderr).toMatch(/^note: TAPEDECK_SALT: /);
  });
});
