// A record run killed while recording into a new tape (or into one that held no older recording
// of the requests it made) left nothing stale: replay, verify and scan say nothing about it. The
// note stays for a killed run whose older recordings are still on the tape.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { interruptedRecordRuns } from '../../src/store/tape-writers.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-interrupted-new-'));
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = (q: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] });

/** Records `questions` in a child process that is killed (SIGKILL) once it has the answers. */
function killedRecordRun(tape: string, questions: string[]): Promise<void> {
  const script = `
    import { createFetch } from ${JSON.stringify(join(root, 'dist/proxy/index.js'))};
    const f = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'record' });
    for (const q of ${JSON.stringify(questions)}) {
      const r = await f(${JSON.stringify(`${upstream.url}/v1/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) });
      await r.text();
    }
    process.kill(process.pid, 'SIGKILL');
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child ended with ${signal ?? code}`))));
  });
}

async function replayWarnings(tape: string, questions: string[]): Promise<string[]> {
  const warned: string[] = [];
  const f = createFetch({ tape, mode: 'replay', onWarning: (m) => warned.push(m), summary: false });
  for (const q of questions) expect((await f(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(q) })).status).toBe(200);
  await f.close();
  return warned.filter((m) => m.includes('ended without closing'));
}

describe('a killed record run that replaced nothing', () => {
  it('into a new tape: no interrupted-run note', async () => {
    const tape = join(dir, 'new.tape');
    await killedRecordRun(tape, ['one', 'two']);
    expect(readdirSync(`${tape}.writers`).length).toBe(1);
    expect(await interruptedRecordRuns(tape)).toEqual([]);
    expect(await replayWarnings(tape, ['one', 'two'])).toEqual([]);
  });

  it('re-recording other requests than the tape held: no note; re-recording one it held: the note', async () => {
    const tape = join(dir, 'old.tape');
    const first = createFetch({ tape, mode: 'record', summary: false });
    await (await first(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('kept') })).text();
    await first.close();
    await killedRecordRun(tape, ['new one']);
    expect(await interruptedRecordRuns(tape)).toEqual([]);
    await killedRecordRun(tape, ['kept']);
    const runs = await interruptedRecordRuns(tape);
    expect(runs).toHaveLength(1);
    expect((await replayWarnings(tape, ['kept', 'new one'])).length).toBe(1);
  });
});

describe('a miss on a tape whose record run was killed before it recorded everything', () => {
  // A first run killed midway (in `once` mode: the tape did not exist, so it recorded) leaves a
  // tape without the calls it had not made yet. The next run replays it, and those calls missed
  // as if their requests had changed: nothing said the run that made the tape never finished.
  for (const mode of ['once', 'replay'] as const) {
    it(`says the run ended without closing (${mode} mode)`, async () => {
      const tape = join(dir, `killed-midway-${mode}.tape`);
      await killedRecordRun(tape, ['asked before the kill']);
      const f = createFetch({ tape, mode, onWarning: () => {}, summary: false });
      try {
        const ok = await f(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('asked before the kill') });
        expect(ok.status).toBe(200);
        await ok.text();
        const miss = await f(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('never asked') });
        expect(miss.status).toBe(400);
        const { error } = (await miss.json()) as { error: { message: string } };
        expect(error.message).toMatch(/A record run of .* \(pid \d+[^)]*\) ended without closing it/);
        expect(error.message).toContain('TAPEDECK_MODE=record');
      } finally {
        await f.close();
      }
    });
  }

  it('says nothing once a record run has closed the tape since', async () => {
    const tape = join(dir, 'killed-then-recorded.tape');
    await killedRecordRun(tape, ['first']);
    const again = createFetch({ tape, mode: 'record', summary: false });
    await (await again(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('first') })).text();
    await again.close();
    const f = createFetch({ tape, mode: 'replay', onWarning: () => {}, summary: false });
    try {
      const miss = await f(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('never asked') });
      expect(miss.status).toBe(400);
      const { error } = (await miss.json()) as { error: { message: string } };
      expect(error.message).not.toContain('ended without closing');
    } finally {
      await f.close();
    }
  });
});
