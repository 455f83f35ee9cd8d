// The miss error the MCP client gets names the tape that missed: a test whose own code throws it
// (or awaits a call that rejects with it) fails with that error alone, so it must say which file
// to record. Before, a tape.mcp() miss said `…; record it: <command>` and a tapeTransport miss
// `…; re-record: tapeTransport(transport, { tape, mode: 'record' })`, naming no tape.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { openTestTape } from '../../src/testing/index.ts';
import { MEMORY, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};
const memory = (file: string) => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: file }, stderr: 'ignore' });

describe('the MCP miss error names the tape', { timeout: 60_000 }, () => {
  it('tape.mcp(): the McpError the test code sees names the .mcp.tape, with the record command', async () => {
    const dir = tmp('miss-names-tape');
    const tape = join(dir, 'the-agent.tape');
    const t1 = openTestTape({ tape, mode: 'record', env: {}, root: dir, test: 'the agent', recordCommand: 'npm test -- -t agent' });
    const c1 = new Client({ name: 'agent', version: '1' });
    await c1.connect(t1.mcp(memory(join(dir, 'm.jsonl'))));
    await c1.callTool({ name: 'read_graph', arguments: {} });
    await c1.close();
    await t1.close();

    const t2 = openTestTape({ tape, env: { CI: 'true' }, root: dir, test: 'the agent', recordCommand: 'npm test -- -t agent' });
    const c2 = new Client({ name: 'agent', version: '1' });
    await c2.connect(t2.mcp(never));
    const miss = (await c2.callTool({ name: 'open_nodes', arguments: { names: ['Bob'] } }).catch((e: McpError) => e)) as McpError;
    await c2.close();
    await t2.close().catch(() => undefined);
    expect(miss.code).toBe(-32050);
    expect(miss.message).toContain('tapedeck miss: tools/call open_nodes');
    expect(miss.message).toContain('record it: npm test -- -t agent (MCP tape: the-agent.mcp.tape)');
  });

  it('tapeTransport: the miss names the tape it missed in', async () => {
    const tape = join(tmp('miss-names-tape-transport'), 'tools.tape');
    const c = new Client({ name: 'agent', version: '1' });
    const err = (await c.connect(tapeTransport(never, { tape, mode: 'replay', onMiss: () => undefined })).catch((e: unknown) => e)) as Error;
    await c.close();
    expect(err.message).toContain(`tapeTransport(transport, { tape, mode: 'record' }) (tape: ${tape})`);
  });
});
