// Recordings a test's proxy (tape.serve()) served or recorded are used: the run summary does not
// count them unused, and a prune after the run (TAPEDECK_PRUNE=1) keeps them, HTTP recordings and
// MCP exchanges (Streamable HTTP on the proxy's port) alike. Before, only tape.fetch's answers
// were seen (by their trace headers): a replay run through serve() said its HTTP recordings
// unused and the prune deleted them, so the next run missed; a test that only used MCP through
// serve() was taken for one that made no request, and its tape left unchecked.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { everythingHttp } from '../mcp/helpers.ts';

const suite = upstreamSuite('serve-used');
const dir = suite.dir;

/** A run of one test asking `texts` through its tape's proxy in `mode`; the run's summary, then pruned. */
async function run(tape: string, mode: 'record' | 'replay', texts: string[]) {
  const runDir = mkdtempSync(join(dir, 'run-'));
  const t = openTestTape({ tape, mode, test: 'chat > asks', file: 'chat.test.ts', root: dir, runDir });
  const { url } = await t.serve({ upstream: suite.upstream.url, tls: false });
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const got: string[] = [];
  for (const content of texts) got.push((await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })).choices[0]!.message.content!);
  await t.close();
  const summary = await summarizeRun(readTapeReports(runDir));
  const text = formatSummary(summary, { root: dir });
  const pruned = await pruneUnused(summary);
  return { text, pruned, got };
}

describe("a test's proxy and the unused recordings", () => {
  it('counts what it recorded and replayed as used, and a prune keeps them', async () => {
    const tape = join(dir, 'chat.tape');
    const recorded = await run(tape, 'record', ['one', 'two']);
    expect(recorded.text).toMatch(/chat\.tape \(record\): \+2 added$/m);
    expect(recorded.pruned).toBe(0);

    // A replay run that asks for one of the two: the other is unused, and only it is pruned.
    const replayed = await run(tape, 'replay', ['one']);
    expect(replayed.got).toEqual([recorded.got[0]]);
    expect(replayed.text).toMatch(/chat\.tape \(replay\): 1 unused$/m);
    expect(replayed.pruned).toBe(1);
    const left = (await readTape(tape)).records;
    expect(left).toHaveLength(1);

    // The recording it replayed is still there for the next run.
    const again = await run(tape, 'replay', ['one']);
    expect(again.got).toEqual([recorded.got[0]]);
    expect(again.pruned).toBe(0);
  });
});

/** A run of one test calling server-everything's echo tool through its tape's proxy in `mode`; the run's summary, then pruned. */
async function mcpRun(tape: string, mode: 'record' | 'replay', upstream: string) {
  const runDir = mkdtempSync(join(dir, 'run-'));
  const t = openTestTape({ tape, mode, test: 'tools > echo', file: 'tools.test.ts', root: dir, runDir });
  const { url } = await t.serve({ upstream, tls: false });
  const client = new Client({ name: 'serve-used', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const got = await client.callTool({ name: 'echo', arguments: { message: 'kept' } });
  await client.close();
  await t.close();
  const summary = await summarizeRun(readTapeReports(runDir));
  return { text: formatSummary(summary, { root: dir }), pruned: await pruneUnused(summary), got };
}

describe("a test's proxy and its MCP exchanges", () => {
  it('counts the exchanges it recorded and replayed as used, and a prune keeps them', { timeout: 60_000 }, async () => {
    const tape = join(dir, 'tools.tape');
    const server = await everythingHttp();
    let recorded: Awaited<ReturnType<typeof mcpRun>>;
    try {
      recorded = await mcpRun(tape, 'record', server.url);
    } finally {
      await server.stop();
    }
    expect(recorded.pruned).toBe(0);
    const count = (await readTape(tape)).records.length;
    expect(count).toBeGreaterThan(1);

    // The server is gone: the exchanges come from the tape, and are all used.
    const replayed = await mcpRun(tape, 'replay', 'http://127.0.0.1:9');
    expect(replayed.got).toEqual(recorded.got);
    expect(replayed.text).toMatch(/, 0 unused recordings$/m);
    // Judged as used, not left unchecked as a test that "made no request in this run".
    expect(replayed.text).not.toMatch(/not checked/);
    expect(replayed.pruned).toBe(0);
    expect((await readTape(tape)).records).toHaveLength(count);
  });
});

