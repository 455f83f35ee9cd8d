// Every tapedeck writer stores records in the one field order of record-order.ts, so a tape
// survives `export` -> `import` byte for byte whoever wrote it: ReplayCache, the proxy's fetch
// wrapper and the durable replay store, and any versioned record with fields in any order.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { inRecordOrder, sortedKeys } from '../../src/store/record-order.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('roundtrip');

async function roundTrips(file: string): Promise<void> {
  const back = fresh();
  await importTapeJSON(await exportTapeJSON(file), back);
  expect(readFileSync(back).equals(readFileSync(file))).toBe(true);
}

describe('export -> import is byte-exact', () => {
  it('for a ReplayCache tape', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'record' });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'hi' }], zeta: 1, alpha: { y: 1, x: 2 } }, { z: 1, a: [{ d: 1, c: 2 }] }, { durationMs: 3, raw: { body: 'x\n' }, meta: { b: 1, a: 2 } });
    await cache.close();
    await roundTrips(file);
  });

  it('for a tape written through createFetch (proxy records)', async () => {
    const file = fresh();
    const upstream: typeof fetch = async () =>
      new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }] }), {
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-1', 'set-cookie': 'session=s3cr3tcookie' },
      });
    const f = createFetch({ tape: file, mode: 'record', fetch: upstream });
    const res = await f('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test-000000000000000000000000', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await f.close();
    expect(readFileSync(file).includes(Buffer.from('s3cr3tcookie'))).toBe(false);
    await roundTrips(file);
  });

  it('for a durable replay store tape', async () => {
    const file = fresh();
    const store = await DurableReplayStore.open(file);
    await store.put({ documentId: 'doc-1', query: 'what?', body: 'answer ✓\n', contentType: 'text/plain; charset=utf-8', selectedIds: ['b', 'a'], model: 'm', documentVersion: '3', systemPromptVersion: 'v1' });
    await store.close();
    await roundTrips(file);
  });

  it('for any versioned record written in the one order', async () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 5 })),
    })).value;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 8 }), { minLength: 1, maxLength: 4 }), async (recs) => {
        const file = fresh();
        await createTape(file, { created: '2026-01-01T00:00:00.000Z' });
        await appendRecords(file, recs.map((r) => inRecordOrder(sortedKeys({ ...r, v: 1 }))), { durable: false });
        await roundTrips(file);
      }),
      { numRuns: 60 },
    );
  });
});
