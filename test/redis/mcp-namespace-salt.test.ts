// With a store, a test's MCP namespace (`<namespace>.mcp`) masks secrets under the salt of the
// test's own namespace: an agent whose tool result holds a credential, recorded through the test
// helper into Redis, replays from it (with two salts the model's request built from the replayed
// tool result never matched its recording).
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { saltOf } from '../../src/store/backends/redis-backend.ts';
import { testNamespace } from '../../src/testing/names.ts';
import { tmp } from '../mcp/helpers.ts';
import { agent, fakeProvider } from '../testing/tool-secret-agent.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

async function namespaceSalt(url: string, namespace: string): Promise<string | undefined> {
  const store = await RedisRecords.open(url, { namespace });
  try {
    return saltOf(await store.header(), namespace);
  } finally {
    await store.close();
  }
}

redisDescribe("a test's MCP namespace and its namespace share one redaction salt", () => {
  const redis = useRedis();

  it('recorded into new namespaces, then replayed from them', { timeout: 90_000 }, async () => {
    const dir = tmp('redis-mcp-salt');
    const base = freshNamespace('mcp-salt');
    const store = `${redis.current.url}/0?namespace=${base}`;
    const path = join(dir, 'agent.tape');
    const provider = await fakeProvider();
    let live: string;
    try {
      live = await agent('record', path, provider.url, 'mcp-first', store);
    } finally {
      await provider.close();
    }
    expect(await agent('replay', path, provider.url, 'mcp-first', store)).toBe(live);
    const ns = testNamespace(base, path, process.cwd());
    const salt = await namespaceSalt(`${redis.current.url}/0`, ns);
    expect(salt).toMatch(/^[0-9a-f]{32}$/);
    expect(await namespaceSalt(`${redis.current.url}/0`, `${ns}.mcp`)).toBe(salt);
  });
});
