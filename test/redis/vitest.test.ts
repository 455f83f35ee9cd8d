// The vitest helper on a shared Redis store, run as a user runs it: vitest spawned on a copy of
// examples/vitest (test/vitest/example-project.ts) with TAPEDECK_STORE (single node) or the
// plugin's store option (3-master cluster). Record against the example's fake OpenAI API, replay
// in CI with the API stopped, CI with one test's recordings deleted from Redis (fails with the
// record command, writes nothing; that command records it), two workers on one namespace
// (threads, then forks), the unused-recordings summary and the prune it prints. Then
// openTestTape (and its ReplayCache) on a Redis with a password: nothing written to disk holds it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { decodeFrame, FRAME_HEADER_SIZE } from '../../src/store/tape-codec.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { startFakeOpenAI } from '../../examples/vitest/fake-openai.ts';
import { exampleProject, sharedTestFile, summaryLine, type ExampleProject } from '../vitest/example-project.ts';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster } from './setup.ts';

const EXAMPLE_TESTS = [
  'ai-sdk.test/ai-sdk/calls-a-tool',
  'ai-sdk.test/ai-sdk/generates-text',
  'ai-sdk.test/ai-sdk/streams-text',
  'global-fetch.test/app-code-on-the-global-fetch',
  'openai.test/openai-sdk/answers-a-question',
  'openai.test/openai-sdk/calls-a-tool',
  'openai.test/openai-sdk/streams-an-answer',
];

const clusterConfig = `
import { defineConfig } from 'vitest/config';
import { tapedeck } from 'llm-tapedeck/vitest/plugin';
export default defineConfig({ plugins: [tapedeck({ store: process.env.CLUSTER_STORE })], test: { globalSetup: ['./global-setup.ts'] } });
`;

/** The request bodies' first user message of every record in a namespace, in recorded order. */
async function prompts(url: string, namespace: string): Promise<string[]> {
  const store = await RedisRecords.open(url, { namespace });
  try {
    return (await store.readAll()).map((r) => {
      const v = decodeFrame(r.payload, { offset: -FRAME_HEADER_SIZE, length: r.payload.length + FRAME_HEADER_SIZE }, namespace) as { request: { body: { messages: { content: unknown }[] } } };
      return String(v.request.body.messages[0]!.content);
    });
  } finally {
    await store.close();
  }
}

async function clear(url: string, namespace: string): Promise<void> {
  const store = await RedisRecords.open(url, { namespace });
  await store.clear();
  await store.close();
}

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/shared-a.test.ts': sharedTestFile('alpha'), 'test/shared-b.test.ts': sharedTestFile('beta'), 'vitest.cluster.config.ts': clusterConfig });
});
afterAll(async () => {
  await p?.close();
});

redisDescribe('the vitest helper on Redis, single node (TAPEDECK_STORE)', () => {
  const redis = useRedis();
  const base = freshNamespace('vitest');
  const store = () => `${redis.current.url}?namespace=${base}`;
  const ns = (test: string) => `${base}/test/__tapes__/${test}`;
  const on = () => `on ${redis.current.url}`;
  const opts = { timeout: 180_000 };

  it('1. records every test in its own namespace, no tape files, with the summary', opts, async () => {
    const r = await p.vitest(['--exclude', 'test/shared-*'], { TAPEDECK_STORE: store() });
    expect(r.code, r.out).toBe(0);
    expect(summaryLine(r)).toBe(`tapedeck: 7 Redis namespaces ${on()}, 7 written, 7 recordings added, 0 replayed, 0 misses, 0 unused recordings`);
    expect(p.listTapes()).toEqual([]);
    for (const t of EXAMPLE_TESTS) expect(await prompts(redis.current.url, ns(t)), t).toHaveLength(1);
    expect(await prompts(redis.current.url, ns('openai.test/openai-sdk/answers-a-question'))).toEqual(['Hello there']);
    expect(p.fake.calls).toHaveLength(7);
  });

  it('2. replays in CI with the API stopped, writing nothing', opts, async () => {
    const r = await p.vitest(['--exclude', 'test/shared-*'], { TAPEDECK_STORE: store(), CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.code, r.out).toBe(0);
    expect(summaryLine(r)).toBe(`tapedeck: 7 Redis namespaces ${on()}, 0 written, 0 recordings added, 7 replayed, 0 misses, 0 unused recordings`);
    for (const t of EXAMPLE_TESTS) expect(await prompts(redis.current.url, ns(t)), t).toHaveLength(1);
    expect(p.fake.calls).toHaveLength(7);
  });

  it('3. CI with one test deleted from Redis: fails with the exact record command, writes nothing; that command records it', opts, async () => {
    const gone = ns('openai.test/openai-sdk/answers-a-question');
    await clear(redis.current.url, gone);
    const r = await p.vitest(['test/openai.test.ts'], { TAPEDECK_STORE: store(), CI: 'true' });
    expect(r.code).toBe(1);
    const command = `TAPEDECK_STORE='${store()}' TAPEDECK_MODE=update npx vitest run test/openai.test.ts -t '^openai sdk answers a question$'`;
    expect(r.out).toContain(`400 tapedeck miss: this test was never recorded (CI is set: nothing records): its Redis namespace has no recordings\nRecord it: ${command}\n  namespace: ${gone}`);
    expect(summaryLine(r)).toBe(`tapedeck: 3 Redis namespaces ${on()}, 0 written, 0 recordings added, 2 replayed, 1 miss, 0 unused recordings`);
    expect(r.out).toContain(`  namespace ${gone} (replay): 1 missed`);
    expect(r.out).toContain(`record it: ${command}`);
    expect(await prompts(redis.current.url, gone)).toEqual([]);
    expect(p.fake.calls).toHaveLength(7);

    // The printed command, as printed: its variables, then the same vitest with its arguments.
    const [, url, pattern] = /^TAPEDECK_STORE='([^']*)' TAPEDECK_MODE=update npx vitest run test\/openai\.test\.ts -t '(.*)'$/.exec(command)!;
    const again = await p.vitest(['test/openai.test.ts', '-t', pattern!], { TAPEDECK_STORE: url!, TAPEDECK_MODE: 'update' });
    expect(again.code, again.out).toBe(0);
    expect(summaryLine(again)).toBe(`tapedeck: 1 Redis namespace ${on()}, 1 written, 1 recording added, 0 replayed, 0 misses, 0 unused recordings`);
    expect(await prompts(redis.current.url, gone)).toEqual(['Hello there']);
    expect(p.fake.calls).toHaveLength(8);
  });

  it('4. two workers on one namespace: threads record, forks replay, then forks record', opts, async () => {
    const files = ['test/shared-a.test.ts', 'test/shared-b.test.ts', '--maxWorkers=2', '--fileParallelism'];
    const shared = `${base}/shared/one`;
    const all = ['alpha 1', 'alpha 2', 'alpha 3', 'alpha 4', 'beta 1', 'beta 2', 'beta 3', 'beta 4'];
    const threads = await p.vitest([...files, '--pool=threads'], { TAPEDECK_STORE: store() });
    expect(threads.code, threads.out).toBe(0);
    expect(summaryLine(threads)).toBe(`tapedeck: 1 Redis namespace ${on()}, 1 written, 8 recordings added, 0 replayed, 0 misses, 0 unused recordings`);
    expect((await prompts(redis.current.url, shared)).sort()).toEqual(all);

    const replay = await p.vitest([...files, '--pool=forks'], { TAPEDECK_STORE: store(), CI: '1', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(replay.code, replay.out).toBe(0);
    expect(summaryLine(replay)).toBe(`tapedeck: 1 Redis namespace ${on()}, 0 written, 0 recordings added, 8 replayed, 0 misses, 0 unused recordings`);

    await clear(redis.current.url, shared);
    const forks = await p.vitest([...files, '--pool=forks'], { TAPEDECK_STORE: store() });
    expect(forks.code, forks.out).toBe(0);
    expect(summaryLine(forks)).toBe(`tapedeck: 1 Redis namespace ${on()}, 1 written, 8 recordings added, 0 replayed, 0 misses, 0 unused recordings`);
    expect((await prompts(redis.current.url, shared)).sort()).toEqual(all);
  });

  it('5. a changed prompt recorded with --mode update leaves one unused recording; the printed prune drops it from Redis', opts, async () => {
    const file = join(p.dir, 'test', 'openai.test.ts');
    const original = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, original.replace("content: 'Hello there' }", "content: 'Hello there, again' }").replace("toContain('Hello there')", "toContain('Hello there, again')"));
      const changed = ns('openai.test/openai-sdk/answers-a-question');
      const update = await p.vitest(['test/openai.test.ts', '--mode', 'update'], { TAPEDECK_STORE: store() });
      expect(update.code, update.out).toBe(0);
      expect(summaryLine(update)).toBe(`tapedeck: 3 Redis namespaces ${on()}, 1 written, 1 recording added, 2 replayed, 0 misses, 1 unused recording`);
      expect(update.out).toContain(`  namespace ${changed} (update): +1 added, 1 unused`);
      const pruneCommand = `TAPEDECK_STORE='${store()}' TAPEDECK_PRUNE=1 npx vitest run`;
      expect(update.out).toContain(`Drop them after a full passing run: ${pruneCommand}`);
      expect(await prompts(redis.current.url, changed)).toEqual(['Hello there', 'Hello there, again']);

      const prune = await p.vitest(['test/openai.test.ts'], { TAPEDECK_STORE: store(), CI: 'true', TAPEDECK_PRUNE: '1' });
      expect(prune.code, prune.out).toBe(0);
      expect(prune.out).toContain('tapedeck: pruned 1 unused recording(s).');
      expect(await prompts(redis.current.url, changed)).toEqual(['Hello there, again']);
      // The other tests' namespaces were used: nothing of theirs was pruned.
      expect(await prompts(redis.current.url, ns('openai.test/openai-sdk/streams-an-answer'))).toHaveLength(1);
    } finally {
      writeFileSync(file, original);
    }
  });
});

redisDescribe('the vitest helper on Redis, 3-master cluster (the plugin store option)', () => {
  const cluster = useRedisCluster();
  const base = freshNamespace('vitest-cluster');
  const opts = { timeout: 180_000 };

  it('records every test in its own namespace across the masters, then replays in CI with the API stopped', opts, async () => {
    const env = { CLUSTER_STORE: `${cluster.current.url}?namespace=${base}` };
    const rec = await p.vitest(['--config', 'vitest.cluster.config.ts', '--exclude', 'test/shared-*'], env);
    expect(rec.code, rec.out).toBe(0);
    expect(summaryLine(rec)).toBe(`tapedeck: 7 Redis namespaces on ${cluster.current.url}, 7 written, 7 recordings added, 0 replayed, 0 misses, 0 unused recordings`);
    for (const t of EXAMPLE_TESTS) expect(await prompts(cluster.current.url, `${base}/test/__tapes__/${t}`), t).toHaveLength(1);
    const calls = p.fake.calls.length;

    const replay = await p.vitest(['--config', 'vitest.cluster.config.ts', '--exclude', 'test/shared-*'], { ...env, CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(replay.code, replay.out).toBe(0);
    expect(summaryLine(replay)).toBe(`tapedeck: 7 Redis namespaces on ${cluster.current.url}, 0 written, 0 recordings added, 7 replayed, 0 misses, 0 unused recordings`);
    expect(p.fake.calls).toHaveLength(calls);

    // The store came from the config, not the environment: the record command needs no variable.
    await clear(cluster.current.url, `${base}/test/__tapes__/openai.test/openai-sdk/calls-a-tool`);
    const miss = await p.vitest(['--config', 'vitest.cluster.config.ts', 'test/openai.test.ts', '-t', 'calls a tool'], { ...env, CI: 'true' });
    expect(miss.code).toBe(1);
    // The printed command keeps the run's config file: it records into the same cluster.
    expect(miss.out).toContain("Record it: TAPEDECK_MODE=update npx vitest run -c vitest.cluster.config.ts test/openai.test.ts -t '^openai sdk calls a tool$'");
  });
});

redisDescribe('openTestTape on a Redis with a password', () => {
  const redis = useRedis({ user: 'app', password: 'vitest-pa55' });

  it('records and replays per test; reports, summary and messages never hold the password', async () => {
    const fake = await startFakeOpenAI();
    const root = mkdtempSync(join(tmpdir(), 'tapedeck-opentesttape-'));
    const runDir = join(root, 'run');
    const base = freshNamespace('pw');
    const store = `${redis.current.url}?namespace=${base}`;
    const ask = (t: ReturnType<typeof openTestTape>) =>
      t.fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) });
    try {
      const tape = join(root, 'test', '__tapes__', 'a.test', 'says-hi.tape');
      const rec = openTestTape({ tape, store, root, runDir, env: {} });
      expect(rec.namespace).toBe(`${base}/test/__tapes__/a.test/says-hi`);
      expect(rec.store).toBe(redis.current.url.replace('vitest-pa55', '***'));
      expect((await ask(rec)).status).toBe(200);
      // The ReplayCache beside it lives in the namespace beside the test's.
      const cache = await rec.cache();
      await cache.put({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached' }] }, { text: 'from the cache' });
      await rec.close();
      const cacheStore = await RedisRecords.open(redis.current.url, { namespace: `${base}/test/__tapes__/a.test/says-hi.cache` });
      expect(await cacheStore.readAll()).toHaveLength(1);
      await cacheStore.close();

      // CI, and a request never recorded: the miss names the namespace; the command sets no password.
      const rep = openTestTape({ tape, store, root, runDir, env: { CI: 'true', TAPEDECK_STORE: store } });
      expect((await ask(rep)).status).toBe(200);
      const other = openTestTape({ tape: join(root, 'test', '__tapes__', 'a.test', 'never.tape'), root, runDir, env: { CI: 'true', TAPEDECK_STORE: store } });
      const miss = await ask(other);
      expect(miss.status).toBe(400);
      const text = await miss.text();
      expect(text).toContain(`this test was never recorded (CI is set: nothing records): its Redis namespace has no recordings`);
      expect(text).toContain(`namespace: ${base}/test/__tapes__/a.test/never`);
      expect(text).toContain(`Record it: TAPEDECK_STORE='${store.replace('vitest-pa55', '<password>')}' TAPEDECK_MODE=update`);
      await rep.close();
      // Closing fails the test with the miss, and that message holds no password either.
      const failed = (await other.close().catch((e: unknown) => e)) as Error & { code: string };
      expect(failed.code).toBe('E_MISS');
      expect(failed.message).not.toContain('vitest-pa55');

      const onDisk = readdirSync(runDir).map((n) => readFileSync(join(runDir, n), 'utf8')).join('\n');
      expect(onDisk).toContain(base);
      expect(onDisk).not.toContain('vitest-pa55');
      // With the URL the run was given, the summary reads the namespaces; without it, it says why not.
      const reports = readTapeReports(runDir);
      const summary = await summarizeRun(reports, { stores: [store] });
      // The cache's namespace is a line of its own (its recordings judged by what it served).
      expect(summary.tapes.map((t) => [t.namespace, t.added, t.hits, t.misses, t.unused])).toEqual([
        [`${base}/test/__tapes__/a.test/never`, 0, 0, 1, 0],
        [`${base}/test/__tapes__/a.test/says-hi`, 1, 1, 0, 0],
        [`${base}/test/__tapes__/a.test/says-hi.cache`, 1, 0, 0, 0],
      ]);
      const blind = await summarizeRun(reports, { stores: [] });
      const printed = formatSummary(blind);
      expect(printed).toContain('unused recordings not checked: ');
      expect(printed).not.toContain('vitest-pa55');
    } finally {
      await fake.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
