// Sessions replayed through one `tapedeck serve` are independent: each starts with its own
// initialize, so each replays from the first recording of each call, as a tapeTransport session
// does, whatever the other sessions did and in whatever order they come. server-everything's
// `toggle-simulated-logging` answers the same call differently in turn (Started, then Stopped)
// and keeps that state per session. Before, the k-th call counter was one per proxy: the second
// replayed session got "Stopped" twice, with no miss and no warning.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/index.ts';
import { everythingHttp, tmp } from './helpers.ts';

const TOGGLE = { name: 'toggle-simulated-logging', arguments: {} };
const text = (r: unknown) => ((r as { content: { text: string }[] }).content[0]!.text.startsWith('Started') ? 'Started' : 'Stopped');

async function connect(url: string): Promise<Client> {
  const c = new Client({ name: 'sessions', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return c;
}

describe('tapedeck serve replays each MCP session from the first recording of each call', () => {
  it('a second session, and sessions interleaved, get what the recorded session got', async () => {
    const dir = tmp('serve-sessions');
    const tape = join(dir, 'sessions.tape');
    const server = await everythingHttp();
    const rec = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, onWarning: () => undefined });
    const c0 = await connect(rec.url);
    const recorded = [text(await c0.callTool(TOGGLE)), text(await c0.callTool(TOGGLE))];
    await c0.close();
    await rec.close();
    await server.stop();
    expect(recorded).toEqual(['Started', 'Stopped']);

    const warnings: string[] = [];
    const replay = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) });
    // One after the other.
    for (let i = 0; i < 2; i++) {
      const c = await connect(replay.url);
      expect([text(await c.callTool(TOGGLE)), text(await c.callTool(TOGGLE))]).toEqual(recorded);
      await c.close();
    }
    // Two at once, their calls interleaved: b's first call comes after a's first.
    const a = await connect(replay.url);
    const b = await connect(replay.url);
    const a1 = text(await a.callTool(TOGGLE));
    const b1 = text(await b.callTool(TOGGLE));
    const b2 = text(await b.callTool(TOGGLE));
    const a2 = text(await a.callTool(TOGGLE));
    expect([a1, a2]).toEqual(recorded);
    expect([b1, b2]).toEqual(recorded);
    await a.close();
    await b.close();
    const stats = (await (await fetch(`${replay.url}/__tapedeck/stats`)).json()) as { mcp: { misses: number } };
    expect(stats.mcp.misses).toBe(0);
    await replay.close();
    expect(warnings).toEqual([]);
  });
});
