// MCP rows, each against a baseline measured in the same run:
//   - a replayed `tools/call` round trip (server-everything's echo tool, the SDK Client) over
//     stdio through `tapedeck mcp`, against the real server's own round trip over stdio
//     (target: replay faster than the server it replaces, ratio < 1);
//   - the same over Streamable HTTP through tapedeck serve, against the real server's HTTP
//     endpoint (target < 1);
//   - the same in process through tapeTransport, against the real server over stdio;
//   - the key of a JSON-RPC call (mcpKey: RFC 8785 + SHA-256 of method and params), against
//     JSON.stringify + node:crypto SHA-256 of the same value (not canonical: the floor).
// Medians of per-call times. Run by bench/run.mjs (filter "mcp"), or alone: node bench/mcp.mjs [--quick].
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const ROOT = new URL('..', import.meta.url).pathname;
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const CLI = join(ROOT, 'dist/cli.js');
const CALL = { name: 'echo', arguments: { message: 'a short message to echo back, as a tool call would carry' } };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Median ms of `n` sequential echo calls on a connected client (after `warm` untimed ones). */
async function roundTrips(client, n, warm) {
  for (let i = 0; i < warm; i++) await client.callTool(CALL);
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.callTool(CALL);
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function connected(transport) {
  const c = new Client({ name: 'tapedeck-bench', version: '1.0.0' });
  await c.connect(transport);
  return c;
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function everythingHttp() {
  const port = await freePort();
  const child = spawn('node', [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (b) => {
      text += b;
      if (text.includes('listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`bench: server-everything exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGKILL'))) };
}

export async function mcpBench({ quick = false } = {}) {
  const mcp = await import(new URL('../dist/mcp/index.js', import.meta.url).href);
  const { startProxy } = await import(new URL('../dist/proxy/index.js', import.meta.url).href);
  const n = quick ? 30 : 300;
  const warm = quick ? 5 : 30;
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bench-mcp-'));
  const rows = [];
  const targets = [];
  const quiet = { ...process.env };
  try {
    // --- stdio
    const serverStdio = () => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore', env: quiet });
    let c = await connected(serverStdio());
    const live = await roundTrips(c, n, warm);
    await c.close();
    const tape = join(dir, 'stdio.tape');
    const viaCli = (mode) => new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', mode, '--no-fsync', '--', 'node', EVERYTHING, 'stdio'], stderr: 'ignore', env: quiet });
    // A few calls: the server's start-up notifications (tools list_changed) land in the first,
    // and the repeats past the recorded ones get the last recording, as clean as a warm server.
    c = await connected(viaCli('record'));
    for (let i = 0; i < 3; i++) await c.callTool(CALL);
    await c.close();
    c = await connected(viaCli('replay'));
    const replay = await roundTrips(c, n, warm);
    await c.close();
    rows.push({ label: 'tools/call round trip, server-everything over stdio (ms)', ms: live, baseline: 'server-everything over stdio', ratio: 1 });
    rows.push({ label: 'tools/call replayed by tapedeck mcp over stdio (ms)', ms: replay, baseline: 'server-everything over stdio', ratio: replay / live });
    targets.push({ label: 'replayed tools/call over stdio / the real server (target < 1)', value: replay / live, pass: replay / live < 1, unit: 'ratio-target' });

    // --- in process
    const inTape = join(dir, 'inproc.tape');
    c = await connected(mcp.tapeTransport(serverStdio, { tape: inTape, mode: 'record', durable: false }));
    for (let i = 0; i < 3; i++) await c.callTool(CALL);
    await c.close();
    c = await connected(mcp.tapeTransport(undefined, { tape: inTape, mode: 'replay' }));
    const inproc = await roundTrips(c, n, warm);
    await c.close();
    rows.push({ label: 'tools/call replayed by tapeTransport in process (ms)', ms: inproc, baseline: 'server-everything over stdio', ratio: inproc / live });

    // --- Streamable HTTP
    const server = await everythingHttp();
    try {
      c = await connected(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      const liveHttp = await roundTrips(c, n, warm);
      await c.close();
      const httpTape = join(dir, 'http.tape');
      let proxy = await startProxy({ upstream: server.url, tape: httpTape, mode: 'record', durable: false, port: 0, onWarning: () => {} });
      c = await connected(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
      for (let i = 0; i < 3; i++) await c.callTool(CALL);
      await c.close();
      await proxy.close();
      proxy = await startProxy({ tape: httpTape, mode: 'replay', port: 0, onWarning: () => {} });
      c = await connected(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
      const replayHttp = await roundTrips(c, n, warm);
      await c.close();
      await proxy.close();
      rows.push({ label: 'tools/call round trip, server-everything over Streamable HTTP (ms)', ms: liveHttp, baseline: 'server-everything over Streamable HTTP', ratio: 1 });
      rows.push({ label: 'tools/call replayed by tapedeck serve over Streamable HTTP (ms)', ms: replayHttp, baseline: 'server-everything over Streamable HTTP', ratio: replayHttp / liveHttp });
      targets.push({ label: 'replayed tools/call over Streamable HTTP / the real server (target < 1)', value: replayHttp / liveHttp, pass: replayHttp / liveHttp < 1, unit: 'ratio-target' });
    } finally {
      await server.stop();
    }

    // --- the key of a call
    const params = { ...CALL, _meta: { progressToken: 7 } };
    const reps = quick ? 2_000 : 50_000;
    const time = (f) => {
      for (let i = 0; i < 500; i++) f();
      const samples = [];
      for (let r = 0; r < 9; r++) {
        const t0 = performance.now();
        for (let i = 0; i < reps; i++) f();
        samples.push(((performance.now() - t0) * 1000) / reps);
      }
      return median(samples);
    };
    const key = time(() => mcp.mcpKey('tools/call', params));
    const floor = time(() => createHash('sha256').update(JSON.stringify({ method: 'tools/call', params })).digest('hex'));
    rows.push({ label: 'mcpKey(tools/call, params) (µs)', us: key, baseline: 'JSON.stringify + node:crypto SHA-256', ratio: key / floor });
    rows.push({ label: 'JSON.stringify + node:crypto SHA-256', us: floor, baseline: 'JSON.stringify + node:crypto SHA-256', ratio: 1 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, targets };
}

export function formatRow(r) {
  const v = r.ms !== undefined ? `${r.ms.toFixed(3)} ms` : `${r.us.toFixed(2)} µs`;
  return [r.label, v, r.label.startsWith(r.baseline) ? '(baseline)' : `${r.ratio.toFixed(2)}x`, r.baseline];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows, targets } = await mcpBench({ quick: process.argv.includes('--quick') });
  for (const r of rows) console.log(formatRow(r).join('  '));
  for (const t of targets) console.log(`${t.label}: ${t.value.toFixed(2)} ${t.pass ? 'PASS' : 'MISS'}`);
}
