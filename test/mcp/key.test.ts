// The MCP key against an independent oracle (the `canonicalize` package's RFC 8785 and
// node:crypto's SHA-256), and what it leaves out.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDifference, keyParams, mcpKey } from '../../src/mcp/key.ts';

const oracle = (method: string, params: unknown) => createHash('sha256').update(canonicalize({ method, params })!).digest('hex');

describe('mcpKey', () => {
  it('is SHA-256 of the RFC 8785 form of { method, params } (property, against canonicalize + node:crypto)', () => {
    const json = fc.jsonValue({ maxDepth: 3 }).filter((v) => !Object.is(v, -0));
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string().filter((k) => k !== '_meta'), json), (method, params) => {
        expect(mcpKey(method, params)).toBe(oracle(method, method === 'initialize' || method === 'notifications/cancelled' ? keyParams(method, params) : params));
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
    expect(mcpKey('initialize', init('1.0.0'))).not.toBe(mcpKey('initialize', init('1.0.0', 'other')));
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
