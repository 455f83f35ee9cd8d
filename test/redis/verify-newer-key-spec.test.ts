// `tapedeck verify <redis-url>` said "ok" (exit 0) for a namespace holding a recording keyed
// under a newer request key spec than this tapedeck knows (a newer tapedeck in the fleet wrote
// it): this tapedeck cannot check its key, and a request it keys under its own spec may miss it.
// As verify of a tape now does, the namespace's check counts it as a problem with the upgrade.
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { KEY_SPEC_VERSION } from '../../src/providers/normalize.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { freshNamespace, redisDescribe, useRedis, verifyNamespace } from './setup.ts';

redisDescribe('verify on a namespace with a recording keyed under a newer key spec', () => {
  const redis = useRedis();

  it('counts it as a problem, names it and the upgrade, and exits 1', async () => {
    const namespace = freshNamespace('newer-key-spec');
    const store = `${redis.current.url}?namespace=${namespace}`;
    const upstream = (async () =>
      new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'one' }, finish_reason: 'stop' }] }), {
        headers: { 'content-type': 'application/json' },
      })) as typeof fetch;
    const rec = createFetch({ tape: store, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
    try {
      await new OpenAI({ apiKey: 'sk-test', baseURL: 'https://api.openai.com/v1', fetch: rec, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'first' }] });
    } finally {
      await rec.close();
    }
    expect((await verifyNamespace(redis.current.url, namespace)).code).toBe(0);
    // The same recording as a newer tapedeck would key it.
    const backend = new RedisBackend(redis.current.url, { namespace });
    try {
      const { records } = await backend.load({ create: false });
      await backend.append([{ ...(records[0]!.value() as object), keyVersion: KEY_SPEC_VERSION + 1 }], { durable: true });
    } finally {
      await backend.close();
    }
    const { code, out } = await verifyNamespace(redis.current.url, namespace);
    expect(code, out).toBe(1);
    expect(out).toMatch(new RegExp(`E_TAPE_VERSION: 1 record keyed under a newer request key spec than this tapedeck knows \\(it knows versions 1 to ${KEY_SPEC_VERSION}\\), record \\d+ under http:[^\\n]+\\(POST /v1/chat/completions, key spec version ${KEY_SPEC_VERSION + 1}\\): this tapedeck cannot verify its key`));
    expect(out).toContain('upgrade tapedeck to check it (npm install -D llm-tapedeck@latest)');
    expect(out).toMatch(/^1 problem\(s\); the 2 records counted above are intact\.$/m);
    expect(out).not.toMatch(/^ok$/m);
  });
});
