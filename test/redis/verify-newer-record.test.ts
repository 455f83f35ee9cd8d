// `tapedeck verify <redis-url>` said "ok" (exit 0) for a namespace holding a record of a newer
// record version (a newer tapedeck in the fleet wrote it), which replay then fails on; verify of
// a tape lists such a record as a problem (exit 1). Now the namespace's check does too.
import { expect, it } from 'vitest';
import OpenAI from 'openai';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { freshNamespace, redisDescribe, useRedis, verifyNamespace } from './setup.ts';


redisDescribe('verify on a namespace with a record of a newer record version', () => {
  const redis = useRedis();

  it('lists it as E_TAPE_VERSION with the upgrade, and exits 1', async () => {
    const namespace = freshNamespace('newer-record');
    const backend = new RedisBackend(redis.current.url, { namespace });
    try {
      await backend.load({ create: true });
      await backend.append([{ v: 1, kind: 'http', key: 'a'.repeat(64), request: {}, response: {} }]);
      await backend.append([{ v: 5, kind: 'http', key: 'b'.repeat(64), request: {}, response: {} }]);
    } finally {
      await backend.close();
    }
    const { code, out } = await verifyNamespace(redis.current.url, namespace);
    expect(code, out).toBe(1);
    expect(out).toMatch(/E_TAPE_VERSION at record \d+: record \d+ under http:bbbb/);
    expect(out).toContain('record version 5');
    expect(out).toContain('upgrade tapedeck');
    expect(out).not.toMatch(/^ok$/m);
  });
});

redisDescribe('replay of a record of a newer record version in a Redis namespace', () => {
  const redis = useRedis();

  // The error named the record's place as "the record at byte N", though a namespace's records
  // are numbered, not at byte offsets: the number is its sequence number, which verify calls
  // "record N". Now replay's error names it so too.
  it('names the record by its sequence number, not as a byte offset', async () => {
    const namespace = freshNamespace('newer-replay');
    const store = `${redis.current.url}?namespace=${namespace}`;
    const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'first' }] };
    const upstream = (async () =>
      new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'one' }, finish_reason: 'stop' }] }), {
        headers: { 'content-type': 'application/json' },
      })) as typeof fetch;
    const rec = createFetch({ tape: store, mode: 'record', fetch: upstream, onWarning: () => {} });
    try {
      await new OpenAI({ apiKey: 'sk-test', baseURL: 'https://api.openai.com/v1', fetch: rec, maxRetries: 0 }).chat.completions.create(ask);
    } finally {
      await rec.close();
    }
    // The same record again, as a newer tapedeck would write it, after the first.
    const backend = new RedisBackend(redis.current.url, { namespace });
    try {
      const { records } = await backend.load({ create: false });
      await backend.append([{ ...(records[0]!.value() as object), v: 9 }], { durable: true });
    } finally {
      await backend.close();
    }
    const f = createFetch({ tape: store, mode: 'replay', onWarning: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'https://api.openai.com/v1', fetch: f, maxRetries: 0 });
      expect((await client.chat.completions.create(ask)).choices[0]!.message.content).toBe('one');
      const e = (await client.chat.completions.create(ask).then(
        () => undefined,
        (x: unknown) => x,
      )) as InstanceType<typeof OpenAI.APIError>;
      expect(e).toBeInstanceOf(OpenAI.APIError);
      expect(e.headers?.get('x-tapedeck-error')).toBe('E_TAPE_VERSION');
      expect(e.message).toMatch(/: record \d+ is an HTTP exchange record of record version 9/);
      expect(e.message).not.toContain('byte');
    } finally {
      await f.close();
    }
  });
});
