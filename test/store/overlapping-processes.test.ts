// Four CI-style processes recording the same request into one tape or Redis namespace, their
// opens, recordings and closes interleaved in a fixed order (each process is its own run):
//   P1 opens and records #1; P2 and P3 open (both count #1, P1 being open) and record #2 and #3
//   (P3 did not see #2); P1 closes; P4 opens (P1 has ended: #1 is P4's to replace; P2 and P3 are
//   open: kept and counted), records #4 and closes, replacing #1; P2 and P3 close.
// The store then holds #2, #3, #4 numbered 1, 1, 2: P2 counted #1, which is gone, and P3 missed
// #2. Nothing was lost: a replay serves #2, #3, #4 (docs/modes.md rule 16). Before, its 1st call
// was a false E_TAPE_DAMAGED "Recording 1 ... is missing". Runs on dist (npm run build first).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { storeBackend } from '../../src/store/backends/open.ts';
import { redisMissing, startRedis } from '../redis/harness.mjs';
import '../redis/setup.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const DIST = pathToFileURL(join(import.meta.dirname, '../../dist/')).href;
const WORKER = join(import.meta.dirname, 'overlapping-worker.mjs');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-overlapping-processes-'));
const redis = redisMissing() ? undefined : await startRedis();
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A writer process, and a way to send it a line and wait for its answer. */
interface Writer {
  child: ChildProcessWithoutNullStreams;
  say(line: 'ask' | 'close'): Promise<string>;
}

async function writer(where: string): Promise<Writer> {
  // Each process its own run, as separate CI jobs are.
  const env = { ...process.env };
  delete env.TAPEDECK_RUN_ID;
  const child = spawn(process.execPath, [WORKER, DIST, where, up.url], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const l = lines.shift();
      if (l !== undefined) return resolve(l);
      waiting.push(resolve);
      child.once('exit', (code) => reject(new Error(`writer exited ${code}: ${err}`)));
    });
  expect(await next()).toBe('open');
  return {
    child,
    say: (line) => {
      child.stdin.write(`${line}\n`);
      return next();
    },
  };
}

const stores: { name: string; make(i: number): string }[] = [{ name: 'tape file', make: (i) => join(dir, `p${i}.tape`) }];
if (redis) stores.push({ name: 'Redis namespace', make: (i) => `${redis.url}/0?namespace=overlap-processes-${process.pid}-${i}` });

describe.each(stores)('four processes recording one request into one $name', (sc) => {
  it('every recording that stays is served, in the order it was acknowledged, with no E_TAPE_DAMAGED', async () => {
    const where = sc.make(0);
    const id = (answer: string) => answer.replace(/^recorded /, '');
    const p1 = await writer(where);
    const r1 = id(await p1.say('ask'));
    const p2 = await writer(where);
    const p3 = await writer(where);
    const r2 = id(await p2.say('ask'));
    const r3 = id(await p3.say('ask'));
    expect(await p1.say('close')).toBe('closed');
    const p4 = await writer(where);
    const r4 = id(await p4.say('ask'));
    expect(await p4.say('close')).toBe('closed'); // replaces #1: its run had ended
    expect(await p2.say('close')).toBe('closed');
    expect(await p3.say('close')).toBe('closed');
    expect(new Set([r1, r2, r3, r4]).size).toBe(4);
    // What the writers numbered them: P2 counted #1 (since replaced), P3 did not see #2.
    const b = storeBackend(where);
    try {
      const loaded = await b.load({ create: false });
      const list = loaded.table ? Array.from({ length: loaded.table.length }, (_, i) => loaded.table!.record(i)) : loaded.records;
      expect(list.map((r) => r.head(['repeat']).repeat)).toEqual([1, 1, 2]);
    } finally {
      await b.close();
    }
    const replay = createFetch({ ...(where.startsWith('redis') ? { store: where } : { tape: where }), mode: 'replay', strictOrder: true, summary: false });
    try {
      const got: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await replay('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared' }] }) });
        const answer = (await res.json()) as { id?: string; error?: { code: string } };
        got.push(res.status === 200 ? answer.id! : answer.error!.code);
      }
      // strictOrder: past the last recording, a miss.
      expect(got).toEqual([r2, r3, r4, 'E_MISS']);
    } finally {
      await replay.close();
    }
  }, 60_000);
});
