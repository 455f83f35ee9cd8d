// A tape imported from a directory of JSON recordings holds ReplayCache records (keyed by the
// request body, no HTTP request): createFetch and tapedeck serve answered its requests with "the
// tape has no HTTP recordings", and the import's summary said nothing of it (a user trial). Now
// the summary says what they are and what replays them; ReplayCache does.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-cache-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the summary of an import of JSON recordings', () => {
  it('says they are ReplayCache records and what replays them', async () => {
    const recs = join(dir, 'recs');
    mkdirSync(recs);
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'dir q' }] };
    writeFileSync(join(recs, '001.json'), JSON.stringify({ request, response: { answer: 'from the directory' } }));
    const tape = join(dir, 'recs.tape');
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    let printed: string;
    try {
      expect(await importCommand(recs, tape, { force: false, har: false, skipBad: false, review: false, textconv: false })).toBe(0);
      printed = out.mock.calls.map((c) => String(c[0])).join('');
    } finally {
      out.mockRestore();
    }
    expect(printed).toContain(`wrote ${tape}: 1 record from a directory of JSON recordings\n`);
    expect(printed).toContain(`  it is a ReplayCache record (keyed by the request body, no HTTP request): replay with ReplayCache.open(${JSON.stringify(tape)}) or withReplayCache from llm-tapedeck/store; createFetch and tapedeck serve do not serve them (docs/migrate.md)\n`);
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await cache.get(request)).toEqual({ answer: 'from the directory' });
    } finally {
      await cache.close();
    }
  });
});
