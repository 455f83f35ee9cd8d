// The line a tape with request keys of spec version 1 gets at open (a tape recorded before the
// key spec was bumped, replaying after an upgrade). It said "N recording(s) were keyed with
// request key spec version 1" counting only the recordings whose key changed (createFetch and
// the proxy), and advised "re-record or compact the tape to store the new keys": compacting
// (`tapedeck prune`) copies records as they are, so the tape stayed byte for byte the same and
// the line came back at every open. It now counts every version-1 recording and names only
// what stores the new keys, recording again; following it ends the line.
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape, rewriteTape } from '../../src/store/tape-file.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('rekey-warning-advice');

const FIXTURE = join(import.meta.dirname, '../fixtures/v1-tape');
type Entry = { tape: string; name: string; path?: string; request: Record<string, unknown>; body?: string };
const entries = (JSON.parse(readFileSync(join(FIXTURE, 'keys.json'), 'utf8')) as { entries: Entry[] }).entries.filter((e) => e.tape === 'fetch.tape');
const ORIGIN = 'https://api.example.test';

/** Opens `tape` with createFetch in `mode`, sends every fixture request, and returns the re-key lines. */
async function run(tape: string, mode: 'replay' | 'record'): Promise<string[]> {
  const warnings: string[] = [];
  // The live API of a record run: each request's recorded answer again.
  const upstream = (async (input: string | URL | Request, init?: RequestInit) => {
    const sent = JSON.parse(await new Request(input, init).text()) as unknown;
    const e = entries.find((x) => JSON.stringify(x.request) === JSON.stringify(sent))!;
    return new Response(e.body, { headers: { 'content-type': e.body!.startsWith('data:') || e.body!.startsWith('event:') ? 'text/event-stream' : 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode, fetch: upstream, summary: false, onWarning: (m) => warnings.push(m) });
  try {
    for (const e of entries) {
      const res = await f(`${ORIGIN}${e.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(e.request) });
      expect(res.status, e.name).toBe(200);
      await res.text();
    }
  } finally {
    await f.close();
  }
  return warnings.filter((w) => w.includes('spec version 1'));
}

describe('the re-key line of a version-1 tape', () => {
  it('counts every recording keyed under version 1, not only those whose key changed', async () => {
    const tape = fresh();
    copyFileSync(join(FIXTURE, 'fetch.tape'), tape);
    const v1 = (await readTape(tape)).records.filter((r) => (r.value as { kind?: string; keyVersion?: number }).kind === 'http' && (r.value as { keyVersion?: number }).keyVersion === undefined).length;
    expect(v1).toBeGreaterThan(1);
    const lines = await run(tape, 'replay');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${v1} recording(s)`);
  });

  it('advises only what stores the new keys; compacting does not, recording again does', async () => {
    const tape = fresh();
    copyFileSync(join(FIXTURE, 'fetch.tape'), tape);
    const [line] = await run(tape, 'replay');
    expect(line).toBeDefined();
    expect(line).not.toMatch(/compact|prune/);
    expect(line).toMatch(/recording them again/i);
    // What the old line advised: a compaction keeps the tape's bytes, and the line (said once
    // per tape in a process: a copy opened anew gets it).
    const before = readFileSync(tape);
    await rewriteTape(tape, () => true);
    expect(readFileSync(tape).equals(before)).toBe(true);
    const compacted = fresh();
    copyFileSync(tape, compacted);
    expect(await run(compacted, 'replay')).toHaveLength(1);
    // What it advises now: after a record run, the tape opens without it, and replays.
    await run(tape, 'record');
    const recorded = fresh();
    copyFileSync(tape, recorded);
    expect(await run(recorded, 'replay')).toEqual([]);
  });
});
