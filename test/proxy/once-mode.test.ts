// `once` mode through createFetch: the first run records (the tape does not exist), the next
// runs replay without calling the upstream, and a new request is a miss, never a recording.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('once');
const { dir, chat } = suite;

describe('createFetch in once mode', () => {
  it('records into a new tape, then replays it and adds nothing', async () => {
    const tape = join(dir, 'once.tape');
    const rec = createFetch({ tape, mode: 'once', fetch: globalThis.fetch });
    const r1 = await chat(rec, 'hello');
    expect(r1.headers.get('x-tapedeck-match')).toBe('recorded');
    const recorded = await r1.text();
    expect((await rec.stats()).mode).toBe('record');
    await rec.close();
    const calls = suite.upstream.calls.length;

    const again = createFetch({ tape, mode: 'once', fetch: globalThis.fetch });
    const r2 = await chat(again, 'hello');
    expect(r2.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await r2.text()).toBe(recorded);
    const miss = await chat(again, 'something new');
    expect(miss.status).toBe(400);
    expect(miss.headers.get('x-tapedeck-match')).toBe('miss');
    await again.close();
    expect(suite.upstream.calls.length).toBe(calls);
    expect((await readTape(tape)).records).toHaveLength(1);
  });
});
