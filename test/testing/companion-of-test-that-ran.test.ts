// A test that ran and passed but skipped its tape.cache() or tape.mcp() work this run (its call
// behind a flag that is off) opened its tape all the same: its `<tape>.cache.tape` /
// `<tape>.mcp.tape` must not be taken for a deleted test's and pruned (the recordings were lost,
// and the next run with the flag on missed). Its line says they were not checked; the companion
// of a test that is gone is still listed and pruned. Through openTestTape (the real MCP SDK
// client and server-memory, a real ReplayCache), its run reports and the run summary.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { MEMORY, tmp } from '../mcp/helpers.ts';

const FILE = 'test/agent.test.ts';
const folderOf = (root: string) => join(root, 'test/__tapes__/agent.test');

/** The test `name` of test/agent.test.ts: a ReplayCache get (and put when empty) when `on`, else nothing. */
async function cacheTest(root: string, runDir: string, env: Record<string, string>, on: boolean, name = 'caches'): Promise<void> {
  const t = openTestTape({ tape: join(folderOf(root), `${name}.tape`), test: name, file: FILE, root, env, runDir });
  try {
    if (!on) return;
    const c = await t.cache();
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached question' }] };
    if ((await c.get(request)) === undefined) await c.put(request, { answer: 42 });
  } finally {
    await t.close();
  }
}

/** The test `remembers` of test/agent.test.ts: a tool call through tape.mcp() when `on`, else nothing. */
async function mcpTest(root: string, runDir: string, env: Record<string, string>, on: boolean): Promise<void> {
  const t = openTestTape({ tape: join(folderOf(root), 'remembers.tape'), test: 'remembers', file: FILE, root, env, runDir });
  const client = new Client({ name: 'agent', version: '1.0.0' });
  try {
    if (!on) return;
    await client.connect(t.mcp(() => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...process.env, MEMORY_FILE_PATH: join(root, 'memory.jsonl') } as Record<string, string>, stderr: 'ignore' })));
    await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['met'] }] } });
  } finally {
    await client.close().catch(() => {});
    await t.close();
  }
}

describe('the .cache.tape and .mcp.tape of a test that ran', { timeout: 60_000 }, () => {
  it('are kept and said not checked when the test skipped that work; a gone test’s are pruned', async () => {
    const root = tmp('companion-ran');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, FILE), '');
    const testFiles = [join(root, FILE)];
    const cacheTape = join(folderOf(root), 'caches.cache.tape');
    const mcpTape = join(folderOf(root), 'remembers.mcp.tape');

    const recordDir = join(root, 'run-record');
    await cacheTest(root, recordDir, { TAPEDECK_MODE: 'record' }, true);
    await mcpTest(root, recordDir, { TAPEDECK_MODE: 'record' }, true);
    await cacheTest(root, recordDir, { TAPEDECK_MODE: 'record' }, true, 'also-caches');
    expect(existsSync(cacheTape)).toBe(true);
    expect(existsSync(mcpTape)).toBe(true);
    // Neither test made an HTTP call: no test tape of their own, only the companions.
    expect(existsSync(join(folderOf(root), 'caches.tape'))).toBe(false);
    expect(existsSync(join(folderOf(root), 'remembers.tape'))).toBe(false);

    // Both tests ran and passed, with their flag off: nothing is judged, nothing pruned.
    const offDir = join(root, 'run-off');
    await cacheTest(root, offDir, { CI: 'true' }, false);
    await mcpTest(root, offDir, { CI: 'true' }, false);
    await cacheTest(root, offDir, { CI: 'true' }, true, 'also-caches');
    const off = await summarizeRun(readTapeReports(offDir), { testFiles });
    expect(off.tapes.filter((t) => t.orphan)).toEqual([]);
    expect(off.unused).toBe(0);
    const text = formatSummary(off, { root });
    expect(text).toContain('test/__tapes__/agent.test/caches.cache.tape (replay): unused recordings not checked: its test (caches) made no request through it in this run');
    expect(text).toContain('test/__tapes__/agent.test/remembers.mcp.tape (replay): unused recordings not checked: its test (remembers) made no request through it in this run');
    expect(await pruneUnused(off, { testFiles })).toBe(0);
    expect(existsSync(cacheTape)).toBe(true);
    expect(existsSync(mcpTape)).toBe(true);

    // The flag on again: both replay from what was kept.
    const onDir = join(root, 'run-on');
    await cacheTest(root, onDir, { CI: 'true' }, true);
    await mcpTest(root, onDir, { CI: 'true' }, true);
    await cacheTest(root, onDir, { CI: 'true' }, true, 'also-caches');
    const on = await summarizeRun(readTapeReports(onDir), { testFiles });
    expect(on.misses).toEqual([]);
    expect(on.hits).toBeGreaterThan(0);

    // The test `remembers` deleted: the file ran whole without it, its .mcp.tape is an orphan.
    const goneDir = join(root, 'run-gone');
    await cacheTest(root, goneDir, { CI: 'true' }, true);
    await cacheTest(root, goneDir, { CI: 'true' }, true, 'also-caches');
    const gone = await summarizeRun(readTapeReports(goneDir), { testFiles });
    expect(gone.tapes.filter((t) => t.orphan).map((t) => t.tape)).toEqual([mcpTape]);
    expect(gone.unused).toBeGreaterThan(0);
    expect(formatSummary(gone, { root })).toContain(`test/__tapes__/agent.test/remembers.mcp.tape: ${gone.unused} unused (no test opened this tape: a deleted or renamed test)`);
    expect(await pruneUnused(gone, { testFiles })).toBe(gone.unused);
    expect(existsSync(mcpTape)).toBe(false);
    expect(existsSync(cacheTape)).toBe(true);
  });
});
