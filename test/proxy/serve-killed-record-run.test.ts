// Playwright stops its webServers with SIGKILL unless given `gracefulShutdown`, so a
// `tapedeck serve --mode record` started there never closes: every re-record leaves the older
// answers first and replay keeps serving them. The note the next proxy prints said to record
// again and let the run close, which under such a runner ends the same way each time; it names
// what stops the proxy so and the setting that lets it close.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { serve } from './serve-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-serve-killed-'));
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (base: string): Promise<string> => {
  const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }) });
  return ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
};

async function recordThen(tape: string, stop: 'SIGTERM' | 'SIGKILL'): Promise<string> {
  const s = serve(['--tape', tape, '--mode', 'record', '--upstream', upstream.url, '--port', '0']);
  const answer = await ask(await s.url);
  s.child.kill(stop);
  await s.exited;
  return answer;
}

describe('tapedeck serve recording, stopped as a test runner stops it', () => {
  it('a SIGKILLed record run is named at the next start with the setting that lets it close', async () => {
    const tape = join(dir, 'app.tape');
    const old = await recordThen(tape, 'SIGTERM');
    const killed = await recordThen(tape, 'SIGKILL');
    expect(killed).not.toBe(old);
    const replay = serve(['--tape', tape, '--port', '0']);
    try {
      // The older answer still comes first: the note is what tells.
      expect(await ask(await replay.url)).toBe(old);
      const note = replay.stderr();
      expect(note).toContain('ended without closing the tape');
      expect(note).toContain("gracefulShutdown: { signal: 'SIGTERM'");
    } finally {
      replay.child.kill('SIGTERM');
      await replay.exited;
    }
  });
});
