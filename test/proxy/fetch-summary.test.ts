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
    expect(text).toBe(`tapedeck: ${tape} (record): 0 replayed, 2 recordings added, 1 re-recorded (replaced), 0 misses, 1 unused recording`);
    expect((await readTape(tape)).records).toHaveLength(4);
  });
});
