// A remote MCP endpoint that needs a bearer token, recorded through tapedeck serve: the client's
// Authorization (and its other credential headers) go upstream with every message, never onto
// the tape, and never into the key: the replay needs no token. The endpoint is a loopback
// Streamable HTTP server built with the MCP SDK's own server, behind a bearer check.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startProxy } from '../../src/proxy/index.ts';
import { tmp } from './helpers.ts';

const TOKEN = 'mcp-bearer-7f3a9c1e5d2b8f4a6c0e';
const TENANT = 'tenant-key-41b7d09e2c';

/** A stateless Streamable HTTP MCP server that answers only requests carrying the right bearer token and tenant key. */
async function guardedServer(): Promise<{ url: string; seen: IncomingMessage['headers'][]; rejected: () => number; close: () => Promise<void> }> {
  const seen: IncomingMessage['headers'][] = [];
  let rejected = 0;
  const http = createServer((req, res) => {
    seen.push(req.headers);
    if (req.headers.authorization !== `Bearer ${TOKEN}` || req.headers['x-tenant-key'] !== TENANT) {
      rejected++;
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = new McpServer({ name: 'guarded', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says who asked', inputSchema: { name: z.string() } }, async ({ name }) => ({ content: [{ type: 'text', text: `hello ${name}, from the guarded server` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    seen,
    rejected: () => rejected,
    close: () => new Promise((r) => http.close(() => r())),
  };
}

describe('MCP over tapedeck serve with an endpoint that needs a bearer token', () => {
  it('records with the client credentials forwarded, keeps them off the tape, and replays without them', async () => {
    const dir = tmp('auth');
    const tape = join(dir, 'auth.tape');
    const server = await guardedServer();
    const proxy = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, onWarning: () => undefined });
    const client = new Client({ name: 'auth-test', version: '1' });
    let recorded: unknown;
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, 'X-Tenant-Key': TENANT } } }));
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['whoami']);
      recorded = await client.callTool({ name: 'whoami', arguments: { name: 'Ada' } });
      expect(JSON.stringify(recorded)).toContain('hello Ada, from the guarded server');
    } finally {
      await client.close();
      await proxy.close();
      await server.close();
    }
    expect(server.rejected()).toBe(0);
    expect(server.seen.filter((h) => h.authorization === `Bearer ${TOKEN}`).length).toBeGreaterThanOrEqual(3);
    const bytes = readFileSync(tape);
    expect(bytes.includes(Buffer.from(TOKEN))).toBe(false);
    expect(bytes.includes(Buffer.from(TENANT))).toBe(false);

    // Replay: no endpoint, no token, another tenant: the same answers (credentials are not in the key).
    const replay = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => undefined });
    const c2 = new Client({ name: 'auth-test', version: '2' });
    try {
      await c2.connect(new StreamableHTTPClientTransport(new URL(`${replay.url}/mcp`), { requestInit: { headers: { 'X-Tenant-Key': 'someone-else' } } }));
      expect((await c2.listTools()).tools.map((t) => t.name)).toEqual(['whoami']);
      expect(await c2.callTool({ name: 'whoami', arguments: { name: 'Ada' } })).toEqual(recorded);
    } finally {
      await c2.close();
      await replay.close();
    }
  }, 60_000);
});
