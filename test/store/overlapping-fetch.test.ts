// Three createFetch record writers on one tape or Redis namespace, all open at once, each
// recording the same request: A and B open before either records, C opens once both have. Their
// records say `repeat` 0, 0 and 2 (each writer counted what it saw). A replay must serve A, B, C
// in that order (docs/modes.md rule 16), through createFetch (recordings found by their key) and
// the proxy (by key, and through the route's matcher once a miss made it), with strictOrder too.
// Before, the 3rd call was a 500 E_TAPE_DAMAGED ("Recording 2 ... is missing") on a sound store,
// and C's recording came only on a 4th call.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch, type TapedeckFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { redisMissing, startRedis } from '../redis/harness.mjs';
import '../redis/setup.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-overlapping-fetch-'));
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

let n = 0;
const CHAT = '/v1/chat/completions';
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared' }] });
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
// createFetch replays on the host the recordings were made for (the fake upstream's; a loopback
// host's port is not compared): nothing listens there.
const REPLAYED_AT = 'http://127.0.0.1:9';

const stores: { name: string; make(): { tape: string } | { store: string } }[] = [{ name: 'tape file', make: () => ({ tape: join(dir, `t${n++}.tape`) }) }];
if (redis) stores.push({ name: 'Redis namespace', make: () => ({ store: `${redis.url}/0?namespace=overlap-fetch-${process.pid}-${n++}` }) });

/** The answer's text, or the error's code and message. */
async function ask(f: typeof fetch, base: string): Promise<string> {
  const res = await f(`${base}${CHAT}`, post);
  const text = await res.text();
  if (res.status === 200) return text;
  const err = JSON.parse(text) as { error: { code: string; message: string } };
  return `${res.status} ${err.error.code}: ${err.error.message}`;
}

/** A, B and C, as in the scenario above; returns what each recorded. */
async function recordOverlapping(where: { tape: string } | { store: string }): Promise<string[]> {
  const open = (): TapedeckFetch => createFetch({ ...where, mode: 'record', summary: false });
  const a = open();
  const b = open();
  await Promise.all([a.ready, b.ready]); // both open before either records
  try {
    const fromA = await ask(a, up.url);
    const fromB = await ask(b, up.url);
    const c = open();
    try {
      await c.ready; // while A and B are open: their recordings are kept and counted
      const fromC = await ask(c, up.url);
      return [fromA, fromB, fromC];
    } finally {
      await c.close();
    }
  } finally {
    await a.close();
    await b.close();
  }
}

describe.each(stores)('three record writers open at once on one $name', (sc) => {
  it('createFetch replays A, B, C in their turns, then C again', async () => {
    const where = sc.make();
    const live = await recordOverlapping(where);
    expect(new Set(live).size).toBe(3);
    const r = createFetch({ ...where, mode: 'replay', summary: false });
    try {
      const got: string[] = [];
      for (let i = 0; i < 4; i++) got.push(await ask(r, REPLAYED_AT));
      expect(got).toEqual([...live, live[2]]);
    } finally {
      await r.close();
    }
  });

  it.each([
    ['default', {}],
    ['strictOrder', { strictOrder: true }],
  ] as const)('the proxy replays A, B, C in their turns (%s), also once a miss made the route\'s matcher', async (_name, opts) => {
    const where = sc.make();
    const live = await recordOverlapping(where);
    for (const missFirst of [false, true]) {
      const proxy = await startProxy({ ...where, mode: 'replay', port: 0, onWarning: () => {}, ...opts });
      try {
        // A request never recorded, on the same route: the route's LLM recordings are then
        // filed for its matcher, with a stand-in for each turn a lost recording keeps.
        if (missFirst) expect((await fetch(`${proxy.url}${CHAT}`, { ...post, body: body.replace('shared', 'never recorded') })).status).not.toBe(200);
        const got: string[] = [];
        for (let i = 0; i < 3; i++) got.push(await ask(fetch, proxy.url));
        expect(got).toEqual(live);
      } finally {
        await proxy.close();
      }
    }
  });
});

describe('a recording that really is lost still keeps its turn', () => {
  it('one writer\'s three recordings, the 2nd damaged on the tape: #1, E_TAPE_DAMAGED, #3 through createFetch and the proxy\'s matcher', async () => {
    const tape = join(dir, `t${n++}.tape`);
    const rec = createFetch({ tape, mode: 'record', summary: false });
    const live: string[] = [];
    try {
      for (let i = 0; i < 3; i++) live.push(await ask(rec, up.url));
    } finally {
      await rec.close();
    }
    const bytes = readFileSync(tape);
    const at = (await scanTape(tape)).frames[1]!.offset + 30;
    bytes[at] = bytes[at]! ^ 0x5a;
    writeFileSync(tape, bytes);
    const code = (answer: string) => (answer.startsWith('500 E_TAPE_DAMAGED') ? 'E_TAPE_DAMAGED' : answer);
    const r = createFetch({ tape, mode: 'replay', summary: false, onWarning: () => {} });
    try {
      const got: string[] = [];
      for (let i = 0; i < 3; i++) got.push(code(await ask(r, REPLAYED_AT)));
      expect(got).toEqual([live[0], 'E_TAPE_DAMAGED', live[2]]);
    } finally {
      await r.close();
    }
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      expect((await fetch(`${proxy.url}${CHAT}`, { ...post, body: body.replace('shared', 'never recorded') })).status).not.toBe(200);
      const got: string[] = [];
      for (let i = 0; i < 3; i++) got.push(code(await ask(fetch, proxy.url)));
      expect(got).toEqual([live[0], 'E_TAPE_DAMAGED', live[2]]);
    } finally {
      await proxy.close();
    }
  });
});
