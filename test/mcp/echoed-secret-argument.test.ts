// A tool call's secret argument (`password`) is masked in the recorded params; a server that
// repeats it in its answer or a notification must not put it on the tape there either, nor hand
// it back on replay: the answer is masked where it holds the request's secret values, as an HTTP
// answer echoing its request's secrets is.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { tmp } from './helpers.ts';

const SERVER = join(import.meta.dirname, 'echoed-secret-server.mjs');
const PASSWORD = 'McpPwq8W3e5R7t9Y1u3I5o7P9';

const never = () => {
  throw new Error('replay made the live transport');
};

async function login(t: ReturnType<typeof tapeTransport>): Promise<{ text: string }> {
  const c = new Client({ name: 'agent', version: '1' });
  await c.connect(t);
  const r = (await c.callTool({ name: 'login', arguments: { user: 'bob', password: PASSWORD } })) as { content: { text: string }[] };
  await c.close();
  return { text: r.content[0]!.text };
}

describe('an MCP answer that repeats the call secret argument', () => {
  it('is recorded and replayed with the argument masked', async () => {
    const dir = tmp('mcp-echo-secret');
    const tape = join(dir, 'login.tape');
    const live = await login(tapeTransport(new StdioClientTransport({ command: 'node', args: [SERVER], stderr: 'ignore' }), { tape, mode: 'record' }));
    // The client that recorded got the server's words as they were.
    expect(live.text).toBe(`welcome bob, your password ${PASSWORD} works`);
    const bytes = readFileSync(tape);
    expect(bytes.includes(PASSWORD)).toBe(false);
    expect(bytes.includes('your password [REDACTED:')).toBe(true);
    const replayed = await login(tapeTransport(never, { tape, mode: 'replay' }));
    expect(replayed.text).not.toContain(PASSWORD);
    expect(replayed.text).toMatch(/^welcome bob, your password \[REDACTED:[0-9a-f]+\] works$/);
  });
});
