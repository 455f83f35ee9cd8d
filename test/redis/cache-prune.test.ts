// A test's ReplayCache on a shared Redis store (namespace `<test namespace>.cache`), against a
// real redis-server: a run that asks the cache for one of its two recordings counts the other
// unused, and the prune the summary prints removes exactly that one from the cache's namespace.
// The recording that was used still replays; the test's own namespace (its fetch recordings),
// and another test's cache namespace holding the very same requests, keep all of theirs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { decodeFrame, FRAME_HEADER_SIZE } from '../../src/store/tape-codec.ts';
import { formatSummary, openTestTape, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/index.ts';
import { startFakeOpenAI } from '../../examples/vitest/fake-openai.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

/** The record kinds and the first user message of every record in a namespace, in recorded order. */
async function stored(url: string, namespace: string): Promise<string[]> {
  const store = await RedisRecords.open(url, { namespace });
  try {
    return (await store.readAll()).map((r) => {
      const v = decodeFrame(r.payload, { offset: -FRAME_HEADER_SIZE, length: r.payload.length + FRAME_HEADER_SIZE }, namespace) as { kind?: string; request: { messages?: { content: string }[]; body?: { messages: { content: string }[] } } };
      const messages = v.request.messages ?? v.request.body?.messages ?? [];
      return `${v.kind ?? 'cache'}: ${messages[0]?.content}`;
    });
  } finally {
    await store.close();
  }
}

redisDescribe('a ReplayCache namespace on Redis in the run summary and its prune', () => {
  const redis = useRedis();

  it('counts the cache recording no call asked for unused; the prune removes exactly it', async () => {
    const fake = await startFakeOpenAI();
    const root = mkdtempSync(join(tmpdir(), 'tapedeck-cache-prune-'));
    const store = `${redis.current.url}?namespace=${freshNamespace('cache-prune')}`;
    const tape = join(root, 'test', '__tapes__', 'qa.test', 'answers.tape');
    const otherTape = join(root, 'test', '__tapes__', 'qa.test', 'answers-again.tape');
    const chat = (t: ReturnType<typeof openTestTape>, content: string) =>
      t.fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask(content)) });
    try {
      // Recorded: each test makes a fetch call and puts the same two answers in its cache.
      const recDir = join(root, 'run-record');
      const open = (t: string, test: string, runDir: string, env: Record<string, string>) => openTestTape({ tape: t, store, root, runDir, env, test, file: 'test/qa.test.ts' });
      const namespaces: string[] = [];
      for (const [t, test] of [[tape, 'qa > answers'], [otherTape, 'qa > answers again']] as const) {
        const rec = open(t, test, recDir, { TAPEDECK_MODE: 'record' });
        namespaces.push(rec.namespace!);
        expect((await chat(rec, 'Hello there')).status).toBe(200);
        const cache = await rec.cache();
        await cache.put(ask('old question'), { text: 'old answer' });
        await cache.put(ask('current question'), { text: 'current answer' });
        await rec.close();
      }
      const [ns, otherNs] = namespaces as [string, string];
      expect(await stored(redis.current.url, `${ns}.cache`)).toEqual(['cache: old question', 'cache: current question']);
      expect(await stored(redis.current.url, `${otherNs}.cache`)).toEqual(['cache: old question', 'cache: current question']);

      // Replayed in CI: the first test now asks its cache only the current question; the other
      // test still asks both.
      const repDir = join(root, 'run-replay');
      const t1 = open(tape, 'qa > answers', repDir, { CI: 'true' });
      expect((await chat(t1, 'Hello there')).status).toBe(200);
      expect(await (await t1.cache()).get(ask('current question'))).toEqual({ text: 'current answer' });
      await t1.close();
      const t2 = open(otherTape, 'qa > answers again', repDir, { CI: 'true' });
      expect((await chat(t2, 'Hello there')).status).toBe(200);
      const c2 = await t2.cache();
      expect(await c2.get(ask('old question'))).toEqual({ text: 'old answer' });
      expect(await c2.get(ask('current question'))).toEqual({ text: 'current answer' });
      await t2.close();

      const summary = await summarizeRun(readTapeReports(repDir), { stores: [store] });
      expect(Object.fromEntries(summary.tapes.map((t) => [t.namespace, { hits: t.hits, unused: t.unused }]))).toEqual({
        [ns]: { hits: 1, unused: 0 },
        [`${ns}.cache`]: { hits: 1, unused: 1 },
        [otherNs]: { hits: 1, unused: 0 },
        [`${otherNs}.cache`]: { hits: 2, unused: 0 },
      });
      expect(formatSummary(summary)).toContain(`  namespace ${ns}.cache (replay): 1 unused`);

      // The prune the summary prints: exactly the unused cache recording goes.
      expect(await pruneUnused(summary, { stores: [store] })).toBe(1);
      expect(await stored(redis.current.url, `${ns}.cache`)).toEqual(['cache: current question']);
      expect(await stored(redis.current.url, `${otherNs}.cache`)).toEqual(['cache: old question', 'cache: current question']);
      expect(await stored(redis.current.url, ns)).toEqual(['http: Hello there']);
      expect(await stored(redis.current.url, otherNs)).toEqual(['http: Hello there']);

      // The used one still replays in CI, and a second run finds nothing more to prune.
      const again = join(root, 'run-again');
      const t3 = open(tape, 'qa > answers', again, { CI: 'true' });
      expect((await chat(t3, 'Hello there')).status).toBe(200);
      expect(await (await t3.cache()).get(ask('current question'))).toEqual({ text: 'current answer' });
      await t3.close();
      const after = await summarizeRun(readTapeReports(again), { stores: [store] });
      expect(after.unused).toBe(0);
      expect(after.misses).toEqual([]);
    } finally {
      await fake.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
