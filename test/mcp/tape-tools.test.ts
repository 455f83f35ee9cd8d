// MCP records are records like any other: inspect lists them by method and call, verify checks
// them, export -> import gives the same tape byte for byte, prune keeps them, and the browser's
// loadTape reads them. The tape is made by a real session with server-memory.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { loadTape } from '../../src/browser/load.ts';
import { tapeTransport } from '../../src/mcp/index.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { CLI, MEMORY, tmp } from './helpers.ts';

async function memorySession(tape: string, mode: 'record' | 'replay', dir: string): Promise<unknown[]> {
  const c = new Client({ name: 'tapedeck-test', version: '1' });
  const inner = () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'm.jsonl') }, stderr: 'ignore' });
  await c.connect(tapeTransport(mode === 'record' ? inner : undefined, { tape, mode }));
  const out = [
    await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Reel', entityType: 'thing', observations: ['spins'] }] } }),
    await c.callTool({ name: 'read_graph', arguments: {} }),
  ];
  await c.close();
  return out;
}

const cli = (...args: string[]) => spawnSync('node', [CLI, ...args], { encoding: 'utf8' });

describe('MCP records and the tape tools', () => {
  it('inspect, verify, export/import, prune and loadTape understand MCP records', async () => {
    const dir = tmp('tools');
    const tape = join(dir, 'memory.tape');
    const recorded = await memorySession(tape, 'record', dir);

    const inspect = cli('inspect', tape);
    expect(inspect.status).toBe(0);
    // The last column is the host (origin): MCP records name none.
    expect(inspect.stdout).toMatch(/\tmcp\tinitialize\t-\n/);
    expect(inspect.stdout).toMatch(/\tmcp\ttools\/call create_entities\t-\n/);
    expect(inspect.stdout).toMatch(/\tmcp\ttools\/call read_graph\t-\n/);

    const verify = cli('verify', tape);
    expect(verify.status).toBe(0);
    expect(verify.stdout).toContain('ok');

    const exported = cli('export', tape);
    expect(exported.status).toBe(0);
    const doc = JSON.parse(exported.stdout) as { records: { kind?: string }[] };
    expect(doc.records.filter((r) => r.kind === 'mcp').length).toBeGreaterThanOrEqual(4);
    const json = join(dir, 'memory.tape.json');
    const back = join(dir, 'back.tape');
    writeFileSync(json, exported.stdout);
    expect(cli('import', json, back).status).toBe(0);
    // Byte for byte after the header (which holds the creation time of each tape).
    expect(readFileSync(back).subarray(-2000)).toEqual(readFileSync(tape).subarray(-2000));

    const prune = cli('prune', back);
    expect(prune.status).toBe(0);
    expect(await memorySession(back, 'replay', dir)).toEqual(recorded);

    const loaded = await loadTape(new Uint8Array(readFileSync(tape)));
    const mcp = loaded.records.map((r) => r.value).filter(isMcpRecord);
    expect(mcp.map((r) => r.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call', 'tools/call']);
    const fromJson = await loadTape(new TextEncoder().encode(exported.stdout));
    expect(fromJson.records.map((r) => r.value).filter(isMcpRecord)).toHaveLength(mcp.length);
    rmSync(dir, { recursive: true, force: true });
  });
});
