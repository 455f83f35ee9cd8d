// `tapedeck tree` on an eval's ReplayCache tape whose values are the eval's own objects
// ({ answer, score }): none is an answer the tree reads, and each record's warning was the same
// line again, 1,980 of them on stderr for a 1,980-record tape. Records left out for one reason
// are said once, with how many and which.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { treeCommand } from '../../src/tree/cli.ts';
import { ReplayCache } from '../../src/store/index.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-tree-alike-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const ask = (q: string) => ({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: q }] });

describe('records the tree cannot place, for one reason', () => {
  it('are said in one line with their count, not one line each', async () => {
    const tape = join(root, 'eval.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    for (let i = 0; i < 40; i++) await cache.put(ask(`Question ${i}`), { answer: String(i), score: 1 });
    await cache.put(ask('Question 40'), 'A plain text answer.');
    await cache.put(ask('Question 41'), new Date(0));
    await cache.close();
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((t: string | Uint8Array) => (err.push(String(t)), true));
    const out: string[] = [];
    const code = await treeCommand([tape], async (t) => void out.push(t));
    vi.restoreAllMocks();
    expect(code).toBe(1);
    const lines = err.join('').split('\n').filter((l) => l !== '');
    // The first of each reason as before, then the others of it in one line.
    expect(lines[0]).toMatch(/^record 0 at byte \d+ not placed: E_TREE: The recorded value \(an object with "answer", "score"\) is not an answer the tree reads/);
    expect(lines[1]).toMatch(/^\.\.\. and 39 more records not placed for the same reason: records 1, 2, 3, .*, 39$/);
    expect(lines[2]).toMatch(/^record 41 at byte \d+ not placed: E_TREE: The recorded value \(a Date\)/);
    expect(lines).toHaveLength(3);
    expect(out.join('')).toContain('41 records not placed (see warnings)');
    expect(out.join('')).toContain('A plain text answer.');
  });
});
