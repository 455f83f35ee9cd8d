// A test's MCP miss names the MCP tape that missed (`<tape>.mcp.tape`, beside the test's own),
// not the test's fetch tape: the user opens the file the failure names. Before, a tape.mcp()
// miss said `no recording in …/agent.tape`, a file that may not even exist.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/index.ts';
import type { TapedeckError } from '../../src/errors.ts';
import { MEMORY, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};

describe('a tape.mcp() miss', () => {
  it('fails the test naming the .mcp.tape it missed in', async () => {
    const dir = tmp('miss-tape-name');
    const tape = join(dir, 'the-agent-remembers.tape');
    const t1 = openTestTape({ tape, mode: 'record', env: {}, root: dir, test: 'the agent remembers', recordCommand: 'npm test -- -t remembers' });
    const c1 = new Client({ name: 'agent', version: '1' });
    await c1.connect(t1.mcp(new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }, stderr: 'ignore' })));
    await c1.callTool({ name: 'read_graph', arguments: {} });
    await c1.close();
    await t1.close();

    const t2 = openTestTape({ tape, env: { CI: 'true' }, root: dir, test: 'the agent remembers', recordCommand: 'npm test -- -t remembers' });
    const c2 = new Client({ name: 'agent', version: '1' });
    await c2.connect(t2.mcp(never));
    const miss = await c2.callTool({ name: 'open_nodes', arguments: { names: ['Bob'] } }).catch((e: McpError) => e);
    expect((miss as McpError).code).toBe(-32050);
    await c2.close();
    const failed = (await t2.close().catch((e: unknown) => e)) as TapedeckError;
    expect(failed.code).toBe('E_MISS');
    expect(failed.message).toContain('had no recording in the-agent-remembers.mcp.tape:');
    expect(failed.details.file).toBe(join(dir, 'the-agent-remembers.mcp.tape'));
  });
});
