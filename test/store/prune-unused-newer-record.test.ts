// A recording of a newer record version (a newer tapedeck wrote it, a teammate who upgraded
// first) on a tape this tapedeck prunes with pruneUnused: the call it answers gets
// E_TAPE_VERSION, and the recording must stay, asked for or not. This tapedeck cannot serve it,
// so it cannot tell whether the run used it; `tapedeck prune` keeps such records too. Before,
// createFetch({ pruneUnused }) and ReplayCache close({ pruneUnused }) deleted it as unused,
// even the one the run's own call had asked for.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { inRecordOrder } from '../../src/store/record-order.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-prune-newer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A copy of `tape` at `to` whose record `index` has record version 9, as a newer tapedeck writes it. */
async function withNewer(tape: string, to: string, index: number): Promise<void> {
  const { header, records } = await readTape(tape);
  await createTape(to, { created: header.created, tapedeckVersion: header.tapedeckVersion, salt: header.salt ?? null });
  await appendRecords(to, records.map((r, i) => inRecordOrder(i === index ? { ...(r.value as object), v: 9 } : r.value)));
}

const versions = async (tape: string) => (await readTape(tape)).records.map((r) => (r.value as { v: number }).v);

describe('ReplayCache close({ pruneUnused: true })', () => {
  const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });
  const base = join(dir, 'cache.tape');

  async function tape(name: string): Promise<string> {
    const rec = await ReplayCache.open(base, { mode: 'record' });
    try {
      await rec.put(q('a'), 'A');
      await rec.put(q('b'), 'B');
    } finally {
      await rec.close();
    }
    const to = join(dir, name);
    await withNewer(base, to, 1);
    return to;
  }

  it('keeps the newer record whose call got E_TAPE_VERSION', async () => {
    const t = await tape('cache-asked.tape');
    const c = await ReplayCache.open(t, { mode: 'replay' });
    expect(await c.get(q('a'))).toBe('A');
    await expect(c.get(q('b'))).rejects.toMatchObject({ code: 'E_TAPE_VERSION' });
    const report = await c.close({ pruneUnused: true });
    expect(report.pruned).toEqual([]);
    expect(await versions(t)).toEqual([1, 9]);
  });

  it('keeps a newer record no call asked for, and still prunes an unused one it reads', async () => {
    const t = await tape('cache-unasked.tape');
    const c = await ReplayCache.open(t, { mode: 'replay' });
    const report = await c.close({ pruneUnused: true });
    expect(report.pruned).toHaveLength(1);
    expect(await versions(t)).toEqual([9]);
  });
});

describe('createFetch({ pruneUnused: true })', () => {
  const ORIGIN = 'https://api.openai.com';
  const body = (content: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  const post = (f: typeof fetch, content: string) => f(`${ORIGIN}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(content) });
  const upstream = (async (input: string | URL | Request, init?: RequestInit) => {
    const asked = (JSON.parse(await new Request(input, init).text()) as { messages: { content: string }[] }).messages[0]!.content;
    const answer = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${asked}` }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const base = join(dir, 'http.tape');

  async function tape(name: string): Promise<string> {
    const f = createFetch({ tape: base, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
    try {
      await post(f, 'first');
      await post(f, 'second');
    } finally {
      await f.close();
    }
    const to = join(dir, name);
    await withNewer(base, to, 1);
    return to;
  }

  it('keeps the newer record whose call got E_TAPE_VERSION', async () => {
    const t = await tape('http-asked.tape');
    const f = createFetch({ tape: t, mode: 'replay', pruneUnused: true, onWarning: () => {}, summary: false });
    expect((await post(f, 'first')).status).toBe(200);
    const r = await post(f, 'second');
    expect(r.status).toBe(400);
    expect(r.headers.get('x-tapedeck-error')).toBe('E_TAPE_VERSION');
    await f.close();
    expect(await versions(t)).toEqual([1, 9]);
  });

  it('keeps a newer record no call asked for', async () => {
    const t = await tape('http-unasked.tape');
    const f = createFetch({ tape: t, mode: 'replay', pruneUnused: true, onWarning: () => {}, summary: false });
    expect((await post(f, 'first')).status).toBe(200);
    await f.close();
    expect(await versions(t)).toEqual([1, 9]);
  });
});
