// Update mode brings a live server to the session's state before it sends the call that missed
// (goLive). A server that exits at once, cannot be reached, or never answers that warm-up used to
// hang the session for ever: each warm-up request waited on a bare promise, nothing failed it,
// and close() waited for it too (a vitest teardown that never ended; `tapedeck mcp --mode
// update --timeout 2000` that never answered and exited 0). Now the call that missed gets -32051
// (server gone, or unreachable) or -32052 (past the timeout), and the session ends as usual.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tapeTransport } from '../../src/mcp/index.ts';
import { startProxy } from '../../src/proxy/index.ts';
import { CLI, EVERYTHING, everythingHttp, tmp } from './helpers.ts';

/** Records initialize, initialized and one echo against server-everything. */
async function recordEcho(tape: string): Promise<void> {
  const c = new Client({ name: 'test', version: '1' });
  await c.connect(tapeTransport(new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' }), { tape, mode: 'record' }));
  await c.callTool({ name: 'echo', arguments: { message: 'a' } });
  await c.close();
}

const within = <T>(ms: number, p: Promise<T>): Promise<T | 'HUNG'> => Promise.race([p, new Promise<'HUNG'>((r) => setTimeout(() => r('HUNG'), ms).unref())]);

describe('update mode whose live server cannot be brought up to date', { timeout: 60_000 }, () => {
  it('tapeTransport: a server that exits at once answers the missed call with -32051, and close() ends', async () => {
    const tape = join(tmp('update-dead'), 'echo.tape');
    await recordEcho(tape);
    const c = new Client({ name: 'test', version: '1' });
    const warnings: string[] = [];
    await c.connect(tapeTransport(() => new StdioClientTransport({ command: 'node', args: ['/nonexistent/server.js'], stderr: 'ignore' }), { tape, mode: 'update', onWarning: (w) => warnings.push(w) }));
    expect(await c.callTool({ name: 'echo', arguments: { message: 'a' } })).toMatchObject({ content: [{ text: 'Echo: a' }] });
    const got = await within(
      20_000,
      c.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } }, undefined, { timeout: 30_000 }).then(
        () => 'answered',
        (e: { code?: number; message?: string }) => e,
      ),
    );
    expect(got).not.toBe('HUNG');
    expect(got).toMatchObject({ code: -32051 });
    expect((got as Error).message).toContain('the MCP transport closed');
    expect(await within(10_000, c.close().then(() => 'closed'))).toBe('closed');
  });

  it('tapeTransport: a server that never answers the warm-up gets -32052 after timeoutMs', async () => {
    const tape = join(tmp('update-mute'), 'echo.tape');
    await recordEcho(tape);
    const c = new Client({ name: 'test', version: '1' });
    // Reads stdin, answers nothing.
    const mute = () => new StdioClientTransport({ command: 'node', args: ['-e', 'process.stdin.resume()'], stderr: 'ignore' });
    await c.connect(tapeTransport(mute, { tape, mode: 'update', timeoutMs: 500, onWarning: () => undefined }));
    const t0 = Date.now();
    const got = await within(
      20_000,
      c.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }, undefined, { timeout: 30_000 }).then(
        () => 'answered',
        (e: { code?: number; message?: string }) => e,
      ),
    );
    expect(got).not.toBe('HUNG');
    expect(got).toMatchObject({ code: -32052 });
    expect((got as Error).message).toContain('within 500 ms');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(await within(10_000, c.close().then(() => 'closed'))).toBe('closed');
  });

  it('tapedeck mcp --mode update --timeout 2000 -- <a server that exits>: id 2 gets -32051 and tapedeck exits 1', async () => {
    const tape = join(tmp('update-dead-cli'), 'echo.tape');
    await recordEcho(tape);
    const child = spawn('node', [CLI, 'mcp', '--tape', tape, '--mode', 'update', '--timeout', '2000', '--', 'node', '/nonexistent/server.js'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-sum', arguments: { a: 40, b: 2 } } });
    // stdin stays open: the session must end because the server is gone, not because input ended.
    const code = await within(20_000, new Promise<number | null>((r) => child.on('exit', r)));
    if (code === 'HUNG') child.kill('SIGKILL');
    expect(code).toBe(1);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { id?: number; error?: { code: number; message: string } });
    expect(lines.find((l) => l.id === 2)?.error?.code).toBe(-32051);
    expect(err).toContain('the MCP server exited');
    // The warm-up was under way: initialize was answered from the tape.
    expect(lines.find((l) => l.id === 1)?.error).toBeUndefined();
  });

  it('tapedeck serve --mode update with nothing listening upstream: the missed call gets -32051, not a hang', async () => {
    const tape = join(tmp('update-down-serve'), 'remote.tape');
    const server = await everythingHttp();
    const rec = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, onWarning: () => undefined });
    const c0 = new Client({ name: 'test', version: '1' });
    await c0.connect(new StreamableHTTPClientTransport(new URL(`${rec.url}/mcp`)));
    await c0.callTool({ name: 'echo', arguments: { message: 'a' } });
    await c0.close();
    await rec.close();
    await server.stop();

    const upd = await startProxy({ upstream: server.url, tape, mode: 'update', port: 0, onWarning: () => undefined });
    const c = new Client({ name: 'test', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${upd.url}/mcp`)));
    const got = await within(
      20_000,
      c.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } }, undefined, { timeout: 30_000 }).then(
        () => 'answered',
        (e: { code?: number; message?: string }) => e,
      ),
    );
    expect(got).not.toBe('HUNG');
    expect(got).toMatchObject({ code: -32051 });
    expect((got as Error).message).toContain('could not be reached');
    expect(await within(10_000, c.close().then(() => 'closed'))).toBe('closed');
    expect(await within(10_000, upd.close().then(() => 'closed'))).toBe('closed');
  });
});
