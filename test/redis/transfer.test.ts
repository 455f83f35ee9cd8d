// push/pull between tapes and a real Redis (single node and 3-master cluster): a tape pushed into
// an empty namespace and pulled back is the same file, byte for byte; through the CLI too, with
// the password in the URL never printed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { afterAll, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { collectionKeyOf, RedisRecords } from '../../src/store/backends/redis.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { pullTape, pushTape } from '../../src/store/redis-transfer.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { importTempPath } from '../../src/store/rewrite-temps.ts';
import { openTapeWriter } from '../../src/store/tape-writers.ts';
import { rejectionOf } from '../helpers.ts';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster } from './setup.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-transfer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `t${n++}.tape`);
const packr = new Packr({ useRecords: false });
const CLI = join(import.meta.dirname, '../../dist/cli.js');

/** A tape as users make them: ReplayCache records with repeats, plus other record kinds. */
async function sampleTape(): Promise<string> {
  const tape = fresh();
  const cache = await ReplayCache.open(tape, { mode: 'record' });
  const req = (q: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] });
  await cache.put(req('one'), { text: 'first answer' });
  await cache.put(req('one'), { text: 'second answer to the same request' });
  await cache.put(req('two'), { text: 'two', when: new Date(0), bytes: new Uint8Array([0, 1, 2]) }, { raw: { body: 'raw \u00e9 bytes', contentType: 'text/plain' } });
  await cache.close();
  await appendRecords(tape, [{ v: 1, kind: 'http', key: 'abc', route: 'POST /x', m: new Map([[1, 'one']]) }, { note: 'a record with no key' }]);
  return tape;
}

function roundTrips(label: string, server: () => { url: string }) {
  it(`${label}: push then pull gives the same bytes`, async () => {
    const tape = await sampleTape();
    const ns = freshNamespace('rt');
    const pushed = await pushTape(tape, server().url, { namespace: ns });
    expect(pushed).toMatchObject({ records: 5, headerStored: true, warnings: [] });
    const out = fresh();
    const pulled = await pullTape(server().url, out, { namespace: ns });
    expect(pulled.records).toBe(5);
    expect(readFileSync(out).equals(readFileSync(tape))).toBe(true);
  });

  // Run again (or after a pull, pushed back), push wrote every record a second time: each call
  // then got each answer twice in turn. Records the namespace holds are not pushed again.
  it(`${label}: a second push of the same tape writes nothing; a tape with one more repeat pushes that one`, async () => {
    const tape = await sampleTape();
    const ns = freshNamespace('again');
    expect(await pushTape(tape, server().url, { namespace: ns })).toMatchObject({ records: 5, already: 0 });
    expect(await pushTape(tape, server().url, { namespace: ns })).toMatchObject({ records: 0, already: 5 });
    // One more copy of a record the namespace has once: one pushed.
    const more = fresh();
    writeFileSync(more, readFileSync(tape));
    const first = (await readTape(tape)).records[0]!.value;
    await appendRecords(more, [first]);
    expect(await pushTape(more, server().url, { namespace: ns })).toMatchObject({ records: 1, already: 5 });
    const out = fresh();
    expect((await pullTape(server().url, out, { namespace: ns })).records).toBe(6);
    const r = spawnSync(process.execPath, [CLI, 'push', tape, server().url, '--namespace', ns], { encoding: 'utf8' });
    expect(r.stdout).toContain('pushed 0 records');
    expect(r.stdout).toContain('(5 already there, not pushed again)');
  });

  it(`${label}: arbitrary record values survive push and pull byte for byte`, async () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), fc.uint8Array({ maxLength: 40 }));
    const record = fc.record({ v: fc.constant(1), key: fc.constantFrom('a', 'b', 'c'), value: fc.dictionary(fc.string({ maxLength: 8 }), value, { maxKeys: 5 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 12 }), async (records) => {
        const tape = fresh();
        await createTape(tape, { created: '2026-01-01T00:00:00.000Z' });
        await appendRecords(tape, records);
        const ns = freshNamespace('prop');
        await pushTape(tape, server().url, { namespace: ns });
        const out = fresh();
        await pullTape(server().url, out, { namespace: ns });
        expect(readFileSync(out).equals(readFileSync(tape))).toBe(true);
      }),
      { numRuns: 10 },
    );
  });
}

redisDescribe('push and pull, single node', () => {
  const redis = useRedis({ password: 'pu5h-secret' });
  roundTrips('single node', () => redis.current);

  it('a damaged record is reported and skipped; the good ones are pushed', async () => {
    const tape = await sampleTape();
    const bytes = readFileSync(tape);
    const { records } = await readTape(tape);
    const victim = records[1]!;
    bytes[victim.offset + 20] = bytes[victim.offset + 20]! ^ 0xff; // breaks its CRC
    writeFileSync(tape, bytes);
    const ns = freshNamespace('damaged');
    const r = await pushTape(tape, redis.current.url, { namespace: ns });
    expect(r.records).toBe(4);
    expect(r.warnings.map((w) => w.code)).toEqual(['E_TAPE_CORRUPT']);
    const out = fresh();
    await pullTape(redis.current.url, out, { namespace: ns });
    expect((await readTape(out)).records.map((x) => x.value)).toEqual(records.filter((x) => x !== victim).map((x) => x.value));
  });

  it('pull of records written by proxies (no pushed header) makes a valid tape; pull never overwrites without force', async () => {
    const ns = freshNamespace('noheader');
    const store = await RedisRecords.open(redis.current.url, { namespace: ns });
    const payloads = [{ v: 1, key: 'k1', value: 1 }, { v: 1, key: 'k2', value: 2 }].map((v) => {
      const p = Buffer.from(packr.pack(v));
      return { key: collectionKeyOf(p), payload: p };
    });
    try {
      await store.append(payloads);
    } finally {
      await store.close();
    }
    const out = fresh();
    await pullTape(redis.current.url, out, { namespace: ns });
    const back = await readTape(out);
    expect(back.warnings).toEqual([]);
    expect(back.records).toHaveLength(2);
    let err: unknown;
    try {
      await pullTape(redis.current.url, out, { namespace: ns });
    } catch (e) {
      err = e;
    }
    expect((err as TapedeckError).code).toBe('E_TAPE_EXISTS');
    await pullTape(redis.current.url, out, { namespace: ns, force: true });
  });

  it('pull --force does not replace a tape a writer has open (E_TAPE_IN_USE naming it, exit 1 on the command line); an ended writer does not block it', async () => {
    const ns = freshNamespace('in-use');
    await pushTape(await sampleTape(), redis.current.url, { namespace: ns });
    // The tape a recording proxy has open: what it holds was acknowledged to the proxy's clients.
    const tape = await sampleTape();
    await appendRecords(tape, [{ v: 1, key: 'acknowledged', value: 'recorded by the proxy' }]);
    const held = readFileSync(tape);
    const writer = await openTapeWriter(tape, 'proxy-run', 30_000, 'record');
    try {
      const e = await rejectionOf(pullTape(redis.current.url, tape, { namespace: ns, force: true }));
      expect(e.code, e.message).toBe('E_TAPE_IN_USE');
      expect(e.message).toContain(`Tape ${tape} is open for recording by a writer (pid ${process.pid} on `);
      expect(e.message).toContain('run proxy-run');
      expect(e.details.writers).toEqual([expect.objectContaining({ pid: process.pid, run: 'proxy-run' })]);
      expect(e.hint).toMatch(/then pull again; or pull to another path/);
      if (existsSync(CLI)) {
        const r = spawnSync(process.execPath, [CLI, 'pull', redis.current.url, tape, '--namespace', ns, '--force'], { encoding: 'utf8' });
        expect(r.stderr).toMatch(/^tapedeck: E_TAPE_IN_USE Tape .* is open for recording by a writer \(pid \d+ on .*, run proxy-run, registered in .*\.writers\/\).*\nhint: Let the run that records to it finish/);
        expect(r.status).toBe(1);
      }
      expect(readFileSync(tape).equals(held)).toBe(true);
      expect(readdirSync(dirname(tape)).filter((n) => /\.pull(\.tmp)?$/.test(n))).toEqual([]);
    } finally {
      await writer.release();
    }
    // A writer that ended without closing (its process is gone) has nothing more to lose.
    mkdirSync(`${tape}.writers`, { recursive: true });
    writeFileSync(join(`${tape}.writers`, 'ended.json'), JSON.stringify({ run: 'ended-run', mode: 'record', pid: 2 ** 22 + 1, host: hostname() }));
    expect((await pullTape(redis.current.url, tape, { namespace: ns, force: true })).records).toBe(5);
    expect((await readTape(tape)).records).toHaveLength(5);
  });

  it("a pull killed midway leaves its file beside the tape; the next pull removes it once that process is gone, never a live one's", async () => {
    const ns = freshNamespace('killed-pull');
    await pushTape(await sampleTape(), redis.current.url, { namespace: ns });
    const out = fresh();
    // A process that has exited: its pid is dead on this host (the name a pull of it made).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    expect(deadPid).toBeGreaterThan(0);
    const named = (pid: number) => importTempPath(out, 'pull').replace(`.${process.pid}.`, `.${pid}.`);
    const left = named(deadPid);
    const live = named(process.ppid); // the test runner: alive
    writeFileSync(left, 'half a pulled tape');
    writeFileSync(live, 'a pull still running');
    const old = join(dirname(out), `.${out.split('/').pop()}.${deadPid}.0a1b2c3d.pull`); // an older version's name: judged by nobody
    writeFileSync(old, '');
    await pullTape(redis.current.url, out, { namespace: ns });
    expect((await readTape(out)).records).toHaveLength(5);
    expect(existsSync(left)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(old)).toBe(true);
    // The pull's own file went into place: nothing of it is left.
    expect(readdirSync(dirname(out)).filter((n) => n.includes(`.${process.pid}.`) && n.includes('.pull'))).toEqual([]);
  });

  it.skipIf(!existsSync(CLI))('tapedeck push / pull from the command line, the password never printed', async () => {
    const tape = await sampleTape();
    const ns = freshNamespace('cli');
    const out = fresh();
    const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    const push = run(['push', tape, redis.current.url, '--namespace', ns]);
    expect(push.stderr).toBe('');
    expect(push.status).toBe(0);
    expect(push.stdout).toMatch(/pushed 5 records .* to redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/);
    const pull = run(['pull', redis.current.url, out, '--namespace', ns]);
    expect(pull.status).toBe(0);
    expect(readFileSync(out).equals(readFileSync(tape))).toBe(true);
    // Every error path of the two commands: none prints the password.
    const bad = [
      run(['push', tape, redis.current.url.replace('pu5h-secret', 'not-the-pu5h-secret'), '--namespace', ns]), // auth
      run(['pull', redis.current.url.replace(/:\d+$/, ':1'), fresh()]), // down
      run(['pull', redis.current.url, out, '--namespace', ns]), // exists
      run(['push', redis.current.url, tape]), // arguments swapped
      run(['pull', redis.current.url, out, '--bogus']), // unknown flag
      run(['push', tape, `${redis.current.url}/notadb`]), // bad URL
    ];
    for (const r of bad) {
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/^tapedeck: E_[A-Z_]+ /);
      expect(`${r.stdout}${r.stderr}`).not.toContain('pu5h-secret');
    }
    expect(bad[0]!.stderr).toContain('E_STORE_UNAVAILABLE');
    expect(bad[1]!.stderr).toContain('E_STORE_UNAVAILABLE');
    expect(bad[2]!.stderr).toContain('E_TAPE_EXISTS');
  });
});

redisDescribe('push and pull, 3-master cluster', () => {
  const cluster = useRedisCluster();
  roundTrips('cluster', () => cluster.current);
});

redisDescribe('push and pull over TLS', () => {
  const redis = useRedis({ password: 'tl5-pu5h', tls: true });

  it.skipIf(!existsSync(CLI))('the CLI trusts a private CA through NODE_EXTRA_CA_CERTS; round trip byte for byte', async () => {
    const tape = await sampleTape();
    const out = fresh();
    const ns = freshNamespace('tls-cli');
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: redis.current.caFile };
    const push = spawnSync(process.execPath, [CLI, 'push', tape, redis.current.url, '--namespace', ns], { encoding: 'utf8', env });
    expect(push.stderr).toBe('');
    expect(push.stdout).toContain('rediss://:***@127.0.0.1');
    const pull = spawnSync(process.execPath, [CLI, 'pull', redis.current.url, out, '--namespace', ns], { encoding: 'utf8', env });
    expect(pull.status).toBe(0);
    expect(readFileSync(out).equals(readFileSync(tape))).toBe(true);
    expect(push.stdout + pull.stdout + pull.stderr).not.toContain('tl5-pu5h');
  });
});
