// Trace tokens and byte-exact replay by trace token: the in-memory store (LRU, TTL with a
// fake clock, byte-exactness), the two-queries defect, POST /v1/replay's status codes, and
// configuration from options and TAPEDECK_REPLAY_* variables.
import { describe, expect, it } from 'vitest';
import { handleReplay, REPLAY_ENV, ReplayStore, resolveReplayConfig, type ReplayPut } from '../../src/replay/index.ts';
import { traceToken } from '../../src/core/index.ts';
import { errorOf } from '../helpers.ts';
import { refTraceToken, rng } from '../reference.ts';

const fields = { documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1' };
const put = (over: Partial<ReplayPut> = {}): ReplayPut => ({ documentId: 'doc-1', query: 'what is it?', ...fields, selectedIds: ['c2', 'c1'], body: '{"answer":1}\n', ...over });
const clock = (ms = 0) => {
  const c = { ms, now: () => c.ms };
  return c;
};
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const json = (b: Uint8Array) => JSON.parse(text(b)) as { error: { code: string; field?: string; fields?: string[]; message: string } };
const NOENV = {};

describe('trace tokens', () => {
  it('the stored token is the spec formula (checked against node:crypto), sorted ids', () => {
    const s = new ReplayStore({ env: NOENV });
    const e = s.put(put({ selectedIds: ['b', 'a', 'é', 'Z'] }));
    expect(e.token).toBe(refTraceToken({ documentId: 'doc-1', ...fields, selectedIds: ['b', 'a', 'é', 'Z'] }));
    expect(e.token).toBe(traceToken({ documentId: 'doc-1', ...fields, selectedIds: ['a', 'Z', 'é', 'b'] }));
    expect(e.meta).toEqual({ ...fields, selectedIds: ['b', 'a', 'é', 'Z'] });
    // A given token is kept; one that contradicts the fields given with it is refused.
    expect(s.put({ token: e.token, documentId: 'doc-1', query: 'q2', body: 'x' }).token).toBe(e.token);
    expect(errorOf(() => s.put(put({ token: 'f'.repeat(64) }))).code).toBe('E_REPLAY_CONFLICT');
  });
});

describe('ReplayStore', () => {
  it('replays the exact bytes: unicode, whitespace, a trailing newline, binary, content type', () => {
    const s = new ReplayStore({ env: NOENV });
    const bodies: (string | Uint8Array)[] = [
      '{\n  "answer": "Zürich 🇨🇭 — naïve café",\t"n": 1.50 }\n',
      '   {"a":"\\u00e9 e\u0301"}   \r\n\n',
      'no newline at end',
      Uint8Array.of(0xff, 0xfe, 0x00, 0x0a, 0xc3),
    ];
    bodies.forEach((body, i) => {
      const e = s.put(put({ query: `q${i}`, body, contentType: i === 3 ? 'application/octet-stream' : 'application/json; charset=utf-8' }));
      const got = s.get(e.token, `q${i}`)!;
      const expected = typeof body === 'string' ? new Uint8Array(Buffer.from(body, 'utf8')) : body;
      expect(Buffer.compare(Buffer.from(got.body), Buffer.from(expected))).toBe(0);
      expect(got.contentType).toBe(i === 3 ? 'application/octet-stream' : 'application/json; charset=utf-8');
      const r = handleReplay(s, { trace_token: e.token, query: `q${i}`, document_id: 'doc-1' });
      expect(r.status).toBe(200);
      expect(Buffer.from(r.body).equals(Buffer.from(expected))).toBe(true);
    });
  });

  it('keeps its own copy: changing the put buffer or a returned body changes nothing', () => {
    const s = new ReplayStore({ env: NOENV });
    const buf = new TextEncoder().encode('{"v":1}\n');
    const { token } = s.put(put({ body: buf }));
    buf[2] = 0x58;
    const a = s.get(token, 'what is it?')!;
    a.body[0] = 0;
    expect(text(s.get(token, 'what is it?')!.body)).toBe('{"v":1}\n');
  });

  it('evicts the least recently used at capacity; a get refreshes recency', () => {
    const s = new ReplayStore({ env: NOENV, maxEntries: 3 });
    const t = ['a', 'b', 'c', 'd', 'e'].map((id) => s.put(put({ selectedIds: [id], body: id })).token);
    expect(s.size).toBe(3);
    expect(s.get(t[0]!, 'what is it?')).toBeUndefined();
    expect(s.get(t[1]!, 'what is it?')).toBeUndefined();
    expect(s.get(t[2]!, 'what is it?')).toBeDefined(); // c is now the most recent
    s.put(put({ selectedIds: ['f'], body: 'f' }));
    expect(s.has(t[2]!, 'what is it?')).toBe(true);
    expect(s.has(t[3]!, 'what is it?')).toBe(false); // d was least recently used
    expect(s.stats()).toMatchObject({ size: 3, evictions: 3 });
    // Replacing an entry does not evict anything.
    s.put(put({ selectedIds: ['f'], body: 'f2' }));
    expect(s.stats().evictions).toBe(3);
    expect([...s.entries()].map((e) => text(e.body))).toEqual(['e', 'c', 'f2']);
    expect(handleReplay(s, { trace_token: t[0], query: 'what is it?', document_id: 'doc-1' }).status).toBe(404);
  });

  it('matches a reference LRU model over random puts, gets, deletes and clock moves', () => {
    for (const seed of [1, 2, 3, 42]) {
      const rand = rng(seed);
      const c = clock(0);
      const cap = 1 + Math.floor(rand() * 8);
      const ttl = 50;
      const s = new ReplayStore({ env: NOENV, maxEntries: cap, ttlMs: ttl, now: c.now });
      // The model: an array in recency order (least recent first) of [id, body, createdAt].
      let model: [string, string, number][] = [];
      const tokens = Array.from({ length: 6 }, (_, i) => s.put(put({ selectedIds: [`t${i}`], query: 'seed' })).token);
      s.clear();
      for (let step = 0; step < 3_000; step++) {
        const t = Math.floor(rand() * 6);
        const q = `q${Math.floor(rand() * 3)}`;
        const id = `${t}/${q}`;
        const op = rand();
        model = model.filter(([, , at]) => at + ttl > c.ms);
        if (op < 0.45) {
          const body = `b${step}`;
          s.put(put({ selectedIds: [`t${t}`], query: q, body }));
          model = model.filter(([k]) => k !== id);
          model.push([id, body, c.ms]);
          if (model.length > cap) model = model.slice(model.length - cap);
        } else if (op < 0.85) {
          const got = s.get(tokens[t]!, q);
          const i = model.findIndex(([k]) => k === id);
          expect(got && text(got.body), `seed ${seed} step ${step}`).toBe(i < 0 ? undefined : model[i]![1]);
          if (i >= 0) model.push(...model.splice(i, 1));
        } else if (op < 0.9) {
          expect(s.delete(tokens[t]!, q)).toBe(model.some(([k]) => k === id));
          model = model.filter(([k]) => k !== id);
        } else {
          c.ms += Math.floor(rand() * 30);
        }
        model = model.filter(([, , at]) => at + ttl > c.ms);
        expect([...s.entries()].map((e) => text(e.body))).toEqual(model.map(([, b]) => b));
      }
    }
  });

  it('expires entries after the TTL (fake clock); 0 means never', () => {
    const c = clock(1_000);
    const s = new ReplayStore({ env: NOENV, ttlMs: 500, now: c.now });
    const { token } = s.put(put());
    c.ms = 1_499;
    expect(s.get(token, 'what is it?')).toBeDefined();
    expect(s.get(token, 'what is it?')!.createdAt).toBe(1_000);
    c.ms = 1_500;
    expect(s.get(token, 'what is it?')).toBeUndefined();
    expect(handleReplay(s, { trace_token: token, query: 'what is it?', document_id: 'doc-1' }).status).toBe(404);
    // Re-putting restarts the clock for that entry.
    s.put(put());
    c.ms = 1_900;
    expect(s.has(token, 'what is it?')).toBe(true);
    // prune() drops every expired entry; puts drop the oldest expired ones as they go.
    for (let i = 0; i < 5; i++) s.put(put({ selectedIds: [`x${i}`] }));
    c.ms = 10_000;
    expect(s.prune()).toBe(6);
    expect(s.size).toBe(0);
    for (let i = 0; i < 3; i++) s.put(put({ selectedIds: [`y${i}`] }));
    c.ms = 20_000;
    s.put(put({ selectedIds: ['z'] }));
    expect(s.size).toBe(1); // expired entries never hold capacity or count
    const forever = new ReplayStore({ env: NOENV, ttlMs: 0, now: c.now });
    forever.put(put());
    c.ms = Number.MAX_SAFE_INTEGER;
    expect(forever.has(token, 'what is it?')).toBe(true);
    expect(forever.prune()).toBe(0);
  });

  it('the two-queries case: same ids, same model, two queries: both replay their own bytes', () => {
    const s = new ReplayStore({ env: NOENV });
    const a = s.put(put({ query: 'Who wrote it?', body: '{"answer":"A"}\n' }));
    const b = s.put(put({ query: 'When was it written?', body: '{"answer":"B"}\n' }));
    expect(a.token).toBe(b.token); // the spec's token does not cover the query...
    const ra = handleReplay(s, { trace_token: a.token, query: 'Who wrote it?', document_id: 'doc-1' });
    const rb = handleReplay(s, { trace_token: b.token, query: 'When was it written?', document_id: 'doc-1' });
    expect([ra.status, text(ra.body)]).toEqual([200, '{"answer":"A"}\n']); // ...and the store keys by both
    expect([rb.status, text(rb.body)]).toEqual([200, '{"answer":"B"}\n']);
    const rc = handleReplay(s, { trace_token: a.token, query: 'Something else?', document_id: 'doc-1' });
    expect(rc.status).toBe(409);
    expect(json(rc.body).error).toMatchObject({ code: 'query_mismatch', field: 'query' });
    expect(s.size).toBe(2);
  });

  it('refuses bad puts with E_ARG / E_REPLAY_CONFLICT', () => {
    const s = new ReplayStore({ env: NOENV });
    expect(errorOf(() => s.put(put({ query: '' }))).path).toBe('$.query');
    expect(errorOf(() => s.put(put({ documentId: 7 as never }))).code).toBe('E_ARG');
    expect(errorOf(() => s.put(put({ body: 5 as never }))).path).toBe('$.body');
    expect(errorOf(() => s.put(put({ body: 'x\uD800' }))).code).toBe('E_ARG');
    expect(errorOf(() => s.put({ documentId: 'd', query: 'q', body: 'b' })).path).toBe('$.token');
    expect(errorOf(() => s.put({ token: 'ABC', documentId: 'd', query: 'q', body: 'b' })).code).toBe('E_ARG');
    expect(errorOf(() => s.put(put({ selectedIds: ['a\0b'] }))).code).toBe('E_ARG');
    const { token } = s.put(put());
    const e = errorOf(() => s.put({ token, documentId: 'doc-2', query: 'q', body: 'b' }));
    expect(e.code).toBe('E_REPLAY_CONFLICT');
    expect(s.size).toBe(1);
  });

  it('many interleaved puts and gets stay consistent', async () => {
    const s = new ReplayStore({ env: NOENV, maxEntries: 500 });
    const tasks = Array.from({ length: 2_000 }, async (_, i) => {
      await Promise.resolve();
      const id = i % 700;
      const body = `{"id":${id},"n":"${'é'.repeat(id % 7)}"}\n`;
      const e = s.put(put({ selectedIds: [`id-${id}`], query: `q${id % 3}`, body }));
      await new Promise((r) => setImmediate(r));
      const got = s.get(e.token, `q${id % 3}`);
      // Either evicted meanwhile, or exactly this id's bytes.
      if (got) expect(text(got.body)).toBe(body);
      return e.token;
    });
    await Promise.all(tasks);
    expect(s.size).toBe(500);
    for (const e of s.entries()) expect(JSON.parse(text(e.body)).id).toBe(Number(e.meta!.selectedIds![0]!.slice(3)));
  });
});

describe('handleReplay', () => {
  const store = new ReplayStore({ env: NOENV });
  const e = store.put(put({ body: '{"answer":42}\n', contentType: 'application/json' }));
  const req = { trace_token: e.token, query: 'what is it?', document_id: 'doc-1' };

  it('200: the stored bytes and content type, from an object, text or bytes', () => {
    for (const body of [req, JSON.stringify(req), new TextEncoder().encode(JSON.stringify(req)), { ...req, trace_token: e.token.toUpperCase() }]) {
      const r = handleReplay(store, body);
      expect(r.status).toBe(200);
      expect(r.contentType).toBe('application/json');
      expect(text(r.body)).toBe('{"answer":42}\n');
    }
  });

  it('400 for bad JSON, non-objects, missing, empty or mistyped fields, naming them', () => {
    const cases: [unknown, string, string[] | undefined][] = [
      ['{"trace_token":', 'invalid_json', undefined],
      [Uint8Array.of(0xff, 0x7b), 'invalid_json', undefined],
      ['[1]', 'invalid_request', undefined],
      [null, 'invalid_request', undefined],
      [{}, 'missing_fields', ['trace_token', 'query', 'document_id']],
      [{ ...req, query: '' }, 'missing_fields', ['query']],
      [{ trace_token: e.token, query: 'q' }, 'missing_fields', ['document_id']],
      [{ ...req, document_id: 5 }, 'invalid_request', ['document_id']],
      [{ ...req, trace_token: 'abc' }, 'invalid_request', ['trace_token']],
    ];
    for (const [body, code, named] of cases) {
      const r = handleReplay(store, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.contentType).toMatch(/^application\/json/);
      expect(json(r.body).error.code).toBe(code);
      if (named) expect(json(r.body).error.fields).toEqual(named);
    }
  });

  it('404 unknown token, 409 document id (checked first), 409 query', () => {
    const r404 = handleReplay(store, { ...req, trace_token: '0'.repeat(64) });
    expect([r404.status, json(r404.body).error.code]).toEqual([404, 'unknown_trace_token']);
    const doc = handleReplay(store, { ...req, document_id: 'doc-2', query: 'other' });
    expect([doc.status, json(doc.body).error.code, json(doc.body).error.field]).toEqual([409, 'document_id_mismatch', 'document_id']);
    expect(json(doc.body).error.message).toContain('document_id differs');
    const q = handleReplay(store, { ...req, query: 'What is it?' });
    expect([q.status, json(q.body).error.code, json(q.body).error.field]).toEqual([409, 'query_mismatch', 'query']);
  });

  it('501 when replay is disabled, whatever the body', () => {
    expect(handleReplay(undefined, req).status).toBe(501);
    expect(handleReplay(null, 'garbage').status).toBe(501);
    const off = new ReplayStore({ env: NOENV, enabled: false });
    const p = off.put(put());
    expect(p.token).toBe(e.token); // the token is still computed for the response
    expect(off.size).toBe(0);
    const r = handleReplay(off, req);
    expect([r.status, json(r.body).error.code]).toEqual([501, 'replay_disabled']);
  });
});

describe('configuration', () => {
  it('defaults, environment, and options over the environment', () => {
    expect(resolveReplayConfig({}, {})).toMatchObject({ enabled: true, maxEntries: 1024, ttlMs: 86_400_000, sources: { enabled: 'default', maxEntries: 'default', ttlMs: 'default' } });
    const env = { TAPEDECK_REPLAY_ENABLED: 'off', TAPEDECK_REPLAY_MAX_ENTRIES: ' 5000 ', TAPEDECK_REPLAY_TTL_MS: '0' };
    expect(resolveReplayConfig({}, env)).toMatchObject({ enabled: false, maxEntries: 5000, ttlMs: 0, sources: { enabled: 'TAPEDECK_REPLAY_ENABLED' } });
    expect(resolveReplayConfig({ enabled: true, maxEntries: 7 }, env)).toMatchObject({ enabled: true, maxEntries: 7, ttlMs: 0, sources: { maxEntries: 'option', ttlMs: 'TAPEDECK_REPLAY_TTL_MS' } });
    for (const [v, want] of [['YES', true], ['1', true], ['on', true], ['False', false], ['no', false], ['0', false]] as const) {
      expect(resolveReplayConfig({}, { TAPEDECK_REPLAY_ENABLED: v }).enabled).toBe(want);
    }
    expect(resolveReplayConfig({}, { TAPEDECK_REPLAY_MAX_ENTRIES: '' }).maxEntries).toBe(1024); // blank is unset
    expect(new ReplayStore({ env: { TAPEDECK_REPLAY_MAX_ENTRIES: '2' } }).config.maxEntries).toBe(2);
  });

  it('negative, non-numeric and out-of-range values are E_CONFIG naming the variable', () => {
    const bad: [keyof typeof REPLAY_ENV, string][] = [
      ['maxEntries', '-1'],
      ['maxEntries', 'abc'],
      ['maxEntries', '0'],
      ['maxEntries', '1.5'],
      ['maxEntries', '1e3'],
      ['maxEntries', '99999999999999999999'],
      ['ttlMs', '-5'],
      ['ttlMs', '10s'],
      ['enabled', 'maybe'],
    ];
    for (const [k, v] of bad) {
      const name = REPLAY_ENV[k];
      const e = errorOf(() => resolveReplayConfig({}, { [name]: v }));
      expect(e.code).toBe('E_CONFIG');
      expect(e.details.variable).toBe(name);
      expect(e.message).toContain(name);
      expect(e.message).toContain(JSON.stringify(v));
      expect(errorOf(() => new ReplayStore({ env: { [name]: v } })).code).toBe('E_CONFIG');
    }
  });

  it('bad options are E_CONFIG naming the option', () => {
    for (const o of [{ maxEntries: -1 }, { maxEntries: 0 }, { ttlMs: -1 }, { ttlMs: Number.NaN }, { ttlMs: 1.5 }, { maxEntries: '10' as never }, { enabled: 'yes' as never }]) {
      const e = errorOf(() => resolveReplayConfig(o, {}));
      expect(e.code).toBe('E_CONFIG');
      expect(e.details.option).toBe(Object.keys(o)[0]);
      expect(e.message).toContain(`option \`${Object.keys(o)[0]}\``);
    }
  });
});
