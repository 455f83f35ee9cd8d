// Record safety of the proxy and createFetch (docs/modes.md): an answer is acknowledged only once
// its record is on disk (kill -9 of `tapedeck serve` loses no answer a client got), a stream the
// caller stops reading is still recorded whole, and a failed or truncated exchange is never
// recorded as a good one.
import OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-safety-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `s${n++}.tape`);
const CLI = join(import.meta.dirname, '../../dist/cli.js');

const httpRecords = async (tape: string): Promise<HttpRecord[]> => (existsSync(tape) ? (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord) : []);
const chat = (text: string, stream = false) =>
  JSON.stringify({ model: 'gpt-4o-mini', ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content: text }] });

/** An upstream whose answers go wrong in the ways real ones do. */
async function faultyUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const chunk = (content: string, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
  const server: Server = createServer(async (req, res) => {
    for await (const _ of req);
    const path = req.url ?? '';
    if (path.endsWith('/truncated')) {
      // Ends cleanly, but before finish_reason and [DONE]: the connection was closed early.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('Hello'));
      res.end(chunk(' wor'));
      return;
    }
    if (path.endsWith('/reset')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('Hello'));
      setTimeout(() => res.destroy(), 5);
      return;
    }
    if (path.endsWith('/anthropic-truncated')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } })}\n\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk('Hello'));
    res.end(chunk(' world', 'stop') + 'data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('truncated and failed exchanges are never recorded as good', () => {
  it('createFetch: an SSE answer that ends without finish_reason/[DONE], or is reset, is not recorded', async () => {
    const up = await faultyUpstream();
    const tape = fresh();
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m) });
    for (const path of ['/v1/truncated', '/v1/anthropic-truncated', '/v1/reset', '/v1/complete']) {
      const res = await f(`${up.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(path, true) });
      await res.text().catch(() => '');
    }
    await f.close();
    await up.close();
    expect((await httpRecords(tape)).map((r) => r.route)).toEqual(['POST /v1/complete']);
    // Each of the three is said, the reset one with what failed (upstream-cut.ts).
    expect(warnings.filter((w) => w.includes('not recorded'))).toHaveLength(3);
    expect(warnings.join('\n')).toMatch(/POST \/v1\/reset: the upstream's answer failed before its end \(.+\); not recorded/);
  });

  it('the proxy: the same three are not recorded, the complete one is', async () => {
    const up = await faultyUpstream();
    const tape = fresh();
    const warnings: string[] = [];
    const proxy = await startProxy({ tape, mode: 'record', upstream: up.url, port: 0, onWarning: (m) => warnings.push(m) });
    for (const path of ['/v1/truncated', '/v1/anthropic-truncated', '/v1/reset', '/v1/complete']) {
      await fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(path, true) })
        .then((r) => r.text())
        .catch(() => '');
    }
    await proxy.close();
    await up.close();
    expect((await httpRecords(tape)).map((r) => r.route)).toEqual(['POST /v1/complete']);
    // Each of the three is said, the reset one with what failed (upstream-cut.ts).
    expect(warnings.filter((w) => w.includes('not recorded'))).toHaveLength(3);
    expect(warnings.join('\n')).toMatch(/POST \/v1\/reset: the upstream's answer failed before its end \(.+\); not recorded/);
  });
});

describe('createFetch and a caller that stops reading', () => {
  it('records the whole stream when the OpenAI SDK breaks out of it (the SDK aborts the request)', async () => {
    const up = await startUpstream({ gapMs: 5 });
    const tape = fresh();
    const rec = createFetch({ tape, mode: 'record' });
    const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] });
    for await (const _ of stream) break;
    await rec.close();
    await up.close();
    const records = await httpRecords(tape);
    expect(records).toHaveLength(1);
    expect(Buffer.from(records[0]!.response.body).toString()).toMatch(/data: \[DONE\]\n\n$/);
    // And it replays, with the upstream gone.
    const play = createFetch({ tape, mode: 'replay' });
    const again = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: play });
    let text = '';
    for await (const c of await again.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] })) {
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(text).toContain('tell me a long story');
    await play.close();
  });
});

function serve(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`tapedeck serve exited: ${err}`)));
  });
  url.catch(() => {});
  return { child, url, exited };
}

describe.skipIf(!existsSync(CLI))('tapedeck serve acknowledges an answer only once its record is durable', () => {
  it('SIGKILL right after 20 clients got their answers: all 20 are on the tape', async () => {
    const up = await startUpstream();
    const tape = fresh();
    const s = serve(['--upstream', up.url, '--tape', tape, '--mode', 'record', '--port', '0']);
    const base = await s.url;
    const texts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(`question ${i}`) }).then((r) => r.text()),
      ),
    );
    s.child.kill('SIGKILL');
    await s.exited;
    await up.close();
    expect(texts.every((t) => t.includes('Echo'))).toBe(true);
    expect(await httpRecords(tape)).toHaveLength(20);
  });

  it('kill -9 at random moments under 50 concurrent streams: acknowledged answers lost: 0', async () => {
    const up = await startUpstream({ gapMs: 3 });
    let acknowledged = 0;
    let cut = 0;
    for (let round = 0; round < 4; round++) {
      const tape = fresh();
      const s = serve(['--upstream', up.url, '--tape', tape, '--mode', 'record', '--port', '0']);
      const base = await s.url;
      const done = new Set<number>();
      // The kill comes right after a random number of clients got their whole answer, the
      // moment a write-after-answer design loses them; the rest are in every state.
      const target = 1 + Math.floor(Math.random() * 40);
      const kill = () => s.child.kill('SIGKILL');
      const clients = Array.from({ length: 50 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 3));
        const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(`round ${round} stream ${i}`, true) });
        const text = await r.text();
        if (text.endsWith('data: [DONE]\n\n')) done.add(i);
        if (done.size === target) kill();
      });
      const cap = setTimeout(kill, 10_000);
      await Promise.allSettled(clients);
      kill();
      clearTimeout(cap);
      await s.exited;
      const onTape = new Set((await httpRecords(tape)).map((rec) => ((rec.request.body as { messages: { content: string }[] }).messages[0]!.content)));
      const lost = [...done].filter((i) => !onTape.has(`round ${round} stream ${i}`));
      expect(lost, `round ${round}: acknowledged but not on the tape`).toEqual([]);
      acknowledged += done.size;
      cut += 50 - done.size;
    }
    await up.close();
    // The kills must have found answers done and answers under way for the test to mean anything.
    expect(acknowledged).toBeGreaterThan(0);
    expect(cut).toBeGreaterThan(0);
  }, 60_000);
});
