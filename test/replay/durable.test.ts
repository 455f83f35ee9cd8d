// The tape-backed replay store: entries survive reopening byte for byte, TTL and max entries
// apply on reload, concurrent puts are group-committed, the tape is compacted without touching
// other records, and damage is reported, not fatal.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableReplayStore, openReplayStore, REPLAY_RECORD_KIND } from '../../src/replay/durable.ts';
import { handleReplay, type ReplayPut } from '../../src/replay/index.ts';
import { appendRecords, readTape } from '../../src/store/tape-file.ts';
import { rejectionOf } from '../helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-replay-durable-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `r${n++}`, 'replays.tape');
const NOENV = {};
const put = (i: number, over: Partial<ReplayPut> = {}): ReplayPut => ({
  documentId: `doc-${i % 5}`,
  query: `query ${i}`,
  documentVersion: '1',
  model: 'gpt-4o',
  systemPromptVersion: 'v1',
  selectedIds: [`id-${i}`],
  body: `{"i":${i},"text":"Grüße ✓ ${'\t'.repeat(i % 3)}"}\n`,
  ...over,
});
const clock = (ms = 0) => {
  const c = { ms, now: () => c.ms };
  return c;
};

describe('DurableReplayStore', () => {
  it('entries survive a reopen, byte for byte, with their content type', async () => {
    const path = fresh();
    const a = await DurableReplayStore.open(path, { env: NOENV });
    const tokens = [];
    for (let i = 0; i < 20; i++) tokens.push((await a.put(put(i, i === 7 ? { body: Uint8Array.of(0, 255, 10), contentType: 'application/octet-stream' } : {}))).token);
    await a.close();
    await expect(a.put(put(99))).rejects.toMatchObject({ code: 'E_ARG' });

    const b = await openReplayStore(path, { env: NOENV });
    expect(b.size).toBe(20);
    expect(b.warnings).toEqual([]);
    for (let i = 0; i < 20; i++) {
      const r = handleReplay(b, { trace_token: tokens[i], query: `query ${i}`, document_id: `doc-${i % 5}` });
      expect(r.status).toBe(200);
      const want = i === 7 ? Buffer.from([0, 255, 10]) : Buffer.from(`{"i":${i},"text":"Grüße ✓ ${'\t'.repeat(i % 3)}"}\n`);
      expect(Buffer.from(r.body).equals(want)).toBe(true);
      expect(r.contentType).toBe(i === 7 ? 'application/octet-stream' : 'application/json');
    }
    // The original meta is kept too.
    expect(b.get(tokens[3]!, 'query 3')!.meta).toEqual({ documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['id-3'] });
    await b.close();
  });

  it('the later put for a (token, query) wins after reopen; the two-queries case survives too', async () => {
    const path = fresh();
    const a = await DurableReplayStore.open(path, { env: NOENV });
    const first = await a.put(put(1, { query: 'q-one', body: 'one\n' }));
    await a.put(put(1, { query: 'q-two', body: 'two\n' }));
    await a.put(put(1, { query: 'q-one', body: 'one, again\n' }));
    await a.close();
    const b = await DurableReplayStore.open(path, { env: NOENV });
    expect(b.size).toBe(2);
    expect(new TextDecoder().decode(b.get(first.token, 'q-one')!.body)).toBe('one, again\n');
    expect(new TextDecoder().decode(b.get(first.token, 'q-two')!.body)).toBe('two\n');
  });

  it('TTL (fake clock) and max entries apply when the tape is reloaded', async () => {
    const path = fresh();
    const c = clock(10_000);
    const a = await DurableReplayStore.open(path, { env: NOENV, ttlMs: 1_000, now: c.now });
    for (let i = 0; i < 6; i++) {
      c.ms = 10_000 + i * 100;
      await a.put(put(i));
    }
    await a.close();
    c.ms = 11_250; // entries 0..2 (stored at 10,000..10,200) are past their TTL
    const b = await DurableReplayStore.open(path, { env: NOENV, ttlMs: 1_000, now: c.now });
    expect([...b.memory.entries()].map((e) => e.query)).toEqual(['query 3', 'query 4', 'query 5']);
    const small = await DurableReplayStore.open(path, { env: NOENV, ttlMs: 0, maxEntries: 2, now: c.now });
    expect([...small.memory.entries()].map((e) => e.query)).toEqual(['query 4', 'query 5']);
  });

  it('many concurrent puts and gets: all stored, written in few batches, all there after reopen', async () => {
    const path = fresh();
    const a = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 10_000 });
    const N = 400;
    const results = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const p = a.put(put(i));
        // Readable at once, before the write lands.
        const e = await p;
        const got = a.get(e.token, `query ${i}`);
        expect(got && new TextDecoder().decode(got.body)).toBe(put(i).body);
        return e.token;
      }),
    );
    expect(new Set(results).size).toBe(N);
    const tape = await readTape(path);
    expect(tape.records.length).toBe(N);
    // Group commit: one append per batch, so the frames of a batch are contiguous and far fewer
    // fsyncs than puts happened. The records are in put order.
    expect(tape.records.map((r) => (r.value as { query: string }).query)).toEqual(Array.from({ length: N }, (_, i) => `query ${i}`));
    expect(a.stats().writes).toBeGreaterThan(0);
    expect(a.stats().writes).toBeLessThan(N / 4);
    expect(a.stats().tapeRecords).toBe(N);
    await a.close();
    const b = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 10_000 });
    expect(b.size).toBe(N);
    results.forEach((t, i) => expect(b.has(t, `query ${i}`)).toBe(true));
  });

  it('compacts once the tape outgrows its bound, keeping other records and the live entries', async () => {
    const path = fresh();
    const a = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 5, compactAfter: 12 });
    await appendRecords(path, [{ v: 1, key: 'k', request: { messages: [] }, value: 'a ReplayCache record' }]);
    for (let i = 0; i < 30; i++) await a.put(put(i % 8, { body: `v${i}\n` }));
    await a.flush();
    const tape = await readTape(path);
    const replays = tape.records.filter((r) => (r.value as { kind?: string }).kind === REPLAY_RECORD_KIND);
    expect(replays.length).toBeLessThanOrEqual(12);
    expect(tape.records.some((r) => (r.value as { value?: string }).value === 'a ReplayCache record')).toBe(true);
    const live = [...a.memory.entries()].map((e) => [e.query, new TextDecoder().decode(e.body)]);
    await a.close();
    const b = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 5 });
    expect([...b.memory.entries()].map((e) => [e.query, new TextDecoder().decode(e.body)])).toEqual(live);
    const c = await b.compact();
    expect(c.kept).toBe(6); // 5 replay entries + the foreign record
  });

  it('two writers on one tape (as two processes would be): compaction by one never drops the other\'s entries', async () => {
    const path = fresh();
    const a = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 1_000, compactAfter: 20 });
    const b = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 1_000, compactAfter: 1_000_000 });
    await Promise.all([
      ...Array.from({ length: 60 }, (_, i) => a.put(put(i, { documentId: 'doc-a', selectedIds: ['shared'], query: `a ${i % 15}`, body: `a${i}\n` }))),
      ...Array.from({ length: 40 }, (_, i) => b.put(put(100 + i, { query: `b ${i}`, body: `b${i}\n` }))),
    ]);
    await Promise.all([a.close(), b.close()]);
    await (await DurableReplayStore.open(path, { env: NOENV, maxEntries: 1_000 })).compact();
    const c = await DurableReplayStore.open(path, { env: NOENV, maxEntries: 1_000 });
    expect(c.warnings).toEqual([]);
    const got = new Map([...c.memory.entries()].map((e) => [e.query, new TextDecoder().decode(e.body)]));
    for (let i = 0; i < 40; i++) expect(got.get(`b ${i}`)).toBe(`b${i}\n`);
    // a's 60 puts went to 15 queries per token: the last body of each (token, query) survives.
    for (let i = 45; i < 60; i++) expect(got.get(`a ${i % 15}`)).toBe(`a${i}\n`);
    expect(c.size).toBe(40 + 15);
    expect(c.stats().tapeRecords).toBe(55);
  });

  it('reports damaged replay records as warnings and keeps the good ones', async () => {
    const path = fresh();
    const a = await DurableReplayStore.open(path, { env: NOENV });
    await a.put(put(1));
    await appendRecords(path, [
      { v: 1, kind: REPLAY_RECORD_KIND, token: 'nope', query: 'q', documentId: 'd', body: new Uint8Array(1), contentType: 'x', createdAt: 1 },
      { v: 1, kind: REPLAY_RECORD_KIND, token: 'a'.repeat(64), query: 'q', documentId: 'd', body: 'text, not bytes', contentType: 'x', createdAt: 1 },
      { v: 2, kind: REPLAY_RECORD_KIND },
    ]);
    await a.close();
    const b = await DurableReplayStore.open(path, { env: NOENV, ttlMs: 0 });
    expect(b.size).toBe(1);
    expect(b.warnings.map((w) => w.code)).toEqual(['E_REPLAY_RECORD', 'E_REPLAY_RECORD', 'E_REPLAY_RECORD']);
    expect(b.warnings.every((w) => w.offset > 0)).toBe(true);
  });

  it('disabled: no file is touched, puts still return tokens, replays are 501', async () => {
    const path = fresh();
    const s = await DurableReplayStore.open(path, { env: { TAPEDECK_REPLAY_ENABLED: 'false' } });
    const e = await s.put(put(1));
    expect(e.token).toMatch(/^[0-9a-f]{64}$/);
    expect(handleReplay(s, { trace_token: e.token, query: 'query 1', document_id: 'doc-1' }).status).toBe(501);
    expect((await rejectionOf(readTape(path))).code).toBe('E_TAPE_NOT_FOUND');
  });

  it('bad arguments and config are errors with codes', async () => {
    expect((await rejectionOf(DurableReplayStore.open(''))).code).toBe('E_ARG');
    expect((await rejectionOf(DurableReplayStore.open(fresh(), { env: { TAPEDECK_REPLAY_TTL_MS: '-1' } }))).details.variable).toBe('TAPEDECK_REPLAY_TTL_MS');
    expect((await rejectionOf(DurableReplayStore.open(fresh(), { env: NOENV, compactAfter: 0 }))).code).toBe('E_CONFIG');
    const s = await DurableReplayStore.open(fresh(), { env: NOENV });
    expect((await rejectionOf(s.put(put(1, { query: '' })))).code).toBe('E_ARG');
    expect(s.size).toBe(0);
  });
});
