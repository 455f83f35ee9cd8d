// A user trial: a tape made by importing a directory of JSON recordings (ReplayCache records)
// was told to createFetch's caller as "the tape has no HTTP recordings; re-record", which sent
// them back to the live API for answers the tape holds. The miss now says what the tape holds
// and what replays it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-miss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'dir q' }] };

describe('createFetch on a tape of ReplayCache records only', () => {
  it('says the tape holds them, how many, and that ReplayCache replays them', async () => {
    const tape = join(dir, 'recs.tape');
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    await rec.put(body, { answer: 'from the directory' });
    await rec.put({ ...body, messages: [{ role: 'user', content: 'other' }] }, { answer: 'two' });
    await rec.close();
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(r.status).toBe(400);
      const e = (await r.json()) as { error: { message: string; difference?: string; fix?: string } };
      const text = JSON.stringify(e);
      expect(text).toContain('has no HTTP recordings: it holds 2 replay-cache records');
      expect(text).toContain(`ReplayCache.open(${JSON.stringify(JSON.stringify(tape)).slice(1, -1)})`);
    } finally {
      await f.close();
    }
  });
});
