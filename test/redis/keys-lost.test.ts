// A namespace that loses its own keys (its counter, index and header: the `{NS}` slot) while its
// records live on: on a cluster, the master of that slot restarts without persistence and the
// other masters keep theirs; on any Redis, a counter behind its records (a failover to a lagging
// replica). Before, numbering started again at 1 and a record write (HSET) replaced acknowledged
// recordings of the same request key; a replayer that had loaded a number took a new record
// under it for one it had; and the records left could not be listed (pull and verify said the
// namespace did not exist). Real redis-server processes (a 3-master cluster and a single node),
// the real openai client through createFetch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { RedisRecords, type StoredRecord } from '../../src/store/backends/redis.ts';
import { verifyRedisCommand } from '../../src/store/redis-cli.ts';
import { pullTape, pushTape } from '../../src/store/redis-transfer.ts';
import { recordBytes } from '../../src/store/tape-file.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, rejectedWith, useRedis, useRedisCluster } from './setup.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-lost-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const PROMPTS = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];

/** A tape of ReplayCache records: one answer `<label>-<prompt>` per prompt. */
async function tape(name: string, label: string): Promise<string> {
  const path = join(dir, name);
  const cache = await ReplayCache.open(path, { mode: 'record' });
  for (const p of PROMPTS) await cache.put({ model: 'm', messages: [{ role: 'user', content: p }] }, { text: `${label}-${p}` });
  await cache.close();
  return path;
}

/** What a restart without persistence does to the master of the namespace's slot: its own keys are gone. */
async function loseNamespaceKeys(ports: number[], ns: string): Promise<void> {
  const own = ['seq', 'index', 'header', 'writers', 'writer-conns'].map((k) => `${ns}:{${ns}}:${k}`);
  // On a cluster only the master of the slot deletes them; the others answer MOVED.
  for (const port of ports) await rawCommand(port, ['DEL', ...own]);
}

async function withStore<T>(url: string, ns: string, body: (s: RedisRecords) => Promise<T>): Promise<T> {
  const s = await RedisRecords.open(url, { namespace: ns });
  try {
    return await body(s);
  } finally {
    await s.close();
  }
}

const text = (r: StoredRecord) => /(?:redis|other)-w\d/.exec(r.payload.toString('latin1'))?.[0];

/** What a command printed on stdout, and its exit code. */
async function stdoutOf(command: () => Promise<number>): Promise<{ code: number; text: string }> {
  const write = process.stdout.write;
  let text = '';
  process.stdout.write = ((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    return { code: await command(), text };
  } finally {
    process.stdout.write = write;
  }
}

redisDescribe('a namespace whose own keys are lost, 3-master cluster', () => {
  const cluster = useRedisCluster();
  const ports = () => cluster.current.nodes.map((n: { port: number }) => n.port);

  it('the master of the namespace slot restarts empty: a push never replaces an acknowledged recording, and numbers go on above the old ones', async () => {
    const ns = freshNamespace('overwrite');
    const ours = await tape('ours.tape', 'redis');
    const other = await tape('other.tape', 'other');
    await pushTape(ours, cluster.current.url, { namespace: ns });
    const before = await withStore(cluster.current.url, ns, (s) => s.readAll());
    expect(before.map(text)).toEqual(PROMPTS.map((p) => `redis-${p}`));
    await loseNamespaceKeys(ports(), ns);
    // A request recorded after the loss is numbered after every recording made before it (pull
    // writes a tape in that order), though the counter that numbered them is gone.
    const late = await withStore(cluster.current.url, ns, (s) => s.append([{ key: 'cache:late', payload: new Uint8Array(before[0]!.payload) }]));
    expect(late[0]).toBeGreaterThan(Math.max(...before.map((r) => r.seq)));
    const pushed = await pushTape(other, cluster.current.url, { namespace: ns });
    expect(pushed.records).toBe(PROMPTS.length);
    await withStore(cluster.current.url, ns, async (s) => {
      for (const old of before) {
        // The acknowledged recording is still there, first; the pushed one follows it.
        const recs = await s.read(old.key);
        expect(recs.map(text)).toEqual([text(old), text(old)!.replace('redis', 'other')]);
        expect(recs[0]!.payload.equals(old.payload)).toBe(true);
        expect(recs[1]!.seq).toBeGreaterThan(Math.max(...before.map((r) => r.seq)));
      }
    });
  });

  it('the index lost: pull and replay say so and how many request keys still hold records; pushing the tape lists them again', async () => {
    const ns = freshNamespace('unlisted');
    const url = `${cluster.current.url}?namespace=${ns}`;
    const ours = await tape('ours2.tape', 'redis');
    await pushTape(ours, cluster.current.url, { namespace: ns });
    await loseNamespaceKeys(ports(), ns);

    const e = await rejectedWith(pullTape(url, join(dir, 'pulled.tape')));
    expect(e.code).toBe('E_STORE_DAMAGED');
    expect(e.message).toContain(`(namespace ${ns}) lost its index`);
    expect(e.message).toContain(`${PROMPTS.length} request keys still hold records`);
    expect(e.hint).toContain(`tapedeck push <tape> '${cluster.current.url}' --namespace ${ns}`);

    // A replay is told the truth, not that every request will be a miss.
    const warnings: string[] = [];
    const backend = new RedisBackend(url);
    const loaded = await backend.load({ create: false });
    await backend.close();
    expect(loaded.exists).toBe(true);
    expect(loaded.warnings.map((w) => w.code)).toEqual(['E_STORE_DAMAGED']);
    warnings.push(...loaded.warnings.map((w) => w.message));
    expect(warnings[0]).toContain('each is still served when its request is asked');

    // A writer makes the namespace again (its header comes back): verify tells what is unlisted.
    await withStore(cluster.current.url, ns, (s) => s.setHeaderIfAbsent(recordBytes.header()));
    const out = await stdoutOf(() => verifyRedisCommand([cluster.current.url, '--namespace', ns]));
    expect(out.code).toBe(1);
    expect(out.text).toContain(`E_STORE_DAMAGED: ${PROMPTS.length} request keys hold ${PROMPTS.length} records the namespace's index does not list`);
    expect(out.text).toContain(`tapedeck push <tape> '${cluster.current.url}' --namespace ${ns}`);

    // The fix the hint names: the tape pushed again lists its keys, nothing pushed twice.
    const again = await pushTape(ours, cluster.current.url, { namespace: ns });
    expect(again).toMatchObject({ records: 0, already: PROMPTS.length });
    const pulled = await pullTape(url, join(dir, 'pulled.tape'));
    expect(pulled.records).toBe(PROMPTS.length);
  });
});

const client = (fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch, maxRetries: 0 });
const ask = async (fetch: typeof globalThis.fetch, q: string) => (await client(fetch).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: q }] })).choices[0]!.message.content;
const quiet = { summary: false, onWarning: () => {} } as const;

redisDescribe('a namespace whose own keys are lost, single node', () => {
  const redis = useRedis();

  it('a counter behind its records (a lagging failover): a record write takes a fresh number, never an acknowledged one', async () => {
    const ns = freshNamespace('behind');
    await pushTape(await tape('ours3.tape', 'redis'), redis.current.url, { namespace: ns });
    const before = await withStore(redis.current.url, ns, (s) => s.readAll());
    // The header and index stay: only the counter went back.
    await rawCommand(redis.current.port, ['SET', `${ns}:{${ns}}:seq`, String(before[0]!.seq - 1)]);
    await pushTape(await tape('other3.tape', 'other'), redis.current.url, { namespace: ns });
    await withStore(redis.current.url, ns, async (s) => {
      for (const old of before) expect((await s.read(old.key)).map(text)).toEqual([text(old), text(old)!.replace('redis', 'other')]);
    });
  });

  it('Redis loses the namespace while a replayer is open: the replayer finds what is recorded afterwards', async () => {
    const store = `${redis.current.url}/0?namespace=${freshNamespace('reset')}`;
    const a = createFetch({ store, mode: 'record', ...quiet });
    for (const q of ['a1', 'a2', 'a3']) await ask(a, q);
    await a.close();
    const b = createFetch({ store, mode: 'replay', ...quiet });
    try {
      await ask(b, 'a1');
      // A restart without persistence (or a FLUSHDB): every key of the namespace is gone.
      const ns = new URL(store).searchParams.get('namespace')!;
      const keys = String(await rawCommand(redis.current.port, ['KEYS', `${ns}:*`])).match(/t\d+-reset-\d+:[^\r\n]+/g) ?? [];
      await rawCommand(redis.current.port, ['DEL', ...keys]);
      const c = createFetch({ store, mode: 'update', ...quiet });
      const fresh = [await ask(c, 'new1'), await ask(c, 'new2')];
      await c.close();
      expect([await ask(b, 'new1'), await ask(b, 'new2')]).toEqual(fresh);
    } finally {
      await b.close();
    }
  });

  it('a record taking a number a replayer loaded for another request: the replayer finds it, and the two have different ids', async () => {
    const store = `${redis.current.url}/0?namespace=${freshNamespace('same-number')}`;
    const ns = new URL(store).searchParams.get('namespace')!;
    const a = createFetch({ store, mode: 'record', ...quiet });
    await ask(a, 'a1');
    await a.close();
    const [loaded] = await withStore(redis.current.url, ns, (s) => s.readAll());
    const b = createFetch({ store, mode: 'replay', ...quiet });
    try {
      await ask(b, 'a1');
      // The counter behind: the next record, of another request, gets the number of a1's.
      await rawCommand(redis.current.port, ['SET', `${ns}:{${ns}}:seq`, String(loaded!.seq - 1)]);
      const c = createFetch({ store, mode: 'update', ...quiet });
      const fresh = await ask(c, 'new1');
      await c.close();
      const all = await withStore(redis.current.url, ns, (s) => s.readAll());
      expect(all.map((r) => r.seq)).toEqual([loaded!.seq, loaded!.seq]);
      expect(await ask(b, 'new1')).toBe(fresh);
    } finally {
      await b.close();
    }
    // The backend contract: ids are equal only for equal stored content (record mode removes by id).
    const backend = new RedisBackend(store);
    const { records } = await backend.load({ create: false });
    await backend.close();
    expect(records).toHaveLength(2);
    expect(records[0]!.id()).not.toBe(records[1]!.id());
  });
});
