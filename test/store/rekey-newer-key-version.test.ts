// A recording keyed under a newer request key spec than this tapedeck's (a newer tapedeck wrote
// it after a key bump) is not "keyed under request key spec version 1", and this tapedeck cannot
// key it again: it keeps its stored key. The re-key line counted it as a version-1 recording
// re-keyed with version 2 (ReplayCache; createFetch and the proxy once every version-1
// recording was counted). It counts only what it re-keyed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { KEY_SPEC_VERSION } from '../../src/providers/normalize.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { inRecordOrder } from '../../src/store/record-order.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rekey-newer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A copy of `tape` at `to` whose records all carry a key of the next key spec version. */
async function keyedNewer(tape: string, to: string): Promise<void> {
  const { header, records } = await readTape(tape);
  await createTape(to, { created: header.created, tapedeckVersion: header.tapedeckVersion, salt: header.salt ?? null });
  await appendRecords(to, records.map((r) => inRecordOrder({ ...(r.value as object), keyVersion: KEY_SPEC_VERSION + 1 })));
}

describe('a recording keyed under a newer key spec', () => {
  it('is not counted in ReplayCache\u2019s re-key line', async () => {
    const base = join(dir, 'cache.tape');
    const rec = await ReplayCache.open(base, { mode: 'record' });
    await rec.put({ model: 'm', messages: [{ role: 'user', content: 'a' }] }, 'A');
    await rec.close();
    const tape = join(dir, 'cache-newer.tape');
    await keyedNewer(base, tape);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const c = await ReplayCache.open(tape, { mode: 'replay' });
      await c.close();
      expect(warn.mock.calls.map((x) => String(x[0])).filter((m) => m.includes('key spec version'))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('is not counted in createFetch\u2019s re-key line', async () => {
    const base = join(dir, 'http.tape');
    const upstream = (async () => new Response(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const send = (f: typeof fetch) => f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a' }] }) });
    const f = createFetch({ tape: base, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
    await (await send(f)).text();
    await f.close();
    const tape = join(dir, 'http-newer.tape');
    await keyedNewer(base, tape);
    const warnings: string[] = [];
    const g = createFetch({ tape, mode: 'replay', onWarning: (m) => warnings.push(m), summary: false });
    await (await send(g)).text();
    await g.close();
    expect(warnings.filter((m) => m.includes('key spec version'))).toEqual([]);
  });
});
