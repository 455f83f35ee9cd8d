// A test tape's MCP recordings in the run summary, against the real memory server: the summary
// names the MCP tape the recordings are on (not the test's fetch tape beside it), counts the MCP
// recordings no call of the run used among the unused ones, and the printed prune drops exactly
// those, the used ones still replaying.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { formatSummary, openTestTape, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { MEMORY, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};

/** The tools/call names recorded on an MCP tape, in tape order. */
const calledTools = async (tape: string) =>
  (await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord).filter((v) => v.method === 'tools/call').map((v) => (v.request.params as { name: string }).name);

describe('MCP recordings in the run summary', () => {
  it('names the .mcp.tape, counts its unused recordings, and the prune drops them', async () => {
    const dir = tmp('summary');
    const path = join(dir, 'agent.tape');
    const mcpTape = join(dir, 'agent.mcp.tape');
    const memoryFile = join(dir, 'memory.jsonl');
    const server = () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: memoryFile }, stderr: 'ignore' });
    const create = (c: Client) => c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Tape', entityType: 'thing', observations: ['round'] }] } });
    const read = (c: Client) => c.callTool({ name: 'read_graph', arguments: {} });

    // Recorded: two tool calls (the agent's old plan).
    const recDir = join(dir, 'run-record');
    const t1 = openTestTape({ tape: path, mode: 'record', env: {}, runDir: recDir, test: 'agent remembers' });
    const c1 = new Client({ name: 'tapedeck-test', version: '1' });
    await c1.connect(t1.mcp(server));
    await create(c1);
    const graph = await read(c1);
    await c1.close();
    await t1.close();
    const recorded = await summarizeRun(readTapeReports(recDir));
    const recText = formatSummary(recorded, { root: dir });
    expect.soft(recText).toMatch(/^ {2}agent\.mcp\.tape \(record\): \+\d+ added$/m);
    // No fetch call was made: the fetch tape was neither written nor named.
    expect(existsSync(path)).toBe(false);
    expect.soft(recText).not.toMatch(/^ {2}agent\.tape /m);
    expect(recorded.unused).toBe(0);

    // Replayed in CI: the agent now only reads the graph. create_entities went unused.
    const repDir = join(dir, 'run-replay');
    const t2 = openTestTape({ tape: path, env: { CI: 'true' }, runDir: repDir, test: 'agent remembers' });
    const c2 = new Client({ name: 'tapedeck-test', version: '1' });
    await c2.connect(t2.mcp(never));
    expect(await read(c2)).toEqual(graph);
    await c2.close();
    await t2.close();
    const replayed = await summarizeRun(readTapeReports(repDir));
    const text = formatSummary(replayed, { root: dir, pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' });
    expect.soft(text.split('\n')[0]).toMatch(/^tapedeck: 1 tape, 0 written, 0 recordings added, \d+ replayed, 0 misses, 1 unused recording$/);
    expect.soft(text).toContain('  agent.mcp.tape (replay): 1 unused');
    expect.soft(text).not.toMatch(/^ {2}agent\.tape /m);
    expect.soft(replayed.unused).toBe(1);

    // The prune the summary prints drops that recording, and the used ones still replay.
    expect.soft(await pruneUnused(replayed)).toBe(1);
    expect.soft(await calledTools(mcpTape)).toEqual(['read_graph']);
    const t3 = openTestTape({ tape: path, env: { CI: 'true' }, test: 'agent remembers' });
    const c3 = new Client({ name: 'tapedeck-test', version: '1' });
    await c3.connect(t3.mcp(never));
    expect(await read(c3)).toEqual(graph);
    await c3.close();
    await t3.close();
    expect(readFileSync(mcpTape).length).toBeGreaterThan(0);
    rmSync(dir, { recursive: true, force: true });
  });
});
