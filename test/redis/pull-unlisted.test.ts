// A namespace that lost its index (the master of its own keys restarted empty on a cluster) and
// was then made again by a later writer: its index lists only what was written since, while
// request keys on the other masters still hold the older records, which a replay still serves.
// Before, `tapedeck pull` wrote a tape of the re-listed records only and exited 0: the snapshot
// silently lacked recordings the fleet replays (verify said E_STORE_DAMAGED). Now pull writes
// them too, says E_STORE_DAMAGED with how many were unlisted and how to list them again, and
// exits 1. Real redis-server processes (a 3-master cluster).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { pullCommand } from '../../src/store/redis-cli.ts';
import { pushTape } from '../../src/store/redis-transfer.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedisCluster } from './setup.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-pull-unlisted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OLD = ['o1', 'o2', 'o3', 'o4', 'o5'];
const NEW = ['n1', 'n2'];

/** A tape of ReplayCache records: one answer `answer-<prompt>` per prompt. */
async function tape(name: string, prompts: readonly string[]): Promise<string> {
  const path = join(dir, name);
  const cache = await ReplayCache.open(path, { mode: 'record' });
  for (const p of prompts) await cache.put({ model: 'm', messages: [{ role: 'user', content: p }] }, { text: `answer-${p}` });
  await cache.close();
  return path;
}

/** What a command wrote to stdout and stderr, and its exit code. */
async function run(command: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const write = { out: process.stdout.write, err: process.stderr.write };
  let out = '';
  let err = '';
  process.stdout.write = ((c: string | Uint8Array) => ((out += String(c)), true)) as typeof process.stdout.write;
  process.stderr.write = ((c: string | Uint8Array) => ((err += String(c)), true)) as typeof process.stderr.write;
  try {
    return { code: await command(), out, err };
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
  }
}

redisDescribe('pull of a namespace whose index was lost and made again', () => {
  const cluster = useRedisCluster();

  it('writes the unlisted records too, says E_STORE_DAMAGED and exits 1', async () => {
    const ns = freshNamespace('pull-unlisted');
    await pushTape(await tape('old.tape', OLD), cluster.current.url, { namespace: ns });
    // The master of the namespace's slot restarts without persistence: its own keys are gone.
    const own = ['seq', 'index', 'header', 'writers', 'writer-conns'].map((k) => `${ns}:{${ns}}:${k}`);
    for (const n of cluster.current.nodes as { port: number }[]) await rawCommand(n.port, ['DEL', ...own]);
    // A later writer makes the namespace again and lists only what it writes.
    await pushTape(await tape('new.tape', NEW), cluster.current.url, { namespace: ns });
    const listed = await RedisRecords.open(cluster.current.url, { namespace: ns });
    try {
      expect((await listed.readAll()).length).toBe(NEW.length);
    } finally {
      await listed.close();
    }

    const pulled = join(dir, 'pulled.tape');
    const r = await run(() => pullCommand([cluster.current.url, pulled, '--namespace', ns]));
    expect(r.code).toBe(1);
    expect(r.err).toContain('E_STORE_DAMAGED');
    expect(r.err).toContain(`${OLD.length} records`);
    expect(r.err).toContain(`--namespace ${ns}`);
    expect(r.out).toContain(`pulled ${OLD.length + NEW.length} records`);

    // The tape answers every request the namespace still serves, the unlisted ones included.
    const cache = await ReplayCache.open(pulled, { mode: 'replay' });
    try {
      for (const p of [...OLD, ...NEW]) expect(await cache.get({ model: 'm', messages: [{ role: 'user', content: p }] })).toEqual({ text: `answer-${p}` });
    } finally {
      await cache.close();
    }
  });
});
