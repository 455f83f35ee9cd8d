// Two `tapedeck mcp` processes given the same --tape (two servers of one host config) each
// replay their own server's answers. Before, both were "session 1" and keyed alike, so the
// memory server's client was served the filesystem server's initialize and tools/list.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { CLI, FILESYSTEM, MEMORY, tmp } from './helpers.ts';

describe('two tapedeck mcp processes on one tape', { timeout: 60_000 }, () => {
  it('record both at once, then replay: each client gets its own server', async () => {
    const dir = tmp('cli-shared-servers');
    const tape = join(dir, 'shared.tape');
    const env = { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'memory.jsonl') };
    const run = async (mode: string) => {
      const open = async (server: string[]) => {
        const c = new Client({ name: 'host', version: '1' });
        await c.connect(new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', mode, '--', ...server], env, stderr: 'ignore' }));
        return c;
      };
      const fs = await open(['node', FILESYSTEM, dir]);
      const mem = await open(['node', MEMORY]);
      const out: Record<string, string | undefined> = {};
      for (const [name, c] of [['fs', fs], ['memory', mem]] as const) {
        out[name] = `${c.getServerVersion()?.name} ${(await c.listTools()).tools.some((t) => t.name === 'read_graph' || t.name === 'read_text_file')}`;
      }
      await fs.close();
      await mem.close();
      return out;
    };
    const recorded = await run('record');
    expect(recorded).toEqual({ fs: 'secure-filesystem-server true', memory: 'memory-server true' });
    expect(await run('replay')).toEqual(recorded);
  });
});
