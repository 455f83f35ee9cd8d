// `tapedeck rerecord` on a tape that holds only MCP exchanges: it sends again HTTP requests only,
// so it stops, and says what the tape holds and how MCP exchanges are recorded again. Before, it
// called them "ReplayCache record(s)" and said rerecord replays tapes recorded by tapedeck serve
// (which recorded them).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { CLI, MEMORY, tmp } from './helpers.ts';

describe('tapedeck rerecord on an MCP tape', { timeout: 60_000 }, () => {
  it('counts the MCP exchanges as such and says how to record them again', async () => {
    const dir = tmp('rerecord-mcp');
    const tape = join(dir, 'remote.tape');
    const c = new Client({ name: 'agent', version: '1' });
    await c.connect(tapeTransport(new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'm.jsonl') }, stderr: 'ignore' }), { tape, mode: 'record' }));
    await c.listTools();
    await c.close();
    const r = spawnSync('node', [CLI, 'rerecord', tape, '--yes'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('3 MCP exchange(s), which hold no HTTP request');
    expect(r.stderr).not.toContain('ReplayCache');
    expect(r.stderr).toContain(`tapedeck mcp --tape ${tape} --mode record -- <server command>`);
    expect(r.stderr).toContain('--mode record (Streamable HTTP)');
  });
});
