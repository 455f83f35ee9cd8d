// A replayed server message is the one the server sent: its members in the server's order, the
// same bytes on stdout as live, the same JSON text of a result in process. Tape records sort the
// keys of their nested objects, so an answer stored as a value came back sorted (server-memory's
// entities `{"name":"Zed","entityType":...}` replayed as `{"entityType":...,"name":"Zed"}`), and
// an agent that hands a tool result to its model as text missed on replay. Tapes of record
// version 1 (values) still replay.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { mcpKey } from '../../src/mcp/key.ts';
import { McpTape } from '../../src/mcp/tape.ts';
import { tapeTransport } from '../../src/mcp/transport.ts';
import { isMcpRecord, type McpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { CLI, EVERYTHING, FAILS_IF_RUN, MEMORY, tmp } from './helpers.ts';

/**
 * Raw JSON-RPC through `tapedeck mcp`: writes the messages, waits for an answer to every request
 * (each request once answered, the next one goes), then closes stdin; resolves to the lines
 * tapedeck wrote on stdout, as text, and its exit code and stderr.
 */
function rawLines(args: string[], messages: Record<string, unknown>[], env: Record<string, string> = {}): Promise<{ lines: string[]; code: number | null; stderr: string }> {
  const child = spawn('node', [CLI, 'mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const lines: string[] = [];
  let stderr = '';
  let buf = '';
  let next = 0;
  // Requests one at a time (a notification goes with the request after it), as a client would.
  const sendUpTo = () => {
    while (next < messages.length) {
      const m = messages[next++]!;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
      if (m.id !== undefined) return;
    }
    child.stdin.end();
  };
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  return new Promise((resolve) => {
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        const m = JSON.parse(line) as Record<string, unknown>;
        if (m.method === undefined) sendUpTo();
      }
    });
    child.once('exit', (code) => resolve({ lines, code, stderr }));
    sendUpTo();
  });
}

const init = { id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
const zed = { id: 1, method: 'tools/call', params: { name: 'create_entities', arguments: { entities: [{ name: 'Zed', entityType: 'person', observations: ['a'] }] } } };

describe('server messages replay as the server sent them', () => {
  it('tapedeck mcp: every replayed stdout line is the live one, byte for byte (server-memory answers name before entityType)', async () => {
    const dir = tmp('as-sent');
    const tape = join(dir, 'memory.tape');
    const env = { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') };
    const session = [init, { method: 'notifications/initialized' }, { id: 2, method: 'tools/list' }, zed, { id: 3, method: 'tools/call', params: { name: 'read_graph', arguments: {} } }];
    const live = await rawLines(['--tape', tape, '--mode', 'record', '--', 'node', MEMORY], session, env);
    expect(live.code).toBe(0);
    // The server's own order is not sorted: the test means something.
    expect(live.lines[2]).toContain('"structuredContent":{"entities":[{"name":"Zed","entityType":"person"');
    expect(live.lines[2]!.startsWith('{"result":')).toBe(true);
    rmSync(env.MEMORY_FILE_PATH, { force: true });
    const replayed = await rawLines(['--tape', tape, '--', ...FAILS_IF_RUN], session, env);
    expect(replayed.code).toBe(0);
    expect(replayed.lines).toEqual(live.lines);
    // With other ids, only the ids differ.
    const other = await rawLines(['--tape', tape, '--', ...FAILS_IF_RUN], session.map((m) => (m.id === undefined ? m : { ...m, id: `r${m.id}` })), env);
    expect(other.lines).toEqual(live.lines.map((l) => l.replace(/"id":(\d+)\}$/, '"id":"r$1"}')));
    // What the tape holds is the server's text, its recorded id included.
    const records = (await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord);
    expect(records.every((r) => r.v === 2)).toBe(true);
  }, 60_000);

  it('tapedeck mcp: notifications (progress) replay byte for byte too, with the caller token in its place', async () => {
    const dir = tmp('as-sent-progress');
    const tape = join(dir, 'everything.tape');
    const call = (token: string) => ({ id: 2, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 0.1, steps: 2 }, _meta: { progressToken: token } } });
    const session = (token: string) => [{ ...init, params: { ...init.params, protocolVersion: '2025-11-25' } }, { method: 'notifications/initialized' }, call(token)];
    const live = await rawLines(['--tape', tape, '--mode', 'record', '--', 'node', EVERYTHING, 'stdio'], session('tok'));
    const progress = live.lines.filter((l) => l.includes('"notifications/progress"'));
    expect(progress).toHaveLength(2);
    expect(progress[0]).toMatch(/^\{"method":"notifications\/progress","params":\{"progress":1,"total":2,"progressToken":"tok"\},"jsonrpc":"2.0"\}$/);
    const replayed = await rawLines(['--tape', tape, '--', ...FAILS_IF_RUN], session('tok'));
    expect(replayed.lines).toEqual(live.lines);
    const retoken = await rawLines(['--tape', tape, '--', ...FAILS_IF_RUN], session('another'));
    expect(retoken.lines).toEqual(live.lines.map((l) => l.replace('"progressToken":"tok"', '"progressToken":"another"')));
  }, 60_000);

  it('tapeTransport: the result the SDK Client gets has the JSON text of the live one', async () => {
    const dir = tmp('as-sent-transport');
    const tape = join(dir, 'memory.tape');
    const script = async (c: Client) => [
      JSON.stringify(await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Zed', entityType: 'person', observations: ['a'] }] } })),
      JSON.stringify(await c.callTool({ name: 'read_graph', arguments: {} })),
      JSON.stringify(c.getServerCapabilities()),
    ];
    const c1 = new Client({ name: 'agent', version: '1' });
    await c1.connect(tapeTransport(new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }, stderr: 'ignore' }), { tape, mode: 'record' }));
    const live = await script(c1);
    await c1.close();
    expect(live[0]).toContain('{"name":"Zed","entityType":"person"');
    const c2 = new Client({ name: 'agent', version: '1' });
    await c2.connect(
      tapeTransport(
        () => {
          throw new Error('replay made the live transport');
        },
        { tape, mode: 'replay' },
      ),
    );
    expect(await script(c2)).toEqual(live);
    await c2.close();
  }, 60_000);

  it('a tape of record version 1 (answers stored as values) still replays, as before', async () => {
    const dir = tmp('as-sent-v1');
    const tape = join(dir, 'v1.tape');
    // Records as the previous release wrote them: values, with the v1 event fields.
    const old = (method: string, params: unknown, events: McpRecord['events']): McpRecord => ({ v: 1, kind: 'mcp', key: mcpKey(method, params), keyVersion: 2, recordedAt: new Date(0).toISOString(), durationMs: 1, method, request: { method, ...(params !== undefined ? { params } : {}) }, events });
    const writer = await McpTape.open({ tape, mode: 'record', onWarning: () => undefined });
    const initParams = { protocolVersion: '2025-06-18', capabilities: {} };
    for (const rec of [
      old('initialize', initParams, [{ ms: 1, response: true, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'old', version: '1' } } }]),
      old('notifications/initialized', undefined, []),
      old('tools/call', { name: 'echo', arguments: { text: 'hi' } }, [
        { ms: 1, notification: { method: 'notifications/message', params: { level: 'info', data: 'working' } } },
        { ms: 2, response: true, result: { content: [{ type: 'text', text: 'hi' }] } },
      ]),
      old('tools/call', { name: 'fail', arguments: {} }, [{ ms: 1, response: true, error: { code: -32602, message: 'bad' } }]),
    ]) {
      expect(await writer.append(rec)).toBeUndefined();
    }
    await writer.close();
    const r = await rawLines(['--tape', tape, '--', ...FAILS_IF_RUN], [init, { method: 'notifications/initialized' }, { id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }, { id: 2, method: 'tools/call', params: { name: 'fail', arguments: {} } }]);
    expect(r.stderr).toBe('');
    expect(r.lines).toEqual([
      '{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}},"protocolVersion":"2025-06-18","serverInfo":{"name":"old","version":"1"}}}',
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"working","level":"info"}}',
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"hi","type":"text"}]}}',
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}',
    ]);
    expect(existsSync(tape)).toBe(true);
  }, 60_000);
});
