// A record in a Redis namespace that does not read (bytes another tool wrote, or damaged in the
// store), on a real redis-server: `pull` leaves it out and says so (the tape it writes verifies),
// `tapedeck verify <redis-url>` lists it, `prune` removes it, and every message says where it is
// in Redis terms (request key, sequence number, hash and field), never a tape's byte offset or
// frame checksum. A replay that meets one names the verify command that works for Redis.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { afterAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { collectionKeyOf, RedisRecords } from '../../src/store/backends/redis.ts';
import { pullTape } from '../../src/store/redis-transfer.ts';
import { appendRecords, createTape, readTape, scanTape } from '../../src/store/tape-file.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const PASSWORD = 'd4mage-s3cret';
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-damage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `t${n++}.tape`);
const packr = new Packr({ useRecords: false, variableMapSize: true });
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

/** Messages about a Redis namespace must not speak of tape files. */
const TAPE_TERMS = /byte -?\d|frame checksum/;

redisDescribe('a record in a Redis namespace that does not read', () => {
  const redis = useRedis({ user: 'app', password: PASSWORD });
  const masked = () => redis.current.url.replace(PASSWORD, '***');
  // A command to run has a place for the password, not the mask (which Redis refuses).
  const typed = () => redis.current.url.replace(PASSWORD, '<password>');

  /**
   * A namespace with three good records and two that do not read: bytes that are not a record
   * (the trial's `HSET … garbage-not-msgpack`), and a record whose key reads but whose rest was
   * cut off. Returns where the two bad ones are.
   */
  async function damaged(): Promise<{ ns: string; good: Buffer[]; bad: { key: string; seq: number }[] }> {
    const ns = freshNamespace('damage');
    const store = await RedisRecords.open(redis.current.url, { namespace: ns });
    try {
      const good = ['a', 'b', 'c'].map((k, i) => Buffer.from(packr.pack({ v: 1, kind: 'http', key: k, n: i, body: 'x'.repeat(40) })));
      await store.append(good.map((p) => ({ key: collectionKeyOf(p), payload: p })));
      const cut = good[1]!.subarray(0, good[1]!.length - 20);
      const [garbageSeq] = await store.append([{ key: 'http:a', payload: Buffer.from('garbage-not-msgpack') }]);
      const [cutSeq] = await store.append([{ key: 'http:b', payload: cut }]);
      return { ns, good, bad: [{ key: 'http:a', seq: garbageSeq! }, { key: 'http:b', seq: cutSeq! }] };
    } finally {
      await store.close();
    }
  }

  const place = (ns: string, r: { key: string; seq: number }) => `record ${r.seq} under ${r.key} (Redis hash ${ns}:{${ns}:${r.key}}:r, field ${r.seq})`;

  it.skipIf(!existsSync(CLI))('tapedeck push of a damaged tape pushes what reads, says what it left out and exits 1', async () => {
    const src = fresh();
    await createTape(src);
    await appendRecords(src, ['a', 'b', 'c'].map((k, i) => ({ v: 1, kind: 'http', key: k, n: i, body: 'x'.repeat(40) })));
    const f = (await scanTape(src)).frames[1]!;
    const bytes = readFileSync(src);
    bytes[f.offset + f.length - 2]! ^= 0xff;
    writeFileSync(src, bytes);
    const ns = freshNamespace('push');
    const r = run(['push', src, redis.current.url, '--namespace', ns]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('pushed 2 records');
    expect(r.stdout).toContain('; left out 1 damaged region of the tape (listed above)');
    expect(r.stderr).toMatch(/^E_TAPE_CORRUPT at byte \d+/m);
    expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD);
  });

  it('pullTape leaves them out of the tape, which verifies, and says where each one is in Redis', async () => {
    const { ns, good, bad } = await damaged();
    const out = fresh();
    const r = await pullTape(redis.current.url, out, { namespace: ns });
    expect(r.records).toBe(3);
    expect(r.warnings.map((w) => [w.code, w.offset])).toEqual(bad.map((b) => ['E_TAPE_CORRUPT', b.seq]));
    for (const [i, w] of r.warnings.entries()) {
      expect(w.message).toContain(place(ns, bad[i]!));
      expect(w.message).toContain('not decodable msgpack');
      expect(w.message).not.toMatch(TAPE_TERMS);
    }
    const back = await readTape(out);
    expect(back.warnings).toEqual([]);
    expect(back.records.map((x) => x.value)).toEqual(good.map((p) => packr.unpack(p)));
  });

  it.skipIf(!existsSync(CLI))('tapedeck pull says so and exits 1; tapedeck verify <redis-url> lists them; prune removes them, all in Redis terms', async () => {
    const { ns, bad } = await damaged();
    const out = fresh();
    const pull = run(['pull', redis.current.url, out, '--namespace', ns]);
    expect(pull.status).toBe(1);
    expect(pull.stdout).toContain('pulled 3 records');
    expect(pull.stdout).toContain('left out 2 that did not read');
    for (const b of bad) expect(pull.stderr).toContain(place(ns, b));
    expect(pull.stderr).not.toMatch(TAPE_TERMS);
    // The tape it wrote holds every other record and verifies.
    const tape = run(['verify', out]);
    expect(tape.status, tape.stdout).toBe(0);

    const verify = run(['verify', redis.current.url, '--namespace', ns]);
    expect(verify.status).toBe(1);
    const lines = verify.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${masked()} (namespace ${ns}): no stored tape header (written by proxies or test runs; tapedeck pull gives the tape a fresh one), 3 records under 3 request keys`);
    expect(lines.slice(1, 3)).toEqual(bad.map((b) => expect.stringContaining(`E_TAPE_CORRUPT at record ${b.seq}: ${place(ns, b)} is not decodable msgpack`)));
    expect(lines[3]).toBe(`2 problem(s); the 3 records counted above are intact (tapedeck prune '${typed()}' --namespace ${ns} removes the records that do not read; tapedeck pull leaves them out; put the store's password in place of <password>).`);
    // ?namespace= names it as --namespace does.
    expect(run(['verify', `${redis.current.url}?namespace=${ns}`]).stdout).toBe(verify.stdout);

    const prune = run(['prune', redis.current.url, '--namespace', ns]);
    expect(prune.status, prune.stderr).toBe(0);
    expect(prune.stderr.trim().split('\n')).toEqual(bad.map((b) => expect.stringMatching(new RegExp(`^removed ${place(ns, b).replace(/[{}()]/g, '\\$&')}: not decodable msgpack`))));
    expect(prune.stderr).not.toMatch(TAPE_TERMS);
    const clean = run(['verify', redis.current.url, '--namespace', ns]);
    expect(clean.status).toBe(0);
    expect(clean.stdout.trim().split('\n').at(-1)).toBe('ok');
    for (const r of [pull, verify, prune, clean]) expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD);
  });

  it.skipIf(!existsSync(CLI))('tapedeck verify on a namespace with nothing in it: E_TAPE_NOT_FOUND naming the namespace and how to fix it; a bad argument is a usage error', () => {
    const ns = freshNamespace('empty');
    const r = run(['verify', redis.current.url, '--namespace', ns]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`tapedeck: E_TAPE_NOT_FOUND ${masked()} (namespace ${ns}) holds no recordings: the URL, database or namespace may be wrong.`);
    expect(r.stderr).toContain('--namespace NS');
    expect(r.stderr).not.toContain(PASSWORD);
    const two = run(['verify', redis.current.url, 'extra']);
    expect(two.status).not.toBe(0);
    expect(two.stderr).toContain('tapedeck verify: give one redis:// or rediss:// URL');
    expect(run(['verify', redis.current.url, '--help']).stdout).toContain('Usage: tapedeck verify <redis-url> [--namespace NS]');
  });

  it('a record that does not decode says where it is in Redis and how to remove it, not a byte offset', async () => {
    const { ns, bad } = await damaged();
    const backend = new RedisBackend(redis.current.url, { namespace: ns });
    try {
      const { records, warnings } = await backend.load({ create: false });
      // Bytes that name no key are skipped when the namespace is read, and said.
      expect(warnings.map((w) => w.offset)).toEqual([bad[0]!.seq]);
      expect(warnings[0]!.message).toContain(place(ns, bad[0]!));
      expect(warnings[0]!.message).not.toMatch(TAPE_TERMS);
      // The cut record's key reads (it is indexed); it fails when it is decoded.
      const cut = records.find((r) => r.at === bad[1]!.seq)!;
      let err: unknown;
      try {
        cut.value();
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code: 'E_TAPE_CORRUPT' });
      const message = (err as Error).message;
      expect(message).toContain(place(ns, bad[1]!));
      expect(message).toContain(`tapedeck prune '${typed()}' --namespace ${ns}`);
      expect(message).not.toMatch(TAPE_TERMS);
      expect(message).not.toContain(PASSWORD);
    } finally {
      await backend.close();
    }
  });

  it.skipIf(!existsSync(CLI))('createFetch replaying a damaged recording names the verify command for the namespace, and that command lists it', async () => {
    const ns = freshNamespace('fetch');
    const store = `${redis.current.url}?namespace=${ns}`;
    const up = await startUpstream();
    const call = (f: typeof fetch) =>
      f(`${up.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello damage' }] }),
      });
    try {
      const rec = createFetch({ store, mode: 'record' });
      expect((await call(rec)).status).toBe(200);
      await rec.close();
    } finally {
      await up.close();
    }
    const [{ key: ckey, seq }] = await (async () => {
      const r = await RedisRecords.open(store);
      try {
        return await r.readAll();
      } finally {
        await r.close();
      }
    })();
    // What the trial did: another tool overwrote the record in Redis.
    await rawCommand(redis.current.port, ['HSET', `${ns}:{${ns}:${ckey}}:r`, String(seq), 'garbage-not-msgpack'], { password: ['app', PASSWORD] });

    const rep = createFetch({ store, mode: 'replay', onWarning: () => {} });
    const res = await call(rep);
    const text = await res.text();
    await rep.close();
    expect(res.headers.get('x-tapedeck-error')).toBe('E_TAPE_DAMAGED');
    const named = /`tapedeck verify '([^']+)' --namespace (\S+)` lists the damage/.exec(text);
    expect(named, text).not.toBeNull();
    expect(named![1]).toBe(typed());
    expect(text).not.toContain(PASSWORD);
    // The command named works (with the password the user has in place of <password>).
    const verify = run(['verify', named![1]!.replace('<password>', PASSWORD), '--namespace', named![2]!]);
    expect(verify.status).toBe(1);
    expect(verify.stdout).toContain(`E_TAPE_CORRUPT at record ${seq}: ${place(ns, { key: ckey, seq })}`);
  });
});
