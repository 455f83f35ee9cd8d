// A Redis writer paused past its lease (SIGSTOP) keeps its acknowledged recording when another
// record run in the namespace closes meanwhile: a writer past its lease counts as open while its
// connection to Redis is. A killed one is ended, and its recording is replaced.
// (test/store/paused-writer.ts)
import { it } from 'vitest';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { decodeFrame, FRAME_HEADER_SIZE } from '../../src/store/tape-codec.ts';
import { answerTexts, LEASE_MS, pausedWriterCase } from '../store/paused-writer.ts';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster } from './setup.ts';

async function run(url: string, how: 'pause' | 'kill'): Promise<void> {
  const namespace = freshNamespace(`paused-${how}`);
  await pausedWriterCase(
    {
      child: { store: 'redis', target: url, namespace },
      backend: () => new RedisBackend(url, { namespace, writerLeaseMs: LEASE_MS }),
      answers: async () => {
        const store = await RedisRecords.open(url, { namespace });
        try {
          return answerTexts((await store.readAll()).map((r) => decodeFrame(r.payload, { offset: -FRAME_HEADER_SIZE, length: r.payload.length + FRAME_HEADER_SIZE })));
        } finally {
          await store.close();
        }
      },
    },
    how,
  );
}

redisDescribe('a Redis writer paused past its lease', () => {
  const redis = useRedis();
  it('keeps its acknowledged recording when another record run closes meanwhile', () => run(redis.current.url, 'pause'), 30_000);
  it('killed instead: its recording is replaced, as a run that ended', () => run(redis.current.url, 'kill'), 30_000);
});

redisDescribe('a Redis Cluster writer paused past its lease', () => {
  // The writers' keys and the connection asked about are on the node that holds the namespace.
  const cluster = useRedisCluster();
  it('keeps its acknowledged recording when another record run closes meanwhile', () => run(cluster.current.url, 'pause'), 30_000);
  it('killed instead: its recording is replaced, as a run that ended', () => run(cluster.current.url, 'kill'), 30_000);
});
