// `tapedeck prune <redis-url>` on a real Redis: the records of a namespace that do not decode are
// removed, every good record stays byte for byte, other namespaces are untouched, and the
// password is never printed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { expect, it } from 'vitest';
import { collectionKeyOf, RedisRecords } from '../../src/store/backends/redis.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const packr = new Packr({ useRecords: false, variableMapSize: true });
const payload = (v: unknown) => new Uint8Array(packr.pack(v));
// 0xc1 is the one byte msgpack never uses: no decoder accepts it.
const DAMAGED = new Uint8Array([0xc1, 0x00, 0x01]);

redisDescribe('tapedeck prune on a Redis namespace', () => {
  const redis = useRedis({ user: 'app', password: 'prune-s3cret' });

  it.skipIf(!existsSync(CLI))('removes the records that do not decode and keeps the rest, byte for byte', async () => {
    const ns = freshNamespace('prune');
    const other = freshNamespace('prune-other');
    const store = await RedisRecords.open(redis.current.url, { namespace: ns });
    const neighbour = await RedisRecords.open(redis.current.url, { namespace: other });
    try {
      const good = [payload({ v: 1, kind: 'http', key: 'a', n: 1 }), payload({ v: 1, kind: 'http', key: 'b', n: 2 }), payload({ v: 1, kind: 'http', key: 'a', n: 3 })];
      await store.append([{ key: collectionKeyOf(good[0]!), payload: good[0]! }]);
      await store.append([{ key: 'http:a', payload: DAMAGED }]);
      await store.append([{ key: collectionKeyOf(good[1]!), payload: good[1]! }, { key: 'http:c', payload: DAMAGED }]);
      await store.append([{ key: collectionKeyOf(good[2]!), payload: good[2]! }]);
      await neighbour.append([{ key: 'http:a', payload: DAMAGED }]);

      const r = spawnSync(process.execPath, [CLI, 'prune', redis.current.url, '--namespace', ns], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${redis.current.url.replace('prune-s3cret', '***')} (namespace ${ns}): kept 3 records, removed 2 that did not decode\n`);
      // Each named where it is in Redis (a namespace has no byte offsets).
      expect(r.stderr).toMatch(/^removed record \d+ under http:a \(Redis hash \S+:r, field \d+\): not decodable msgpack/m);
      expect(r.stderr).not.toMatch(/byte -?\d|frame checksum/);
      expect(`${r.stdout}${r.stderr}`).not.toContain('prune-s3cret');
      expect((await store.readAll()).map((x) => Buffer.from(x.payload))).toEqual(good.map((p) => Buffer.from(p)));
      // Another namespace of the same Redis is not this prune's business.
      expect(await neighbour.readAll()).toHaveLength(1);

      // Nothing left to remove: a second prune is a no-op; ?namespace= works as --namespace does.
      const again = spawnSync(process.execPath, [CLI, 'prune', `${redis.current.url}?namespace=${ns}`], { encoding: 'utf8' });
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toContain('kept 3 records, removed 0 that did not decode');
    } finally {
      await store.close();
      await neighbour.close();
    }
  });

  it.skipIf(!existsSync(CLI))('a Redis that is down: E_STORE_UNAVAILABLE with the URL masked; a bad argument is a usage error', () => {
    const down = spawnSync(process.execPath, [CLI, 'prune', 'redis://app:prune-s3cret@127.0.0.1:1/0'], { encoding: 'utf8' });
    expect(down.status).toBe(1);
    expect(down.stderr).toContain('E_STORE_UNAVAILABLE');
    expect(down.stderr).toContain('redis://app:***@127.0.0.1:1/0');
    expect(`${down.stdout}${down.stderr}`).not.toContain('prune-s3cret');
    const two = spawnSync(process.execPath, [CLI, 'prune', redis.current.url, 'extra'], { encoding: 'utf8' });
    expect(two.status).not.toBe(0);
    expect(two.stderr).toContain('tapedeck prune: give one redis:// or rediss:// URL');
    expect(two.stderr).not.toContain('prune-s3cret');
  });
});
