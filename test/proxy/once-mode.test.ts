// `once` mode through createFetch: the first run records (the tape does not exist), the next
// runs replay without calling the upstream, and a new request is a miss, never a recording. A
// proxy with no upstream replays a `once` tape that exists and refuses one that does not,
// leaving nothing behind.
import { mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { createHandler } from '../../src/proxy/handler.ts';
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

describe('a proxy handler in once mode with no upstream', () => {
  it('replays a tape that exists', async () => {
    const tape = join(dir, 'handler-once.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    const recorded = await (await chat(rec, 'hello')).text();
    await rec.close();

    const handler = createHandler({ tape, mode: 'once', hostMatch: 'any' });
    const server = createServer(handler).listen(0, '127.0.0.1');
    try {
      await handler.ready;
      const port = (server.address() as AddressInfo).port;
      const r = await chat(((url: string, init?: RequestInit) => fetch(url.replace(suite.upstream.url, `http://127.0.0.1:${port}`), init)) as typeof fetch, 'hello');
      expect(r.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await r.text()).toBe(recorded);
    } finally {
      server.close();
      await handler.close();
    }
  });

  it.each(['once', 'record', 'update'] as const)('refuses %s on a missing tape and creates no tape or writer file', async (mode) => {
    // An empty tape left behind would be taken as recorded by the next `once` run.
    const sub = join(dir, `no-upstream-${mode}`);
    mkdirSync(sub);
    const handler = createHandler({ tape: join(sub, 'app.tape'), mode });
    await expect(handler.ready).rejects.toMatchObject({ code: 'E_ARG', message: expect.stringContaining(`Mode ${mode} needs an upstream URL`) });
    await handler.close().catch(() => {});
    expect(readdirSync(sub)).toEqual([]);
  });
});
