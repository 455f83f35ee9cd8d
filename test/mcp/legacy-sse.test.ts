// The legacy HTTP+SSE transport (GET /sse, then POST /messages?sessionId=…) through tapedeck
// serve: not supported (docs/mcp.md), and now said so. Before, the GET went upstream as an LLM
// request (a shutdown line about GET /sse failing) and the POST got tapedeck's own "Bad Request:
// no session id", which names neither the cause nor the fix.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { describe, expect, it } from 'vitest';
import { isLegacySse } from '../../src/mcp/http.ts';
import { startProxy } from '../../src/proxy/index.ts';
import { tmp } from './helpers.ts';

describe('the legacy HTTP+SSE MCP transport through tapedeck serve', { timeout: 30_000 }, () => {
  it('is refused with a tapedeck error that names Streamable HTTP, in JSON-RPC on the POST and on the proxy stderr', async () => {
    const tape = join(tmp('legacy-sse'), 'remote.tape');
    const warnings: string[] = [];
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      const get = await fetch(`${proxy.url}/sse`, { headers: { accept: 'text/event-stream' } });
      expect(get.status).toBe(400);
      const refused = (await get.json()) as { error: { message: string } };
      expect(refused.error.message).toContain('legacy HTTP+SSE MCP transport');
      expect(refused.error.message).toContain('StreamableHTTPClientTransport');

      const post = await fetch(`${proxy.url}/messages?sessionId=abc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }) });
      expect(post.status).toBe(400);
      const answer = (await post.json()) as { id: number; error: { code: number; message: string } };
      expect(answer.id).toBe(7);
      expect(answer.error.message).toContain('not supported by tapedeck serve; use Streamable HTTP');
      expect(answer.error.message).not.toContain('no session id');

      // The SDK's SSE client fails at once, not after its timeout.
      const c = new Client({ name: 'sse', version: '1' });
      const t0 = Date.now();
      const err = await c.connect(new SSEClientTransport(new URL(`${proxy.url}/sse`))).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(Date.now() - t0).toBeLessThan(5000);
      await c.close().catch(() => undefined);
      expect(warnings.filter((w) => w.includes('legacy HTTP+SSE'))).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('isLegacySse: the event stream GET at …/sse and POSTs to …/message(s)?sessionId=, nothing else', () => {
    const sse = { accept: 'text/event-stream' };
    expect(isLegacySse(sse, { method: 'GET', url: '/sse' })).toBe(true);
    expect(isLegacySse(sse, { method: 'GET', url: '/mcp' })).toBe(false);
    expect(isLegacySse({ ...sse, 'mcp-session-id': 'x' }, { method: 'GET', url: '/sse' })).toBe(false);
    expect(isLegacySse({}, { method: 'GET', url: '/sse' })).toBe(false);
    expect(isLegacySse({}, { method: 'POST', url: '/messages?sessionId=1' })).toBe(true);
    expect(isLegacySse({}, { method: 'POST', url: '/message?sessionId=1' })).toBe(true);
    expect(isLegacySse({}, { method: 'POST', url: '/messages' })).toBe(false);
    expect(isLegacySse({}, { method: 'POST', url: '/mcp?sessionId=1' })).toBe(false);
  });
});
