// `tapedeck tree` on the tape of a byte-exact replay store (`tapedeck serve --replay-store`, or a
// DurableReplayStore) printed "0 conversation roots" and exited 0, as for an empty tape, though
// it held thousands of entries: they are answers kept by trace token, not conversations. They
// are counted as not shown, as MCP exchanges and realtime sessions are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { treeCommand } from '../../src/tree/cli.ts';
import { loadTree } from '../../src/tree/load.ts';
import { DurableReplayStore } from '../../src/replay/durable.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-tree-replay-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

describe('a replay store tape in the tree', () => {
  it('is said to hold replay entries, not read as an empty tape', async () => {
    const tape = join(root, 'replays.tape');
    const store = await DurableReplayStore.open(tape);
    for (let i = 0; i < 3; i++) {
      await store.put({ documentId: 'POST /v1/chat/completions', query: `q${i}`, documentVersion: '1', model: 'gpt-4o-mini', systemPromptVersion: 'v1', selectedIds: [`id${i}`], body: `{"i":${i}}\n`, contentType: 'application/json' });
    }
    await store.close();
    const { tree } = await loadTree(tape);
    expect(tree.skipped.map((s) => s.message)).toEqual(Array(3).fill('a byte-exact replay entry, not a conversation'));
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((t: string | Uint8Array) => (err.push(String(t)), true));
    const code = await treeCommand([tape], async () => {});
    vi.restoreAllMocks();
    expect(code).toBe(0);
    expect(err.join('')).toMatch(/^3 records not shown: byte-exact replay entries, not conversations \(records 0, 1, 2\)$/m);
  });
});
