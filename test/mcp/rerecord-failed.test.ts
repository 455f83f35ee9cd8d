// Re-recording an MCP tape (record mode) replaces each call's old recording with the new
// exchange, once that is stored. When the new exchange cannot be stored (here the tape lock is
// held past the writer's timeout, as a full disk or a store that is down would fail it), or the
// server does not answer in time, the old recording stays on the tape. The run summary used to
// count it unused, since nothing served it and nothing replaced it, and the prune it prints
// deleted the only recording of a call the test still makes: the next CI run missed. Now it
// counts as used, and the prune keeps it.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { formatSummary, openTestTape, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/index.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { readTape, withTapeLock } from '../../src/store/tape-file.ts';
import { EVERYTHING, tmp } from './helpers.ts';

const server = () => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
const never = () => {
  throw new Error('replay made the live transport');
};
const echo = (c: Client) => c.callTool({ name: 'echo', arguments: { message: 'keep me' } });
/** A first call: the client's notifications/initialized is stored as it is made (before the lock is taken below). */
const list = async (c: Client) => (await c.listTools()).tools.length;

/** The echo calls recorded on an MCP tape: their recording time, in tape order. */
const echoes = async (tape: string) =>
  (await readTape(tape)).records
    .map((r) => r.value)
    .filter(isMcpRecord)
    .filter((v) => v.method === 'tools/call')
    .map((v) => v.recordedAt);

/** The run summary of `runDir` counts no MCP recording unused, and the prune it prints keeps `tape` as it is. */
async function nothingUnused(runDir: string, root: string, tape: string): Promise<void> {
  const before = (await readTape(tape)).records.length;
  const summary = await summarizeRun(readTapeReports(runDir));
  expect(formatSummary(summary, { root })).not.toMatch(/agent\.mcp\.tape .*unused/);
  expect(summary.unused).toBe(0);
  await pruneUnused(summary);
  expect((await readTape(tape)).records).toHaveLength(before);
}

describe('an MCP re-record whose new exchange is not stored', () => {
  it('keeps the old recording, which the run summary counts as used and the prune keeps', async () => {
    const dir = tmp('rerecord-failed');
    const path = join(dir, 'agent.tape');
    const mcpTape = join(dir, 'agent.mcp.tape');
    const test = 'agent echoes';

    // Recorded once.
    const t1 = openTestTape({ tape: path, mode: 'record', env: {}, runDir: join(dir, 'run-1'), test });
    const c1 = new Client({ name: 'tapedeck-test', version: '1' });
    await c1.connect(t1.mcp(server));
    expect(await list(c1)).toBeGreaterThan(0);
    const answer = await echo(c1);
    await c1.close();
    await t1.close();
    const old = await echoes(mcpTape);
    expect(old).toHaveLength(1);

    // Recorded again: the server answers, but the answer cannot be stored (the tape's lock is
    // held, here by the test, for longer than a writer waits). The client gets the record-failed
    // error, not the answer.
    const runDir = join(dir, 'run-2');
    const warnings: string[] = [];
    const t2 = openTestTape({ tape: path, mode: 'record', env: {}, runDir, test, onWarning: (m) => warnings.push(m) });
    const c2 = new Client({ name: 'tapedeck-test', version: '1' });
    await c2.connect(t2.mcp(server));
    expect(await list(c2)).toBeGreaterThan(0);
    const failed = await withTapeLock(mcpTape, () => echo(c2).catch((e: unknown) => e));
    expect(failed).toBeInstanceOf(McpError);
    expect((failed as McpError).message).toContain('could not be recorded');
    await c2.close();
    await t2.close();
    expect(warnings.join('\n')).toContain('could not append an MCP record');
    // The old recording is still on the tape: nothing replaced it.
    expect(await echoes(mcpTape)).toEqual(old);

    // It is not unused: the run made that call. The printed prune keeps it.
    await nothingUnused(runDir, dir, mcpTape);
    expect(await echoes(mcpTape)).toEqual(old);

    // And CI still replays the call, with the answer recorded the first time.
    const t3 = openTestTape({ tape: path, env: { CI: 'true' }, test });
    const c3 = new Client({ name: 'tapedeck-test', version: '1' });
    await c3.connect(t3.mcp(never));
    expect(await list(c3)).toBeGreaterThan(0);
    expect(await echo(c3)).toEqual(answer);
    await c3.close();
    await t3.close();
  }, 60_000);

  it('keeps the old recording of a call the server did not answer in time, counted as used', async () => {
    const dir = tmp('rerecord-timeout');
    const path = join(dir, 'agent.tape');
    const mcpTape = join(dir, 'agent.mcp.tape');
    const test = 'agent waits';
    const slow = (c: Client) => c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 4, steps: 1 } });
    const calls = async () => (await readTape(mcpTape)).records.map((r) => r.value).filter(isMcpRecord).filter((v) => v.method === 'tools/call');

    const t1 = openTestTape({ tape: path, mode: 'record', env: {}, runDir: join(dir, 'run-1'), test });
    const c1 = new Client({ name: 'tapedeck-test', version: '1' });
    await c1.connect(t1.mcp(server));
    const answer = await slow(c1);
    await c1.close();
    await t1.close();
    expect(await calls()).toHaveLength(1);

    // Recorded again, the server takes longer than tapedeck waits (long enough for the server
    // to start and answer initialize): the call is answered with tapedeck's timeout error and
    // nothing is recorded.
    const runDir = join(dir, 'run-2');
    const t2 = openTestTape({ tape: path, mode: 'record', env: {}, runDir, test, onWarning: () => {} });
    const c2 = new Client({ name: 'tapedeck-test', version: '1' });
    await c2.connect(t2.mcp(server, { timeoutMs: 2500 }));
    expect(await slow(c2).catch((e: unknown) => e)).toBeInstanceOf(McpError);
    await c2.close();
    await t2.close();
    expect(await calls()).toHaveLength(1);

    await nothingUnused(runDir, dir, mcpTape);
    const t3 = openTestTape({ tape: path, env: { CI: 'true' }, test });
    const c3 = new Client({ name: 'tapedeck-test', version: '1' });
    await c3.connect(t3.mcp(never));
    expect(await slow(c3)).toEqual(answer);
    await c3.close();
    await t3.close();
  }, 60_000);
});
