// Identical calls in flight at once are stored in the order they were sent, not in the order the
// server answered them: replay gives the k-th identical call the k-th recording, so each caller
// gets on replay what it got live. odd-server's `count` answers three identical calls last
// first ("count 3" comes back first). Before, records were stored in answer order and replay
// gave the first caller "count 3".
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { sentMessage } from '../../src/mcp/wire.ts';
import { tmp } from './helpers.ts';

const ODD = join(import.meta.dirname, 'odd-server.mjs');
const never = () => {
  throw new Error('replay made the live transport');
};

async function threeAtOnce(transport: ReturnType<typeof tapeTransport>): Promise<string[]> {
  const c = new Client({ name: 'concurrent', version: '1' });
  await c.connect(transport);
  const texts = await Promise.all([1, 2, 3].map(() => c.callTool({ name: 'count', arguments: {} }).then((r) => (r.content as { text: string }[])[0]!.text)));
  await c.close();
  return texts;
}

describe('identical MCP calls in flight at once', () => {
  it('are stored in the order they were sent, and replay gives each caller what it got live', async () => {
    const dir = tmp('concurrent');
    const tape = join(dir, 'count.tape');
    const live = await threeAtOnce(tapeTransport(() => new StdioClientTransport({ command: 'node', args: [ODD], stderr: 'ignore' }), { tape, mode: 'record', onWarning: () => undefined }));
    expect(live).toEqual(['count 1', 'count 2', 'count 3']);
    const stored = (await readTape(tape)).records
      .map((r) => r.value)
      .filter(isMcpRecord)
      .filter((r) => r.method === 'tools/call')
      .map((r) => ((sentMessage(r.events.find((e) => 'response' in e)!) as { result: { content: { text: string }[] } }).result.content[0]!.text));
    expect(stored).toEqual(['count 1', 'count 2', 'count 3']);
    expect(await threeAtOnce(tapeTransport(never, { tape, mode: 'replay' }))).toEqual(live);
  });
});
