// An APM agent (dd-trace, New Relic) wraps the global fetch before the app, and llm-tapedeck,
// load. tapedeck records through that fetch and says so once, since a wrapper could be an
// interceptor whose answers would be recorded as the provider's. The warning came whenever a
// tape was opened, so every CI replay, which sends nothing, printed it. It comes with the first
// call that goes out now: a replay run is quiet, a recording run still says it once.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { join } from 'node:path';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('replaced-fetch-quiet');
const original = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = original;
  vi.resetModules();
});

/** A tracing agent's wrapper: adds its headers, then calls the fetch it wrapped. */
const apmWrapper = (async function fetch(input: string | URL | Request, init?: RequestInit) {
  const headers = new Headers(init?.headers);
  headers.set('x-datadog-trace-id', String(Math.floor(Math.random() * 1e15)));
  return original(input, { ...init, headers });
}) as typeof fetch;

describe('the global fetch wrapped before llm-tapedeck was imported', () => {
  it('a replay run says nothing of it; the first live call of a recording run says it once', async () => {
    const tape = join(suite.dir, 'apm.tape');
    const rec0 = createFetch({ tape, mode: 'record', summary: false });
    await (await suite.chat(rec0, 'traced call')).text();
    await rec0.close();

    const warnings: string[] = [];
    const on = (w: Error) => warnings.push(w.message);
    process.on('warning', on);
    try {
      vi.resetModules();
      globalThis.fetch = apmWrapper;
      const create = (await import('../../src/proxy/fetch.ts')).createFetch;
      const play = create({ tape, mode: 'replay', summary: false });
      const r = await suite.chat(play, 'traced call');
      expect(r.headers.get('x-tapedeck-match')).toBe('exact');
      await play.close();
      await new Promise((res) => setImmediate(res));
      expect(warnings.filter((w) => w.includes('global fetch had been replaced'))).toEqual([]);

      const rec = create({ tape: join(suite.dir, 'apm-2.tape'), mode: 'record', summary: false });
      await (await suite.chat(rec, 'another traced call')).text();
      await (await suite.chat(rec, 'a third traced call')).text();
      await rec.close();
      await new Promise((res) => setImmediate(res));
      expect(warnings.filter((w) => w.includes('global fetch had been replaced'))).toHaveLength(1);
    } finally {
      process.off('warning', on);
    }
  });
});
