// A secret in the query of a URL a realtime frame carries (an MCP server's `server_url` in
// `session.update`, echoed by the server in `session.updated`) never reaches the tape, and the
// session still replays: the masks are the same on every run, so the replayed frame matches.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { redactor } from '../../src/store/redact.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-url-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'mcpTokenNotForTapes42';
const GKEY = 'gkeyNotForTapes7';
const update = {
  type: 'session.update',
  session: { type: 'realtime', tools: [{ type: 'mcp', server_label: 'docs', server_url: `https://mcp.example.com/sse?token=${TOKEN}&key=${GKEY}&region=eu` }] },
};

/** One session through the proxy: connect, send the update, return the frames the client got. */
async function session(url: string): Promise<Record<string, any>[]> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
  const got: Record<string, any>[] = [];
  const updated = new Promise<void>((resolve, reject) => {
    ws.on('message', (d) => {
      const e = JSON.parse(d.toString()) as Record<string, any>;
      got.push(e);
      if (e.type === 'session.created') ws.send(JSON.stringify(update));
      if (e.type === 'session.updated' || e.type === 'error') resolve();
    });
    ws.once('error', reject);
  });
  await updated;
  ws.close();
  await new Promise((r) => ws.once('close', r));
  return got;
}

it('masks secret query parameters of URLs in client and server frames, and replays the session', async () => {
  const tape = join(dir, 'mcp.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    await session(rec.url);
  } finally {
    await rec.close();
    await fake.close();
  }
  const text = readFileSync(tape).toString('latin1');
  expect(text).not.toContain(TOKEN);
  expect(text).not.toContain(GKEY);
  expect(text).toContain('region=eu');
  // Keyed under the tape's salt, as an HTTP request's URL is (docs/proxy.md, "Secrets"): a
  // reviewer tells two tokens apart, and the frame has the mask the URL would get in a request.
  const { header } = await readTape(tape);
  expect(typeof header.salt).toBe('string');
  const masked = redactor({ salt: header.salt as string }).url(`/sse?token=${TOKEN}`).slice('/sse?'.length);
  expect(masked).toMatch(/^token=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
  expect(text).toContain(masked);
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    const got = await session(play.url);
    expect(got.map((e) => e.type)).toEqual(['session.created', 'session.updated']);
  } finally {
    await play.close();
  }
});

it('leaves text without URLs, and URLs without secret parameters, as they are', () => {
  const r = redactor();
  const plain = { type: 'session.update', session: { instructions: 'see https://example.com/a?page=2' } };
  expect(r.value(plain)).toBe(plain);
  expect(r.text('{"a":"no url here, none at all"}')).toBe('{"a":"no url here, none at all"}');
  expect(redactor({ keepSecrets: true }).text(`https://x.example/?key=${GKEY}`)).toContain(GKEY);
});
