// Nothing is acknowledged that is not stored (docs/modes.md, docs/proxy.md): when the record of
// an answer cannot be written (the tape lock held past its timeout, a full disk, Redis or a
// cluster master gone), the proxy and createFetch answer 503 E_RECORD_FAILED for a plain answer
// and cut a stream, never a 200 that looks recorded; with onRecordFailure 'serve' the live
// answer goes out marked `x-tapedeck-recorded: false` and is counted. Every answer that did go
// out as recorded is in the store.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import type { RecordBackend } from '../../src/store/backend.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape, withTapeLock } from '../../src/store/tape-file.ts';
import { rawCommand, redisMissing, startRedisCluster } from '../redis/harness.mjs';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { CLI } from './serve-cli.ts';
import { canMountTmpfs } from '../full-disk.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-record-failure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `f${n++}.tape`);
const chat = (text: string, stream = false) => JSON.stringify({ model: 'gpt-4o-mini', ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content: text }] });
const prompts = async (tape: string) =>
  (await readTape(tape)).records
    .map((r) => r.value)
    .filter(isHttpRecord)
    .map((r) => (r.request.body as { messages: { content: string }[] }).messages[0]!.content);

/** A POST through the proxy with node:http, so the trailers of a stream can be read. */
function post(url: string, body: string): Promise<{ status: number; headers: Record<string, unknown>; trailers: Record<string, unknown>; text: string; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const r = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      let cut = false;
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('aborted', () => (cut = true));
      res.on('error', () => (cut = true));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, text, cut: cut || !res.complete }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

type Entry = 'proxy' | 'createFetch';
interface Answer {
  status: number;
  match: string | null;
  recorded: string | null;
  /** The body was read to a clean end. */
  whole: boolean;
  text: string;
  key: string | null;
}

/** Sends one request through the proxy or createFetch on `store`; `fetchIt` reads the answer. */
async function through(entry: Entry, opts: { store: RecordBackend | string; mode?: 'record' | 'update'; onRecordFailure?: 'serve' }, up: Upstream) {
  if (entry === 'proxy') {
    const proxy = await startProxy({ upstream: up.url, ...opts, mode: opts.mode ?? 'record', port: 0, onWarning: () => {} });
    return {
      async send(body: string): Promise<Answer> {
        const r = await post(`${proxy.url}/v1/chat/completions`, body);
        const recorded = (r.trailers['x-tapedeck-recorded'] ?? r.headers['x-tapedeck-recorded'] ?? null) as string | null;
        return { status: r.status, match: (r.headers['x-tapedeck-match'] as string) ?? null, recorded, whole: !r.cut, text: r.text, key: (r.headers['x-tapedeck-key'] as string) ?? null };
      },
      stats: () => proxy.handler.stats(),
      close: () => proxy.close(),
    };
  }
  const f = createFetch({ ...opts, mode: opts.mode ?? 'record', onWarning: () => {} });
  return {
    async send(body: string): Promise<Answer> {
      const res = await f(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      let text = '';
      let whole = true;
      try {
        text = await res.text();
      } catch {
        whole = false;
      }
      return { status: res.status, match: res.headers.get('x-tapedeck-match'), recorded: res.headers.get('x-tapedeck-recorded'), whole, text, key: res.headers.get('x-tapedeck-key') };
    },
    stats: () => f.stats(),
    close: () => f.close(),
  };
}

describe.each(['proxy', 'createFetch'] as const)('%s with the tape lock held past its timeout', (entry) => {
  it('a plain answer is a 503 E_RECORD_FAILED and a stream is cut; nothing of them is on the tape; afterwards both are recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const t = await through(entry, { store: new TapeBackend(tape, { lock: { timeoutMs: 150 } }) }, up);
    try {
      await withTapeLock(tape, async () => {
        const plain = await t.send(chat('while locked'));
        expect(plain.status).toBe(503);
        const err = JSON.parse(plain.text) as { error: { code: string; message: string; tapedeck: { hint: string } } };
        expect(err.error.code).toBe('E_RECORD_FAILED');
        expect(err.error.message).toContain(tape);
        expect(err.error.message).toContain('E_TAPE_LOCKED');
        expect(err.error.tapedeck.hint).toContain('--on-record-failure serve');
        const stream = await t.send(chat('stream while locked', true));
        expect(stream.status).toBe(200);
        expect(stream.match).toBe('recording');
        expect(stream.whole).toBe(false);
        // The final event waits for the record: a reader that stops at [DONE] never takes the
        // stream for a whole answer.
        if (entry === 'proxy') expect(stream.text).toContain('data: {');
        expect(stream.text).not.toContain('[DONE]');
      });
      const plain = await t.send(chat('unlocked'));
      expect([plain.status, plain.match, plain.recorded, plain.whole]).toEqual([200, 'recorded', 'true', true]);
      const stream = await t.send(chat('stream unlocked', true));
      expect([stream.status, stream.match, stream.whole]).toEqual([200, 'recording', true]);
      if (entry === 'proxy') expect(stream.recorded).toBe('true'); // the trailer
      expect(stream.text).toContain('data: [DONE]');
      const st = await t.stats();
      expect(st.appendFailures).toBe(2);
      // A failed record is counted as such, never as recorded; and once (createFetch counted
      // the plain answer's also as an error: its summary said "2 answers not recorded" for 1).
      expect(st).toMatchObject({ recorded: 2, byMatch: { recorded: 2, recordFailed: 2 } });
      if (entry === 'createFetch') expect(st.errors, 'errors').toBe(0);
    } finally {
      await t.close();
      await up.close();
    }
    expect((await prompts(tape)).sort()).toEqual(['stream unlocked', 'unlocked']);
  });

  it("with onRecordFailure 'serve': the live answers, marked unrecorded and counted", async () => {
    const up = await startUpstream();
    const tape = fresh();
    const t = await through(entry, { store: new TapeBackend(tape, { lock: { timeoutMs: 150 } }), onRecordFailure: 'serve' }, up);
    try {
      await withTapeLock(tape, async () => {
        const plain = await t.send(chat('served while locked'));
        expect([plain.status, plain.match, plain.recorded, plain.whole]).toEqual([200, 'recording', 'false', true]);
        expect(plain.text).toContain('served while locked');
        const stream = await t.send(chat('streamed while locked', true));
        expect([stream.status, stream.match, stream.whole]).toEqual([200, 'recording', true]);
        if (entry === 'proxy') expect(stream.recorded).toBe('false');
      });
      expect(await t.stats()).toMatchObject({ unrecorded: 2, appendFailures: 2 });
    } finally {
      await t.close();
      await up.close();
    }
    expect(await prompts(tape)).toEqual([]);
  });
});

/** Reads an event stream as a client that stops at `data: [DONE]` does: what it saw, and how it ended. */
async function untilDone(res: Response): Promise<{ events: string[]; done: boolean; error: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: string[] = [];
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { events, done: false, error: false };
      buf += decoder.decode(value, { stream: true });
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const data = buf.slice(0, end).split('\n').find((l) => l.startsWith('data: '))?.slice(6);
        buf = buf.slice(end + 2);
        if (data === undefined) continue;
        if (data === '[DONE]') {
          await reader.cancel();
          return { events, done: true, error: false };
        }
        events.push(data);
      }
    }
  } catch {
    return { events, done: false, error: true };
  }
}

describe('a streamed answer whose record fails', () => {
  it('proxy: three failed records are counted as recordFailed in /__tapedeck/stats, never as recorded', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const proxy = await startProxy({ upstream: up.url, store: new TapeBackend(tape, { lock: { timeoutMs: 100 } }), mode: 'record', port: 0, onWarning: () => {} });
    try {
      await withTapeLock(tape, async () => {
        for (let i = 0; i < 3; i++) expect((await post(`${proxy.url}/v1/chat/completions`, chat(`failing ${i}`))).status).toBe(503);
      });
      const stats = (await (await fetch(`${proxy.url}/__tapedeck/stats`)).json()) as { recorded: number; appendFailures: number; byMatch: Record<string, number> };
      expect(stats.recorded).toBe(0);
      expect(stats.appendFailures).toBe(3);
      expect(stats.byMatch).toMatchObject({ recorded: 0, recordFailed: 3 });
    } finally {
      await proxy.close();
      await up.close();
    }
  });

  it.each(['proxy', 'createFetch'] as const)('%s: a reader that stops at [DONE] never sees it, and the openai SDK raises', async (entry) => {
    const up = await startUpstream();
    const tape = fresh();
    const store = new TapeBackend(tape, { lock: { timeoutMs: 150 } });
    const proxy = entry === 'proxy' ? await startProxy({ upstream: up.url, store, mode: 'record', port: 0, onWarning: () => {} }) : undefined;
    const f = entry === 'createFetch' ? createFetch({ store, mode: 'record', onWarning: () => {} }) : undefined;
    const base = proxy ? `${proxy.url}/v1` : `${up.url}/v1`;
    const doFetch = (f ?? fetch) as typeof fetch;
    try {
      await withTapeLock(tape, async () => {
        const res = await doFetch(`${base}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat('raw reader', true) });
        expect(res.status).toBe(200);
        const read = await untilDone(res);
        expect(read.events.length).toBeGreaterThan(0); // the stream did flow as it came
        expect(read.done).toBe(false);
        expect(read.error).toBe(true);

        const client = new OpenAI({ apiKey: 'sk-test', baseURL: base, maxRetries: 0, fetch: doFetch });
        const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'sdk reader' }] });
        const parts: string[] = [];
        await expect(
          (async () => {
            for await (const chunk of stream) parts.push(chunk.choices[0]?.delta.content ?? '');
          })(),
        ).rejects.toThrow();
        expect(parts.join('')).toContain('Echo');
      });
      // Stored, the same stream ends with [DONE].
      const res = await doFetch(`${base}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat('raw reader after', true) });
      expect((await untilDone(res)).done).toBe(true);
    } finally {
      await proxy?.close();
      await f?.close();
      await up.close();
    }
    expect(await prompts(tape)).toEqual(['raw reader after']);
  });
});

// A real full disk: a 64 KiB tmpfs (mounting needs root; elsewhere this case says so and skips).
const canMount = canMountTmpfs(dir);

describe.each(['proxy', 'createFetch'] as const)('%s on a full disk', (entry) => {
  it.runIf(canMount)('every answer that went out as recorded is on the tape; the rest were 503 E_RECORD_FAILED', async () => {
    const mnt = join(dir, `full-${entry}`);
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]);
    const up = await startUpstream();
    const tape = join(mnt, 'full.tape');
    const t = await through(entry, { store: tape }, up);
    const ok: string[] = [];
    let failed = 0;
    try {
      for (let i = 0; i < 80; i++) {
        const text = `fill ${i} ${'x'.repeat(900)}`;
        const stream = i % 3 === 0;
        const a = await t.send(chat(text, stream));
        if (a.status === 200 && a.whole) {
          // createFetch has no trailers: a stream's outcome is its clean end.
          if (!(stream && entry === 'createFetch')) expect(a.recorded).toBe('true');
          ok.push(text);
        } else {
          failed++;
          if (a.status === 503) expect(JSON.parse(a.text).error.code).toBe('E_RECORD_FAILED');
          else expect(a.whole).toBe(false); // a stream, cut
        }
      }
      await t.close();
      expect(ok.length).toBeGreaterThan(5);
      expect(failed).toBeGreaterThan(5);
      expect((await prompts(tape)).sort()).toEqual(ok.sort());
    } finally {
      await t.close();
      await up.close();
      execFileSync('umount', [mnt]);
    }
  }, 60_000);
});

describe('a full disk at start', () => {
  it.runIf(canMount)('tapedeck serve and createFetch say E_TAPE_IO with the tape path, and leave nothing behind', async () => {
    const mnt = join(dir, 'full-at-start');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', mnt]);
    try {
      // Every block taken: the next file write is ENOSPC.
      writeFileSync(join(mnt, 'fill'), Buffer.alloc(4096));
      const tape = join(mnt, 'full.tape');
      for (const mode of ['record', 'update']) {
        const r = spawnSync(process.execPath, [CLI, 'serve', '--tape', tape, '--mode', mode, '--upstream', 'http://127.0.0.1:9', '--port', '0'], { encoding: 'utf8', timeout: 20_000 });
        expect(r.status, r.stderr).toBe(1);
        // The command line's hint for a full disk (the library's says to check free disk space).
        expect(r.stderr).toMatch(/^tapedeck: E_TAPE_IO Tape [^\n]*full\.tape[^\n]*ENOSPC[^\n]*\nhint: Free space there, or give a path on another disk\.\n$/);
      }
      // createFetch answers as the proxy would: an error in the provider's shape.
      const f = createFetch({ tape, mode: 'record' });
      const res = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat('x') });
      await f.close().catch(() => {});
      const err = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect([res.status, err.code]).toEqual([500, 'E_TAPE_IO']);
      expect(err.message).toContain(tape);
      // The system's words end without a full stop; the hint after them is a sentence of its own.
      expect(err.message).toMatch(/ENOSPC: no space left on device, \w+\. Check permissions/);
      expect(readdirSync(mnt)).toEqual(['fill']);
    } finally {
      execFileSync('umount', [mnt]);
    }
  }, 60_000);
});

describe('proxy on a Redis Cluster with a master killed', () => {
  it.skipIf(Boolean(redisMissing()))('every answer that went out as recorded is in the store; the others were 503 E_RECORD_FAILED', async () => {
    const cluster = await startRedisCluster();
    const up = await startUpstream();
    // A namespace whose own keys (the order counter) live on node 0, outside the slots of the
    // master that is killed (node 1 holds 5461-10922 as redis-cli --cluster create assigns them).
    let ns = '';
    for (let i = 0; ; i++) {
      ns = `master-killed-${process.pid}-${i}`;
      const slot = Number(/:(\d+)/.exec(String(await rawCommand(cluster.nodes[0]!.port, ['CLUSTER', 'KEYSLOT', `{${ns}}`])))?.[1]);
      if (slot < 5461) break;
    }
    const store = `${cluster.url}/0?namespace=${ns}`;
    // A record to the lost master's slots waits out the command deadline (twice: 10 s at the
    // default 5 s) unless the cluster has already marked the node failed: a 1 s deadline keeps
    // the test's time from swinging with the random namespace (3-104 s at 5 s).
    const backend = new RedisBackend(`${cluster.url}/0`, { namespace: ns, connect: { commandTimeoutMs: 1000 } });
    const t = await through('proxy', { store: backend, mode: 'update' }, up);
    // A reader connected while the whole cluster was up (a new client would wait for the lost node).
    const records = await RedisRecords.open(store);
    const ok: { key: string; text: string }[] = [];
    let failed = 0;
    try {
      expect((await t.send(chat('before the kill'))).status).toBe(200);
      // The masters left keep serving their slots (and the records there stay readable).
      for (const i of [0, 2]) await rawCommand(cluster.nodes[i]!.port, ['CONFIG', 'SET', 'cluster-require-full-coverage', 'no']);
      await cluster.killNode(1);
      for (let i = 0; i < 20; i++) {
        const text = `after the kill ${i}`;
        const a = await t.send(chat(text));
        if (a.status === 200) {
          expect([a.match, a.recorded]).toEqual(['recorded', 'true']);
          ok.push({ key: a.key!, text });
        } else {
          expect(a.status).toBe(503);
          expect(['E_RECORD_FAILED', 'E_STORE_UNAVAILABLE']).toContain(JSON.parse(a.text).error.code);
          failed++;
        }
      }
      expect(failed).toBeGreaterThan(0);
      expect(ok.length).toBeGreaterThan(0);
    } finally {
      await t.close().catch(() => {});
      await up.close();
    }
    // What went out as recorded is readable from the masters still up.
    try {
      for (const { key, text } of ok) {
        const stored = await records.read(`http:${key}`);
        expect(stored.length, text).toBe(1);
        expect(stored[0]!.payload.includes(Buffer.from(text)), text).toBe(true);
      }
    } finally {
      await records.close();
      await cluster.stop();
    }
  }, 120_000);
});
