// tapedeck serve's shutdown timeout is the wait for MCP answers still on the way too: a tool call
// the server has not answered when the proxy shuts down gets the time `--shutdown-timeout` gives
// (not a fixed grace of its own), and the warning names serve's flag, not `tapedeck mcp`'s.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/index.ts';
import { tmp } from './helpers.ts';

/** An MCP server over Streamable HTTP (JSON answers) that answers everything but tools/call. */
async function silentOnCalls(): Promise<{ url: string; stop(): Promise<void> }> {
  const read = async (req: IncomingMessage) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    return Buffer.concat(parts).toString('utf8');
  };
  const server: Server = createServer((req, res) => {
    void read(req).then((text) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const m = JSON.parse(text) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      if (m.method === 'tools/call') return; // never answered
      const result = m.method === 'initialize' ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'silent', version: '1' } } : {};
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'silent-1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

describe('tapedeck serve shutting down with an MCP call unanswered', () => {
  it('waits what its shutdown timeout says for the answer, and the warning names serve --shutdown-timeout', async () => {
    const dir = tmp('serve-shutdown');
    const upstream = await silentOnCalls();
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: upstream.url, tape: join(dir, 't.tape'), mode: 'record', port: 0, shutdownTimeoutMs: 150, onWarning: (m) => warnings.push(m) });
    const post = (body: unknown, session?: string) =>
      fetch(`${proxy.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session } : {}) }, body: JSON.stringify(body) });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).text();
    const call = post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } }, sid).then((r) => r.text()).catch(() => '');
    await new Promise((r) => setTimeout(r, 100));
    await proxy.close();
    await call;
    await upstream.stop();
    const unanswered = warnings.filter((w) => w.includes('had no answer when the session ended'));
    expect(unanswered).toHaveLength(1);
    expect(unanswered.join('\n')).not.toContain('waited 2000 ms');
    expect(unanswered.join('\n')).not.toContain('tapedeck mcp --shutdown-timeout');
    for (const w of unanswered) if (w.includes('waited')) expect(w).toContain('tapedeck serve --shutdown-timeout');
  });
});
