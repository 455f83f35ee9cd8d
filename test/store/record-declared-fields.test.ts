// What getRecord and readTape hand back has only the members its declared type names: a
// ReplayCache record came back with `run` and `repeat` (stamped by the writer) that ReplayRecord
// did not declare, so `rec.run` did not compile though the value was there. The declared
// members are read from the interfaces in src/store/records.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('declared-fields');
const source = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'store', 'records.ts'), 'utf8');

/** The top-level member names of `export interface name` in records.ts. */
function declared(name: string): string[] {
  const at = source.indexOf(`export interface ${name} `);
  const body = source.slice(at, source.indexOf('\n}\n', at));
  return [...body.matchAll(/^ {2}(?:readonly )?(\w+)\??:/gm)].map((m) => m[1]!);
}

describe('records as declared', () => {
  it('reads the interfaces it compares with', () => {
    expect(declared('ReplayRecord')).toContain('value');
    expect(declared('HttpRecord')).toContain('trace');
  });

  it("ReplayCache.getRecord's record has only ReplayRecord's members", async () => {
    const file = fresh();
    const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(request, { answer: 1 }, { durationMs: 3, meta: { v: 1 } });
    await rec.close();
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const got = await cache.getRecord(request);
    await cache.close();
    expect(got?.run).toBeTypeOf('string');
    expect(Object.keys(got!).filter((k) => !declared('ReplayRecord').includes(k))).toEqual([]);
  });

  it("a createFetch recording on the tape has only HttpRecord's members", async () => {
    const file = fresh();
    const live = async (): Promise<Response> => new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
    const f = createFetch({ tape: file, mode: 'record', fetch: live as typeof fetch });
    await (await f('https://api.example.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[{"role":"user","content":"hi"}]}' })).text();
    await f.close();
    const rec = (await readTape(file)).records.map((r) => r.value).find(isHttpRecord)!;
    expect(rec.repeat).toBe(0);
    expect(Object.keys(rec).filter((k) => !declared('HttpRecord').includes(k))).toEqual([]);
  });
});
