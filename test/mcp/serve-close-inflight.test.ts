// tapedeck serve shutting down with MCP calls in flight: a call the server answers within
// --shutdown-timeout gets its answer on its own POST and is recorded; one it does not answer in
// time gets a JSON-RPC error (-32052) and is not recorded, even when the answer comes later.
// The proxy counts these calls among its requests in flight. Before, every pending POST was
// ended at once with an empty 200 (the SDK: "Unexpected content type: null"), the answer was
// recorded anyway, and the shutdown said "finishing 0 in-flight request(s)".
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { everythingHttp, tmp } from './helpers.ts';

const LONG = 'trigger-long-running-operation';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const longCalls = async (tape: string) => (await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord).filter((r) => r.method === 'tools/call' && (r.request.params as { name?: string }).name === LONG);

async function callThenClose(shutdownTimeoutMs: number, duration: number) {
  const dir = tmp('serve-close');
  const tape = join(dir, 'long.tape');
  const server = await everythingHttp();
  const warnings: string[] = [];
  const proxy = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, shutdownTimeoutMs, onWarning: (m) => warnings.push(m) });
  const c = new Client({ name: 'closing', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
  const call = c.callTool({ name: LONG, arguments: { duration, steps: 2 } }).then(
    (r) => r,
    (e: unknown) => e,
  );
  await sleep(300);
  const inFlight = proxy.handler.inFlight;
  await proxy.close();
  const result = await call;
  // An answer the server still sends after the shutdown is not recorded either.
  await sleep(duration * 1000);
  await c.close().catch(() => undefined);
  await server.stop();
  return { inFlight, result, recorded: await longCalls(tape), warnings };
}

describe('tapedeck serve shutting down with an MCP call in flight', () => {
  it('counts it in flight, gives it its answer within the shutdown timeout, and records it', async () => {
    const { inFlight, result, recorded } = await callThenClose(5000, 1);
    expect(inFlight).toBe(1);
    expect(result).not.toBeInstanceOf(Error);
    expect(JSON.stringify(result)).toContain('Long running operation completed');
    expect(recorded).toHaveLength(1);
  }, 30_000);

  it('answers a JSON-RPC error when the server does not answer in time, and records nothing of it', async () => {
    const { inFlight, result, recorded, warnings } = await callThenClose(300, 2);
    expect(inFlight).toBe(1);
    expect(result).toBeInstanceOf(McpError);
    expect((result as McpError).code).toBe(-32052);
    expect(recorded).toHaveLength(0);
    expect(warnings.join('\n')).toContain(`tools/call ${LONG} had no answer when the session ended`);
  }, 30_000);
});
