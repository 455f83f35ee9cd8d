// Damage never moves an answer to another call (docs/modes.md): when a recording of a repeated
// request is damaged on the tape, the k-th call gets the k-th recording or E_TAPE_DAMAGED naming
// the damaged one and how to record it again, never its neighbour. Through the proxy (LLM
// requests go through the matcher, other requests by key) and createFetch; and a malformed
// record in a Redis namespace is reported when the store is opened.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { rawCommand, redisMissing, startRedis } from '../redis/harness.mjs';
import '../redis/setup.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-damage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `d${n++}.tape`);

const bodies = {
  llm: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'same question' }] }),
  json: JSON.stringify({ query: 'same lookup' }),
};
const paths = { llm: '/v1/chat/completions', json: '/v1/echo' };
// createFetch replays on the host the recordings were made for, the fake upstream's (a loopback
// host's port is not compared): nothing listens there.
const REPLAYED_AT = 'http://127.0.0.1:9';

/** Flips a byte inside the k-th record of a tape (its checksum then fails: the record is lost). */
async function damage(tape: string, k: number): Promise<void> {
  const scan = await scanTape(tape);
  const bytes = readFileSync(tape);
  const at = scan.frames[k]!.offset + 30;
  bytes[at] = bytes[at]! ^ 0x5a;
  writeFileSync(tape, bytes);
}

describe.each(['llm', 'json'] as const)('a %s request repeated three times, one recording damaged', (kind) => {
  for (const lost of [0, 1, 2]) {
    it.each(['proxy', 'createFetch'] as const)(`recording ${lost + 1} damaged, through %s: the others keep their turn`, async (entry) => {
      const up = await startUpstream();
      const tape = fresh();
      const rec = createFetch({ tape, mode: 'record' });
      const live: string[] = [];
      for (let i = 0; i < 3; i++) live.push(await (await rec(`${up.url}${paths[kind]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[kind] })).text());
      await rec.close();
      await up.close();
      expect(new Set(live).size).toBe(3); // three different answers
      await damage(tape, lost);
      const warnings: string[] = [];
      const proxy = entry === 'proxy' ? await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) }) : undefined;
      const f = entry === 'createFetch' ? createFetch({ tape, mode: 'replay', onWarning: (m) => warnings.push(m) }) : undefined;
      const base = proxy ? proxy.url : REPLAYED_AT;
      try {
        const got: string[] = [];
        // A 4th call asks for the last one again: the 3rd, damaged or not.
        for (let i = 0; i < 4; i++) {
          const res = await (proxy ? fetch : f!)(`${base}${paths[kind]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[kind] });
          const text = await res.text();
          if (res.status === 200) got.push(text);
          else {
            const err = JSON.parse(text) as { error: { code: string; message: string; tapedeck: { hint: string } } };
            expect(res.status).toBe(500);
            expect(err.error.code).toBe('E_TAPE_DAMAGED');
            expect(err.error.message).toMatch(new RegExp(`(${lost + 1}(st|nd|rd) recording|Recording ${lost + 1}) of`));
            expect(err.error.tapedeck.hint).toMatch(/record/);
            got.push('damaged');
          }
        }
        expect(got).toEqual([...live, live[2]!].map((t, i) => (Math.min(i, 2) === lost ? 'damaged' : t)));
        expect(warnings.join('\n')).toContain(tape);
      } finally {
        await proxy?.close();
        await f?.close();
      }
    });
  }
});

describe('the last recording damaged, through the proxy', () => {
  // One intact recording left: the proxy's fast path for a body that always gets the same
  // answer must not take it up; strictOrder (no repeats) and a custom match function neither.
  it.each([
    ['default', {}],
    ['strictOrder', { strictOrder: true }],
    ['a match function', { match: () => true }],
  ] as const)('two recordings of an LLM request, the 2nd damaged (%s): #1, then E_TAPE_DAMAGED every time', async (_name, opts) => {
    const up = await startUpstream();
    const tape = fresh();
    const rec = createFetch({ tape, mode: 'record' });
    const live: string[] = [];
    for (let i = 0; i < 2; i++) live.push(await (await rec(`${up.url}${paths.llm}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies.llm })).text());
    await rec.close();
    await up.close();
    await damage(tape, 1);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {}, ...opts });
    try {
      const got: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${proxy.url}${paths.llm}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies.llm });
        const text = await res.text();
        got.push(res.status === 200 ? text : (JSON.parse(text) as { error: { code: string } }).error.code);
      }
      expect(got).toEqual([live[0], 'E_TAPE_DAMAGED', 'E_TAPE_DAMAGED', 'E_TAPE_DAMAGED']);
    } finally {
      await proxy.close();
    }
  });
});

describe('a malformed record in a Redis namespace', () => {
  it.skipIf(Boolean(redisMissing()))
    .each(['llm', 'json'] as const)('the last of three %s recordings malformed: the 3rd call is E_TAPE_DAMAGED through the proxy and createFetch, not the 2nd again; the only one of another request too', async (kind) => {
      const redis = await startRedis();
      const up = await startUpstream();
      try {
        const ns = `damage-last-${kind}-${process.pid}`;
        const store = `${redis.url}/0?namespace=${ns}`;
        const rec = createFetch({ store, mode: 'record' });
        const live: string[] = [];
        for (let i = 0; i < 3; i++) live.push(await (await rec(`${up.url}${paths[kind]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[kind] })).text());
        // Another request, recorded once.
        const lonely = bodies[kind].replace('same', 'lonely');
        await (await rec(`${up.url}${paths[kind]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: lonely })).text();
        await rec.close();
        expect(new Set(live).size).toBe(3);
        const b = new RedisBackend(`${redis.url}/0`, { namespace: ns });
        for (const ckey of await (await b.records()).keys()) {
          const stored = await (await b.records()).read(ckey);
          // The third of the three, and the only one of the other.
          await rawCommand(redis.port, ['HSET', `${ns}:{${ns}:${ckey}}:r`, String(stored.at(-1)!.seq), 'not a record']);
        }
        await b.close();
        for (const entry of ['proxy', 'createFetch'] as const) {
          const proxy = entry === 'proxy' ? await startProxy({ store, mode: 'replay', port: 0, onWarning: () => {} }) : undefined;
          const f = entry === 'createFetch' ? createFetch({ store, mode: 'replay', onWarning: () => {} }) : undefined;
          try {
            const got: string[] = [];
            for (let i = 0; i < 4; i++) {
              const res = await (proxy ? fetch : f!)(`${proxy ? proxy.url : REPLAYED_AT}${paths[kind]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[kind] });
              const text = await res.text();
              got.push(res.status === 200 ? text : (JSON.parse(text) as { error: { code: string } }).error.code);
            }
            expect(got, entry).toEqual([live[0], live[1], 'E_TAPE_DAMAGED', 'E_TAPE_DAMAGED']);
            // Its only recording lost: Redis knows whose it was, so not a miss.
            const res = await (proxy ? fetch : f!)(`${proxy ? proxy.url : REPLAYED_AT}${paths[kind]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: lonely });
            expect((JSON.parse(await res.text()) as { error: { code: string } }).error.code, entry).toBe('E_TAPE_DAMAGED');
          } finally {
            await proxy?.close();
            await f?.close();
          }
        }
      } finally {
        await up.close();
        await redis.stop();
      }
    });

  it.skipIf(Boolean(redisMissing()))('is reported when the proxy opens the store, and its call is E_TAPE_DAMAGED', async () => {
    const redis = await startRedis();
    const up = await startUpstream();
    try {
      const ns = `damage-${process.pid}`;
      const rec = createFetch({ store: `${redis.url}/0?namespace=${ns}`, mode: 'record' });
      for (let i = 0; i < 2; i++) await (await rec(`${up.url}${paths.json}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies.json })).text();
      await rec.close();
      const b = new RedisBackend(`${redis.url}/0`, { namespace: ns });
      const store = await b.records();
      const [ckey] = await store.keys();
      const [first] = await store.read(ckey!);
      await rawCommand(redis.port, ['HSET', `${ns}:{${ns}:${ckey}}:r`, String(first!.seq), 'not a record']);
      await b.close();
      const warnings: string[] = [];
      const proxy = await startProxy({ store: `${redis.url}/0?namespace=${ns}`, mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) });
      try {
        expect(warnings.join('\n')).toMatch(/record \d+ under .* is malformed/);
        const res = await fetch(`${proxy.url}${paths.json}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies.json });
        expect(res.status).toBe(500);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_TAPE_DAMAGED');
        expect((await fetch(`${proxy.url}${paths.json}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies.json })).status).toBe(200);
      } finally {
        await proxy.close();
      }
    } finally {
      await up.close();
      await redis.stop();
    }
  });
});

// A request whose only recording is damaged is a miss (nothing says which call it was), and that
// miss blamed the request ("message 0 text differs from the closest recording") where the tape's
// damage was the cause. It now says the tape is damaged, where, and how to see it.
describe('a request whose only recording is damaged', () => {
  it.each(['proxy', 'createFetch'] as const)('misses through %s, saying the tape is damaged and where', async (entry) => {
    const up = await startUpstream();
    const tape = fresh();
    const rec = createFetch({ tape, mode: 'record' });
    const ask = (f: typeof fetch, base: string, q: string) => f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) });
    for (const q of ['Q0', 'Q1', 'Q2']) await (await ask(rec, up.url, q)).text();
    await rec.close();
    await up.close();
    const at = (await scanTape(tape)).frames[1]!.offset;
    await damage(tape, 1);
    const proxy = entry === 'proxy' ? await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} }) : undefined;
    const f = entry === 'createFetch' ? createFetch({ tape, mode: 'replay', onWarning: () => {} }) : undefined;
    try {
      const res = await ask(proxy ? fetch : f!, proxy ? proxy.url : REPLAYED_AT, 'Q1');
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain(`The tape is damaged at byte ${at}: this request's recording may have been lost there`);
      expect(text).toContain('tapedeck verify');
      // The intact ones still replay.
      expect((await ask(proxy ? fetch : f!, proxy ? proxy.url : REPLAYED_AT, 'Q2')).status).toBe(200);
    } finally {
      await proxy?.close();
      await f?.close();
    }
  });
});
