// The MCP key against an independent oracle (the `canonicalize` package's RFC 8785 and
// node:crypto's SHA-256), and what it leaves out.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { firstDifference, keyParams, mcpKey } from '../../src/mcp/key.ts';
import { tapeTransport } from '../../src/mcp/index.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { MEMORY, tmp } from './helpers.ts';

const oracle = (method: string, params: unknown) => createHash('sha256').update(canonicalize({ method, params })!).digest('hex');

describe('mcpKey', () => {
  it('is SHA-256 of the RFC 8785 form of { method, params } (property, against canonicalize + node:crypto)', () => {
    const json = fc.jsonValue({ maxDepth: 3 }).filter((v) => !Object.is(v, -0));
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string().filter((k) => k !== '_meta'), json), (method, params) => {
        expect(mcpKey(method, params)).toBe(oracle(method, method === 'initialize' || method === 'notifications/cancelled' ? keyParams(method, params) : params));
        if (method === 'initialize') expect(keyParams(method, params)).not.toHaveProperty('clientInfo');
      }),
      { numRuns: 200 },
    );
  });

  it('leaves out _meta, the client version of initialize and the id a cancellation names; nothing else', () => {
    const call = { name: 'read_file', arguments: { path: '/a' } };
    expect(mcpKey('tools/call', { ...call, _meta: { progressToken: 7 } })).toBe(mcpKey('tools/call', call));
    expect(mcpKey('tools/call', { ...call, arguments: { path: '/b' } })).not.toBe(mcpKey('tools/call', call));
    expect(mcpKey('tools/list', {})).not.toBe(mcpKey('prompts/list', {}));
    const init = (version: string, name = 'agent') => ({ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version } });
    expect(mcpKey('initialize', init('1.0.0'))).toBe(mcpKey('initialize', init('2.3.4')));
    // Which host connects does not change what the server says: a tape works from every host.
    expect(mcpKey('initialize', init('1.0.0'))).toBe(mcpKey('initialize', init('0.9', 'claude-desktop')));
    // What does: the protocol version and the capabilities.
    expect(mcpKey('initialize', init('1.0.0'))).not.toBe(mcpKey('initialize', { ...init('1.0.0'), protocolVersion: '2025-06-18' }));
    expect(mcpKey('initialize', init('1.0.0'))).not.toBe(mcpKey('initialize', { ...init('1.0.0'), capabilities: { sampling: {} } }));
    expect(mcpKey('notifications/cancelled', { requestId: 3, reason: 'x' })).toBe(mcpKey('notifications/cancelled', { requestId: 9, reason: 'x' }));
    // Absent params and empty params are the same call.
    expect(mcpKey('tools/list', undefined)).toBe(mcpKey('tools/list', {}));
  });

  it('firstDifference names the first differing argument by path', () => {
    expect(firstDifference({ name: 'x', arguments: { path: '/a', n: 1 } }, { name: 'x', arguments: { path: '/b', n: 1 } })).toEqual({ path: 'arguments.path', got: '/a', recorded: '/b' });
    expect(firstDifference({ a: [1, 2] }, { a: [1] })).toEqual({ path: 'a[1]', got: 2, recorded: undefined });
    expect(firstDifference({ a: 1 }, { a: 1 })).toBeUndefined();
  });
});

describe('a tape from one host connects from another', () => {
  it('recorded by one client name, replayed by another; a tape keyed by the version 1 rules (client name in the key) too', async () => {
    const dir = tmp('mcp-hosts');
    const tape = join(dir, 'memory.tape');
    const session = async (name: string, transport: Transport) => {
      const c = new Client({ name, version: '1.0.0' });
      await c.connect(transport);
      const tools = (await c.listTools()).tools.map((t) => t.name);
      await c.close();
      return tools;
    };
    const recorded = await session('claude-desktop', tapeTransport(new StdioClientTransport({ command: 'node', args: [MEMORY], stderr: 'ignore' }), { tape, mode: 'record' }));
    expect(recorded).toContain('read_graph');
    const never = () => {
      throw new Error('replay made the live transport');
    };
    expect(await session('mcp-inspector', tapeTransport(never, { tape, mode: 'replay' }))).toEqual(recorded);

    // The same tape as version 1 wrote it: initialize keyed with the client's name, keyVersion 1.
    const json = JSON.parse(await exportTapeJSON(tape)) as { records: { method: string; key: string; keyVersion: number; request: { method: string; params: { clientInfo: { name: string; version: string } } } }[] };
    for (const r of json.records) {
      r.keyVersion = 1;
      if (r.method !== 'initialize') continue;
      const { version: _v, ...info } = r.request.params.clientInfo;
      r.key = oracle('initialize', { ...r.request.params, clientInfo: info });
    }
    const old = join(dir, 'v1.tape');
    await importTapeJSON(JSON.stringify(json), old);
    expect(await session('mcp-inspector', tapeTransport(never, { tape: old, mode: 'replay' }))).toEqual(recorded);
    rmSync(dir, { recursive: true, force: true });
  });
});
