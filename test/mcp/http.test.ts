// MCP over Streamable HTTP through tapedeck serve's handler: server-everything's own HTTP
// transport upstream, the SDK's StreamableHTTPClientTransport as the client. Recorded, then
// replayed with the server stopped.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { isMcpRequest } from '../../src/mcp/http.ts';
import { startProxy } from '../../src/proxy/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { everythingHttp, everythingSession, logged, richClient, tmp } from './helpers.ts';

describe('MCP over Streamable HTTP through tapedeck serve', () => {
  it('server-everything: recorded through the proxy, replayed with the server stopped: same answers, notifications and server requests, fresh session ids', async () => {
    const dir = tmp('http');
    const tape = join(dir, 'http.tape');
    const server = await everythingHttp();
    const proxy = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, onWarning: () => undefined });
    const t1 = new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`));
    const rec = logged(t1);
    const c1 = richClient();
    await c1.connect(rec.transport);
    const session1 = t1.sessionId;
    const recorded = await everythingSession(c1);
    const recStats = (await (await fetch(`${proxy.url}/__tapedeck/stats`)).json()) as { mcp?: Record<string, number> };
    expect(recStats.mcp).toMatchObject({ hits: 0, misses: 0, appendFailures: 0 });
    expect(recStats.mcp!.recorded).toBeGreaterThanOrEqual(recorded.results.length + 1);
    await c1.close();
    await proxy.close();
    await server.stop();
    expect(rec.log.filter((m) => (m as { method?: string }).method === 'notifications/progress')).toHaveLength(3);
    const records = (await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord);
    expect(records.some((r) => r.method === 'initialize')).toBe(true);

    const replay = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => undefined });
    const t2 = new StreamableHTTPClientTransport(new URL(`${replay.url}/mcp`));
    const rep = logged(t2);
    const c2 = richClient();
    await c2.connect(rep.transport);
    expect(t2.sessionId).toBeTruthy();
    expect(t2.sessionId).not.toBe(session1);
    expect(await everythingSession(c2)).toEqual(recorded);
    // Every message again; in order on each stream (between a request's stream and the GET
    // stream, order depends on the network, live as in replay).
    const canon = (log: unknown[]) => log.map((m) => canonicalize(m)!).sort();
    expect(canon(rep.log)).toEqual(canon(rec.log));
    const onPosts = (log: unknown[]) => log.filter((m) => !['roots/list', 'notifications/message', 'notifications/tools/list_changed'].includes((m as { method?: string }).method ?? ''));
    expect(onPosts(rep.log)).toEqual(onPosts(rec.log));
    const miss = await c2.callTool({ name: 'echo', arguments: { message: 'never recorded' } }).catch((e: McpError) => e);
    expect((miss as McpError).code).toBe(-32050);
    expect((miss as McpError).message).toContain('params.arguments.message differs');
    // The session goes on after a miss.
    expect(await c2.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } })).toEqual(recorded.results[3]);
    // The proxy's stats count the MCP traffic: answers from the tape, the one miss, no records.
    const stats = (await (await fetch(`${replay.url}/__tapedeck/stats`)).json()) as { mcp?: Record<string, number>; requests: number };
    expect(stats.mcp).toMatchObject({ recorded: 0, misses: 1, appendFailures: 0, sessions: 1 });
    expect(stats.mcp!.hits).toBeGreaterThanOrEqual(recorded.results.length + 1);
    await c2.close();
    await replay.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client that takes JSON only gets JSON answers, each POST its own; LLM bodies are not taken for MCP', async () => {
    const dir = tmp('http-json');
    const tape = join(dir, 'json.tape');
    const server = await everythingHttp();
    const post = async (base: string, body: unknown, session?: string) => {
      const r = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...(session ? { 'mcp-session-id': session } : {}) }, body: JSON.stringify(body) });
      return { status: r.status, type: r.headers.get('content-type'), session: r.headers.get('mcp-session-id'), text: await r.text() };
    };
    const script = async (base: string) => {
      const init = await post(base, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      expect(init.type).toContain('application/json');
      const sid = init.session!;
      expect((await post(base, { jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).status).toBe(202);
      const sum = await post(base, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get-sum', arguments: { a: 1, b: 2 } } }, sid);
      expect(sum.type).toContain('application/json');
      return { sid, sum: JSON.parse(sum.text) as { id: number; result: unknown }, texts: [init.text, sum.text] };
    };
    const proxy = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, onWarning: () => undefined });
    const recorded = await script(proxy.url);
    await proxy.close();
    await server.stop();
    const replay = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => undefined });
    const replayed = await script(replay.url);
    await replay.close();
    expect(replayed.sum).toEqual(recorded.sum);
    // The answers' bytes are the live ones: members in the server's order (initialize's
    // protocolVersion before capabilities), not sorted.
    expect(recorded.texts[0]).toMatch(/^\{"result":\{"protocolVersion":/);
    expect(replayed.texts).toEqual(recorded.texts);
    expect(JSON.stringify(replayed.sum.result)).toContain('3');
    expect(replayed.sid).not.toBe(recorded.sid);

    const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    expect(isMcpRequest({}, enc({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '{"jsonrpc": "2.0", "id": 1}' }] }))).toBe(false);
    expect(isMcpRequest({}, enc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).toBe(true);
    expect(isMcpRequest({}, enc([{ jsonrpc: '2.0', method: 'notifications/initialized' }]))).toBe(true);
    expect(isMcpRequest({ 'mcp-session-id': 'x' }, new Uint8Array(0))).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('tells JSON-RPC from LLM bodies as a substring search and JSON.parse would, wherever the member and stray j bytes sit', () => {
    // Oracle: the member named in the first 4 KB (a substring search), and the body a JSON-RPC message.
    const oracle = (b: Buffer): boolean => {
      if (b.subarray(0, 4096).indexOf('"jsonrpc"') < 0) return false;
      try {
        const v: unknown = JSON.parse(b.toString('utf8'));
        const first = Array.isArray(v) ? v[0] : v;
        return first !== null && typeof first === 'object' && (first as { jsonrpc?: unknown }).jsonrpc === '2.0';
      } catch {
        return false;
      }
    };
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    const words = ['j', 'jj', '"j', 'json', 'jsonrp', '"jsonrp', 'jsonrpc', 'hello', 'just', 'x'];
    let positives = 0;
    let negatives = 0;
    for (let i = 0; i < 3000; i++) {
      const text = Array.from({ length: rnd(40) }, () => words[rnd(words.length)]).join(rnd(2) ? ' ' : '');
      const pad = 'p'.repeat(rnd(3) === 0 ? 4060 + rnd(60) : rnd(200));
      const kind = rnd(4);
      const value =
        kind === 0
          ? { pad, jsonrpc: '2.0', id: i, method: 'tools/call', params: { text } }
          : kind === 1
            ? [{ method: 'notifications/initialized', pad, jsonrpc: rnd(2) ? '2.0' : '1.0' }]
            : kind === 2
              ? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text + pad }] }
              : { pad, [text.slice(0, 7) || 'k']: '2.0', method: 'x' };
      const body = Buffer.from(JSON.stringify(value));
      const want = oracle(body);
      if (want) positives++;
      else negatives++;
      expect(isMcpRequest({}, body), JSON.stringify(value).slice(0, 120)).toBe(want);
    }
    expect(positives).toBeGreaterThan(300);
    expect(negatives).toBeGreaterThan(300);
  });
});
