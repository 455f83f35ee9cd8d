// A tape recorded by a ReplayCache with `ignoredArgs` keys its records without those arguments.
// loadTree(path, { normalize }) builds the tree with the same options, and its lookups must use
// them too: the tree answers a body exactly when the ReplayCache that recorded the tape does.
// A per-call `normalize` replaces the members it gives.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationTree } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { requestKeys } from '../../src/match/matcher.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-normalize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
const ignoreArgs = ['max_tokens'];

async function recordTape(): Promise<string> {
  const tape = join(dir, `ign-${Math.random().toString(36).slice(2)}.tape`);
  const cache = await ReplayCache.open(tape, { mode: 'record', ignoredArgs: ignoreArgs });
  await cache.put(body, { role: 'assistant', content: 'hello' });
  await cache.close();
  return tape;
}

describe("loadTree's normalize options are the default for its lookups", () => {
  it('the tree serves a body exactly when the recording ReplayCache does', async () => {
    const tape = await recordTape();
    const { tree } = await loadTree(tape, { normalize: { ignoreArgs } });
    const probes = [body, { ...body, max_tokens: 99 }, { ...body, max_tokens: undefined }, { ...body, model: 'gpt-4o-mini' }, { ...body, temperature: 0 }];
    const served = [];
    for (const p of probes) {
      // A replaying cache per probe: each lookup is its first call of that request.
      const cache = await ReplayCache.open(tape, { mode: 'replay', ignoredArgs: ignoreArgs });
      const hit = await cache.getRecord(p).then(
        (r) => r !== undefined,
        (e: { code?: string }) => (e.code === 'E_MISS' ? false : Promise.reject(e)),
      );
      await cache.close();
      served.push(hit);
      const r = tree.findOrCreate(p);
      expect(r.hit, JSON.stringify(p)).toBe(hit);
      // The key looked up with is the one the cache keys the body by.
      expect(r.key).toBe(requestKeys(p, { ignoreArgs }).key);
    }
    expect(served).toEqual([true, true, true, false, false]);
    expect(tree.findOrCreate({ ...body, max_tokens: 99 }).alternative!.value).toEqual({ role: 'assistant', content: 'hello' });
  });

  it('a per-call normalize replaces the members it gives', async () => {
    const tape = await recordTape();
    const { tree } = await loadTree(tape, { normalize: { ignoreArgs } });
    // max_tokens back in the key: the recording's key no longer matches.
    expect(tree.findOrCreate({ ...body, max_tokens: 99 }, { normalize: { ignoreArgs: [] } }).hit).toBe(false);
    // A member the call does not give stays the tree's.
    expect(tree.findOrCreate({ ...body, max_tokens: 99 }, { normalize: { volatileKeys: ['x'] } }).hit).toBe(true);
    // Without load-time options, nothing is ignored (as before): the tape's key is not found.
    const { tree: plain } = await loadTree(tape);
    expect(plain.findOrCreate({ ...body, max_tokens: 99 }).hit).toBe(false);
    expect(plain.findOrCreate({ ...body, max_tokens: 99 }, { normalize: { ignoreArgs } }).hit).toBe(true);
  });

  it('new ConversationTree({ normalize }) and fromRecords too; tree.record() places with them', () => {
    const tree = ConversationTree.fromRecords([{ request: body, value: 'hello', key: requestKeys(body, { ignoreArgs }).key }], { normalize: { ignoreArgs } });
    expect(tree.findOrCreate({ ...body, max_tokens: 5 }).hit).toBe(true);
    const built = new ConversationTree({ normalize: { ignoreArgs } });
    // No key on the record: the tree's options make it, as ReplayCache made the tape's.
    built.record({ request: body, value: 'hello' });
    expect(built.roots[0]!.alternatives[0]!.key).toBe(requestKeys(body, { ignoreArgs }).key);
    expect(built.findOrCreate({ ...body, max_tokens: 5 }).hit).toBe(true);
    expect(built.findOrCreate({ ...body, model: 'other' }).hit).toBe(false);
  });
});
