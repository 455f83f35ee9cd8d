// Two createFetch instances, or two proxies, recording the same request on one tape: the one
// that opens after the other's acknowledged answers removes none of them at close, and repeats
// replay in acknowledgement order (docs/modes.md, rule 16).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-writers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'the same question' }] });
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body };

it.each(['createFetch', 'proxy'] as const)('two %s writers on one tape keep every acknowledged answer to the same request', async (entry) => {
  const up = await startUpstream();
  const tape = join(dir, `${entry}.tape`);
  const open = async () => {
    if (entry === 'createFetch') {
      const f = createFetch({ tape, mode: 'record' });
      return { send: async () => (await f(`${up.url}/v1/chat/completions`, post)).text(), close: () => f.close() };
    }
    const p = await startProxy({ tape, mode: 'record', upstream: up.url, port: 0 });
    return { send: async () => (await fetch(`${p.url}/v1/chat/completions`, post)).text(), close: () => p.close() };
  };
  const a = await open();
  const acked = [await a.send(), await a.send()];
  const b = await open();
  acked.push(await b.send());
  await a.close();
  await b.close();
  await up.close();
  const r = createFetch({ tape, mode: 'replay', strictOrder: true });
  const replayed = [];
  // On the host they were recorded for (a loopback host's port is not compared).
  for (let i = 0; i < 3; i++) replayed.push(await (await r(`http://127.0.0.1:9/v1/chat/completions`, post)).text());
  expect(replayed).toEqual(acked);
  expect((await r(`http://127.0.0.1:9/v1/chat/completions`, post)).status).toBe(400);
  await r.close();
});

it('/__tapedeck/stats counts the recordings made in update mode', async () => {
  const up = await startUpstream();
  const p = await startProxy({ tape: join(dir, 'stats.tape'), mode: 'update', upstream: up.url, port: 0 });
  try {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${p.url}/v1/chat/completions`, { ...post, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] }) });
      await res.text();
    }
    const stats = (await (await fetch(`${p.url}/__tapedeck/stats`)).json()) as { recordings: number; recorded: number };
    expect(stats).toMatchObject({ recordings: 3, recorded: 3 });
  } finally {
    await p.close();
    await up.close();
  }
});
