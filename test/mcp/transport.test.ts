// tapeTransport around SDK client Transports, in process, and the test tape's mcp() helper: the
// same sessions as over stdio, with no tapedeck process in between.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, vi } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { openTestTape, type TapeReport } from '../../src/testing/index.ts';
import type { TapedeckError } from '../../src/errors.ts';
import { EVERYTHING, everythingSession, logged, MEMORY, richClient, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};

describe('tapeTransport', () => {
  it('records a Client on a StdioClientTransport and replays it without making the transport: same answers and messages, in order', async () => {
    const dir = tmp('transport');
    const tape = join(dir, 'everything.tape');
    const rec = logged(tapeTransport(new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' }), { tape, mode: 'record' }));
    const c1 = richClient();
    await c1.connect(rec.transport);
    const recorded = await everythingSession(c1);
    await c1.close();
    expect(rec.log.filter((m) => (m as { method?: string }).method === 'notifications/progress')).toHaveLength(3);

    const rep = logged(tapeTransport(never, { tape, mode: 'replay' }));
    const c2 = richClient();
    await c2.connect(rep.transport);
    expect(await everythingSession(c2)).toEqual(recorded);
    await c2.close();
    expect(rep.log).toEqual(rec.log);
    // As the server sent them, members in its order: answers, notifications, its requests.
    expect(rep.log.map((m) => JSON.stringify(m))).toEqual(rec.log.map((m) => JSON.stringify(m)));
    rmSync(dir, { recursive: true, force: true });
  });

  it("mode 'once': records when the tape does not exist, replays (never making the transport) when it does", async () => {
    const dir = tmp('transport-once');
    const tape = join(dir, 'memory.tape');
    const tools = async (t: ReturnType<typeof tapeTransport>) => {
      const c = new Client({ name: 'test', version: '1' });
      await c.connect(t);
      const names = (await c.listTools()).tools.map((x) => x.name);
      await c.close();
      return names;
    };
    const first = await tools(tapeTransport(() => new StdioClientTransport({ command: 'node', args: [MEMORY], stderr: 'ignore' }), { tape, mode: 'once' }));
    expect(first).toContain('read_graph');
    expect(existsSync(tape)).toBe(true);
    expect(await tools(tapeTransport(never, { tape, mode: 'once' }))).toEqual(first);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an in-process miss names the mode option that records, not a CLI with a placeholder', async () => {
    const dir = tmp('transport-miss');
    for (const [mode, fix] of [
      [undefined, "re-record: tapeTransport(transport, { tape, mode: 'record' }) (or TAPEDECK_MODE=record)"],
      ['replay', "re-record: tapeTransport(transport, { tape, mode: 'record' })"],
    ] as const) {
      const misses: string[] = [];
      const t = tapeTransport(never, { tape: join(dir, 'none.tape'), ...(mode ? { mode } : {}), onMiss: (_r, x) => void misses.push(x.message) });
      const c = new Client({ name: 'test', version: '1' });
      const err = (await c.connect(t).catch((e: unknown) => e)) as Error;
      expect(err.message).toContain(fix.slice(1)); // on its own line, capitalized
      expect(misses.join('\n')).toContain(fix.slice(1));
      expect(misses.join('\n')).not.toContain('<server command>');
      await c.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('a replayed server request whose client answer differs is a miss on the call that made it', async () => {
    const dir = tmp('answer');
    const tape = join(dir, 'sampling.tape');
    const c1 = richClient();
    await c1.connect(tapeTransport(new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' }), { tape, mode: 'record' }));
    const args = { name: 'trigger-sampling-request', arguments: { prompt: 'say something', maxTokens: 20 } };
    const recorded = await c1.callTool(args);
    await c1.close();

    // The same call, but the client's model now answers something else.
    const c2 = new Client({ name: 'tapedeck-test', version: '2' }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
    const { CreateMessageRequestSchema, ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    c2.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'fake-model', role: 'assistant', content: { type: 'text', text: 'a different answer' } }));
    c2.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///tmp/project', name: 'project' }] }));
    const reports: string[] = [];
    await c2.connect(tapeTransport(undefined, { tape, mode: 'replay', onMiss: (r) => reports.push(r) }));
    const err = await c2.callTool(args).then(
      () => undefined,
      (e: unknown) => e as McpError,
    );
    expect(recorded).toBeTruthy();
    expect(err?.code).toBe(-32050);
    expect(err?.message).toContain("the client's answer to sampling/createMessage differs");
    expect(reports.join('\n')).toContain('recorded answer');
    await c2.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a wrapped server that dies mid-call: the call gets -32051, the client is told the connection closed, nothing of the call is recorded', async () => {
    const dir = tmp('crash');
    const tape = join(dir, 'odd.tape');
    const c = new Client({ name: 'tapedeck-test', version: '1' });
    let closed = false;
    c.onclose = () => (closed = true);
    await c.connect(tapeTransport(() => new StdioClientTransport({ command: 'node', args: [join(import.meta.dirname, 'odd-server.mjs')], stderr: 'ignore' }), { tape, mode: 'record', onWarning: () => undefined }));
    const err = await c.callTool({ name: 'crash', arguments: {} }).catch((e: McpError) => e);
    expect((err as McpError).code).toBe(-32051);
    // The close reaches the client after the error, later on a loaded machine.
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
    const { readTape } = await import('../../src/store/tape-file.ts');
    const methods = (await readTape(tape)).records.map((r) => (r.value as { method?: string }).method);
    expect(methods).toEqual(['initialize', 'notifications/initialized']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a wrapped server that cannot start: its initialize gets one error, it is not started again, nothing is recorded', async () => {
    const dir = tmp('nostart');
    const tape = join(dir, 'nostart.tape');
    let made = 0;
    const errors: Error[] = [];
    const c = new Client({ name: 'tapedeck-test', version: '1' });
    c.onerror = (e) => errors.push(e);
    const wrapped = tapeTransport(
      () => {
        made++;
        return new StdioClientTransport({ command: 'no-such-command-xyz', stderr: 'ignore' });
      },
      { tape, mode: 'record', onWarning: () => undefined },
    );
    const err = await c.connect(wrapped).catch((e: McpError) => e);
    expect((err as McpError).code).toBe(-32051);
    expect((err as McpError).message).toContain('ENOENT');
    await c.close();
    expect(errors.map((e) => e.message).filter((m) => m.includes('unknown message ID'))).toEqual([]);
    expect(made).toBe(1);
    expect((await wrapped.tape).recorded).toBe(0);
    expect(existsSync(tape)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it("a test tape's mcp(): recorded beside the fetch tape in the test's mode, a miss fails the test with its record command", async () => {
    const dir = tmp('testing');
    const path = join(dir, 'agent.tape');
    const memoryFile = join(dir, 'memory.jsonl');
    const script = async (c: Client) => [
      await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Tape', entityType: 'thing', observations: ['round'] }] } }),
      await c.callTool({ name: 'read_graph', arguments: {} }),
    ];
    const t1 = openTestTape({ tape: path, mode: 'record', env: {}, test: 'agent remembers', recordCommand: 'npm test -- -t remembers' });
    const c1 = new Client({ name: 'tapedeck-test', version: '1' });
    await c1.connect(t1.mcp(new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: memoryFile }, stderr: 'ignore' })));
    const recorded = await script(c1);
    const r1 = await t1.close();
    expect(r1.added).toBeGreaterThanOrEqual(4);
    expect(existsSync(join(dir, 'agent.mcp.tape'))).toBe(true);
    expect(readFileSync(join(dir, 'agent.mcp.tape')).toString('latin1')).toContain('create_entities');

    const t2 = openTestTape({ tape: path, env: { CI: 'true' }, test: 'agent remembers', recordCommand: 'npm test -- -t remembers' });
    expect(t2.mode).toBe('replay');
    const c2 = new Client({ name: 'tapedeck-test', version: '1' });
    await c2.connect(t2.mcp(never));
    expect(await script(c2)).toEqual(recorded);
    const miss = await c2.callTool({ name: 'open_nodes', arguments: { names: ['Tape'] } }).catch((e: McpError) => e);
    expect((miss as McpError).code).toBe(-32050);
    expect((miss as McpError).message).toContain('record it: npm test -- -t remembers');
    expect(t2.misses).toHaveLength(1);
    expect(t2.misses[0]!.route).toBe('MCP tools/call open_nodes');
    // close() fails the test the miss happened in, with the report attached.
    const failed = (await t2.close().catch((e: unknown) => e)) as TapedeckError & { report: TapeReport };
    expect(failed.code).toBe('E_MISS');
    expect(failed.message).toContain('MCP tools/call open_nodes');
    const r2 = failed.report;
    expect(r2.hits).toBeGreaterThanOrEqual(4);
    expect(r2.misses[0]!.command).toBe('npm test -- -t remembers');
    rmSync(dir, { recursive: true, force: true });
  });
});
