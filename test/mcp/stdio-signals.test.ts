// `tapedeck mcp` stopped by a signal (a host quitting, Ctrl-C, the MCP SDK's own close) still
// closes the tape, so a record run's new answers replace the old ones. The SDK's
// StdioClientTransport.close() ends stdin, waits 2 s, then sends SIGTERM: tapedeck, waiting for
// a server that does not exit once its stdin is closed, used to die there with the tape open,
// and the replay kept answering what the first record run recorded.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CLI, FAILS_IF_RUN, tmp } from './helpers.ts';

const ODD = join(import.meta.dirname, 'odd-server.mjs');
const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

/** One session through `tapedeck mcp` with the SDK's own transport: `secret` answers with ODD_KEY. */
async function sdkSession(tape: string, mode: string, key: string, slowInFlight: boolean) {
  const t = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', mode, '--', ...(mode === 'replay' ? FAILS_IF_RUN : ['node', ODD])], env: { ...(process.env as Record<string, string>), ODD_KEY: key }, stderr: 'pipe' });
  let stderr = '';
  t.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const c = new Client({ name: 'host', version: '1' });
  await c.connect(t);
  const answer = text(await c.callTool({ name: 'secret', arguments: {} }));
  // Given up by the client (its request timeout): the server keeps working on it, and stays up.
  if (slowInFlight) await c.callTool({ name: 'slow', arguments: { ms: 6000 } }, undefined, { timeout: 300 }).catch(() => undefined);
  await c.close();
  return { answer, stderr };
}

describe('tapedeck mcp stopped by a signal', () => {
  it("closes the tape when the MCP SDK's close() ends in SIGTERM: the record run's answer replaces the old one", async () => {
    const dir = tmp('sigterm-sdk');
    const tape = join(dir, 'odd.tape');
    expect((await sdkSession(tape, 'record', 'A', false)).answer).toBe('key=A');
    const second = await sdkSession(tape, 'record', 'B', true);
    expect(second.answer).toBe('key=B');
    expect(second.stderr).toContain('SIGTERM');
    expect(second.stderr).toMatch(/MCP exchange\(s\) recorded to .*replaced/);
    expect((await sdkSession(tape, 'replay', '-', false)).answer).toBe('key=B');
  }, 30_000);

  it('SIGINT with the host still connected: stops at once, writes the tape, exits 0', async () => {
    const dir = tmp('sigint');
    const tape = join(dir, 'odd.tape');
    const run = (key: string) =>
      new Promise<{ code: number | null; ms: number; stderr: string }>((resolve) => {
        const p = spawn('node', [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', 'node', ODD], { env: { ...process.env, ODD_KEY: key }, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let stderr = '';
        let t0 = 0;
        p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
        p.stdout.on('data', (b: Buffer) => {
          out += b.toString();
          // The answer to the call is on stdout: a slow call is still in flight, stdin still open.
          if (out.includes('"id":2') && t0 === 0) {
            t0 = Date.now();
            p.kill('SIGINT');
          }
        });
        p.on('exit', (code) => resolve({ code, ms: Date.now() - t0, stderr }));
        for (const m of [
          { id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'h', version: '1' } } },
          { method: 'notifications/initialized' },
          { id: 3, method: 'tools/call', params: { name: 'slow', arguments: { ms: 6000 } } },
          { id: 2, method: 'tools/call', params: { name: 'secret', arguments: {} } },
        ])
          p.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
      });
    expect((await run('A')).code).toBe(0);
    const second = await run('B');
    expect(second.code).toBe(0);
    expect(second.ms).toBeLessThan(1500);
    expect(second.stderr).toContain('tools/call slow had no answer when the session ended (the session was stopped at once, by a signal)');
    expect((await sdkSession(tape, 'replay', '-', false)).answer).toBe('key=B');
  }, 30_000);
});
