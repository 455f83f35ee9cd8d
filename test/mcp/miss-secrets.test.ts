// A miss names the command that records the tape again, in the JSON-RPC error the client gets
// (an agent hands tool errors to its model) and on stderr. The server command often carries a
// credential: a token argument, a database URL with its password. They are shown masked; the
// command stays one a user recognises and completes. Before, they were quoted verbatim, so a
// replay miss put them in the LLM conversation.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { shownCommand } from '../../src/mcp/shown-command.ts';
import { CLI, MEMORY, tmp } from './helpers.ts';

const GH = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
const SECRETS = [GH, 'S3cretPass', 'hunter2', 'k3y-value', 'pl41n-t0k3n', 'r3dispw'];

describe('the re-record command of an MCP miss', () => {
  it('masks the secrets of the server command and of the tape URL, in the client error and on stderr', async () => {
    const dir = tmp('miss-secrets');
    const tape = join(dir, 'memory.tape');
    const server = ['node', MEMORY, '--token', 'pl41n-t0k3n', GH, 'postgresql://admin:S3cretPass@db/app', '--api-key=k3y-value', 'PASSWORD=hunter2', '--verbose'];
    const t = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--', ...server], stderr: 'pipe' });
    let stderr = '';
    t.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const client = new Client({ name: 'agent', version: '1' });
    // initialize is a miss too (nothing recorded): the SDK rejects the connect with it.
    const err = (await client.connect(t).catch((e: unknown) => e)) as McpError;
    await client.close();
    expect(err).toBeInstanceOf(McpError);
    expect(err.code).toBe(-32050);
    for (const text of [err.message, JSON.stringify(err.data), stderr]) {
      for (const s of SECRETS) expect(text).not.toContain(s);
    }
    expect(err.message).toContain(`--mode record -- node ${MEMORY} --token *** [REDACTED] postgresql://admin:***@db/app --api-key=*** PASSWORD=*** --verbose`);
    expect(stderr).toContain('postgresql://admin:***@db/app');
  });

  it('masks a Redis tape URL password, and leaves plain words as they are', () => {
    expect(shownCommand(['redis://app:r3dispw@cache:6379/0'])).toBe('redis://app:***@cache:6379/0');
    expect(shownCommand(['npx', '-y', '@modelcontextprotocol/server-filesystem', '.', "it's"])).toBe(`npx -y @modelcontextprotocol/server-filesystem . 'it'\\''s'`);
    expect(shownCommand(['server', '--secret', 'x', '--key', 'y', '--password=z', 'https://h/p?token=abc&a=1'])).toBe('server --secret *** --key *** --password=*** https://h/p?token=***&a=1');
  });
});
