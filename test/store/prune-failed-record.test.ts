// Record mode with pruning (TAPEDECK_MODE=record TAPEDECK_PRUNE=1, `serve --mode record
// --prune-unused`, createFetch's pruneUnused) while the API fails, with tests that swallow the
// error: each call was made, none got a new answer recorded. Before, every old recording counted
// as unused and the prune emptied the tape. A recording whose call was made in the run but could
// not be recorded again stays; one no call asked for is still pruned; one that was re-recorded is
// replaced. Through createFetch, the proxy and a test tape's run report, with the real openai SDK
// against a loopback server that answers 500 or is not there at all.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { chatText, openai, recordTape, tempDir } from '../chaos/record.ts';

const tmp = tempDir('prune-failed-record');
const recorded = join(tmp.dir, 'recorded.tape');
const PROMPTS = ['one', 'two', 'three'];
let failing: { url: string; server: Server };
let down: string;

/** A loopback API that answers every request with a 500 (an outage). */
async function outage(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  const up = await recordTape(recorded, async (c) => {
    for (const p of PROMPTS) await chatText(c, p);
  });
  await up.close();
  failing = await outage();
  // A port nothing listens on: a server started and closed again.
  const gone = await outage();
  down = gone.url;
  await new Promise((r) => gone.server.close(r));
});
afterAll(async () => {
  await new Promise((r) => failing.server.close(r));
  tmp.remove();
});

/** A fresh copy of the recorded tape, for one test to change. */
function copy(name: string): string {
  const t = join(tmp.dir, `${name}.tape`);
  copyFileSync(recorded, t);
  return t;
}

/** The texts of a tape's answers, in order. */
async function answers(tape: string): Promise<string[]> {
  return (await readTape(tape)).records.map((r) => JSON.parse(Buffer.from((r.value as { response: { body: Uint8Array } }).response.body).toString()).choices[0].message.content as string);
}

/** Each prompt called through `c`, errors swallowed (as tests with a fallback do). */
async function callAll(c: ReturnType<typeof openai>, prompts: readonly string[]): Promise<number> {
  let failed = 0;
  for (const p of prompts) await chatText(c, p).catch(() => failed++);
  return failed;
}

describe('record mode with pruning while the API fails', () => {
  it.each([
    ['answers 500', () => failing.url],
    ['is not there', () => down],
  ])('createFetch: the API %s, every recording stays and the warning says why', async (_how, base) => {
    const tape = copy(`fetch-${_how.replace(/\W/g, '')}`);
    const before = await answers(tape);
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', pruneUnused: true, summary: false, onWarning: (m) => warnings.push(m) });
    try {
      expect(await callAll(openai(base(), { fetch: f }), PROMPTS)).toBe(PROMPTS.length);
    } finally {
      await f.close();
    }
    expect(await answers(tape)).toEqual(before);
    expect(warnings.join('\n')).not.toContain('removed');
    expect(warnings.join('\n')).toContain(`kept ${PROMPTS.length} recording(s) in ${tape} that calls of this run asked for again`);
  });

  it('createFetch: a recording no call asked for is pruned, one whose call failed stays', async () => {
    const tape = copy('fetch-some');
    const before = await answers(tape);
    const f = createFetch({ tape, mode: 'record', pruneUnused: true, summary: false, onWarning: () => {} });
    try {
      expect(await callAll(openai(failing.url, { fetch: f }), ['two'])).toBe(1);
    } finally {
      await f.close();
    }
    expect(await answers(tape)).toEqual([before[1]]);
  });

  it('the proxy (serve --mode record --prune-unused): the API down, nothing is pruned', async () => {
    const tape = copy('proxy');
    const before = await answers(tape);
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: down, tape, mode: 'record', port: 0, pruneUnused: true, onWarning: (m) => warnings.push(m) });
    try {
      expect(await callAll(openai(proxy.url), PROMPTS)).toBe(PROMPTS.length);
    } finally {
      await proxy.close();
    }
    expect(await answers(tape)).toEqual(before);
    expect(warnings.join('\n')).not.toContain('removed');
  });

  it('a test tape (TAPEDECK_MODE=record): the run report counts them used, and the prune after the run keeps them', async () => {
    const tape = copy('test-tape');
    const before = await answers(tape);
    const runDir = join(tmp.dir, 'run-record');
    const t = openTestTape({ tape, env: { TAPEDECK_MODE: 'record' }, runDir, test: 'falls back' });
    try {
      // Two of the three calls made; the third prompt's recording is stale and goes.
      expect(await callAll(openai(failing.url, { fetch: t.fetch }), PROMPTS.slice(0, 2))).toBe(2);
    } finally {
      await t.close();
    }
    const summary = await summarizeRun(readTapeReports(runDir));
    expect(summary.unused).toBe(1);
    expect(await pruneUnused(summary)).toBe(1);
    expect(await answers(tape)).toEqual(before.slice(0, 2));
  });

  it('a call recorded again replaces its recording; the one that failed stays beside it', async () => {
    const tape = copy('mixed');
    const before = await answers(tape);
    // The fake upstream numbers its answers: a re-recorded one differs from the old one.
    const { startUpstream } = await import('../proxy/fake-upstream.ts');
    const up = await startUpstream();
    // A fresh fake starts counting at 1 as the recording's did: one call straight to it first.
    await chatText(openai(up.url), 'warm up');
    const f = createFetch({ tape, mode: 'record', pruneUnused: true, summary: false, onWarning: () => {} });
    try {
      expect(await chatText(openai(up.url, { fetch: f }), 'one')).not.toBe(before[0]);
      expect(await callAll(openai(failing.url, { fetch: f }), ['two'])).toBe(1);
    } finally {
      await f.close();
      await up.close();
    }
    const after = await answers(tape);
    expect(after).toHaveLength(2);
    expect(after).toContain(before[1]);
    expect(after).not.toContain(before[0]);
    expect(after).not.toContain(before[2]);
  });

  it('ReplayCache: a request got (record mode) and never put stays; one nobody asked for is pruned', async () => {
    const tape = join(tmp.dir, 'cache.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    for (const p of PROMPTS) await rec.put({ model: 'm', messages: [{ role: 'user', content: p }] }, { text: `answer ${p}` });
    await rec.close();
    const again = await ReplayCache.open(tape, { mode: 'record' });
    // The call of 'one' fails after get: nothing put. 'two' and 'three' are not asked for.
    expect(await again.get({ model: 'm', messages: [{ role: 'user', content: 'one' }] })).toBeUndefined();
    const { pruned } = await again.close({ pruneUnused: true });
    expect(pruned).toHaveLength(2);
    const left = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await left.get({ model: 'm', messages: [{ role: 'user', content: 'one' }] })).toEqual({ text: 'answer one' });
    } finally {
      await left.close();
    }
  });
});
