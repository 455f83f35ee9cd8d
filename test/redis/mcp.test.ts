// MCP exchanges in a shared Redis store: recorded by one session, replayed by another from the
// same namespace; and a tape of MCP records pushed to Redis replays from there.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { pushTape } from '../../src/store/redis-transfer.ts';
import { MEMORY, tmp } from '../mcp/helpers.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

async function session(store: string, mode: 'record' | 'replay', dir: string): Promise<unknown[]> {
  const c = new Client({ name: 'tapedeck-test', version: '1' });
  const inner = () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, `m${Math.random()}.jsonl`) }, stderr: 'ignore' });
  await c.connect(tapeTransport(mode === 'record' ? inner : () => { throw new Error('replay made the live transport'); }, { tape: store, mode }));
  const out = [
    await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Reel', entityType: 'thing', observations: ['spins'] }] } }),
    await c.callTool({ name: 'read_graph', arguments: {} }),
  ];
  await c.close();
  return out;
}

redisDescribe('MCP records in Redis', () => {
  const redis = useRedis();

  it('a session recorded into a namespace replays from it; a pushed tape replays from Redis', async () => {
    const dir = tmp('redis');
    const ns = freshNamespace('mcp');
    const url = `${redis.current.url}/0?namespace=${ns}`;
    const recorded = await session(url, 'record', dir);
    expect(await session(url, 'replay', dir)).toEqual(recorded);

    const tape = join(dir, 'memory.tape');
    expect(await session(tape, 'record', dir)).toEqual(recorded);
    const ns2 = freshNamespace('mcp-push');
    await pushTape(tape, `${redis.current.url}/0`, { namespace: ns2 });
    expect(await session(`${redis.current.url}/0?namespace=${ns2}`, 'replay', dir)).toEqual(recorded);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a replaying session finds what another writer recorded into the namespace after it opened', async () => {
    const dir = tmp('redis-fleet');
    const url = `${redis.current.url}/0?namespace=${freshNamespace('mcp-fleet')}`;
    const memory = () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, `m${Math.random()}.jsonl`) }, stderr: 'ignore' });
    const a = new Client({ name: 'tapedeck-test', version: '1' });
    await a.connect(tapeTransport(memory, { tape: url, mode: 'record' }));
    await a.callTool({ name: 'read_graph', arguments: {} });
    await a.close();

    const b = new Client({ name: 'tapedeck-test', version: '1' });
    await b.connect(tapeTransport(() => { throw new Error('replay made the live transport'); }, { tape: url, mode: 'replay', onMiss: () => undefined }));
    // Recorded by another writer after b opened.
    const c = new Client({ name: 'tapedeck-test', version: '1' });
    await c.connect(tapeTransport(memory, { tape: url, mode: 'update' }));
    const created = await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Late', entityType: 'thing', observations: ['x'] }] } });
    await c.close();
    expect(await b.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Late', entityType: 'thing', observations: ['x'] }] } })).toEqual(created);
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
