// DurableReplayStore writes what it stores to a tape: secrets in a put's query, body and meta
// are masked before they reach it, as every other writer masks them, and the entry is still
// found by the query as the caller sends it, before and after a restart.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import { handleReplay } from '../../src/replay/index.ts';
import { rejectionOf } from '../helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-durable-secrets-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `r${n++}`, 'replays.tape');

const QUERY = 'my key is sk-proj-QUERYKEY0123456789abcdefghijklmnopqrstuvwx';
const BODY = '{"answer":"sk-proj-BODYKEY0123456789abcdefghijklmnopqrstuvwxyz","api_key":"plainsecretvalue123"}\n';
const put = (query = QUERY) => ({ documentId: 'doc', query, documentVersion: '1', model: 'm', systemPromptVersion: 'v', selectedIds: [] as string[], body: BODY });

describe('DurableReplayStore and secrets', () => {
  it('masks credentials in the query, the body and secret members before the tape', async () => {
    const p = fresh();
    const s = await DurableReplayStore.open(p, { env: {} });
    await s.put(put());
    await s.close();
    const raw = readFileSync(p, 'latin1');
    expect(raw.includes('QUERYKEY')).toBe(false);
    expect(raw.includes('BODYKEY')).toBe(false);
    expect(raw.includes('plainsecretvalue123')).toBe(false);
  });

  it('finds the entry by the query as sent, before and after reopening', async () => {
    const p = fresh();
    const s = await DurableReplayStore.open(p, { env: {} });
    const { token } = await s.put(put());
    // Before the restart: the bytes put.
    expect(new TextDecoder().decode(s.get(token, QUERY)!.body)).toBe(BODY);
    await s.close();
    const s2 = await DurableReplayStore.open(p, { env: {} });
    try {
      expect(s2.has(token, QUERY)).toBe(true);
      const body = new TextDecoder().decode(s2.get(token, QUERY)!.body);
      expect(body).not.toContain('BODYKEY');
      expect(JSON.parse(body).api_key).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
      const r = handleReplay(s2, new TextEncoder().encode(JSON.stringify({ trace_token: token, query: QUERY, document_id: 'doc' })));
      expect(r.status).toBe(200);
    } finally {
      await s2.close();
    }
  });

  it('keeps two queries that differ only in their key two entries', async () => {
    const p = fresh();
    const s = await DurableReplayStore.open(p, { env: {} });
    const other = 'my key is sk-proj-OTHERKEY0123456789abcdefghijklmnopqrstuvwx';
    const { token } = await s.put(put());
    await s.put({ ...put(other), body: '{"answer":"two"}' });
    await s.close();
    const s2 = await DurableReplayStore.open(p, { env: {} });
    try {
      expect(s2.size).toBe(2);
      expect(new TextDecoder().decode(s2.get(token, other)!.body)).toBe('{"answer":"two"}');
    } finally {
      await s2.close();
    }
  });

  it('stores secrets as they are with redact.keepSecrets, and checks the redact option', async () => {
    const p = fresh();
    const s = await DurableReplayStore.open(p, { env: {}, redact: { keepSecrets: true } });
    await s.put(put());
    await s.close();
    expect(readFileSync(p, 'latin1').includes('plainsecretvalue123')).toBe(true);
    const e = await rejectionOf(DurableReplayStore.open(fresh(), { env: {}, redact: { feilds: ['x'] } as never }));
    expect((e as { code?: string }).code).toBe('E_ARG');
  });
});
