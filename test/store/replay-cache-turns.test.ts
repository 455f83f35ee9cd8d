// Identical ReplayCache calls recorded at the same time replay in the order they were asked for
// (docs/modes.md, rule 1): each call's get misses, its answer comes back, it puts. The puts came
// in the order the answers came back, and were stored in that order, so a replay gave each call
// another call's answer (three calls, the first answered last: 'answer-2', 'answer-1',
// 'answer-0'). A get that misses now takes a turn for its key and its put waits for the earlier
// turns (src/store/cache-turns.ts). Against an oracle that knows which call asked when, over
// random schedules (answer arrival orders, calls that fail, retry, start later, two keys, get
// and getRecord, record and update); with the AI SDK's generateText (through a middleware of
// one's own and replayCacheMiddleware) and streamText (whose put is made as the stream ends);
// and the ways a turn whose put never comes is given up.
import { MockLanguageModelV3 } from 'ai/test';
import { generateText, streamText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { ReplayCache, type ReplayCacheOptions } from '../../src/store/replay-cache.ts';
import { replayCacheMiddleware } from '../../src/store/ai-sdk-cache.ts';
import { rng } from '../reference.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('cache-turns');

const REQ = { model: 'gpt-4o', messages: [{ role: 'user', content: 'sample' }], temperature: 1 };
const OTHER = { model: 'gpt-4o', messages: [{ role: 'user', content: 'another' }], temperature: 1 };

/** Promises the test resolves one by one: when call i's answer "comes back". */
function gates(n: number): { wait: Promise<void>[]; open: (i: number) => Promise<void> } {
  const release: (() => void)[] = [];
  const wait = Array.from({ length: n }, (_, i) => new Promise<void>((r) => (release[i] = r)));
  // After the gate, the call's put has run as far as it can (appended, or waiting for its turn).
  return { wait, open: (i) => (release[i]!(), new Promise<void>((r) => setImmediate(r))) };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

/** The k-th answer a replay gives for `request`, for k = 1..n. */
async function replayed(source: string | MemoryBackend, request: unknown, n: number): Promise<unknown[]> {
  const r = await ReplayCache.open(source, { mode: 'replay' });
  const got: unknown[] = [];
  for (let i = 0; i < n; i++) got.push(await r.get(request));
  await r.close();
  return got;
}

/** Warnings emitted while `fn` runs, by code. */
async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const on = (w: Error & { code?: string }) => seen.push(`${w.code}: ${w.message}`);
  process.on('warning', on);
  try {
    await fn();
    await settle();
  } finally {
    process.off('warning', on);
  }
  return seen;
}

describe('identical calls that missed at once replay in the order they were asked', () => {
  for (const mode of ['update', 'record'] as const) {
    it(`${mode}: three calls, the first answered last, replay as answer-0, answer-1, answer-2 (sequential and parallel)`, async () => {
      const tape = fresh();
      const cache = await ReplayCache.open(tape, { mode });
      const g = gates(3);
      const calls = [0, 1, 2].map(async (i) => {
        const v = await cache.get(REQ);
        if (v !== undefined) return v;
        await g.wait[i];
        await cache.put(REQ, `answer-${i}`);
        return `answer-${i}`;
      });
      for (const i of [2, 1, 0]) await g.open(i);
      expect(await Promise.all(calls)).toEqual(['answer-0', 'answer-1', 'answer-2']);
      await cache.close();
      expect(await replayed(tape, REQ, 3)).toEqual(['answer-0', 'answer-1', 'answer-2']);
      const r = await ReplayCache.open(tape, { mode: 'replay' });
      expect(await Promise.all([0, 1, 2].map(() => r.get(REQ)))).toEqual(['answer-0', 'answer-1', 'answer-2']);
      await r.close();
    });
  }

  it('getRecord misses take turns as get does; a put waits only for the earlier turns of its own key', async () => {
    const tape = fresh();
    const cache = await ReplayCache.open(tape, { mode: 'update' });
    const g = gates(4);
    const plan = [REQ, OTHER, REQ, OTHER] as const;
    const calls = plan.map(async (request, i) => {
      const rec = await cache.getRecord(request);
      if (rec !== undefined) return;
      await g.wait[i];
      await cache.put(request, `answer-${i}`);
    });
    // OTHER's calls answer while REQ's first has not: they do not wait for REQ.
    await g.open(3);
    await g.open(1);
    await Promise.all([calls[1], calls[3]]);
    const other = await replayedSoFar(tape, OTHER);
    expect(other).toEqual(['answer-1', 'answer-3']);
    await g.open(2);
    await g.open(0);
    await Promise.all(calls);
    await cache.close();
    expect(await replayed(tape, REQ, 2)).toEqual(['answer-0', 'answer-2']);
  });

  it('record mode: re-recording the same answers, come back in another order, leaves the tape byte for byte as it was', async () => {
    const tape = fresh();
    const round = async (order: number[]) => {
      const cache = await ReplayCache.open(tape, { mode: 'record' });
      const g = gates(3);
      const calls = [0, 1, 2].map(async (i) => {
        await cache.get(REQ);
        await g.wait[i];
        await cache.put(REQ, `answer-${i}`);
      });
      for (const i of order) await g.open(i);
      await Promise.all(calls);
      const report = await cache.close();
      return report;
    };
    await round([0, 1, 2]);
    const before = readFileSync(tape);
    // The k-th put is compared with the k-th recording in the order of the gets: unchanged.
    const report = await round([2, 0, 1]);
    expect(report.replaced).toEqual([]);
    expect(readFileSync(tape).equals(before)).toBe(true);
    expect(await replayed(tape, REQ, 3)).toEqual(['answer-0', 'answer-1', 'answer-2']);
  });

  it('puts without a get keep their call order and never wait', async () => {
    const tape = fresh();
    const cache = await ReplayCache.open(tape, { mode: 'update' });
    await Promise.all([0, 1, 2, 3].map((i) => cache.put(REQ, i)));
    await cache.close();
    expect(await replayed(tape, REQ, 4)).toEqual([0, 1, 2, 3]);
  });
});

/** The recordings of `request` a replay serves now, until it misses. */
async function replayedSoFar(source: string | MemoryBackend, request: unknown): Promise<unknown[]> {
  const r = await ReplayCache.open(source, { mode: 'replay' });
  const got: unknown[] = [];
  for (;;) {
    try {
      got.push(await r.get(request));
    } catch {
      break;
    }
  }
  await r.close();
  return got;
}

describe('a turn whose put never comes holds nobody up for ever', () => {
  it('close gives it up: the put waiting on it is stored, and close resolves after it', async () => {
    const tape = fresh();
    const cache = await ReplayCache.open(tape, { mode: 'update' });
    // Call 0 misses and its API call fails: it never puts.
    const call0 = (async () => {
      expect(await cache.get(REQ)).toBeUndefined();
    })();
    let stored = false;
    const call1 = (async () => {
      expect(await cache.get(REQ)).toBeUndefined();
      await settle();
      await cache.put(REQ, 'answer-1');
      stored = true;
    })();
    await call0;
    for (let i = 0; i < 5; i++) await settle();
    expect(stored).toBe(false);
    await cache.close();
    await call1;
    expect(stored).toBe(true);
    expect(await replayedSoFar(tape, REQ)).toEqual(['answer-1']);
  });

  it('turnTimeoutMs: a put waits that long for an earlier call that has not put, then is stored with a warning; the late put is stored after it', async () => {
    const tape = fresh();
    const cache = await ReplayCache.open(tape, { mode: 'update', turnTimeoutMs: 60 });
    const g = gates(1);
    let call0!: Promise<void>;
    const warnings = await warningsDuring(async () => {
      call0 = (async () => {
        await cache.get(REQ);
        await g.wait[0];
        await cache.put(REQ, 'answer-0');
      })();
      const t0 = Date.now();
      await (async () => {
        await cache.get(REQ);
        await cache.put(REQ, 'answer-1');
      })();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(50);
    });
    expect(warnings.filter((w) => w.startsWith('TAPEDECK_CACHE_TURN'))).toHaveLength(1);
    expect(warnings.join('\n')).toMatch(/1 earlier identical call of request [0-9a-f]{64} missed and put no answer/);
    // Given up: the call that comes back after all does not wait, and is stored after.
    await g.open(0);
    await call0;
    await cache.close();
    expect(await replayedSoFar(tape, REQ)).toEqual(['answer-1', 'answer-0']);
  });

  it('turnTimeoutMs is checked: a whole number of milliseconds from 0', async () => {
    for (const bad of [-1, 1.5, '100', Number.POSITIVE_INFINITY, 2 ** 31]) {
      await expect(ReplayCache.open(fresh(), { mode: 'update', turnTimeoutMs: bad } as unknown as ReplayCacheOptions)).rejects.toMatchObject({ code: 'E_ARG' });
    }
  });

  it('a retry (the same call asks again after its API call failed) keeps its turn: it waits on nobody, and a later call waits for it', async () => {
    const tape = fresh();
    const cache = await ReplayCache.open(tape, { mode: 'update' });
    const g = gates(2);
    const order: string[] = [];
    // Call 1 asks after call 0 (a macrotask later), call 0 asks twice: it misses, its API call
    // fails, it asks again (a retry through the cache, as the AI SDK's are) and answers last.
    const call1 = (async () => {
      await settle();
      expect(await cache.get(REQ)).toBeUndefined();
      await g.wait[1];
      await cache.put(REQ, 'answer-1');
      order.push('1 stored');
    })();
    const call0 = (async () => {
      expect(await cache.get(REQ)).toBeUndefined();
      await settle(); // the API call fails
      expect(await cache.get(REQ)).toBeUndefined();
      await g.wait[0];
      await cache.put(REQ, 'answer-0');
      order.push('0 stored');
    })();
    for (let i = 0; i < 5; i++) await settle();
    await g.open(1);
    expect(order).toEqual([]);
    await g.open(0);
    await Promise.all([call0, call1]);
    expect(order).toEqual(['0 stored', '1 stored']);
    await cache.close();
    expect(await replayedSoFar(tape, REQ)).toEqual(['answer-0', 'answer-1']);

    // A single call that retries never waits on the attempt that failed (the default timeout is
    // a minute: the test would time out).
    const tape2 = fresh();
    const c2 = await ReplayCache.open(tape2, { mode: 'record' });
    await c2.get(REQ);
    await c2.get(REQ);
    await c2.put(REQ, 'only');
    await c2.close();
    expect(await replayedSoFar(tape2, REQ)).toEqual(['only']);
  });

  it('a put that stores nothing (beforeRecord null) or fails ends its turn', async () => {
    const tape = fresh();
    const cache = await ReplayCache.open(tape, { mode: 'update', beforeRecord: (r) => (r.response === 'skip' ? null : r) });
    const g = gates(3);
    const results: string[] = [];
    const answers = ['skip', 'cycle', 'answer-2'];
    const calls = [0, 1, 2].map(async (i) => {
      await cache.get(REQ);
      await g.wait[i];
      const value: unknown = answers[i] === 'cycle' ? (() => { const o: Record<string, unknown> = {}; o.self = o; return o; })() : answers[i];
      try {
        await cache.put(REQ, value);
        results.push(`${i} ok`);
      } catch (e) {
        results.push(`${i} ${(e as { code?: string }).code}`);
      }
    });
    for (const i of [2, 1, 0]) await g.open(i);
    await Promise.all(calls);
    expect(results).toEqual(['1 E_CYCLE', '0 ok', '2 ok']);
    await cache.close();
    expect(await replayedSoFar(tape, REQ)).toEqual(['answer-2']);
  });
});

describe('random schedules against an oracle that knows the order of the asks', () => {
  type Fate = 'put' | 'fail' | 'retry';
  interface Call {
    key: 0 | 1;
    via: 'get' | 'getRecord';
    /** How many macrotasks the call waits before its get: 0 starts it in the test's own run. */
    delay: number;
    fate: Fate;
  }

  it('300 schedules: each key replays the answers of the calls that put, in the order they asked', async () => {
    const r = rng(20260521);
    const requests = [REQ, OTHER];
    for (let s = 0; s < 300; s++) {
      const mode = r() < 0.5 ? 'update' : 'record';
      const n = 2 + Math.floor(r() * 6);
      const calls: Call[] = Array.from({ length: n }, () => ({
        key: r() < 0.7 ? 0 : 1,
        via: r() < 0.5 ? 'get' : 'getRecord',
        delay: r() < 0.5 ? 0 : 1 + Math.floor(r() * 3),
        fate: r() < 0.7 ? 'put' : r() < 0.5 ? 'fail' : 'retry',
      }));
      // Update mode: recordings the tape has already, served to the first asks of their key.
      const pre = mode === 'update' ? [Math.floor(r() * 3), Math.floor(r() * 2)] : [0, 0];
      const backend = new MemoryBackend();
      if (pre[0]! + pre[1]! > 0) {
        const setup = await ReplayCache.open(backend, { mode: 'record' });
        for (const k of [0, 1]) for (let j = 0; j < pre[k]!; j++) await setup.put(requests[k], `pre-${k}-${j}`);
        await setup.close();
      }
      const cache = await ReplayCache.open(backend, { mode });
      const g = gates(n);
      // The oracle: the order the calls asked in, as they asked.
      const asked: number[] = [];
      const run = async (i: number) => {
        const c = calls[i]!;
        for (let d = 0; d < c.delay; d++) await settle();
        const request = requests[c.key];
        asked.push(i);
        const hit = c.via === 'get' ? await cache.get(request) : (await cache.getRecord(request))?.value;
        if (hit !== undefined) return;
        await g.wait[i];
        if (c.fate === 'fail') return;
        if (c.fate === 'retry') {
          // Its first attempt failed: asks again, then puts what the retry got.
          expect(await cache.get(request)).toBeUndefined();
          await settle();
        }
        await cache.put(request, `answer-${i}`);
      };
      // Calls that wait first start before the ones that ask at once, so no call starts from a
      // context another call's get left behind (a later call would read it as its own retry).
      const starting = [...calls.keys()].sort((a, b) => Math.min(calls[b]!.delay, 1) - Math.min(calls[a]!.delay, 1));
      const done = starting.map(run);
      for (let d = 0; d < 5; d++) await settle();
      expect(asked).toHaveLength(n);
      // Answers come back in a random order.
      const arrival = [...calls.keys()].sort(() => r() - 0.5);
      for (const i of arrival) await g.open(i);
      // Retries ask again and put a macrotask after their gate.
      for (let d = 0; d < 3; d++) await settle();
      const failing = calls.some((c) => c.fate === 'fail');
      if (failing) await Promise.all([cache.close(), ...done]);
      else {
        // Nobody failed: every put is stored without close's help.
        await Promise.all(done);
        await cache.close();
      }

      // What the oracle expects: per key, the earlier recordings, then the answers of the calls
      // that missed and put, in the order they asked.
      const expected: unknown[][] = [[], []];
      const seen = [0, 0];
      for (let k = 0; k < 2; k++) for (let j = 0; j < pre[k]!; j++) expected[k]!.push(`pre-${k}-${j}`);
      for (const i of asked) {
        const c = calls[i]!;
        const hit = mode === 'update' && seen[c.key]! < pre[c.key]!;
        seen[c.key]!++;
        if (!hit && c.fate !== 'fail') expected[c.key]!.push(`answer-${i}`);
      }
      for (const k of [0, 1]) {
        const got = await replayedSoFar(backend, requests[k]);
        expect(got, `schedule ${s}: ${mode} ${JSON.stringify({ calls, pre, asked, arrival })}`).toEqual(expected[k]);
      }
    }
  });
});

describe('the AI SDK: Promise.all over identical generateText and streamText calls', () => {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  /** A model whose i-th call answers `answer-i`, the first last. */
  const model = (n: number) => {
    let calls = 0;
    return new MockLanguageModelV3({
      doGenerate: async () => {
        const i = calls++;
        await new Promise((r) => setTimeout(r, (n - i) * 15));
        return {
          content: [{ type: 'text', text: `answer-${i}` }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      },
    });
  };

  // A middleware of one's own, as docs/api.md showed it before replayCacheMiddleware: get, doGenerate, put.
  const documented = (cache: ReplayCache): LanguageModelMiddleware => ({
    specificationVersion: 'v3',
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const request = { model: model.modelId, ...params };
      const hit = await cache.get(request);
      if (hit !== undefined) return hit as Awaited<ReturnType<typeof doGenerate>>;
      const result = await doGenerate();
      await cache.put(request, result);
      return result;
    },
  });

  /** A model whose i-th stream sends `answer-i`, the first last; its record is put as the stream ends. */
  const streaming = (n: number) => {
    let calls = 0;
    return new MockLanguageModelV3({
      doStream: async () => {
        const i = calls++;
        return {
          stream: new ReadableStream({
            async start(c) {
              c.enqueue({ type: 'stream-start', warnings: [] });
              c.enqueue({ type: 'text-start', id: 't' });
              await new Promise((r) => setTimeout(r, (n - i) * 15));
              c.enqueue({ type: 'text-delta', id: 't', delta: `answer-${i}` });
              c.enqueue({ type: 'text-end', id: 't' });
              c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
              c.close();
            },
          }),
        };
      },
    });
  };

  it('streamText through replayCacheMiddleware (the put made as the stream ends): replayed in the order of the calls', async () => {
    const tape = fresh();
    const ask = async (cache: ReplayCache, n: number) => {
      const m = wrapLanguageModel({ model: streaming(n), middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });
      return Promise.all(Array.from({ length: n }, () => streamText({ model: m, prompt: 'Pick a number.' }).text));
    };
    const rec = await ReplayCache.open(tape, { mode: 'update' });
    expect(await ask(rec, 4)).toEqual(['answer-0', 'answer-1', 'answer-2', 'answer-3']);
    await rec.close();
    const play = await ReplayCache.open(tape, { mode: 'replay' });
    expect(await ask(play, 4)).toEqual(['answer-0', 'answer-1', 'answer-2', 'answer-3']);
    await play.close();
  });

  for (const [name, middleware] of [
    ['a middleware of your own (get, doGenerate, put)', documented],
    ['replayCacheMiddleware', (c: ReplayCache) => replayCacheMiddleware(c) as unknown as LanguageModelMiddleware],
  ] as const) {
    it(`${name}: recorded in update mode with the first answer last, replayed in the order of the calls`, async () => {
      const tape = fresh();
      const ask = async (cache: ReplayCache, n: number) => {
        const m = wrapLanguageModel({ model: model(n), middleware: middleware(cache) });
        return (await Promise.all(Array.from({ length: n }, () => generateText({ model: m, prompt: 'Pick a number.', temperature: 1 })))).map((r) => r.text);
      };
      const rec = await ReplayCache.open(tape, { mode: 'update' });
      expect(await ask(rec, 4)).toEqual(['answer-0', 'answer-1', 'answer-2', 'answer-3']);
      await rec.close();
      const play = await ReplayCache.open(tape, { mode: 'replay' });
      expect(await ask(play, 4)).toEqual(['answer-0', 'answer-1', 'answer-2', 'answer-3']);
      await play.close();
    });
  }

  // Failed before: a call that failed for good put nothing, and its turn held the identical
  // calls asked after it until turnTimeoutMs (60 s by default) or close: their puts waited, and
  // a test awaiting them timed out. The middleware now gives the turn up (ReplayCache.forgo).
  describe('replayCacheMiddleware: a call that fails for good holds no identical call behind it', () => {
    const answer = (text: string) => ({ content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] });
    const parts = (text: string) => [
      { type: 'stream-start' as const, warnings: [] },
      { type: 'text-start' as const, id: 't' },
      { type: 'text-delta' as const, id: 't', delta: text },
      { type: 'text-end' as const, id: 't' },
      { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage },
    ];
    /** Records two identical calls at once, the first failing after the second answered: the warnings and the replayed answers. */
    const run = async (ask: (m: ReturnType<typeof wrapLanguageModel>) => Promise<string>, model: MockLanguageModelV3) => {
      const tape = fresh();
      let results: PromiseSettledResult<string>[] = [];
      const warnings = await warningsDuring(async () => {
        const cache = await ReplayCache.open(tape, { mode: 'update', turnTimeoutMs: 400 });
        const m = wrapLanguageModel({ model, middleware: replayCacheMiddleware(cache) as unknown as LanguageModelMiddleware });
        try {
          results = await Promise.allSettled([ask(m), ask(m)]);
        } finally {
          await cache.close();
        }
      });
      const play = await ReplayCache.open(tape, { mode: 'replay' });
      const m = wrapLanguageModel({ model: new MockLanguageModelV3({}), middleware: replayCacheMiddleware(play) as unknown as LanguageModelMiddleware });
      const replayed = await ask(m);
      await play.close();
      return { results: results.map((r) => r.status), warnings: warnings.filter((w) => w.startsWith('TAPEDECK_CACHE_TURN')), replayed };
    };

    it('generateText: the first call throws, the second is stored at once', async () => {
      let calls = 0;
      const model = new MockLanguageModelV3({
        doGenerate: async () => {
          const i = calls++;
          await new Promise((r) => setTimeout(r, i === 0 ? 60 : 5));
          if (i === 0) throw new Error('the API failed');
          return answer('answer-1');
        },
      });
      const got = await run(async (m) => (await generateText({ model: m, prompt: 'Pick a number.', maxRetries: 0 })).text, model);
      expect(got).toEqual({ results: ['rejected', 'fulfilled'], warnings: [], replayed: 'answer-1' });
    });

    for (const how of ['errors', 'sends an error part'] as const) {
      it(`streamText: the first stream ${how}, the second is stored at once`, async () => {
        let calls = 0;
        const model = new MockLanguageModelV3({
          doStream: async () => {
            const i = calls++;
            return {
              stream: new ReadableStream({
                async start(c) {
                  c.enqueue(parts('')[0]);
                  await new Promise((r) => setTimeout(r, i === 0 ? 60 : 5));
                  if (i === 0 && how === 'errors') return c.error(new Error('the connection dropped'));
                  if (i === 0) {
                    c.enqueue({ type: 'error', error: new Error('overloaded') });
                    return c.close();
                  }
                  for (const p of parts('answer-1').slice(1)) c.enqueue(p);
                  c.close();
                },
              }),
            };
          },
        });
        const got = await run(async (m) => {
          const r = streamText({ model: m, prompt: 'Pick a number.', maxRetries: 0, onError: () => {} });
          const text = await r.text;
          // An error part ends streamText without rejecting: what it carried decides.
          if ((await r.finishReason) === 'error' || text === '') throw new Error('failed');
          return text;
        }, model);
        expect(got).toEqual({ results: ['rejected', 'fulfilled'], warnings: [], replayed: 'answer-1' });
      });
    }

    it('a stream its reader cancels gives its turn up', async () => {
      const tape = fresh();
      const warnings = await warningsDuring(async () => {
        const cache = await ReplayCache.open(tape, { mode: 'update', turnTimeoutMs: 400 });
        const mw = replayCacheMiddleware(cache);
        const params = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'Pick a number.' }] }] };
        const streamOf = (text: string) => async () => ({ stream: new ReadableStream({ start: (c) => (parts(text).forEach((p) => c.enqueue(p)), c.close()) }) });
        try {
          // Two calls, each in its own async chain (one chain asking again is a retry of its call).
          const call = async (text: string) => (await mw.wrapStream({ doStream: streamOf(text), doGenerate: streamOf(''), params, model: { modelId: 'm' } })) as { stream: ReadableStream };
          const [first, second] = await Promise.all([call('answer-0'), call('answer-1')]);
          const reader = first.stream.getReader();
          await reader.read();
          await reader.cancel();
          const seen: unknown[] = [];
          for await (const p of second.stream as unknown as AsyncIterable<unknown>) seen.push(p);
          expect(seen).toHaveLength(5);
        } finally {
          await cache.close();
        }
      });
      expect(warnings.filter((w) => w.startsWith('TAPEDECK_CACHE_TURN'))).toEqual([]);
      const play = await ReplayCache.open(tape, { mode: 'replay' });
      expect(((await play.get({ model: 'm', prompt: [{ role: 'user', content: [{ type: 'text', text: 'Pick a number.' }] }], stream: true })) as { stream: { delta?: string }[] }).stream[2]!.delta).toBe('answer-1');
      await play.close();
    });
  });
});
