// Sessions of one program on one MCP tape are told apart by their server (its command and
// arguments), never by the order they start alone. Before, update and once mode served a second
// server's client the first server's initialize and tools/list (the tape then held only session
// 1, which "serves every session"), and a program opening server A, A again, then B replayed B's
// answers to its second A session and A's to B (recording numbered sessions by server, replay by
// start order). A miss in a later session listed tools another server recorded.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { openTestTape } from '../../src/testing/index.ts';
import { EVERYTHING, FILESYSTEM, tmp } from './helpers.ts';

const everything = () => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
const filesystem = (root: string) => () => new StdioClientTransport({ command: 'node', args: [FILESYSTEM, root], stderr: 'ignore' });

/** What a client sees of its server: its name, and whether it has the tool that tells it. */
async function seen(c: Client, tool: string): Promise<{ server: string | undefined; has: boolean }> {
  return { server: c.getServerVersion()?.name, has: (await c.listTools()).tools.some((t) => t.name === tool) };
}

/** Opens each server in turn on one tape in `mode`; what each client saw, and the misses. */
async function program(tape: string, mode: string, servers: [string, () => StdioClientTransport, string][]) {
  const out: Record<string, unknown>[] = [];
  const misses: string[] = [];
  for (const [name, inner, tool] of servers) {
    const c = new Client({ name: 'agent', version: '1' });
    await c.connect(tapeTransport(inner, { tape, mode, onMiss: (r) => misses.push(r) }));
    out.push({ name, ...(await seen(c, tool)) });
    await c.close();
  }
  return { out, misses };
}

describe('MCP sessions are told by their server', { timeout: 60_000 }, () => {
  for (const mode of ['update', 'once']) {
    it(`${mode} mode, two servers one after the other: each client gets its own server's answers, in both runs`, async () => {
      const dir = tmp(`by-server-${mode}`);
      const tape = join(dir, 'two.tape');
      const servers: [string, () => StdioClientTransport, string][] = [
        ['everything', everything, 'echo'],
        ['filesystem', filesystem(dir), 'read_text_file'],
      ];
      const expected = [
        { name: 'everything', server: 'mcp-servers/everything', has: true },
        { name: 'filesystem', server: 'secure-filesystem-server', has: true },
      ];
      const first = await program(tape, mode, servers);
      expect(first.out).toEqual(expected);
      const second = await program(tape, mode, servers);
      expect(second.out).toEqual(expected);
      expect(second.misses).toEqual([]);
    });
  }

  it('the test helper in update mode (its default), two tape.mcp() in one test: each client gets its own server, in both runs', async () => {
    const dir = tmp('by-server-fixture');
    const path = join(dir, 'agent.tape');
    const run = async (n: number) => {
      const t = openTestTape({ tape: path, mode: 'update', env: {}, runDir: join(dir, `run-${n}`), test: 'two servers' });
      const e = new Client({ name: 'agent', version: '1' });
      const f = new Client({ name: 'agent', version: '1' });
      await e.connect(t.mcp(everything));
      await f.connect(t.mcp(filesystem(dir)()));
      const out = { everything: await seen(e, 'echo'), filesystem: await seen(f, 'read_text_file') };
      await e.close();
      await f.close();
      const failure = t.missFailure();
      await t.close();
      return { out, failure };
    };
    const expected = { everything: { server: 'mcp-servers/everything', has: true }, filesystem: { server: 'secure-filesystem-server', has: true } };
    for (const n of [1, 2]) {
      const { out, failure } = await run(n);
      expect(out).toEqual(expected);
      expect(failure).toBeUndefined();
    }
  });

  it('server A, A again, then B, recorded then replayed in the same order: each gets its own server', async () => {
    const dir = tmp('by-server-aab');
    const tape = join(dir, 'aab.tape');
    const servers: [string, () => StdioClientTransport, string][] = [
      ['everything#1', everything, 'echo'],
      ['everything#2', everything, 'echo'],
      ['filesystem', filesystem(dir), 'read_text_file'],
    ];
    const recorded = await program(tape, 'record', servers);
    expect(recorded.out.map((o) => o.server)).toEqual(['mcp-servers/everything', 'mcp-servers/everything', 'secure-filesystem-server']);
    const replayed = await program(tape, 'replay', servers);
    expect(replayed.out).toEqual(recorded.out);
    expect(replayed.misses).toEqual([]);
  });

  it('a miss in the second session lists only the tools its own server recorded', async () => {
    const dir = tmp('by-server-miss');
    const tape = join(dir, 'miss.tape');
    const run = async (mode: string, call: string) => {
      const misses: string[] = [];
      const e = new Client({ name: 'agent', version: '1' });
      await e.connect(tapeTransport(everything, { tape, mode, onMiss: (r) => misses.push(r) }));
      await e.callTool({ name: 'echo', arguments: { message: 'hi' } });
      await e.close();
      const f = new Client({ name: 'agent', version: '1' });
      await f.connect(tapeTransport(filesystem(dir), { tape, mode, onMiss: (r) => misses.push(r) }));
      const r = await f.callTool({ name: call, arguments: { path: dir } }).then(() => 'answered', (err: Error) => err.message);
      await f.close();
      return { r, misses };
    };
    await run('record', 'list_allowed_directories');
    const { r } = await run('replay', 'list_directory');
    expect(r).toContain('no recording of list_directory');
    expect(r).toContain('list_allowed_directories');
    expect(r).not.toContain('echo');
  });
});
