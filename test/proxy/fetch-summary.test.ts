// createFetch({ summary }): its own summary at close, for code that uses it without a test runner.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('fsum');
const { dir, chat } = suite;

describe('createFetch summary at close', () => {
  it('prints replayed, added, misses and unused recordings when asked', async () => {
    const tape = join(dir, 'summary.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    await chat(rec, 'one');
    await chat(rec, 'two');
    await rec.close();
    let text = '';
    const f = createFetch({ tape, mode: 'update', fetch: globalThis.fetch, summary: (t) => (text = t) });
    await chat(f, 'one');
    await chat(f, 'three');
    await f.close();
    expect(text).toBe(`tapedeck: ${tape} (update): 1 replayed, 1 recording added, 0 misses, 1 unused recording`);
    const g = createFetch({ tape, mode: 'replay', summary: (t) => (text = t) });
    await chat(g, 'four');
    await g.close();
    expect(text.split('\n')[0]).toBe(`tapedeck: ${tape} (replay): 0 replayed, 0 recordings added, 1 miss, 3 unused recordings`);
    expect(text).toContain('Misses:\n  POST /v1/chat/completions: ');
    // Not asked: nothing printed, nothing kept.
    const quiet = createFetch({ tape, mode: 'replay' });
    await chat(quiet, 'one');
    await quiet.close();
  });

  it('record mode: a request recorded again is said re-recorded (replaced), not added; its extra recordings are added', async () => {
    const tape = join(dir, 'rerecord.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, summary: false });
    await chat(rec, 'one');
    await chat(rec, 'two');
    await rec.close();
    let text = '';
    // `one` twice (one takes its old recording's place, the other is new), `three` new; `two` stays.
    const again = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, summary: (t) => (text = t) });
    await chat(again, 'one');
    await chat(again, 'one');
    await chat(again, 'three');
    await again.close();
    // `one`'s old recording is off the tape, not unused: `two` alone is.
    expect(text).toBe(`tapedeck: ${tape} (record): 0 replayed, 2 recordings added, 1 re-recorded (replaced), 0 misses, 1 unused recording\n  The unused recording stays on the tape (earlier versions of requests the code now makes differently?): when a record run makes every call the tape is for, createFetch({ pruneUnused: true }) removes what it did not ask for as it closes.`);
    expect((await readTape(tape)).records).toHaveLength(4);
  });
  it('a record run that leaves recordings nothing asked for says so unasked, with the option that drops them', async () => {
    const tape = join(dir, 'stale.tape');
    const first = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, summary: false });
    await chat(first, 'Hi');
    await first.close();
    // The prompt changed: the record run the miss asks for leaves the old prompt's recording.
    const said: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => (said.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      const again = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
      await chat(again, 'Hello');
      await again.close();
      // Nothing recorded and nothing left over: nothing said.
      const replay = createFetch({ tape, mode: 'replay' });
      await chat(replay, 'Hello');
      await replay.close();
    } finally {
      process.stderr.write = write;
    }
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`tapedeck: ${tape} (record): 0 replayed, 1 recording added, 0 misses, 1 unused recording`);
    expect(said[0]).toContain('createFetch({ pruneUnused: true })');
    expect((await readTape(tape)).records).toHaveLength(2);
    // With the option, the run drops it and says nothing of it.
    const pruning = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, pruneUnused: true, onWarning: () => {}, summary: (t) => said.push(t) });
    await chat(pruning, 'Hello');
    await pruning.close();
    expect(said[1]).not.toContain('pruneUnused');
    expect((await readTape(tape)).records).toHaveLength(1);
  });
});

// The unused recordings were counted after the close had rewritten the tape (a re-record in
// record mode, or pruneUnused): a large tape's records are read from its file, which the rewrite
// had replaced, and close() failed with E_TAPE_CHANGED. They are counted before the rewrite now.
describe('createFetch close on a tape read from its file', () => {
  it('a record run that re-records one request and leaves another, and a pruning replay, close cleanly', async () => {
    const { lazyTape } = await import('../../src/store/backends/tape.ts');
    const min = lazyTape.min;
    lazyTape.min = 1;
    try {
      const tape = join(dir, 'lazy.tape');
      const first = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, summary: false });
      await chat(first, 'a');
      await chat(first, 'b');
      await first.close();
      let text = '';
      const again = createFetch({ tape, mode: 'record', fetch: globalThis.fetch, summary: (t) => (text = t) });
      await chat(again, 'a');
      await expect(again.close()).resolves.toBeUndefined();
      expect(text).toContain('1 re-recorded (replaced), 0 misses, 1 unused recording');
      const prune = createFetch({ tape, mode: 'replay', pruneUnused: true, onWarning: () => {}, summary: (t) => (text = t) });
      await chat(prune, 'a');
      await expect(prune.close()).resolves.toBeUndefined();
      expect((await readTape(tape)).records).toHaveLength(1);
    } finally {
      lazyTape.min = min;
    }
  });
});
