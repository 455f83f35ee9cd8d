// POST /v1/replay answers with the first row of docs/replay.md's table that applies ("checked in
// this order"). The handler checked missing fields before wrong ones, so `{"trace_token":"x"}`
// was 400 missing_fields where the table says invalid_request (a token that is not 64 hex
// characters comes first). The oracle reads the order of the rows from the doc itself and
// decides each row's condition on its own, with no order in it; random bodies must get the first
// row that applies, with the fields it names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handleReplay, ReplayStore, type ReplayPut } from '../../src/replay/index.ts';
import { rng } from '../reference.ts';

const FIELDS = ['trace_token', 'query', 'document_id'] as const;
type Field = (typeof FIELDS)[number];

const store = new ReplayStore({ env: {} });
const entry = store.put({ documentId: 'doc-1', query: 'what is it?', documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['c1'], body: '{"answer":42}\n', contentType: 'application/json' } satisfies ReplayPut);

const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as { error: { code: string; fields?: string[] } };

/** The codes of docs/replay.md's POST /v1/replay table, in its order ('ok' for the 200 row). */
function documentedOrder(): string[] {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/replay.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## POST /v1/replay'));
  expect(section).toContain('Checked in this order');
  const rows = section.split('\n').filter((l) => /^\|\s*\d{3}\s*\|/.test(l));
  return rows.map((l) => {
    const code = l.split('|')[2]!.trim();
    return code === '—' ? 'ok' : code.replace(/`/g, '');
  });
}

/**
 * Each row's condition, on its own (no row assumes an earlier one failed), from the table's
 * "when" column, with the fields the row names.
 */
function rows(body: unknown): Record<string, { applies: boolean; fields?: Field[] }> {
  let v: unknown = body;
  let parses = true;
  if (typeof body === 'string') {
    try {
      v = JSON.parse(body);
    } catch {
      parses = false;
    }
  }
  const obj = parses && v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const absent = (f: Field) => obj !== undefined && (obj[f] === undefined || obj[f] === null || obj[f] === '');
  const notString = FIELDS.filter((f) => obj !== undefined && !absent(f) && typeof obj[f] !== 'string');
  const token = obj && typeof obj.trace_token === 'string' && obj.trace_token !== '' ? obj.trace_token : undefined;
  const badToken = token !== undefined && !/^[0-9a-fA-F]{64}$/.test(token);
  const invalid = FIELDS.filter((f) => notString.includes(f) || (f === 'trace_token' && badToken));
  const missing = FIELDS.filter(absent);
  const stored = token !== undefined && token.toLowerCase() === entry.token;
  return {
    replay_disabled: { applies: false },
    invalid_json: { applies: !parses },
    invalid_request: { applies: parses && (obj === undefined || invalid.length > 0), ...(obj ? { fields: invalid } : {}) },
    missing_fields: { applies: missing.length > 0, fields: missing },
    unknown_trace_token: { applies: token !== undefined && !badToken && !stored },
    document_id_mismatch: { applies: stored && obj!.document_id !== 'doc-1' },
    query_mismatch: { applies: stored && obj!.query !== 'what is it?' },
    ok: { applies: true },
  };
}

describe('POST /v1/replay checks in the order docs/replay.md gives', () => {
  it('{"trace_token":"x"} is invalid_request naming trace_token, not missing_fields', () => {
    for (const body of ['{"trace_token":"x"}', { trace_token: 'x' }, { trace_token: 'x', query: 'q' }]) {
      const r = handleReplay(store, body);
      expect(r.status).toBe(400);
      expect(json(r.body).error).toMatchObject({ code: 'invalid_request', fields: ['trace_token'] });
    }
    // Wrong types come before absent fields too, all named at once with a bad token.
    const r = handleReplay(store, { trace_token: 'x', query: 5 });
    expect(json(r.body).error).toMatchObject({ code: 'invalid_request', fields: ['trace_token', 'query'] });
    // An empty token is missing, as the table's missing_fields row says.
    expect(json(handleReplay(store, { trace_token: '', query: 'q', document_id: 'd' }).body).error).toMatchObject({ code: 'missing_fields', fields: ['trace_token'] });
  });

  it('2,000 random bodies get the first row of the table that applies, with its fields', () => {
    const order = documentedOrder();
    expect(order).toEqual(['replay_disabled', 'invalid_json', 'invalid_request', 'missing_fields', 'unknown_trace_token', 'document_id_mismatch', 'query_mismatch', 'ok']);
    const r = rng(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const values: Record<Field, unknown[]> = {
      trace_token: [undefined, null, '', 5, true, {}, ['x'], 'x', 'f'.repeat(63), 'g'.repeat(64), entry.token, entry.token.toUpperCase(), '0'.repeat(64)],
      query: [undefined, null, '', 5, false, {}, 'what is it?', 'What is it?'],
      document_id: [undefined, null, '', 7, [], 'doc-1', 'doc-2'],
    };
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      let body: unknown;
      const shape = r();
      if (shape < 0.06) body = pick(['{"trace_token":', '[1]', 'null', '"text"', '42', [1], null]);
      else {
        const o: Record<string, unknown> = {};
        for (const f of FIELDS) {
          const v = pick(values[f]);
          if (v !== undefined) o[f] = v;
        }
        if (r() < 0.1) o.extra = 'ignored';
        body = r() < 0.5 ? JSON.stringify(o) : o;
      }
      const applicable = rows(body);
      const first = order.find((code) => applicable[code]!.applies)!;
      seen.add(first);
      const res = handleReplay(store, body);
      const label = JSON.stringify(body);
      if (first === 'ok') {
        expect(res.status, label).toBe(200);
        continue;
      }
      const err = json(res.body).error;
      expect(err.code, label).toBe(first);
      const named = applicable[first]!.fields;
      if (named) expect(err.fields, label).toEqual(named);
    }
    // Every row but the disabled one was reached.
    expect([...seen].sort()).toEqual(order.filter((c) => c !== 'replay_disabled').sort());
  });
});
