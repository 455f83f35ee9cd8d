// `tapedeck tree` on a tape of MCP exchanges (an agent's tool tape) printed an empty tree, exit
// 0, and said nothing of the records it left out: the tape read as empty. Records of other kinds
// (MCP exchanges, realtime sessions) are now counted as not shown, as embeddings calls are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { treeCommand } from '../../src/tree/cli.ts';
import { loadTree } from '../../src/tree/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mcp = (i: number, method: string) => ({ kind: 'mcp', v: 2, key: `k${i}`, keyVersion: 1, method, request: { jsonrpc: '2.0', method, params: {} }, events: [{ t: 0, message: { jsonrpc: '2.0', id: 1, result: {} } }] });
const session = { kind: 'realtime', v: 1, key: 'rk', role: 'session', sid: 's1', url: '/v1/realtime?model=m' };
const part = { kind: 'realtime', v: 1, key: 'rk', role: 'part', sid: 's1', n: 0, frames: [] };

async function treeCli(tape: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    err += String(s);
    return true;
  });
  try {
    const code = await treeCommand([tape], async (text) => {
      out += text;
    });
    return { code, out, err };
  } finally {
    spy.mockRestore();
  }
}

describe('tree on a tape of other record kinds', () => {
  it('counts MCP exchanges and realtime sessions as not shown, naming the records', async () => {
    const tape = join(dir, 'tools.tape');
    await createTape(tape);
    await appendRecords(tape, [mcp(0, 'initialize'), mcp(1, 'tools/list'), mcp(2, 'tools/call'), session, part]);
    const { tree } = await loadTree(tape);
    expect(tree.skipped.map((w) => [w.index, w.message])).toEqual([
      [0, 'an MCP exchange, not a conversation'],
      [1, 'an MCP exchange, not a conversation'],
      [2, 'an MCP exchange, not a conversation'],
      [3, 'a realtime session, not a conversation'],
    ]);
    const r = await treeCli(tape);
    expect(r.code).toBe(0);
    expect(r.err).toBe('3 records not shown: MCP exchanges, not conversations (records 0, 1, 2)\n1 record not shown: realtime session, not conversation (records 3)\n');
  });
});
