// A namespace whose stored tape header is of a newer tape format (a newer tapedeck made it, in a
// fleet being upgraded) was opened, served and appended to by an older tapedeck without a word;
// a tape of that format is refused with E_TAPE_VERSION. Now the namespace is refused the same way,
// and `tapedeck verify` says the header is of a newer format (not "no stored tape header") and
// gives the upgrade as the fix (not prune).
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VERSION } from '../../src/version.ts';
import { RecordCollection } from '../../src/store/collection.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { httpRecords } from '../../src/store/records.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { recordBytes } from '../../src/store/tape-file.ts';
import { freshNamespace, redisDescribe, rejectedWith, useRedis, verifyNamespace } from './setup.ts';

async function newerNamespace(url: string, namespace: string): Promise<void> {
  const store = await RedisRecords.open(url, { namespace });
  try {
    const header = recordBytes.header();
    // Format version 2 (the field after the magic), by a newer tapedeck named in the metadata
    // (its CRC made again): what a newer tapedeck would write.
    const len = header.readUInt32BE(10);
    const meta = Buffer.from(header.subarray(18, 18 + len).toString('latin1').replace(VERSION, '9.9.9'.padEnd(VERSION.length, '0')), 'latin1');
    meta.copy(header, 18);
    header.writeUInt32BE(crc32(meta), 14);
    header.writeUInt16BE(2, 8);
    await store.setHeaderIfAbsent(header);
  } finally {
    await store.close();
  }
}


redisDescribe('a Redis namespace of a newer tape format', () => {
  const redis = useRedis();
  let namespace: string;
  let url: string;
  beforeAll(async () => {
    namespace = freshNamespace('newer');
    url = `${redis.current.url}/0`;
    await newerNamespace(url, namespace);
  });
  afterAll(() => {});

  for (const mode of ['replay', 'update', 'record'] as const) {
    it(`is refused with E_TAPE_VERSION in ${mode} mode, saying to upgrade`, async () => {
      const e = await rejectedWith(RecordCollection.open(new RedisBackend(url, { namespace }), { mode, kind: httpRecords() }));
      expect(e.code).toBe('E_TAPE_VERSION');
      expect(e.message).toContain(`namespace ${namespace}`);
      expect(e.message).toContain('tape format version 2');
      expect(`${e.message} ${e.hint}`).toMatch(/upgrade/i);
    });
  }

  it('ReplayCache.open refuses it too', async () => {
    const e = await rejectedWith(ReplayCache.open(`${url}?namespace=${namespace}`, { mode: 'replay' }));
    expect(e.code).toBe('E_TAPE_VERSION');
  });

  it('verify says the header is of a newer format and gives the upgrade, not prune', async () => {
    const { code, out } = await verifyNamespace(url, namespace);
    expect(code).toBe(1);
    expect(out).toContain('E_TAPE_VERSION');
    expect(out).not.toContain('no stored tape header');
    expect(out).not.toContain('tapedeck prune');
  });
});
