// A recording served under a damaging fault (cut, stall, malformed) was used: its bytes went out,
// whole or in part. It counts as replayed and never as unused, so a prune after a chaos run
// (TAPEDECK_PRUNE=1, pruneUnused) keeps it and the next run still finds it. Through createFetch's
// summary, the test tape's run report (what the vitest plugin sums and prunes by) and the proxy.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { MODEL, openai, recordTape, REPLAY_BASE, streamText, tempDir } from './record.ts';

const tmp = tempDir('used');
const tape = join(tmp.dir, 'stream.tape');
const PROMPT = 'Stream me a story';
let recorded = '';
let trace = '';

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    recorded = await streamText(c, PROMPT);
  });
  await up.close();
  trace = ((await readTape(tape)).records[0]!.value as { trace: string }).trace;
});
afterAll(() => tmp.remove());

const FAULTS = ['cut', 'stall', 'malformed'] as const;

/** Reads a stream to its end or its error; says which. */
async function drain(c: ReturnType<typeof openai>): Promise<{ text: string; failed: boolean; headers: Headers }> {
  const { data, response } = await c.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
  let text = '';
  try {
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
    return { text, failed: false, headers: response.headers };
  } catch {
    return { text, failed: true, headers: response.headers };
  }
}

describe('a recording served damaged counts as used', () => {
  it.each(FAULTS)('createFetch: %s answers with the recording, counts it replayed, and the summary has no unused recording', async (fault) => {
    let summary = '';
    const f = createFetch({ tape, mode: 'replay', chaos: { faults: { [fault]: 1 }, stallMs: 5, seed: 1 }, summary: (s) => (summary = s) });
    try {
      const r = await drain(openai(REPLAY_BASE, { fetch: f }));
      expect(r.failed).toBe(fault !== 'stall');
      if (fault === 'stall') expect(r.text).toBe(recorded);
      // The answer names the recording it was made from, as a replayed one does.
      expect(r.headers.get('x-tapedeck-trace')).toBe(trace);
      expect(r.headers.get('x-tapedeck-match')).toBe('exact');
      expect(r.headers.get('x-tapedeck-fault')).toBe(fault);
      const s = await f.stats();
      expect(s.faults).toEqual({ [fault]: 1 });
      expect(s.hits).toBe(1);
    } finally {
      await f.close();
    }
    // After a cut or malformed answer the next identical call would take that recording again,
    // so the run does not judge unused recordings (test/chaos/prune-after-damage.test.ts).
    const unused = fault === 'stall' ? '0 unused recordings' : `unused recordings not checked: 1 call was answered by injected faults (${fault} 1)`;
    expect(summary).toBe(`tapedeck: ${tape} (replay): 1 replayed, 0 recordings added, 0 misses, ${unused}`);
  });

  it.each(FAULTS)('test tape: %s leaves no unused recording in the run report, so a prune keeps it', async (fault) => {
    const runDir = join(tmp.dir, `run-${fault}`);
    const before = readFileSync(tape);
    const t = openTestTape({ tape, env: { CI: '1' }, runDir, test: `chaos ${fault}` });
    t.chaos({ faults: { [fault]: 1 }, stallMs: 5, seed: 1 });
    try {
      await drain(openai(REPLAY_BASE, { fetch: t.fetch }));
    } finally {
      await t.close();
    }
    const run = await summarizeRun(readTapeReports(runDir));
    expect(run).toMatchObject({ hits: 1, unused: 0, misses: [] });
    expect(readFileSync(tape).equals(before)).toBe(true);
  });

  it.each(FAULTS)('proxy: %s counts the answer replayed, and pruneUnused keeps the recording', async (fault) => {
    const before = readFileSync(tape);
    const p = await startProxy({ tape, mode: 'replay', port: 0, pruneUnused: true, chaos: { faults: { [fault]: 1 }, stallMs: 5, seed: 1 } });
    try {
      const r = await drain(openai(p.url));
      expect(r.headers.get('x-tapedeck-trace')).toBe(trace);
      expect(p.handler.stats()).toMatchObject({ hits: 1, faults: { [fault]: 1 }, byMatch: { exact: 1 } });
    } finally {
      await p.close();
    }
    expect(readFileSync(tape).equals(before)).toBe(true);
  });
});
