// `tapedeck serve` as a process: it prints where it listens, answers, and on SIGTERM lets the
// in-flight stream finish, writes the tape and exits 0. Runs the built CLI (npm test builds it).
import { CLI, serve } from './serve-cli.ts';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe.skipIf(!existsSync(CLI))('tapedeck serve', () => {
  it('records, finishes in-flight requests on SIGTERM, and replays', async () => {
    const tape = join(dir, 'cli.tape');
    const up = await startUpstream();
    const rec = serve(['--upstream', up.url, '--tape', tape, '--mode', 'record', '--port', '0']);
    const base = await rec.url;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await (await fetch(`${base}/__tapedeck/health`)).json();
    expect(health).toMatchObject({ status: 'ok', mode: 'record' });
    const pending = fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a slow story' }] }),
    }).then((r) => r.text());
    while (up.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    rec.child.kill('SIGTERM');
    const text = await pending;
    expect(text).toMatch(/data: \[DONE\]\n\n$/);
    expect(await rec.exited).toBe(0);
    expect(rec.stderr()).toContain('SIGTERM');
    await up.close();
    const records = (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
    expect(records.length).toBe(1);

    const play = serve(['--tape', tape, '--port', '0', '--timing', 'recorded']);
    const url = await play.url;
    const again = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a slow story' }] }),
    });
    expect(again.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await again.text()).toBe(text);
    play.child.kill('SIGINT');
    expect(await play.exited).toBe(0);
  });

  it('bad arguments exit 2 with the reason', async () => {
    const bad = serve(['--mode', 'nope', '--tape', join(dir, 'x.tape'), '--port', '0']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toMatch(/^tapedeck: E_MODE Invalid --mode "nope"\.\nhint: Use one of replay, record, update, passthrough, once/m);
    const unknown = serve(['--frobnicate']);
    expect(await unknown.exited).toBe(2);
    expect(unknown.stderr()).toContain('frobnicate');
  });
});
